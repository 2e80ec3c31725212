"""bench/generate/cluster.py: the List as a whole (counts of each kind, the API server's
order) and its smaller objects: PDBs, PriorityClasses and Leases."""

from __future__ import annotations

from collections import Counter

import pytest

from bench.generate import generate
from tests.bench.generate.helpers import (
    items_of,
    sample_envelope,
    sample_pods,
)


@pytest.mark.parametrize(("nodes", "pods"), [(1, 0), (3, 5), (3, 400), (10, 300), (20, 600)])
def test_counts(nodes: int, pods: int) -> None:
    env = generate(nodes, pods, 11)
    kinds = Counter(i["kind"] for i in env["objects"]["items"])
    assert kinds["Node"] == nodes
    assert kinds["Pod"] == pods
    assert kinds["PriorityClass"] == 5
    node_leases = [
        i for i in items_of("Lease", env) if i["metadata"]["namespace"] == "kube-node-lease"
    ]
    assert sorted(lease["metadata"]["name"] for lease in node_leases) == sorted(
        n["metadata"]["name"] for n in items_of("Node", env)
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


def test_node_names_and_object_order_follow_the_api_server() -> None:
    items = sample_envelope()["objects"]["items"]
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
    pods = sample_pods()
    keys = [f"{p['metadata']['namespace']}/{p['metadata']['name']}" for p in pods]
    assert keys == sorted(keys)
    assert len(set(keys)) == len(keys)
    uids = [i["metadata"]["uid"] for i in items]
    assert len(set(uids)) == len(uids)


def test_pdbs_priority_classes_and_leases() -> None:
    pdbs = items_of("PodDisruptionBudget")
    assert pdbs
    pods = sample_pods()
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

    classes = {c["metadata"]["name"]: c for c in items_of("PriorityClass")}
    assert {k: c["value"] for k, c in classes.items()} == {
        "system-node-critical": 2000001000,
        "system-cluster-critical": 2000000000,
        "high": 100000,
        "default": 0,
        "low": -10,
    }
    assert [k for k, c in classes.items() if c.get("globalDefault")] == ["default"]
    assert classes["low"]["preemptionPolicy"] == "Never"

    for lease in items_of("Lease"):
        if lease["metadata"]["namespace"] == "kube-node-lease":
            assert lease["spec"]["leaseDurationSeconds"] == 40
            assert lease["spec"]["holderIdentity"] == lease["metadata"]["name"]
            assert lease["spec"]["renewTime"].endswith("Z")
