"""Held resources for StatefulSet pods under upgrade (docs/decisions/placement.md, "Holds").

The situation the hold exists for: node n1 is full except for the room web-0 occupied. web-0
is being replaced (deleted, or already gone); a pending lower-priority Deployment pod would
take the freed capacity, and web-0's replacement would stay Pending."""

from __future__ import annotations

from service.engine.objects import OwnerReference
from service.engine.scheduler.holds import Hold
from service.engine.scheduler.placement import place
from service.engine.scheduler.preemption import preempt
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import GI, cluster, node, pod

STS = OwnerReference(kind="StatefulSet", name="web", uid="sts-uid", controller=True)
RS = OwnerReference(kind="ReplicaSet", name="api-7d9", uid="rs-uid", controller=True)
HELD = "node(s) had resources held for default/web-0"


def _nodes():
    return [node("n1", cpu=4000, memory=8 * GI), node("n2", cpu=4000, memory=8 * GI)]


def _others():
    # n1: 2 cpu used by others (web-0 used the other 2); n2 full.
    return [
        pod("db", 2000, GI, node="n1", priority=100),
        pod("batch", 4000, GI, node="n2", priority=0),
    ]


def _replacement(**kw):
    return pod("web-0", 2000, 2 * GI, priority=100, owner=STS, uid="web-0-new", **kw)


def _deployment_pod(priority=0):
    return pod("api-x", 2000, GI, priority=priority, owner=RS)


def _reasons(outcome, name):
    return next(n.reasons for n in outcome.nodes if n.node_name == name)


EXPLICIT = Hold(
    node_name="n1",
    namespace="default",
    name="web-0",
    owner_uid="sts-uid",
    requests={"cpu": 2000, "memory": 2 * GI},
    priority=100,
)


def test_without_holds_the_deployment_pod_takes_the_capacity() -> None:
    """Upstream behaviour once web-0 is gone: the Deployment pod fits n1."""
    out = place(cluster(_nodes(), _others()), _deployment_pod(), settings=DEFAULT_SETTINGS)
    assert out.selected_node == "n1"


def test_explicit_hold_keeps_the_capacity_from_the_deployment_pod() -> None:
    out = place(
        cluster(_nodes(), _others()), _deployment_pod(), holds=[EXPLICIT], settings=DEFAULT_SETTINGS
    )
    assert out.selected_node is None
    assert _reasons(out, "n1") == ["Insufficient cpu", HELD]
    assert _reasons(out, "n2") == ["Insufficient cpu"]  # not held: no hold reason


def test_explicit_hold_is_free_for_the_replacement() -> None:
    out = place(
        cluster(_nodes(), _others()), _replacement(), holds=[EXPLICIT], settings=DEFAULT_SETTINGS
    )
    assert out.selected_node == "n1"
    assert out.holds_freed == {"n1": ["default/web-0"]}


def test_higher_priority_pod_ignores_the_hold() -> None:
    """A hold acts as a nominated pod: a higher-priority pod may take the capacity."""
    out = place(
        cluster(_nodes(), _others()),
        _deployment_pod(priority=1000),
        holds=[EXPLICIT],
        settings=DEFAULT_SETTINGS,
    )
    assert out.selected_node == "n1"


def test_replacement_needs_the_same_owner() -> None:
    other_owner = OwnerReference(kind="StatefulSet", name="web", uid="other", controller=True)
    imposter = pod("web-0", 2000, 2 * GI, priority=100, owner=other_owner)
    out = place(cluster(_nodes(), _others()), imposter, holds=[EXPLICIT], settings=DEFAULT_SETTINGS)
    assert out.selected_node is None
    assert HELD in _reasons(out, "n1")


def _terminating_web0():
    return pod("web-0", 2000, 2 * GI, node="n1", priority=100, owner=STS, deleting=True)


