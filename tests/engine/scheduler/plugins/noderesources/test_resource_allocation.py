"""Scoring arithmetic beyond the conformance data: Go integer/float semantics, skipped
resources, configuration validation."""

from __future__ import annotations

import pytest

from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    BalancedAllocationScorer,
    ResourceAllocationScorer,
    ResourceSpec,
    ScoringError,
    _go_round,
    balanced_resource_score,
    broken_linear_function,
    least_requested_score,
    least_resource_score,
    most_requested_score,
    most_resource_score,
    requested_to_capacity_ratio_score,
    validate_balanced_resources,
    validate_scoring_strategy,
)
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import pod


@pytest.mark.parametrize(
    ("x", "want"),
    [(0.5, 1), (1.5, 2), (2.5, 3), (-0.5, -1), (0.49999999999999994, 0), (41.5, 42), (7.0, 7)],
)
def test_go_round_is_half_away_from_zero(x, want) -> None:
    assert _go_round(x) == want


def test_broken_linear_truncates_toward_zero_on_decreasing_segments() -> None:
    f = broken_linear_function([(0, 100), (30, 0)])
    # 100 + (0 - 100) * 1 / 30 = 100 - 3.33 -> Go truncates -3.33 to -3: 97 (floor gives 96)
    assert f(1) == 97
    assert f(29) == 4  # 100 - 96.67 -> 100 - 96
    assert f(31) == 0


def test_least_and_most_use_integer_division_twice() -> None:
    # per resource: (10-3)*100/10 = 70, (7-5)*100/7 = 28 (28.57 truncated); weights 1, 2:
    # (70 + 56) / 3 = 42
    assert least_resource_score([3, 5], [10, 7], [1, 2]) == 42
    # most: 30, 71 (71.4): (30 + 142) / 3 = 57
    assert most_resource_score([3, 5], [10, 7], [1, 2]) == 57
    # over capacity: least 0, most capped at 100
    assert least_resource_score([11], [10], [1]) == 0
    assert most_resource_score([11], [10], [1]) == 100


def test_zero_allocatable_contributes_no_weight() -> None:
    assert least_resource_score([5, 0], [10, 0], [1, 100]) == 50
    assert least_resource_score([0, 0], [0, 0], [1, 1]) == 0


def test_requested_to_capacity_ratio_drops_zero_scores_from_the_weights() -> None:
    shape = broken_linear_function([(0, 0), (100, 100)])
    # utilizations 0 and 50: scores 0 and 50; the 0 is dropped entirely: 50 / 1
    assert requested_to_capacity_ratio_score([0, 5], [10, 10], [3, 1], shape) == 50
    # 33 and 66 with weights 1 and 2: (33 + 132) / 3 = 55.0
    assert requested_to_capacity_ratio_score([33, 66], [100, 100], [1, 2], shape) == 55
    # 1 and 2 with weights 1 and 1: 1.5 rounds half away from zero to 2
    assert requested_to_capacity_ratio_score([1, 2], [100, 100], [1, 1], shape) == 2


def test_balanced_allocation_std_dev() -> None:
    assert balanced_resource_score([5, 5], [10, 10]) == 100
    assert balanced_resource_score([10, 0], [10, 10]) == 50
    assert balanced_resource_score([20, 0], [10, 10]) == 50  # fraction capped at 1
    # three resources: fractions 0.2, 0.5, 0.8: population std = 0.2449... -> 75
    assert balanced_resource_score([2, 5, 8], [10, 10, 10]) == 75
    assert balanced_resource_score([3], [10]) == 100  # one fraction: std 0


def test_fit_scorer_uses_non_zero_requests_and_balanced_actual_ones() -> None:
    """A container without requests counts 100m / 200Mi for Least/Most, nothing for
    BalancedAllocation (which skips a pod requesting none of its resources)."""
    empty = pod("p")  # one container, no requests
    fit = ResourceAllocationScorer(MOST_ALLOCATED)
    prepared = fit.prepare(empty, settings=DEFAULT_SETTINGS)
    alloc = {"cpu": 1000, "memory": 1000 * 1024 * 1024}
    # cpu 100/1000 -> 10, memory 200Mi/1000Mi -> 20: 15
    assert fit.score(prepared, alloc, {}, 0, 0) == 15
    assert BalancedAllocationScorer().prepare(empty, settings=DEFAULT_SETTINGS) is None


def test_extended_resource_not_requested_is_skipped() -> None:
    fit = ResourceAllocationScorer(
        LEAST_ALLOCATED, [ResourceSpec("cpu", 1), ResourceSpec("example.com/gpu", 5)]
    )
    prepared = fit.prepare(pod("p", 500), settings=DEFAULT_SETTINGS)
    # the gpu line would score 100 with weight 5 if it were counted
    assert fit.score(prepared, {"cpu": 1000, "example.com/gpu": 4}, {}, 0, 0) == 50


def test_empty_resources_is_a_score_error() -> None:
    fit = ResourceAllocationScorer(LEAST_ALLOCATED, [])
    with pytest.raises(ScoringError, match="resources not found"):
        fit.score(fit.prepare(pod("p", 1), settings=DEFAULT_SETTINGS), {"cpu": 1}, {}, 0, 0)


