"""bench/generate/nodes.py: the variety of nodes (roles, zones, readiness, pressure, taints)."""

from __future__ import annotations

from tests.bench.generate.helpers import (
    quantity,
    sample_nodes,
)


def test_node_variety() -> None:
    nodes = list(sample_nodes().values())
    labels = [n["metadata"]["labels"] for n in nodes]
    assert all(lb["kubernetes.io/os"] == "linux" for lb in labels)
    assert all(
        lb["kubernetes.io/hostname"] == n["metadata"]["name"]
        for lb, n in zip(labels, nodes, strict=True)
    )
    assert all("node.kubernetes.io/instance-type" in lb for lb in labels)
    legacy = [lb for lb in labels if "topology.kubernetes.io/zone" not in lb]
    assert legacy and all("failure-domain.beta.kubernetes.io/zone" in lb for lb in legacy)
    assert len({lb.get("topology.kubernetes.io/region") for lb in labels} - {None}) == 2
    assert len({lb.get("topology.kubernetes.io/zone") for lb in labels} - {None}) >= 4

    taints = [t for n in nodes for t in n["spec"].get("taints", [])]
    assert {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"} in taints
    assert any(t["effect"] == "NoExecute" and t["key"] == "dedicated" for t in taints)
    assert any(n["spec"].get("unschedulable") for n in nodes)
    assert any("nvidia.com/gpu" in n["status"]["allocatable"] for n in nodes)

    ready = {
        n["metadata"]["name"]: next(c for c in n["status"]["conditions"] if c["type"] == "Ready")
        for n in nodes
    }
    assert {c["status"] for c in ready.values()} == {"True", "False", "Unknown"}
    for n in nodes:
        types = [c["type"] for c in n["status"]["conditions"]]
        assert {"MemoryPressure", "DiskPressure", "PIDPressure", "Ready"} <= set(types)
        cap, alloc = n["status"]["capacity"], n["status"]["allocatable"]
        assert cap["pods"] == alloc["pods"] == "110"
        assert cap["hugepages-2Mi"] == "0"
        assert quantity(alloc["cpu"], milli=True) < quantity(cap["cpu"], milli=True)
        if ready[n["metadata"]["name"]]["status"] == "Unknown":
            added = [t for t in n["spec"]["taints"] if t["key"] == "node.kubernetes.io/unreachable"]
            assert {t["effect"] for t in added} == {"NoSchedule", "NoExecute"}
            assert all(t["timeAdded"] for t in added)
        assert n["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.3")
