"""What the scheduler's plugins read of Namespaces, Services and the workload controllers,
kept at ingest (``ingest/kube/workloads.py``)."""

from __future__ import annotations

from service.ingest.kube import snapshot_from_objects


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