@pytest.mark.parametrize(
    ("strategy", "resources", "shape", "paths"),
    [
        pytest.param("Foo", [], None, ["scoringStrategy.type"], id="unknown strategy"),
        pytest.param(
            LEAST_ALLOCATED,
            [ResourceSpec("cpu", 101), ResourceSpec("memory", 100)],
            None,
            ["scoringStrategy.resources[0].weight"],
            id="weight above 100",
        ),
        pytest.param(
            REQUESTED_TO_CAPACITY_RATIO,
            [ResourceSpec("cpu", 1)],
            [],
            ["scoringStrategy.shape"],
            id="empty shape",
        ),
        pytest.param(
            REQUESTED_TO_CAPACITY_RATIO,
            [ResourceSpec("cpu", 1)],
            [(10, 1), (10, 2), (5, 3)],
            ["scoringStrategy.shape[1].utilization"],
            id="shape not strictly increasing (reported once)",
        ),
        pytest.param(
            REQUESTED_TO_CAPACITY_RATIO,
            [ResourceSpec("cpu", 1)],
            [(-1, 0), (101, 11)],
            [
                "scoringStrategy.shape[0].utilization",
                "scoringStrategy.shape[1].utilization",
                "scoringStrategy.shape[1].score",
            ],
            id="shape out of range",
        ),
        pytest.param(
            REQUESTED_TO_CAPACITY_RATIO,
            [ResourceSpec("cpu", 1)],
            [(0, 0), (100, 10)],
            [],
            id="valid shape",
        ),
    ],
)
def test_validate_scoring_strategy(strategy, resources, shape, paths) -> None:
    assert [p for p, _ in validate_scoring_strategy(strategy, resources, shape)] == paths


def test_validate_balanced_resources() -> None:
    errors = validate_balanced_resources(
        [ResourceSpec("cpu", 1), ResourceSpec("cpu", 1), ResourceSpec("memory", 2)]
    )
    assert [p for p, _ in errors] == ["resources[1].name", "resources[2].weight"]


# --- int64 at the edges, as Go computes the scores ---

MAX = 2**63 - 1


def test_least_requested_score_wraps_the_int64_product() -> None:
    # leastRequestedScore: (capacity - requested) * MaxNodeScore overflows int64 and wraps
    # (to -100 - 100 * 1000 here), then / capacity truncates toward zero: 0, not 99.
    assert least_requested_score(1000, MAX) == 0
    # A wrapped (negative) node sum: capacity - requested exceeds capacity, the score 100.
    assert least_requested_score(-2, 4000) == 100
    assert least_requested_score(-4000, 4000) == 200  # runScorePlugins then refuses it


def test_most_requested_score_wraps_and_truncates() -> None:
    # mostRequestedScore: requested * 100 in int64 (2^62 * 100 wraps to 0).
    assert most_requested_score(2**62, MAX) == 0
    # A negative (wrapped) sum truncates toward zero: -150 * 100 / 4000 is -3, not -4.
    assert most_requested_score(-150, 4000) == -3


def test_resource_scorers_sum_in_int64() -> None:
    # leastResourceScorer: nodeScore += score * weight wraps; / weightSum truncates.
    assert least_resource_score([-(2**62), 0], [1, 1], [100, 1]) == _go_div(
        _wrap(_wrap(2**62 + 1) * 100 * 100 + 100), 101
    )


def test_requested_to_capacity_utilization_is_int64() -> None:
    # buildRequestedToCapacityRatioScorerFunction (v1.35): requested * maxUtilization /
    # capacity in int64, so 2^62 + 1000 millicores of 2^63 - 1 is utilization 0, not 50.
    shape = broken_linear_function([(0, 0), (100, 100)])
    assert requested_to_capacity_ratio_score([2**62 + 1000], [MAX], [1], shape) == 0


def test_calculate_resource_allocatable_request_wraps_the_sum() -> None:
    # calculateResourceAllocatableRequest: the node's int64 sum plus the pod's request wraps.
    scorer = ResourceAllocationScorer(LEAST_ALLOCATED)
    prepared = scorer.prepare(pod("p", MAX, 1), settings=DEFAULT_SETTINGS)
    reqs, _ = prepared.pairs({"cpu": MAX, "memory": 8 * 1024**3}, {}, MAX, 0)
    assert reqs[0] == -2
    # BalancedAllocation's fraction is float64(-2) / float64(capacity): negative, kept.
    balanced = BalancedAllocationScorer()
    prepared = balanced.prepare(pod("p", MAX, 1024), settings=DEFAULT_SETTINGS)
    assert prepared.pairs({"cpu": 4000, "memory": 4096}, {"cpu": MAX, "memory": 0}, 0, 0)[0] == [
        -2,
        1024,
    ]
    assert balanced_resource_score([-2, 1024], [4000, 4096]) == int(
        (1 - (0.25 + 2 / 4000) / 2) * 100
    )


def _wrap(x: int) -> int:
    return ((x + 2**63) % 2**64) - 2**63


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
