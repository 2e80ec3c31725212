"""bench/generate/stats.py: each kubelet Summary agrees with its node and the pods on it."""

from __future__ import annotations

from tests.bench.generate.helpers import (
    quantity,
    sample_envelope,
    sample_nodes,
    sample_pods,
)


def test_stats_match_nodes_and_pods() -> None:
    env = sample_envelope()
    nodes = sample_nodes()
    stats = env["stats"]
    unreachable = {
        name
        for name, n in nodes.items()
        if any(c["type"] == "Ready" and c["status"] == "Unknown" for c in n["status"]["conditions"])
    }
    assert unreachable and set(stats) == set(nodes) - unreachable
    by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in sample_pods()}
    for name, summary in stats.items():
        node = summary["node"]
        assert node["nodeName"] == name
        for key in ("availableBytes", "workingSetBytes", "usageBytes", "rssBytes"):
            assert node["memory"][key] >= 0
        for key in ("availableBytes", "capacityBytes", "usedBytes", "inodesFree", "inodes"):
            assert node["fs"][key] > 0
        assert node["runtime"]["imageFs"]["capacityBytes"] > 0
        assert node["rlimit"]["maxpid"] > node["rlimit"]["curproc"] > 0
        assert "pods" in {c["name"] for c in node["systemContainers"]}
        capacity = quantity(nodes[name]["status"]["capacity"]["memory"])
        assert node["memory"]["availableBytes"] + node["memory"]["workingSetBytes"] == capacity
        for pod_stats in summary["pods"]:
            ref = pod_stats["podRef"]
            pod = by_key[(ref["namespace"], ref["name"])]
            assert pod["spec"]["nodeName"] == name
            mirror = pod["metadata"].get("annotations", {}).get("kubernetes.io/config.mirror")
            assert ref["uid"] == (mirror or pod["metadata"]["uid"])
            names = {c["name"] for c in pod["spec"]["containers"]}
            names |= {
                c["name"] for c in pod["spec"].get("initContainers", []) if c.get("restartPolicy")
            }
            assert {c["name"] for c in pod_stats["containers"]} <= names
            for c in pod_stats["containers"]:
                assert c["memory"]["workingSetBytes"] > 0
                assert "rootfs" in c and "logs" in c
            volumes = {v["name"] for v in pod["spec"].get("volumes", [])}
            assert {v["name"] for v in pod_stats.get("volume", [])} <= volumes
            assert pod_stats["ephemeral-storage"]["usedBytes"] >= 0
            # 0 only for a pod whose one container is in CrashLoopBackOff.
            count = pod_stats["process_stats"]["process_count"]
            assert count >= (1 if pod_stats["containers"] else 0)
    assert any(s["node"]["runtime"].get("containerFs") for s in stats.values())
    # At least one node below the kubelet's default memory.available<100Mi threshold.
    assert any(s["node"]["memory"]["availableBytes"] < 100 * 2**20 for s in stats.values())
