"""Nominated pods (engine/scheduler/nominated.py): RunFilterPluginsWithNominatedPods, the
two-pass filter that reserves a nominated pod's room on its node for pods of no higher
priority, and which pods count as nominated."""

from __future__ import annotations

import pytest

from service.engine.scheduler.framework import SUCCESS, pod_info
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import cluster, cycle, filter_statuses, node, pod


@pytest.mark.parametrize(
    ("nominated_priority", "incoming_priority", "expected"),
    [
        pytest.param(10, 10, ("Insufficient cpu",), id="equal priority nomination holds"),
        pytest.param(20, 10, ("Insufficient cpu",), id="higher priority nomination holds"),
        pytest.param(5, 10, (), id="lower priority nomination is ignored"),
    ],
)
def test_nominated_pods_reserve_capacity(nominated_priority, incoming_priority, expected) -> None:
    n = node("n", cpu=1000)
    running = pod("running", 400, node="n", priority=0)
    waiting = pod("waiting", 400, priority=nominated_priority, nominated="n")
    status = filter_statuses([n], [running, waiting], pod("p", 400, priority=incoming_priority))[
        "n"
    ]
    assert status.reasons == expected


def test_nominated_pod_does_not_count_against_itself() -> None:
    n = node("n", cpu=1000)
    me = pod("p", 800, priority=10, nominated="n")
    cl = cluster([n], [me])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    fwk, ctx = cycle(me, view)
    prepare_nominated(ctx, view)
    assert ctx.nominated == {}
    assert fwk.run_filter_plugins_with_nominated(ctx, view.nodes[0]).code == SUCCESS


def test_nominated_pods_count_pod_slots_and_ports() -> None:
    n = node("n", pods=2)
    running = pod("running", 10, node="n")
    waiting = pod("waiting", 10, priority=0, nominated="n", host_ports=(8080,))
    status = filter_statuses([n], [running, waiting], pod("p", 10, priority=0))["n"]
    assert status.reasons == ("Too many pods",)
    status = filter_statuses([node("n")], [waiting], pod("p", 10, priority=0, host_ports=(8080,)))[
        "n"
    ]
    assert status.plugin == "NodePorts"


def test_nominated_pods_are_not_node_state() -> None:
    """Nominated pods are never part of NodeInfo: no Requested, no pod count."""
    cl = cluster([node("n")], [pod("waiting", 400, priority=0, nominated="n")])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    assert view.nodes[0].requested == {}
    assert view.nodes[0].pod_count == 0
    assert [pi.name for pi in view.nominated_for("n")] == ["waiting"]


def test_bound_pod_with_stale_nomination_is_not_nominated() -> None:
    cl = cluster([node("n")], [pod("bound", 400, node="n", nominated="n")])
    assert scheduler_view(cl, settings=DEFAULT_SETTINGS).nominated_for("n") == []


def _selection_by_hand(view, incoming) -> dict[str, list[str]]:
    """addGENominatedPods' selection pod by pod, as the plain loop makes it."""
    info = pod_info(incoming, DEFAULT_SETTINGS)
    out: dict[str, list[str]] = {}
    for name, pods in view.nominated.items():
        for pi in pods:
            if pi.priority >= info.priority and not pi.same_pod(info):
                out.setdefault(name, []).append(pi.key)
    return out


@pytest.mark.parametrize(
    "incoming",
    [
        pod("p", 100, priority=10),
        pod("p", 100, priority=5),
        pod("p", 100, priority=30),
        pod("w1", 100, priority=10, nominated="a"),  # in the map by UID
        pod("w1", 100, priority=10, uid=""),  # by key: its UID missing
        pod("other", 100, priority=10, uid="uid-default-w2"),  # another key, w2's UID
    ],
    ids=["p10", "p5", "p30", "itself", "itself-by-key", "same-uid"],
)
def test_kept_selection_is_the_plain_one(incoming) -> None:
    """The selection kept per nominator map and priority answers as the plain loop does,
    for every pod that may be in the map or not, cycle after cycle, shared or copied."""
    waiting = [
        pod("w1", 100, priority=10, nominated="a"),
        pod("w2", 100, priority=20, nominated="a"),
        pod("w3", 100, priority=5, nominated="b"),
        pod("w4", 100, priority=10, nominated="c"),
    ]
    view = scheduler_view(cluster([node("a"), node("b"), node("c")], waiting), DEFAULT_SETTINGS)
    for shared in (False, True, True, False):
        _, ctx = cycle(incoming, view)
        prepare_nominated(ctx, view, shared=shared)
        assert {n: [pi.key for pi in pods] for n, pods in ctx.nominated.items()} == (
            _selection_by_hand(view, incoming)
        )


def test_kept_selection_is_not_changed_by_a_cycle() -> None:
    """A cycle's lists are its own: holds appended to them do not reach the next cycle."""
    view = scheduler_view(
        cluster([node("a")], [pod("w", 100, priority=10, nominated="a")]), DEFAULT_SETTINGS
    )
    _, first = cycle(pod("p", 100, priority=0), view)
    prepare_nominated(first, view)
    first.nominated["a"].append(first.info)
    _, second = cycle(pod("q", 100, priority=0), view)
    second.nominated["b"] = [second.info]  # a hold added before the selection
    prepare_nominated(second, view)
    assert [pi.key for pi in second.nominated["a"]] == ["default/w"]
    assert list(second.nominated) == ["b", "a"]
