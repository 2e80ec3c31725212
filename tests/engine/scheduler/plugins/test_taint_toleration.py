"""TaintToleration, transcribed from kube-scheduler's tainttoleration/taint_toleration_test.go
(TestTaintTolerationScore, TestTaintTolerationFilter; v1.35 for the filter's reason, which no
longer names the taint: "node(s) had untolerated taint(s)")."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster, Node, Pod, Snapshot, Taint, Toleration
from service.engine.scheduler.framework import UNRESOLVABLE, CycleState
from service.engine.scheduler.plugins.taint_toleration import TaintToleration
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS, settings_for
from tests.engine.scheduler.helpers import node, pod
from tests.engine.scheduler.plugins.helpers import filter_status, normalized_scores
from tests.engine.scheduler.plugins.node_batches import check_batches

PREFER = "PreferNoSchedule"


def _tol(key, value="", effect="", operator="Equal"):
    return Toleration(key=key, operator=operator, value=value, effect=effect)


def _taint(key, value, effect):
    return Taint(key=key, value=value, effect=effect)


@pytest.mark.parametrize(
    ("tolerations", "taints", "expected"),
    [
        pytest.param(
            [_tol("foo", "bar", PREFER)],
            [[_taint("foo", "bar", PREFER)], [_taint("foo", "blah", PREFER)]],
            [100, 0],
            id="node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
        ),
        pytest.param(
            [_tol("cpu-type", "arm64", PREFER), _tol("disk-type", "ssd", PREFER)],
            [
                [],
                [_taint("cpu-type", "arm64", PREFER)],
                [_taint("cpu-type", "arm64", PREFER), _taint("disk-type", "ssd", PREFER)],
            ],
            [100, 100, 100],
            id="the nodes that all of their taints are tolerated by the pod, get the same score",
        ),
        pytest.param(
            [_tol("foo", "bar", PREFER)],
            [
                [],
                [_taint("cpu-type", "arm64", PREFER)],
                [_taint("cpu-type", "arm64", PREFER), _taint("disk-type", "ssd", PREFER)],
            ],
            [100, 50, 0],
            id="the more intolerable taints a node has, the lower score it gets",
        ),
        pytest.param(
            [_tol("cpu-type", "arm64", "NoSchedule"), _tol("disk-type", "ssd", "NoSchedule")],
            [
                [],
                [_taint("cpu-type", "arm64", "NoSchedule")],
                [_taint("cpu-type", "arm64", PREFER), _taint("disk-type", "ssd", PREFER)],
            ],
            [100, 100, 0],
            id="only taints and tolerations that have effect PreferNoSchedule are checked",
        ),
        pytest.param(
            [],
            [[], [_taint("cpu-type", "arm64", PREFER)]],
            [100, 0],
            id="Default behaviour No taints and tolerations, lands on node with no taints",
        ),
    ],
)
def test_taint_toleration_score(tolerations, taints, expected) -> None:
    nodes = [node(f"node{chr(65 + i)}", taints=tuple(t)) for i, t in enumerate(taints)]
    incoming = pod("pod1", tolerations=tuple(tolerations))
    assert normalized_scores("TaintToleration", incoming, nodes) == expected


REASON = "node(s) had untolerated taint(s)"


@pytest.mark.parametrize(
    ("tolerations", "taints", "rejected"),
    [
        pytest.param(
            [],
            [_taint("dedicated", "user1", "NoSchedule")],
            True,
            id="A pod having no tolerations can't be scheduled onto a node with nonempty taints",
        ),
        pytest.param(
            [_tol("dedicated", "user1", "NoSchedule")],
            [_taint("dedicated", "user1", "NoSchedule")],
            False,
            id="A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
        ),
        pytest.param(
            [_tol("dedicated", "user2", "NoSchedule")],
            [_taint("dedicated", "user1", "NoSchedule")],
            True,
            id="A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
        ),
        pytest.param(
            [_tol("foo", effect="NoSchedule", operator="Exists")],
            [_taint("foo", "bar", "NoSchedule")],
            False,
            id="A pod can be scheduled onto the node, with a toleration uses operator Exists",
        ),
        pytest.param(
            [
                _tol("dedicated", "user2", "NoSchedule"),
                _tol("foo", effect="NoSchedule", operator="Exists"),
            ],
            [_taint("dedicated", "user2", "NoSchedule"), _taint("foo", "bar", "NoSchedule")],
            False,
            id="A pod has multiple tolerations, node has multiple taints, all the taints are tolerated",
        ),
        pytest.param(
            [_tol("foo", "bar", PREFER)],
            [_taint("foo", "bar", "NoSchedule")],
            True,
            id="toleration keys and values match but (non-empty) effect doesn't match",
        ),
        pytest.param(
            [_tol("foo", "bar")],
            [_taint("foo", "bar", "NoSchedule")],
            False,
            id="toleration with empty effect matches a NoSchedule taint",
        ),
        pytest.param(
            [_tol("dedicated", "user2", "NoSchedule")],
            [_taint("dedicated", "user1", PREFER)],
            False,
            id="a PreferNoSchedule taint does not filter",
        ),
        pytest.param(
            [],
            [_taint("dedicated", "user1", PREFER)],
            False,
            id="The pod has no toleration, but the effect of taint on node is PreferNoSchedule",
        ),
    ],
)
def test_taint_toleration_filter(tolerations, taints, rejected) -> None:
    status = filter_status(
        "TaintToleration",
        pod("pod1", tolerations=tuple(tolerations)),
        node("nodeA", taints=tuple(taints)),
    )
    if rejected:
        assert (status.code, status.reasons, status.plugin) == (
            UNRESOLVABLE,
            (REASON,),
            "TaintToleration",
        )
    else:
        assert status.is_success


# --- the batches (FiltersNodes, ScoresNodes) held to Filter and Score node by node ---


@pytest.mark.parametrize("seed", range(40))
def test_batches_equal_per_node(seed):
    check_batches("TaintToleration", seed)


@pytest.mark.parametrize("seed", range(4))
def test_batches_equal_per_node_with_the_taint_in_the_reason(seed):
    settings = settings_for("1.34")
    assert settings.taint_reason_names_taint
    check_batches("TaintToleration", seed, settings=settings)


def test_toleration_seconds_share_a_table_but_effects_do_not():
    """The key of a pod's answers is what matching reads of its tolerations: two pods
    differing in tolerationSeconds share them, pods differing in effect do not."""
    nodes = (
        Node(name="a", taints=(Taint(key="k", effect="NoSchedule"),)),
        Node(name="b", taints=(Taint(key="k", effect="NoExecute"),)),
        Node(name="c"),
    )
    view = scheduler_view(Cluster(Snapshot(nodes=nodes)), DEFAULT_SETTINGS)
    plugin = TaintToleration(settings=DEFAULT_SETTINGS)
    answers = []
    for effect, seconds in (("NoSchedule", 30), ("NoSchedule", 60), ("NoExecute", 30)):
        tol = Toleration(key="k", operator="Exists", effect=effect, toleration_seconds=seconds)
        pod = Pod(namespace="d", name="p", tolerations=(tol,))
        answers.append(
            [
                s is None
                for s in plugin.filter_nodes(CycleState(pod, view, DEFAULT_SETTINGS), view.nodes)
            ]
        )
    assert answers == [[True, False, True], [True, False, True], [False, True, True]]


def test_a_pod_tolerating_every_taint_passes_every_node_unfiltered():
    plugin = TaintToleration(settings=DEFAULT_SETTINGS)
    every = Pod(namespace="d", name="p", tolerations=(Toleration(operator="Exists"),))
    some = Pod(namespace="d", name="p", tolerations=(Toleration(key="k", operator="Exists"),))
    assert not plugin.can_reject(CycleState(every, None, DEFAULT_SETTINGS))
    assert plugin.can_reject(CycleState(some, None, DEFAULT_SETTINGS))
