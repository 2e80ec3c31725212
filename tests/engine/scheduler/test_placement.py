"""Placement: filter every node, score the feasible ones, choose."""

from __future__ import annotations

import pytest

from service.decisions.placement import scoring_profile
from service.engine.scheduler.placement import place
from service.engine.scheduler.profile import MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO
from service.engine.version import DEFAULT_SETTINGS, settings_for
from tests.engine.scheduler.helpers import GI, cluster, node, pod


def _by_name(outcome):
    return {n.node_name: n for n in outcome.nodes}


@pytest.mark.parametrize(
    ("release", "balanced_a", "balanced_b"),
    [("1.35", 93, 93), ("1.36", 78, 71), ("1.37", 78, 71)],
)
def test_default_profile_scores_and_total(release, balanced_a, balanced_b) -> None:
    nodes = [node("a", cpu=4000, memory=8 * GI), node("b", cpu=4000, memory=8 * GI)]
    pods = [pod("busy", 2000, 6 * GI, node="a")]
    out = place(cluster(nodes, pods), pod("p", 1000, GI), settings=settings_for(release))
    a, b = _by_name(out)["a"], _by_name(out)["b"]
    # a: cpu 3000/4000 -> 25, memory 7/8 -> 12: 18; balanced |0.75 - 0.875| / 2 -> 93; from
    # 1.36 the change from the balance without the pod (|0.5 - 0.75| / 2 -> 87):
    # 50 + (50 + 93 - 87) / 2 = 78 (kubernetes#135573)
    # VolumeBinding scores from 1.37 (StorageCapacityScoring, KEP-4049), but a pod without
    # claims has no entry (upstream's would be 0 on every node: volume_binding.py).
    assert a.scores == {
        "TaintToleration": 100,
        "NodeResourcesFit": 18,
        "DynamicResources": 0,
        "NodeResourcesBalancedAllocation": balanced_a,
        "ImageLocality": 0,
    }
    assert a.total == 3 * 100 + 18 + balanced_a
    # b: cpu 1000/4000 -> 75, memory 1/8 -> 87: 81; balanced |0.25 - 0.125| / 2 -> 93; from
    # 1.36 against the empty node's 100: 50 + (50 + 93 - 100) / 2 = 71
    assert b.scores["NodeResourcesFit"] == 81
    assert b.scores["NodeResourcesBalancedAllocation"] == balanced_b
    assert out.selected_node == "b"
    assert [n.node_name for n in out.nodes] == ["a", "b"]  # snapshot order


def test_most_allocated_packs() -> None:
    nodes = [node("a", cpu=4000, memory=8 * GI), node("b", cpu=4000, memory=8 * GI)]
    pods = [pod("busy", 2000, 4 * GI, node="a")]
    profile = scoring_profile(
        {"strategy": MOST_ALLOCATED, "balancedAllocation": False}, DEFAULT_SETTINGS
    )
    out = place(
        cluster(nodes, pods), pod("p", 1000, GI), profile=profile, settings=DEFAULT_SETTINGS
    )
    assert out.selected_node == "a"
    assert _by_name(out)["a"].scores["NodeResourcesFit"] == 68  # 75 and 62 -> 68
    assert "NodeResourcesBalancedAllocation" not in _by_name(out)["a"].scores


def test_requested_to_capacity_ratio_shape_on_the_user_scale() -> None:
    nodes = [node("a", cpu=4000, memory=8 * GI)]
    profile = scoring_profile(
        {
            "strategy": REQUESTED_TO_CAPACITY_RATIO,
            "shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}],
            "balancedAllocation": False,
        },
        DEFAULT_SETTINGS,
    )
    out = place(
        cluster(nodes, []), pod("p", 1000, 2 * GI), profile=profile, settings=DEFAULT_SETTINGS
    )
    assert out.nodes[0].scores["NodeResourcesFit"] == 25  # utilization 25 -> 2.5 * 10


def test_ties_go_to_the_first_node_in_snapshot_order() -> None:
    nodes = [node("z"), node("m"), node("a")]
    out = place(cluster(nodes, []), pod("p", 100, GI), settings=DEFAULT_SETTINGS)
    assert len({n.total for n in out.nodes}) == 1
    assert out.selected_node == "z"


def test_infeasible_nodes_have_reasons_and_no_scores() -> None:
    nodes = [node("a", cpu=1000), node("b", cpu=1000, unschedulable=True)]
    out = place(
        cluster(nodes, [pod("busy", 800, node="a")]), pod("p", 500), settings=DEFAULT_SETTINGS
    )
    assert out.selected_node is None
    a, b = _by_name(out)["a"], _by_name(out)["b"]
    assert (a.feasible, a.reasons, a.scores, a.total) == (False, ["Insufficient cpu"], None, None)
    assert b.reasons == ["node(s) were unschedulable"]
    assert out.message == (
        "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) were unschedulable."
    )


def test_nominated_node_is_taken_without_scoring_the_others() -> None:
    nodes = [node("a", cpu=4000), node("b", cpu=4000)]
    pods = [pod("busy", 3000, node="b")]
    out = place(cluster(nodes, pods), pod("p", 500, nominated="b"), settings=DEFAULT_SETTINGS)
    assert out.selected_node == "b"
    assert out.nominated_node_chosen
    # a would have scored higher
    assert _by_name(out)["a"].total > _by_name(out)["b"].total


def test_best_effort_pod_skips_balanced_allocation() -> None:
    out = place(cluster([node("a")], []), pod("p"), settings=DEFAULT_SETTINGS)
    assert "NodeResourcesBalancedAllocation" in out.skipped_plugins
    # non-zero defaults: cpu 100m/4000m -> 97 (97.5), memory 200Mi/8Gi -> 97 (97.6)
    assert "NodeResourcesBalancedAllocation" not in out.nodes[0].scores
    assert out.nodes[0].scores["NodeResourcesFit"] == 97


def test_volume_plugins_are_modelled() -> None:
    out = place(
        cluster([node("a")], []),
        pod("p", 100, unmodelled=("VolumeBinding",)),
        settings=DEFAULT_SETTINGS,
    )
    assert out.not_modelled == ()


def test_dynamic_resources_is_modelled() -> None:
    out = place(cluster([node("a")], []), pod("p", 100), settings=DEFAULT_SETTINGS)
    assert out.not_modelled == ()
