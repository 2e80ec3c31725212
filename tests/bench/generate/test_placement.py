"""bench/generate/placement.py: every bound pod fits its node as the scheduler would check
it, including its workload's anti-affinity and zone spreading."""

from __future__ import annotations

from collections import Counter

from tests.bench.generate.helpers import (
    constraints_envelope,
    items_of,
    quantity,
    sample_nodes,
    sample_pods,
)


def test_pods_reference_existing_nodes_within_allocatable() -> None:
    nodes = sample_nodes()
    per_node: Counter = Counter()
    cpu: Counter = Counter()
    memory: Counter = Counter()
    for pod in sample_pods():
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
                quantity(c["resources"].get("requests", {}).get(resource, "0"), milli=True)
                for c in spec["containers"]
                + [c for c in spec.get("initContainers", []) if c.get("restartPolicy")]
            )
            inits = max(
                (
                    quantity(c["resources"].get("requests", {}).get(resource, "0"), milli=True)
                    for c in spec.get("initContainers", [])
                ),
                default=0,
            )
            overhead = quantity(spec.get("overhead", {}).get(resource, "0"), milli=True)
            target[name] += max(regular, inits) + overhead
    assert per_node
    for name, count in per_node.items():
        allocatable = nodes[name]["status"]["allocatable"]
        assert count <= int(allocatable["pods"]) == 110
        assert cpu[name] <= quantity(allocatable["cpu"], milli=True)
        assert memory[name] <= quantity(allocatable["memory"], milli=True)
    counts = list(per_node.values())
    assert max(counts) > min(counts)  # pods per node vary


def test_pods_honour_their_workloads_anti_affinity_and_zone_spreading() -> None:
    """Required hostname anti-affinity: no two pods of the workload on one node; a zone
    DoNotSchedule constraint of maxSkew 1: placed pods differ by at most one per zone."""
    env = constraints_envelope()
    zones = {
        n["metadata"]["name"]: n["metadata"]["labels"].get("topology.kubernetes.io/zone")
        for n in items_of("Node", env)
    }
    by_owner: dict[str, list[dict]] = {}
    for p in items_of("Pod", env):
        owners = p["metadata"].get("ownerReferences") or []
        if owners and p["spec"].get("nodeName"):
            by_owner.setdefault(owners[0]["uid"], []).append(p)
    checked = 0
    for c in items_of("ReplicaSet", env) + items_of("StatefulSet", env):
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