def test_terminating_predecessor_is_freed_only_for_its_replacement() -> None:
    pods = [*_others(), _terminating_web0()]
    # option off: as upstream, the terminating pod still counts on n1
    out = place(cluster(_nodes(), pods), _replacement(), settings=DEFAULT_SETTINGS)
    assert out.selected_node is None
    assert _reasons(out, "n1") == ["Insufficient cpu"]
    # option on: its replacement sees n1's capacity free, and scores it without web-0
    out = place(
        cluster(_nodes(), pods),
        _replacement(),
        hold_statefulset_upgrades=True,
        settings=DEFAULT_SETTINGS,
    )
    assert out.selected_node == "n1"
    n1 = next(n for n in out.nodes if n.node_name == "n1")
    # cpu 4000/4000 -> 0, memory 3Gi/8Gi -> 62: (0 + 62) / 2 = 31; balanced: fractions 1 and
    # 0.375, std 0.3125 -> 68
    assert n1.scores["NodeResourcesFit"] == 31
    assert n1.scores["NodeResourcesBalancedAllocation"] == 68


def test_terminating_predecessor_holds_against_lower_priority_pods() -> None:
    pods = [*_others(), _terminating_web0()]
    out = place(
        cluster(_nodes(), pods),
        _deployment_pod(),
        hold_statefulset_upgrades=True,
        settings=DEFAULT_SETTINGS,
    )
    assert out.selected_node is None
    assert _reasons(out, "n1") == ["Insufficient cpu", HELD]
    # a higher-priority pod sees web-0 as the ordinary terminating pod it is: no hold reason
    out = place(
        cluster(_nodes(), pods),
        _deployment_pod(priority=1000),
        hold_statefulset_upgrades=True,
        settings=DEFAULT_SETTINGS,
    )
    assert _reasons(out, "n1") == ["Insufficient cpu"]


def test_preemption_counts_the_hold() -> None:
    """A Deployment pod at priority 50 would preempt 'filler' (priority 0) on n1 and take the
    room; with the hold, n1 cannot be made to fit by preempting filler alone."""
    nodes = [node("n1", cpu=4000, memory=8 * GI)]
    pods = [
        pod("filler", 1000, GI, node="n1", priority=0),
        pod("db", 1000, GI, node="n1", priority=100),
    ]
    incoming = pod("api-x", 3000, GI, priority=50, owner=RS)
    out = preempt(cluster(nodes, pods), incoming, settings=DEFAULT_SETTINGS)
    assert out.nominated_node_name == "n1"
    assert [v.name for v in out.victims] == ["filler"]
    out = preempt(cluster(nodes, pods), incoming, holds=[EXPLICIT], settings=DEFAULT_SETTINGS)
    assert out.nominated_node_name == ""
    # the filter verdict is the same with or without the hold (2000m free < 3000m) ...
    assert out.filter_statuses["n1"].reasons == ("Insufficient cpu",)
    # ... but preemption on n1 fails only because of it, and says so
    assert out.dry_run_statuses["n1"].reasons == ("Insufficient cpu", HELD)
    assert out.message == (
        "preemption: 0/1 nodes are available: 1 Insufficient cpu, 1 " + HELD + "."
    )


def test_replacement_preemption_uses_the_freed_predecessor_resources() -> None:
    """With the option on, web-0's replacement does not count its terminating predecessor,
    and never offers it as a victim."""
    nodes = [node("n1", cpu=4000, memory=8 * GI)]
    pods = [
        pod("db", 1000, GI, node="n1", priority=200),
        pod("filler", 1500, GI, node="n1", priority=0),
        _terminating_web0(),
    ]
    out = preempt(
        cluster(nodes, pods),
        _replacement(),
        hold_statefulset_upgrades=True,
        settings=DEFAULT_SETTINGS,
    )
    assert out.nominated_node_name == "n1"
    assert [v.name for v in out.victims] == ["filler"]
    out = preempt(cluster(nodes, pods), _replacement(), settings=DEFAULT_SETTINGS)
    # without the option the predecessor is an ordinary pod of equal priority (not a victim)
    # whose 2000m keep n1 too full even without filler
    assert out.victims == []
    assert out.nominated_node_name == ""
    assert out.dry_run_statuses["n1"].reasons == ("Insufficient cpu",)
