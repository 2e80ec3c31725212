"""The drain of nodes over a snapshot (engine/drain/drain.py): cordoning, a node whose
filters fail evicting nothing, budgets consumed across nodes, kubectl stopping at the first
failed node, recreated pods."""

from __future__ import annotations

from service.engine.drain import DrainOptions, drain_nodes
from tests.engine.drain.helpers import cluster_of, owned, pdb

WEB = {"matchLabels": {"app": "web"}}


def _fates(plan):
    return {f.pod.name: (f.outcome, f.reason) for n in plan.nodes for f in n.pods}


def test_the_drained_nodes_are_cordoned_and_the_evicted_pods_gone():
    cluster = cluster_of(
        owned("w1", "n1", "ReplicaSet", "web"),
        owned("other", "n2", "ReplicaSet", "web"),
    )
    plan = drain_nodes(cluster, ["n1"], DrainOptions())
    assert [n.name for n in plan.cluster.nodes if n.unschedulable] == ["n1"]
    assert [p.name for p in plan.cluster.snapshot.pods] == ["other"]
    assert plan.nodes[0].drained and _fates(plan) == {"w1": ("evicted", "Evicted")}
    assert not cluster.nodes[0].unschedulable  # the snapshot itself is untouched


def test_one_error_pod_keeps_every_pod_of_its_node():
    cluster = cluster_of(
        owned("bare", "n1", None),
        owned("w1", "n1", "ReplicaSet", "web"),
        owned("ds", "n1", "DaemonSet", "agent"),
    )
    plan = drain_nodes(cluster, ["n1"], DrainOptions())
    assert _fates(plan) == {
        "bare": ("kept", "Unreplicated"),
        "w1": ("kept", "NodeNotDrained"),
        "ds": ("kept", "DaemonSet"),
    }
    node = plan.nodes[0]
    assert not node.drained
    assert node.error == (
        "[cannot delete Pods that declare no controller (use --force to "
        "override): default/bare, cannot delete DaemonSet-managed Pods (use "
        "--ignore-daemonsets to ignore): default/ds]"
    )
    assert len(plan.cluster.snapshot.pods) == 3 and plan.recreated == []


def test_budgets_are_consumed_across_nodes_in_order_and_block_the_rest():
    cluster = cluster_of(
        owned("w-a", "n1", "ReplicaSet", "web"),
        owned("w-b", "n1", "ReplicaSet", "web"),
        owned("w-c", "n2", "ReplicaSet", "web"),
        pdb("web-pdb", WEB, 2, desiredHealthy=3, currentHealthy=5),
    )
    plan = drain_nodes(cluster, ["n1", "n2"], DrainOptions(ignore_errors=True))
    assert _fates(plan) == {
        "w-a": ("evicted", "Evicted"),
        "w-b": ("evicted", "Evicted"),
        "w-c": ("blocked", "DisruptionBudget"),
    }
    blocked = plan.nodes[1].pods[0]
    assert blocked.eviction.pdb == "web-pdb" and blocked.eviction.disruptions_allowed == 0
    assert [n.drained for n in plan.nodes] == [True, False]
    assert plan.nodes[1].error == (
        'error when evicting pods/"w-c" -n "default" (will retry after 5s): Cannot evict pod '
        "as it would violate the pod's disruption budget. The disruption budget web-pdb needs "
        "3 healthy pods and has 5 currently"
    )
    assert plan.budgets == {("default", "web-pdb"): 0}


def test_kubectl_stops_at_the_first_node_it_cannot_drain_unless_ignore_errors():
    cluster = cluster_of(
        owned("bare", "n1", None),
        owned("w", "n2", "ReplicaSet", "web"),
    )
    plan = drain_nodes(cluster, ["n1", "n2"], DrainOptions())
    assert plan.stopped_at == "n1"
    assert _fates(plan)["w"] == ("kept", "NotReached")
    assert [n.name for n in plan.cluster.nodes if n.unschedulable] == ["n1", "n2"]
    plan = drain_nodes(cluster, ["n1", "n2"], DrainOptions(ignore_errors=True))
    assert plan.stopped_at is None and _fates(plan)["w"] == ("evicted", "Evicted")


def test_disable_eviction_deletes_through_the_budget():
    cluster = cluster_of(owned("w", "n1", "ReplicaSet", "web"), pdb("p", WEB, 0))
    plan = drain_nodes(cluster, ["n1"], DrainOptions(disable_eviction=True))
    assert _fates(plan) == {"w": ("evicted", "Deleted")}
    assert plan.budgets == {}


def test_controllers_recreate_their_pods_and_bare_pods_are_gone():
    cluster = cluster_of(
        owned("web-1", "n1", "ReplicaSet", "web"),
        owned("db-0", "n1", "StatefulSet", "db"),
        owned("job-x", "n1", "Job", "batch"),
        owned("rc-y", "n1", "ReplicationController", "legacy"),
        owned("bare", "n1", None),
        owned("done", "n1", "ReplicaSet", "web", phase="Succeeded"),
        owned("crd", "n1", "FooOperator", "foo"),
    )
    plan = drain_nodes(cluster, ["n1"], DrainOptions(force=True))
    fates = {f.pod.name: f for f in plan.nodes[0].pods}
    assert all(f.outcome == "evicted" for f in fates.values())
    assert {n: f.recreated for n, f in fates.items()} == {
        "web-1": True, "db-0": True, "job-x": True, "rc-y": True,
        "bare": False, "done": False, "crd": False,
    }  # fmt: skip
    copies = {f.pod.name: f.replacement for f in fates.values() if f.replacement}
    assert copies["db-0"].name == "db-0"
    assert copies["web-1"].name.startswith("web-") and copies["web-1"].name != "web-1"
    assert copies["job-x"].name.startswith("batch-")
    for original, copy in ((fates[n].pod, c) for n, c in copies.items()):
        assert copy.uid != original.uid and copy.node_name == "" and copy.phase == "Pending"
        assert copy.containers == original.containers and copy.labels == original.labels
    assert [p.name for p in plan.recreated] == [c.name for c in copies.values()]
    # Recreated names are stable: a replay names the same pods.
    again = drain_nodes(cluster, ["n1"], DrainOptions(force=True))
    assert [p.name for p in again.recreated] == [p.name for p in plan.recreated]


def test_mirror_and_ignored_daemonset_pods_stay_and_the_node_is_drained():
    mirror = owned("static", "n1", None)
    mirror["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "x"}
    cluster = cluster_of(mirror, owned("ds", "n1", "DaemonSet", "agent"))
    plan = drain_nodes(cluster, ["n1"], DrainOptions(ignore_daemonsets=True))
    assert _fates(plan) == {"static": ("kept", "MirrorPod"), "ds": ("kept", "DaemonSet")}
    assert plan.nodes[0].drained


def test_pods_are_listed_by_namespace_then_name():
    cluster = cluster_of(
        owned("b", "n1", "ReplicaSet", "x", namespace="zz"),
        owned("z", "n1", "ReplicaSet", "x"),
        owned("a", "n1", "ReplicaSet", "x"),
    )
    plan = drain_nodes(cluster, ["n1"], DrainOptions())
    assert [(f.pod.namespace, f.pod.name) for f in plan.nodes[0].pods] == [
        ("default", "a"), ("default", "z"), ("zz", "b"),
    ]  # fmt: skip
