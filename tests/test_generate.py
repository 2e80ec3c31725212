"""bench.generate: determinism, counts, consistency and shape of the synthetic snapshot."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from datetime import datetime
from functools import cache
from pathlib import Path

import orjson
import pytest

from bench.generate import (
    DEFAULT_CAPTURED_AT,
    generate,
    iter_chunks,
    iter_items,
    iter_stats,
    main,
)

ROOT = Path(__file__).resolve().parents[1]
NODES, PODS, SEED = 30, 900, 1


@cache
def _raw(nodes: int = NODES, pods: int = PODS, seed: int = SEED, **kw) -> bytes:
    return b"".join(iter_chunks(nodes, pods, seed, **kw))


@cache
def _envelope() -> dict:
    return generate(NODES, PODS, SEED)


def _items(kind: str, envelope: dict | None = None) -> list[dict]:
    env = envelope or _envelope()
    return [i for i in env["objects"]["items"] if i["kind"] == kind]


def _pods() -> list[dict]:
    return _items("Pod")


def _nodes() -> dict[str, dict]:
    return {n["metadata"]["name"]: n for n in _items("Node")}


_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}


def _quantity(value: str, *, milli: bool = False) -> int:
    """The quantity formats the generator emits ("250m", "2", "512Mi", "65842512Ki")."""
    if value.endswith("m"):
        n = int(value[:-1])
        return n if milli else n // 1000
    match = re.fullmatch(r"(\d+)([A-Za-z]*)", value)
    assert match, value
    n = int(match[1]) * _SUFFIXES.get(match[2], 1)
    return n * 1000 if milli else n


def _expected_qos(pod: dict) -> str:
    """v1qos.GetPodQOS, written independently of the generator."""
    requests: Counter = Counter()
    limits: Counter = Counter()
    guaranteed = True
    spec = pod["spec"]
    for c in spec.get("initContainers", []) + spec["containers"]:
        res = c.get("resources", {})
        for name, value in res.get("requests", {}).items():
            if name in ("cpu", "memory") and _quantity(value, milli=True):
                requests[name] += _quantity(value, milli=True)
        found = set()
        for name, value in res.get("limits", {}).items():
            if name in ("cpu", "memory") and _quantity(value, milli=True):
                found.add(name)
                limits[name] += _quantity(value, milli=True)
        if found != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


# --- determinism -------------------------------------------------------------------------------


def test_same_arguments_same_bytes() -> None:
    again = b"".join(iter_chunks(NODES, PODS, SEED))
    assert again == _raw()


def test_different_seed_different_output() -> None:
    a = b"".join(iter_chunks(10, 200, 1))
    b = b"".join(iter_chunks(10, 200, 2))
    assert a != b
    assert json.loads(a)["name"] == "synthetic-10n-200p-s1"
    assert json.loads(b)["name"] == "synthetic-10n-200p-s2"


def test_generate_equals_streamed_output() -> None:
    assert orjson.loads(_raw()) == _envelope()


def test_iter_items_and_iter_stats_match_envelope() -> None:
    env = _envelope()
    items = [orjson.loads(orjson.dumps(i)) for i in iter_items(NODES, PODS, SEED)]
    assert items == env["objects"]["items"]
    stats = {name: orjson.loads(orjson.dumps(s)) for name, s in iter_stats(NODES, PODS, SEED)}
    assert stats == env["stats"]
    assert list(stats) == list(env["stats"])


def test_cli_prints_the_envelope_and_a_bare_list() -> None:
    def run(*args: str) -> bytes:
        return subprocess.run(
            [sys.executable, "-m", "bench.generate", "--nodes", "8", "--pods", "120", *args],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout

    envelope = run("--seed", "3")
    assert envelope == b"".join(iter_chunks(8, 120, 3))
    assert envelope.endswith(b"}\n")
    doc = json.loads(envelope)
    assert doc["name"] == "synthetic-8n-120p-s3"
    assert doc["cluster"] == "synthetic"
    assert doc["labels"] == {"generator": "bench.generate"}
    assert doc["capturedAt"] == DEFAULT_CAPTURED_AT
    assert doc["stats"]

    listing = json.loads(run("--seed", "3", "--list"))
    assert listing["apiVersion"] == "v1"
    assert listing["kind"] == "List"
    assert listing["metadata"] == {"resourceVersion": ""}
    assert set(listing) == {"apiVersion", "kind", "metadata", "items"}
    assert listing["items"] == doc["objects"]["items"]

    no_stats = json.loads(run("--seed", "3", "--no-stats"))
    assert "stats" not in no_stats
    assert no_stats["objects"] == doc["objects"]


def test_main_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["--nodes", "0", "--pods", "1"],
        ["--nodes", "1", "--pods", "-1"],
        ["--nodes", "1", "--pods", "1", "--captured-at", "yesterday"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    capsys.readouterr()


def test_captured_at_moves_every_timestamp() -> None:
    base = generate(5, 60, 4)
    later = generate(5, 60, 4, captured_at="2026-11-21T10:00:00+00:00")
    assert later["capturedAt"] == "2026-11-21T10:00:00Z"
    # Same plan, same objects: every time is one day later.
    for a, b in zip(base["objects"]["items"], later["objects"]["items"], strict=True):
        assert a["metadata"]["name"] == b["metadata"]["name"]
        ts_a = datetime.fromisoformat(a["metadata"]["creationTimestamp"])
        ts_b = datetime.fromisoformat(b["metadata"]["creationTimestamp"])
        assert (ts_b - ts_a).total_seconds() == 86400
    assert base["stats"].keys() == later["stats"].keys()


# --- counts and references ---------------------------------------------------------------------


@pytest.mark.parametrize(("nodes", "pods"), [(1, 0), (3, 5), (3, 400), (10, 300), (20, 600)])
def test_counts(nodes: int, pods: int) -> None:
    env = generate(nodes, pods, 11)
    kinds = Counter(i["kind"] for i in env["objects"]["items"])
    assert kinds["Node"] == nodes
    assert kinds["Pod"] == pods
    assert kinds["PriorityClass"] == 5
    node_leases = [
        i for i in _items("Lease", env) if i["metadata"]["namespace"] == "kube-node-lease"
    ]
    assert sorted(lease["metadata"]["name"] for lease in node_leases) == sorted(
        n["metadata"]["name"] for n in _items("Node", env)
    )
    assert set(kinds) <= {
        "Node",
        "Pod",
        "PodDisruptionBudget",
        "Service",
        "ReplicaSet",
        "StatefulSet",
        "PriorityClass",
        "Lease",
    }


def test_pods_reference_existing_nodes_within_allocatable() -> None:
    nodes = _nodes()
    per_node: Counter = Counter()
    cpu: Counter = Counter()
    memory: Counter = Counter()
    for pod in _pods():
        name = pod["spec"].get("nodeName")
        nominated = pod["status"].get("nominatedNodeName")
        if nominated:
            assert nominated in nodes
            assert name is None
        if name is None:
            assert pod["status"]["phase"] == "Pending"
            continue
        assert name in nodes, name
        per_node[name] += 1
        spec = pod["spec"]
        for target, resource in ((cpu, "cpu"), (memory, "memory")):
            regular = sum(
                _quantity(c["resources"].get("requests", {}).get(resource, "0"), milli=True)
                for c in spec["containers"]
                + [c for c in spec.get("initContainers", []) if c.get("restartPolicy")]
            )
            inits = max(
                (
                    _quantity(c["resources"].get("requests", {}).get(resource, "0"), milli=True)
                    for c in spec.get("initContainers", [])
                ),
                default=0,
            )
            overhead = _quantity(spec.get("overhead", {}).get(resource, "0"), milli=True)
            target[name] += max(regular, inits) + overhead
    assert per_node
    for name, count in per_node.items():
        allocatable = nodes[name]["status"]["allocatable"]
        assert count <= int(allocatable["pods"]) == 110
        assert cpu[name] <= _quantity(allocatable["cpu"], milli=True)
        assert memory[name] <= _quantity(allocatable["memory"], milli=True)
    counts = list(per_node.values())
    assert max(counts) > min(counts)  # pods per node vary


def test_node_names_and_object_order_follow_the_api_server() -> None:
    items = _envelope()["objects"]["items"]
    order = [
        "Node",
        "Pod",
        "PodDisruptionBudget",
        "Service",
        "ReplicaSet",
        "StatefulSet",
        "PriorityClass",
        "Lease",
    ]
    positions = [order.index(i["kind"]) for i in items]
    assert positions == sorted(positions)
    pods = _pods()
    keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    uids = [i["metadata"]["uid"] for i in items]
    assert len(set(uids)) == len(uids)


# --- pods --------------------------------------------------------------------------------------


def test_qos_classes_present_and_consistent() -> None:
    seen = Counter()
    for pod in _pods():
        expected = _expected_qos(pod)
        assert pod["status"]["qosClass"] == expected, pod["metadata"]["name"]
        seen[expected] += 1
    assert set(seen) == {"Guaranteed", "Burstable", "BestEffort"}


def test_pod_variety() -> None:
    pods = _pods()
    phases = Counter(p["status"]["phase"] for p in pods)
    assert {"Running", "Pending", "Succeeded", "Failed"} <= set(phases)
    pending = [p for p in pods if "nodeName" not in p["spec"]]
    assert 0 < len(pending) <= 0.03 * len(pods)
    assert any(p["status"].get("nominatedNodeName") for p in pending)

    owners = Counter(p["metadata"]["ownerReferences"][0]["kind"] for p in pods)
    assert {"ReplicaSet", "StatefulSet", "DaemonSet", "Job", "Node"} <= set(owners)
    for pod in pods:
        for ref in pod["metadata"]["ownerReferences"]:
            assert ref["controller"] is True and ref["uid"]

    mirror = [p for p in pods if p["metadata"]["ownerReferences"][0]["kind"] == "Node"]
    for pod in mirror:
        ann = pod["metadata"]["annotations"]
        assert ann["kubernetes.io/config.source"] == "file"
        assert ann["kubernetes.io/config.mirror"] == ann["kubernetes.io/config.hash"]
    proxies = {
        p["spec"]["nodeName"] for p in mirror if p["metadata"]["name"].startswith("kube-proxy-")
    }
    assert proxies == set(_nodes())

    critical = [
        p
        for p in pods
        if p["metadata"]["namespace"] == "kube-system"
        and p["metadata"]["ownerReferences"][0]["kind"] == "DaemonSet"
    ]
    assert critical
    assert all(p["spec"]["priorityClassName"] == "system-node-critical" for p in critical)
    assert all(p["spec"]["priority"] == 2000001000 for p in critical)

    deleting_sts = [
        p
        for p in pods
        if p["metadata"].get("deletionTimestamp")
        and p["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    ]
    assert deleting_sts
    assert any(
        c.get("restartPolicy") == "Always"
        for p in pods
        for c in p["spec"].get("initContainers", [])
    )
    assert any("restartPolicy" not in c for p in pods for c in p["spec"].get("initContainers", []))
    kata = [p for p in pods if p["spec"].get("runtimeClassName") == "kata"]
    assert kata and all(p["spec"]["overhead"] for p in kata)
    assert any(
        port.get("hostPort")
        for p in pods
        for c in p["spec"]["containers"]
        for port in c.get("ports", [])
    )
    assert any(p["spec"].get("nodeSelector") for p in pods)
    assert any(
        p["spec"]
        .get("affinity", {})
        .get("nodeAffinity", {})
        .get("requiredDuringSchedulingIgnoredDuringExecution")
        for p in pods
        if p["metadata"]["ownerReferences"][0]["kind"] == "ReplicaSet"
    )
    seconds = {t.get("tolerationSeconds") for p in pods for t in p["spec"].get("tolerations", [])}
    assert seconds - {None, 300}


def test_pod_shape() -> None:
    classes = {i["metadata"]["name"]: i["value"] for i in _items("PriorityClass")}
    for pod in _pods():
        meta, spec, status = pod["metadata"], pod["spec"], pod["status"]
        assert pod["apiVersion"] == "v1"
        for key in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "namespace"):
            assert meta[key], key
        assert spec["priority"] == classes[spec["priorityClassName"]]
        assert status["qosClass"]
        owner = meta["ownerReferences"][0]["kind"]
        if owner != "Node":
            volumes = [v for v in spec["volumes"] if v["name"].startswith("kube-api-access-")]
            assert len(volumes) == 1 and "serviceAccountToken" in str(volumes[0]["projected"])
        if owner in ("ReplicaSet", "Job"):
            tolerations = spec["tolerations"]
            keys = {t["key"] for t in tolerations if t.get("effect") == "NoExecute"}
            assert {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} <= keys
        if status["phase"] == "Running":
            assert status["podIP"] and status["podIPs"] and status["startTime"]
            assert [c["type"] for c in status["conditions"]][-1] == "PodScheduled"
            for cs in status["containerStatuses"]:
                assert cs["imageID"]
                assert "state" in cs
                if "running" in cs["state"]:
                    assert cs["containerID"].startswith("containerd://")


def test_average_pod_size() -> None:
    """A pod as kubectl prints it, with everything the brief asks for, is 3.5-5 KB.

    The brief hoped for about 2 KB (1.5-3 KB here); that is not reachable while keeping the
    projected token volume, the admission tolerations, five conditions, container statuses
    and managedFields (a bare Pending pod alone is ~2 KB), so the bound is the realistic one.
    """
    pods = _pods()
    average = sum(len(orjson.dumps(p)) for p in pods) / len(pods)
    assert 3000 <= average <= 5500, average


def test_json_round_trip() -> None:
    small = _raw(10, 300, 5)
    env = json.loads(small)
    assert json.loads(json.dumps(env)) == env
    assert orjson.loads(orjson.dumps(env)) == env
    assert orjson.dumps(env) + b"\n" == small  # the stream is plain compact JSON
    for item in env["objects"]["items"]:
        assert json.loads(json.dumps(item, sort_keys=True)) == item


# --- nodes, PDBs, priority classes, leases -----------------------------------------------------


def test_node_variety() -> None:
    nodes = list(_nodes().values())
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
        assert _quantity(alloc["cpu"], milli=True) < _quantity(cap["cpu"], milli=True)
        if ready[n["metadata"]["name"]]["status"] == "Unknown":
            added = [t for t in n["spec"]["taints"] if t["key"] == "node.kubernetes.io/unreachable"]
            assert {t["effect"] for t in added} == {"NoSchedule", "NoExecute"}
            assert all(t["timeAdded"] for t in added)
        assert n["status"]["nodeInfo"]["kubeletVersion"].startswith("v1.3")


def test_pdbs_priority_classes_and_leases() -> None:
    pdbs = _items("PodDisruptionBudget")
    assert pdbs
    pods = _pods()
    for pdb in pdbs:
        assert pdb["apiVersion"] == "policy/v1"
        status = pdb["status"]
        assert status["disruptionsAllowed"] == max(
            0, status["currentHealthy"] - status["desiredHealthy"]
        )
        selector = pdb["spec"]["selector"]["matchLabels"]
        matching = [
            p
            for p in pods
            if p["metadata"]["namespace"] == pdb["metadata"]["namespace"]
            and selector.items() <= p["metadata"]["labels"].items()
        ]
        assert matching
        assert status["currentHealthy"] <= len(matching)
        for name in status.get("disruptedPods", {}):
            assert name in {p["metadata"]["name"] for p in matching}
    assert any(p["status"].get("disruptedPods") for p in pdbs)

    classes = {c["metadata"]["name"]: c for c in _items("PriorityClass")}
    assert {k: c["value"] for k, c in classes.items()} == {
        "system-node-critical": 2000001000,
        "system-cluster-critical": 2000000000,
        "high": 100000,
        "default": 0,
        "low": -10,
    }
    assert [k for k, c in classes.items() if c.get("globalDefault")] == ["default"]
    assert classes["low"]["preemptionPolicy"] == "Never"

    for lease in _items("Lease"):
        if lease["metadata"]["namespace"] == "kube-node-lease":
            assert lease["spec"]["leaseDurationSeconds"] == 40
            assert lease["spec"]["holderIdentity"] == lease["metadata"]["name"]
            assert lease["spec"]["renewTime"].endswith("Z")


# --- kubelet Summary API -----------------------------------------------------------------------


def test_stats_match_nodes_and_pods() -> None:
    env = _envelope()
    nodes = _nodes()
    stats = env["stats"]
    unreachable = {
        name
        for name, n in nodes.items()
        if any(c["type"] == "Ready" and c["status"] == "Unknown" for c in n["status"]["conditions"])
    }
    assert unreachable and set(stats) == set(nodes) - unreachable
    by_key = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in _pods()}
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
        capacity = _quantity(nodes[name]["status"]["capacity"]["memory"])
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


def test_no_stats_option() -> None:
    env = generate(5, 40, 2, stats=False)
    assert "stats" not in env
    assert env["objects"] == generate(5, 40, 2)["objects"]


# --- scheduling constraints --------------------------------------------------------------------


def _constraints_envelope() -> dict:
    return generate(60, 3000, 2)


def test_about_a_third_of_workloads_declare_scheduling_constraints() -> None:
    env = _constraints_envelope()
    controllers = _items("ReplicaSet", env) + _items("StatefulSet", env)
    app = [c for c in controllers if c["metadata"]["namespace"] not in ("kube-system",)]
    declaring = 0
    seen = set()
    for c in app:
        spec = c["spec"]["template"]["spec"]
        affinity = spec.get("affinity") or {}
        kinds = {
            "requiredAnti": "requiredDuringSchedulingIgnoredDuringExecution"
            in affinity.get("podAntiAffinity", {}),
            "preferredAnti": "preferredDuringSchedulingIgnoredDuringExecution"
            in affinity.get("podAntiAffinity", {}),
            "spread": bool(spec.get("topologySpreadConstraints")),
            "preferredNode": "preferredDuringSchedulingIgnoredDuringExecution"
            in affinity.get("nodeAffinity", {}),
        }
        seen.update(k for k, v in kinds.items() if v)
        declaring += any(kinds.values())
    assert seen == {"requiredAnti", "preferredAnti", "spread", "preferredNode"}
    assert 0.25 <= declaring / len(app) <= 0.5
    assert _items("Service", env)
    taints = [t for n in _items("Node", env) for t in n["spec"].get("taints") or ()]
    assert any(t["effect"] == "PreferNoSchedule" for t in taints)


def test_pods_honour_their_workloads_anti_affinity_and_zone_spreading() -> None:
    """Required hostname anti-affinity: no two pods of the workload on one node; a zone
    DoNotSchedule constraint of maxSkew 1: placed pods differ by at most one per zone."""
    env = _constraints_envelope()
    zones = {
        n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone")
        for n in _items("Node", env)
    }
    by_owner: dict[str, list[dict]] = {}
    for p in _items("Pod", env):
        owners = p["metadata"].get("ownerReferences") or []
        if owners and p["spec"].get("nodeName"):
            by_owner.setdefault(owners[0]["uid"], []).append(p)
    checked = 0
    for c in _items("ReplicaSet", env) + _items("StatefulSet", env):
        spec = c["spec"]["template"]["spec"]
        pods = by_owner.get(c["metadata"]["uid"], [])
        anti = (spec.get("affinity") or {}).get("podAntiAffinity", {})
        if "requiredDuringSchedulingIgnoredDuringExecution" in anti:
            nodes = [p["spec"]["nodeName"] for p in pods]
            assert len(nodes) == len(set(nodes)), c["metadata"]["name"]
            checked += 1
        for constraint in spec.get("topologySpreadConstraints") or ():
            if constraint["whenUnsatisfiable"] == "DoNotSchedule" and pods:
                per_zone = Counter(zones[p["spec"]["nodeName"]] for p in pods)
                assert None not in per_zone
                assert max(per_zone.values()) - min(per_zone.values()) <= 1
                checked += 1
    assert checked
