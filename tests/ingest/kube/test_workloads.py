"""What the scheduler's plugins read of Namespaces, Services and the workload controllers,
kept at ingest (``ingest/kube/workloads.py``)."""

from __future__ import annotations

from tests.conftest import snapshot_from_objects


def test_namespaces_services_and_controllers_are_kept() -> None:
    snap = snapshot_from_objects(
        [
            {"kind": "Namespace", "metadata": {"name": "team", "labels": {"tier": "gold"}}},
            {
                "kind": "Service",
                "metadata": {"name": "web", "namespace": "team"},
                "spec": {"selector": {"app": "web"}},
            },
            {
                "kind": "ReplicaSet",
                "metadata": {"name": "web-1", "namespace": "team"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}},
            },
            {
                "kind": "StatefulSet",
                "metadata": {"name": "db", "namespace": "team"},
                "spec": {"selector": {"matchExpressions": [{"key": "app", "operator": "Exists"}]}},
            },
            {
                "kind": "ReplicationController",
                "metadata": {"name": "old", "namespace": "team"},
                "spec": {"selector": {"app": "old"}},
            },
        ]
    )
    assert snap.namespaces[0].labels == {"tier": "gold"}
    assert snap.services[0].selector == {"app": "web"}
    kinds = {c.kind: c for c in snap.controllers}
    assert kinds["ReplicaSet"].selector.match_labels == {"app": "web"}
    assert kinds["StatefulSet"].selector.match_expressions[0].operator == "Exists"
    assert kinds["ReplicationController"].selector.match_labels == {"app": "old"}


def test_a_pdb_keeps_what_the_eviction_api_reads() -> None:
    snapshot = snapshot_from_objects(
        [
            {
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": "web", "namespace": "shop", "generation": 3},
                "spec": {
                    "selector": {"matchLabels": {"app": "web"}},
                    "unhealthyPodEvictionPolicy": "AlwaysAllow",
                },
                "status": {
                    "disruptionsAllowed": 1,
                    "currentHealthy": 4,
                    "desiredHealthy": 3,
                    "expectedPods": 5,
                    "observedGeneration": 2,
                },
            }
        ]
    )
    (pdb,) = snapshot.pdbs
    assert (pdb.current_healthy, pdb.desired_healthy, pdb.expected_pods) == (4, 3, 5)
    assert (pdb.generation, pdb.observed_generation) == (3, 2)
    assert pdb.unhealthy_pod_eviction_policy == "AlwaysAllow"


def test_a_pdb_without_those_fields_reads_as_unset() -> None:
    snapshot = snapshot_from_objects(
        [{"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
          "metadata": {"name": "web"}, "spec": {}, "status": {}}]
    )  # fmt: skip
    (pdb,) = snapshot.pdbs
    assert (pdb.generation, pdb.observed_generation, pdb.unhealthy_pod_eviction_policy) == (
        0,
        0,
        "",
    )
