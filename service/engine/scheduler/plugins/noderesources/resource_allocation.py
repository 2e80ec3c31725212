"""Resource scoring: NodeResourcesFit's strategies and NodeResourcesBalancedAllocation.

Mirrors kubernetes/kubernetes (master, about v1.35/1.36):

* ``plugins/noderesources/resource_allocation.go`` ``resourceAllocationScorer.score``,
  ``calculateResourceAllocatableRequest`` and ``calculatePodResourceRequestList``;
* ``least_allocated.go`` ``leastResourceScorer`` / ``leastRequestedScore``;
* ``most_allocated.go`` ``mostResourceScorer`` / ``mostRequestedScore``;
* ``requested_to_capacity_ratio.go`` ``buildRequestedToCapacityRatioScorerFunction`` and
  ``plugins/helper`` ``BuildBrokenLinearFunction``;
* ``balanced_allocation.go`` ``balancedResourceScorer`` and its PreScore Skip for pods whose
  considered requests are all zero (newest);
* ``pkg/scheduler/apis/config/validation`` ``validateResources``, ``validateFunctionShape``,
  ``ValidateNodeResourcesBalancedAllocationArgs``.

Integer arithmetic where upstream uses int64 (Least, Most, utilization), float64 where it
uses float64 (RequestedToCapacityRatio's mean then ``math.Round``, BalancedAllocation's
standard deviation then truncation), with the same operation order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from service.engine.objects import Pod
from service.engine.quantity import wrap_int64
from service.engine.resources import is_scalar_resource_name, pod_requests, pod_requests_non_zero
from service.engine.scheduler.framework import MAX_NODE_SCORE
from service.engine.scheduler.plugins.noderesources import columns as col
from service.engine.scheduler.profile import (
    DEFAULT_RESOURCES,
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    ResourceSpec,
)
from service.engine.version import EngineSettings

__all__ = [
    "DEFAULT_RESOURCES",
    "LEAST_ALLOCATED",
    "MAX_CUSTOM_PRIORITY_SCORE",
    "MAX_NODE_SCORE",
    "MOST_ALLOCATED",
    "REQUESTED_TO_CAPACITY_RATIO",
    "STRATEGIES",
    "BalancedAllocationScorer",
    "ResourceAllocationScorer",
    "ResourceSpec",
    "ScoringError",
    "balance_change_score",
    "balanced_resource_score",
    "broken_linear_function",
    "least_requested_score",
    "least_resource_score",
    "most_requested_score",
    "most_resource_score",
    "requested_to_capacity_ratio_score",
    "validate_balanced_resources",
    "validate_scoring_strategy",
]

MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100

STRATEGIES = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)


class ScoringError(Exception):
    """A Score plugin returned an Error status (e.g. "resources not found")."""


# --- configuration validation (config/validation) ---


def validate_scoring_strategy(
    strategy: str,
    resources: Sequence[ResourceSpec],
    shape: Sequence[tuple[int, int]] | None,
    path: str = "scoringStrategy",
) -> list[tuple[str, str]]:
    """ValidateNodeResourcesFitArgs' scoring-strategy part: (field path, message) pairs.

    The strategy must be one of the three; each resource weight must be in (0, 100]; for
    RequestedToCapacityRatio the shape needs at least one point, utilizations strictly
    increasing, utilization in [0, 100] and score in [0, 10]."""
    errors: list[tuple[str, str]] = []
    if strategy not in STRATEGIES:
        errors.append(
            (
                f"{path}.type",
                f"Unsupported value: {strategy!r}: supported values: "
                + ", ".join(f'"{s}"' for s in sorted(STRATEGIES)),
            )
        )
    for i, res in enumerate(resources):
        if res.weight <= 0 or res.weight > 100:
            errors.append(
                (
                    f"{path}.resources[{i}].weight",
                    f"resource weight of {res.name} not in valid range (0, 100]",
                )
            )
    if strategy == REQUESTED_TO_CAPACITY_RATIO and shape is not None:
        errors.extend(validate_function_shape(shape, f"{path}.shape"))
    return errors


def validate_function_shape(shape: Sequence[tuple[int, int]], path: str) -> list[tuple[str, str]]:
    """validateFunctionShape (config/validation)."""
    if not shape:
        return [(path, "at least one point must be specified")]
    errors: list[tuple[str, str]] = []
    for i in range(1, len(shape)):
        if shape[i - 1][0] >= shape[i][0]:
            errors.append((f"{path}[{i}].utilization", "values must be sorted in increasing order"))
            break
    for i, (utilization, score) in enumerate(shape):
        if utilization < 0 or utilization > MAX_UTILIZATION:
            errors.append((f"{path}[{i}].utilization", "not in valid range [0, 100]"))
        if score < 0 or score > MAX_CUSTOM_PRIORITY_SCORE:
            errors.append((f"{path}[{i}].score", "not in valid range [0, 10]"))
    return errors


def validate_balanced_resources(
    resources: Sequence[ResourceSpec], path: str = "resources"
) -> list[tuple[str, str]]:
    """ValidateNodeResourcesBalancedAllocationArgs: names unique, every weight exactly 1."""
    errors: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, res in enumerate(resources):
        if res.name in seen:
            errors.append((f"{path}[{i}].name", f"Duplicate value: {res.name!r}"))
        seen.add(res.name)
        if res.weight != 1:
            errors.append((f"{path}[{i}].weight", "must be 1"))
    return errors


# --- per-resource and per-node score functions ---


def least_requested_score(requested: int, capacity: int) -> int:
    """leastRequestedScore: (capacity - requested) * 100 / capacity, 0 when over capacity;
    in int64 as Go computes it: the difference and the product wrap around, the division
    truncates toward zero (a capacity near 2^63-1 millicores scores 0, not 99)."""
    if capacity == 0 or requested > capacity:
        return 0
    return _div_trunc(wrap_int64((capacity - requested) * MAX_NODE_SCORE), capacity)


def most_requested_score(requested: int, capacity: int) -> int:
    """mostRequestedScore: requested * 100 / capacity, capped at capacity."""
    if capacity == 0:
        return 0
    if requested > capacity:
        requested = capacity
    return _div_trunc(wrap_int64(requested * MAX_NODE_SCORE), capacity)  # int64, as in Go


def _weighted_mean(
    per: Callable[[int, int], int],
    requested: Sequence[int],
    allocatable: Sequence[int],
    weights: Sequence[int],
) -> int:
    """leastResourceScorer / mostResourceScorer's loop: int64 sums (wrapping) and Go's
    truncating division."""
    node_score = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        node_score = wrap_int64(node_score + per(req, alloc) * weight)
        weight_sum += weight
    if weight_sum == 0:
        return 0
    return _div_trunc(node_score, weight_sum)


def least_resource_score(
    requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """leastResourceScorer: integer weighted mean of leastRequestedScore over resources whose
    allocatable is non-zero."""
    return _weighted_mean(least_requested_score, requested, allocatable, weights)


def most_resource_score(
    requested: Sequence[int], allocatable: Sequence[int], weights: Sequence[int]
) -> int:
    """mostResourceScorer: integer weighted mean of mostRequestedScore."""
    return _weighted_mean(most_requested_score, requested, allocatable, weights)


def _div_trunc(a: int, b: int) -> int:
    """Go's integer division: truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def broken_linear_function(points: Sequence[tuple[int, int]]) -> Callable[[int], int]:
    """helper.BuildBrokenLinearFunction: piecewise-linear over (utilization, score) points,
    integer interpolation truncating toward zero; flat before the first and after the last
    point. Points are used as given (no scaling)."""
    pts = [(int(u), int(s)) for u, s in points]

    def f(p: int) -> int:
        for i, (util, score) in enumerate(pts):
            if p <= util:
                if i == 0:
                    return pts[0][1]
                pu, ps = pts[i - 1]
                return ps + _div_trunc((score - ps) * (p - pu), util - pu)
        return pts[-1][1]

    return f


def _go_round(x: float) -> int:
    """math.Round: half away from zero, exact (no x + 0.5 rounding error)."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)


def requested_to_capacity_ratio_score(
    requested: Sequence[int],
    allocatable: Sequence[int],
    weights: Sequence[int],
    shape: Callable[[int], int],
) -> int:
    """buildRequestedToCapacityRatioScorerFunction: per resource f(utilization) with
    utilization = requested * 100 / allocatable (f(100) when over capacity); resources scoring
    0 contribute neither score nor weight; the mean is float64 and rounded half away from
    zero. ``shape`` is the broken-linear function on the 0..100 node-score scale."""
    node_score = weight_sum = 0
    for req, alloc, weight in zip(requested, allocatable, weights, strict=True):
        if alloc == 0:
            continue
        if req > alloc:
            value = shape(MAX_UTILIZATION)
        else:
            # requested * maxUtilization / capacity in int64: wraps, truncates toward zero.
            value = shape(_div_trunc(wrap_int64(req * MAX_UTILIZATION), alloc))
        if value > 0:
            node_score = wrap_int64(node_score + value * weight)
            weight_sum += weight
    if weight_sum == 0:
        return 0
    return _go_round(float(node_score) / float(weight_sum))


def balanced_resource_score(requested: Sequence[int], allocatable: Sequence[int]) -> int:
    """balancedResourceScorer (newest): fractions requested/allocatable (float64, capped at
    1) over resources with allocatable > 0; std = |f0 - f1| / 2 for two, the population
    standard deviation for more, 0 otherwise; score = int64((1 - std) * 100)."""
    fractions: list[float] = []
    total = 0.0
    for req, alloc in zip(requested, allocatable, strict=True):
        if alloc == 0:
            continue
        fraction = float(req) / float(alloc)
        if fraction > 1:
            fraction = 1.0
        total += fraction
        fractions.append(fraction)
    std = 0.0
    if len(fractions) == 2:
        std = math.fabs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = total / len(fractions)
        acc = 0.0
        for fraction in fractions:
            acc = acc + (fraction - mean) * (fraction - mean)
        std = math.sqrt(acc / len(fractions))
    return int((1 - std) * float(MAX_NODE_SCORE))


def balance_change_score(with_pod: int, without_pod: int) -> int:
    """balancedResourceScorer since v1.36 (kubernetes#135573): the change the pod makes to
    the node's balance, both balances scored as ``balanced_resource_score`` (50 to 100 for
    two resources): 75 when the pod leaves the balance as it was, 50 for a node the pod takes
    from perfectly balanced to perfectly unbalanced, 100 the other way round. The int64
    expression MaxNodeScore/2 + (MaxNodeScore/2 + withPod - withoutPod)/2; its operand is
    never negative, so Go's truncation is Python's floor."""
    half = MAX_NODE_SCORE // 2
    return half + (half + with_pod - without_pod) // 2


# --- plugin-level scorers ---

_CPU, _MEM, _EPHEMERAL, _SCALAR, _NONE = range(5)
_WITHOUT_POD_LEVEL = EngineSettings(pod_level_resources=False)


def _kind(name: str) -> int:
    if name == "cpu":
        return _CPU
    if name == "memory":
        return _MEM
    if name == "ephemeral-storage":
        return _EPHEMERAL
    if is_scalar_resource_name(name):
        return _SCALAR
    return _NONE


# Below this bound every int64 sum and product the scorers make of a node's and the pod's
# quantities (a sum of two, a difference times 100) stays within int64: Go's wrapping
# arithmetic and truncating division are then Python's plain ``+`` and ``//``.
_NO_WRAP = 2**56


class _Allocation:
    """calculateResourceAllocatableRequest for a fixed resource list and pod request.

    ``cpu_memory``: the pod's (cpu, memory) request when the resources are exactly cpu then
    memory (the default) and both requests are below ``_NO_WRAP``; the scorers' fast paths
    read it instead of building per-node lists (None: no fast path)."""

    __slots__ = ("_items", "cpu_memory", "use_requested")

    def __init__(
        self, resources: Sequence[ResourceSpec], pod_reqs: Sequence[int], use_requested: bool
    ) -> None:
        self.use_requested = use_requested
        items = []
        for res, req in zip(resources, pod_reqs, strict=True):
            kind = _kind(res.name)
            if req == 0 and kind == _SCALAR:
                kind = _NONE  # an extended resource the pod does not request: skipped
            items.append((res.name, kind, req))
        self._items = items
        self.cpu_memory: tuple[int, int] | None = None
        if [kind for _, kind, _ in items] == [_CPU, _MEM] and all(
            0 <= req < _NO_WRAP for _, _, req in items
        ):
            self.cpu_memory = (items[0][2], items[1][2])

    def batch_items(self, weights: Sequence[int]) -> list[tuple[int, int, int, int]] | None:
        """The resources as the batches read them: (allocatable column, used column, the
        pod's request, weight) per resource the score counts (columns.py's field indexes);
        None when a resource is not in the columns (a scalar resource the pod requests) or
        a request or weight is outside the batches' exact range."""
        out = []
        for (_, kind, req), weight in zip(self._items, weights, strict=True):
            if kind == _NONE:
                continue  # never counted: no allocatable, no weight
            if kind == _SCALAR or not 0 <= req < _NO_WRAP or not 0 < weight <= MAX_NODE_SCORE:
                return None
            if kind == _CPU:
                used = col.REQUESTED_CPU if self.use_requested else col.NZ_CPU
                out.append((col.ALLOC_CPU, used, req, weight))
            elif kind == _MEM:
                used = col.REQUESTED_MEMORY if self.use_requested else col.NZ_MEM
                out.append((col.ALLOC_MEMORY, used, req, weight))
            else:
                out.append((col.ALLOC_EPHEMERAL, col.REQUESTED_EPHEMERAL, req, weight))
        return out

    def pairs(
        self,
        allocatable: dict[str, int],
        requested: dict[str, int],
        nz_cpu: int,
        nz_mem: int,
    ) -> tuple[list[int], list[int]]:
        """calculateResourceAllocatableRequest per resource: (requested, allocatable), the
        requested being the node's with the pod's added."""
        reqs, _, allocs = self.pairs_with_and_without(allocatable, requested, nz_cpu, nz_mem)
        return reqs, allocs

    def pairs_with_and_without(
        self,
        allocatable: dict[str, int],
        requested: dict[str, int],
        nz_cpu: int,
        nz_mem: int,
    ) -> tuple[list[int], list[int], list[int]]:
        """(requested with the pod, requested without it, allocatable) per resource, in one
        pass: the node's requests alone are what BalancedAllocation calls the node's
        allocated resources since v1.36."""
        reqs: list[int] = []
        without: list[int] = []
        allocs: list[int] = []
        for name, kind, pod_req in self._items:
            if kind == _CPU:
                used = requested.get("cpu", 0) if self.use_requested else nz_cpu
            elif kind == _MEM:
                used = requested.get("memory", 0) if self.use_requested else nz_mem
            elif kind == _EPHEMERAL:
                used = requested.get(name, 0)
            elif kind == _SCALAR:
                if name not in allocatable:
                    reqs.append(0)
                    without.append(0)
                    allocs.append(0)
                    continue
                used = requested.get(name, 0)
            else:
                reqs.append(0)
                without.append(0)
                allocs.append(0)
                continue
            alloc = allocatable.get(name, 0)
            if alloc == 0:
                reqs.append(0)
                without.append(0)
                allocs.append(0)
                continue
            # calculateResourceAllocatableRequest: the node's int64 sum plus the pod's, wrapping.
            reqs.append(wrap_int64(used + pod_req))
            without.append(used)
            allocs.append(alloc)
        return reqs, without, allocs


class ResourceAllocationScorer:
    """NodeResourcesFit's Score for one strategy (the plugin's resourceAllocationScorer).

    ``prepare(pod)`` is PreScore (the pod's non-zero requests per configured resource, once);
    ``score(prepared, ...)`` scores one node from its allocatable and aggregates.
    """

    def __init__(
        self,
        strategy: str = LEAST_ALLOCATED,
        resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES,
        shape: Sequence[tuple[int, int]] | None = None,
    ) -> None:
        if strategy not in STRATEGIES:
            raise ValueError(f"scoring strategy {strategy} is not supported")
        self.strategy = strategy
        self.resources = tuple(resources)
        self.weights = [r.weight for r in self.resources]
        self._shape = None
        # LeastAllocated's weights for its fast path (``_least_cpu_memory``): small and
        # positive, so that the weighted sum never wraps either.
        self._least_weights: tuple[int, ...] | None = None
        if strategy == LEAST_ALLOCATED and all(0 < w <= MAX_NODE_SCORE for w in self.weights):
            self._least_weights = tuple(self.weights)
        # RequestedToCapacityRatio's shape at every utilization 0..100, for the batch.
        self._shape_table: np.ndarray | None = None
        if strategy == REQUESTED_TO_CAPACITY_RATIO:
            scale = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
            self._shape = broken_linear_function([(u, s * scale) for u, s in shape or ()])
            if shape:
                table = [self._shape(u) for u in range(MAX_UTILIZATION + 1)]
                self._shape_table = np.array(table, np.int64)

    def prepare(self, pod: Pod, settings: EngineSettings) -> _Allocation:
        """calculatePodResourceRequestList with the non-zero defaults (useRequested false).
        Pod-level resources count only where the release's scorer reads them
        (``settings.fit_score_pod_level_resources``: v1.35 builds the scorer without them)."""
        if settings.pod_level_resources and not settings.fit_score_pod_level_resources:
            settings = _WITHOUT_POD_LEVEL
        nz = pod_requests_non_zero(pod, settings=settings)
        reqs = [nz.get(r.name, 0) for r in self.resources]
        return _Allocation(self.resources, reqs, use_requested=False)

    def score(
        self,
        prepared: _Allocation,
        allocatable: dict[str, int],
        requested: dict[str, int],
        nz_cpu: int,
        nz_mem: int,
    ) -> int:
        """resourceAllocationScorer.score; ScoringError("resources not found") when no
        resource is configured."""
        if not self.resources:
            raise ScoringError("resources not found")
        if prepared.cpu_memory is not None and self._least_weights is not None:
            score = _least_cpu_memory(
                prepared.cpu_memory, self._least_weights, allocatable, nz_cpu, nz_mem
            )
            if score is not None:
                return score
        reqs, allocs = prepared.pairs(allocatable, requested, nz_cpu, nz_mem)
        if self.strategy == LEAST_ALLOCATED:
            return least_resource_score(reqs, allocs, self.weights)
        if self.strategy == MOST_ALLOCATED:
            return most_resource_score(reqs, allocs, self.weights)
        assert self._shape is not None
        return requested_to_capacity_ratio_score(reqs, allocs, self.weights, self._shape)

    def score_columns(self, prepared: _Allocation, cols: col.Columns) -> np.ndarray | None:
        """``score`` of every node of ``cols`` at once (int64), exact on the nodes marked
        ``plain`` (the caller scores the others one by one); None when this pod or
        configuration has no batch (no resources, a scalar resource, a value out of range)."""
        if not self.resources:
            return None
        items = prepared.batch_items(self.weights)
        if items is None:
            return None
        if self.strategy == LEAST_ALLOCATED:
            return _weighted_columns(_least_columns, items, cols)
        if self.strategy == MOST_ALLOCATED:
            return _weighted_columns(_most_columns, items, cols)
        if self._shape_table is None:
            return None
        return _ratio_columns(self._shape_table, items, cols)


class BalancedAllocationScorer:
    """NodeResourcesBalancedAllocation (weights ignored, actual requests). ``scores_change``:
    the score is the change the pod makes to the node's balance (v1.36 on,
    ``settings.balanced_allocation_scores_change``), not the balance with the pod."""

    def __init__(
        self, resources: Sequence[ResourceSpec] = DEFAULT_RESOURCES, *, scores_change: bool = False
    ) -> None:
        self.resources = tuple(resources)
        self.scores_change = scores_change

    def prepare(self, pod: Pod, settings: EngineSettings) -> _Allocation | None:
        """PreScore: None (Skip) when every considered pod request is 0 (best-effort pod),
        from v1.33 on (``settings.balanced_allocation_skips_best_effort``, kubernetes#129138;
        v1.32 scores such a pod)."""
        reqs_map = pod_requests(pod, settings=settings)
        reqs = [reqs_map.get(r.name, 0) for r in self.resources]
        if settings.balanced_allocation_skips_best_effort and all(r == 0 for r in reqs):
            return None
        return _Allocation(self.resources, reqs, use_requested=True)

    def score(
        self,
        prepared: _Allocation,
        allocatable: dict[str, int],
        requested: dict[str, int],
        nz_cpu: int = 0,
        nz_mem: int = 0,
    ) -> int:
        if not self.resources:
            raise ScoringError("resources not found")
        if prepared.cpu_memory is not None:
            score = _balance_cpu_memory(
                prepared.cpu_memory, allocatable, requested, self.scores_change
            )
            if score is not None:
                return score
        reqs, allocated, allocs = prepared.pairs_with_and_without(
            allocatable, requested, nz_cpu, nz_mem
        )
        with_pod = balanced_resource_score(reqs, allocs)
        if not self.scores_change:
            return with_pod
        return balance_change_score(with_pod, balanced_resource_score(allocated, allocs))

    def score_columns(self, prepared: _Allocation, cols: col.Columns) -> np.ndarray | None:
        """``score`` of every node of ``cols`` at once (int64), exact on the nodes marked
        ``plain``; None unless the resources are cpu then memory (``_balance_cpu_memory``'s
        case, the default)."""
        if not self.resources or prepared.cpu_memory is None:
            return None
        pod_cpu, pod_mem = prepared.cpu_memory
        with_pod = _balance_columns(
            cols.field(col.REQUESTED_CPU) + pod_cpu,
            cols.field(col.REQUESTED_MEMORY) + pod_mem,
            cols,
        )
        if not self.scores_change:
            return with_pod
        half = MAX_NODE_SCORE // 2
        # balance_change_score (its operand never negative); the balance without the pod
        # is the node's own, a column
        with_pod += half
        with_pod -= cols.field(col.BALANCE)
        with_pod //= 2
        with_pod += half
        return with_pod


# --- fast paths for the default resources (cpu, memory): the reference's arithmetic without
# the per-node lists, where no int64 can wrap; tests hold them to the reference ---


def _least_cpu_memory(
    pod: tuple[int, int],
    weights: tuple[int, ...],
    allocatable: dict[str, int],
    used_cpu: int,
    used_mem: int,
) -> int | None:
    """least_resource_score of cpu and memory (the pod's non-zero requests added to the
    node's); None when a quantity is negative or past ``_NO_WRAP`` (the reference decides)."""
    cap_cpu = allocatable.get("cpu", 0)
    cap_mem = allocatable.get("memory", 0)
    if not (
        0 <= used_cpu < _NO_WRAP
        and 0 <= used_mem < _NO_WRAP
        and 0 <= cap_cpu < _NO_WRAP
        and 0 <= cap_mem < _NO_WRAP
    ):
        return None
    w_cpu, w_mem = weights
    node_score = weight_sum = 0
    if cap_cpu:  # leastRequestedScore; a resource without allocatable is left out
        req = used_cpu + pod[0]
        if req <= cap_cpu:
            node_score = (cap_cpu - req) * MAX_NODE_SCORE // cap_cpu * w_cpu
        weight_sum = w_cpu
    if cap_mem:
        req = used_mem + pod[1]
        if req <= cap_mem:
            node_score += (cap_mem - req) * MAX_NODE_SCORE // cap_mem * w_mem
        weight_sum += w_mem
    return node_score // weight_sum if weight_sum else 0


def _balance_cpu_memory(
    pod: tuple[int, int],
    allocatable: dict[str, int],
    requested: dict[str, int],
    scores_change: bool,
) -> int | None:
    """BalancedAllocationScorer.score over cpu and memory; None when the node's requests are
    negative or past ``_NO_WRAP`` (the reference decides)."""
    used_cpu = requested.get("cpu", 0)
    used_mem = requested.get("memory", 0)
    if not (0 <= used_cpu < _NO_WRAP and 0 <= used_mem < _NO_WRAP):
        return None
    cap_cpu = allocatable.get("cpu", 0)
    cap_mem = allocatable.get("memory", 0)
    with_pod = _balance_of_two(used_cpu + pod[0], cap_cpu, used_mem + pod[1], cap_mem)
    if not scores_change:
        return with_pod
    return balance_change_score(with_pod, _balance_of_two(used_cpu, cap_cpu, used_mem, cap_mem))


def _balance_of_two(req_a: int, cap_a: int, req_b: int, cap_b: int) -> int:
    """balanced_resource_score of two resources: with a zero allocatable, one fraction or
    none, whose standard deviation is 0."""
    if not cap_a or not cap_b:
        return MAX_NODE_SCORE
    fraction_a = float(req_a) / float(cap_a)
    if fraction_a > 1:
        fraction_a = 1.0
    fraction_b = float(req_b) / float(cap_b)
    if fraction_b > 1:
        fraction_b = 1.0
    return int((1 - math.fabs((fraction_a - fraction_b) / 2)) * float(MAX_NODE_SCORE))


# --- the same arithmetic over columns (columns.py): every value of a ``plain`` node is in
# [0, _NO_WRAP), so no int64 wraps and Go's truncating division is numpy's floor division;
# float64 operations one by one, in the per-node code's order ---


def _least_columns(req: np.ndarray, alloc: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """leastRequestedScore per node: 0 over capacity or without allocatable."""
    score = alloc - req
    np.maximum(score, 0, out=score)
    score *= MAX_NODE_SCORE
    score //= denominator
    return score


def _most_columns(req: np.ndarray, alloc: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """mostRequestedScore per node: the request capped at capacity; 0 without allocatable."""
    score = np.minimum(req, alloc)
    score *= MAX_NODE_SCORE
    score //= denominator
    return score


def _weighted_columns(
    per: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray],
    items: Sequence[tuple[int, int, int, int]],
    cols: col.Columns,
) -> np.ndarray:
    """_weighted_mean per node: resources without allocatable add neither score nor weight
    (where every node has the resource, the weight is one number for all)."""
    node_score = np.zeros(len(cols.plain), np.int64)
    weight_sum: np.ndarray | int = 0
    for alloc_field, used_field, pod_req, weight in items:
        alloc = cols.field(alloc_field)
        everywhere = cols.all_nonzero(alloc_field)
        denominator = alloc if everywhere else np.maximum(alloc, 1)
        score = per(cols.field(used_field) + pod_req, alloc, denominator)
        if weight != 1:
            score *= weight
        node_score += score
        weight_sum = weight_sum + (weight if everywhere else (alloc != 0) * weight)
    if isinstance(weight_sum, int):
        return node_score // weight_sum if weight_sum else node_score
    return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)


def _ratio_columns(
    shape: np.ndarray, items: Sequence[tuple[int, int, int, int]], cols: col.Columns
) -> np.ndarray:
    """requested_to_capacity_ratio_score per node: ``shape`` is the function's value at each
    utilization 0..100 (a plain node's utilization is in that range)."""
    v = cols.field
    node_score = np.zeros(len(cols.plain), np.int64)
    weight_sum = np.zeros(len(cols.plain), np.int64)
    for alloc_field, used_field, pod_req, weight in items:
        alloc = v(alloc_field)
        req = v(used_field) + pod_req
        utilization = np.minimum(req, alloc) * MAX_UTILIZATION // np.maximum(alloc, 1)
        value = shape[np.where(req > alloc, MAX_UTILIZATION, utilization)]
        counted = (alloc != 0) & (value > 0)
        node_score += np.where(counted, value * weight, 0)
        weight_sum += counted * weight
    mean = node_score.astype(np.float64) / np.maximum(weight_sum, 1).astype(np.float64)
    return np.where(weight_sum > 0, _go_round_columns(mean), 0)


def _go_round_columns(x: np.ndarray) -> np.ndarray:
    """_go_round per value: half away from zero (numpy's round is half to even)."""
    t = np.trunc(x)
    away = np.abs(x - t) >= 0.5
    return (t + np.where(away, np.where(x > 0, 1.0, -1.0), 0.0)).astype(np.int64)


def _balance_columns(req_cpu: np.ndarray, req_mem: np.ndarray, cols: col.Columns) -> np.ndarray:
    """_balance_of_two per node over cpu and memory: 100 where either allocatable is 0."""
    everywhere = cols.all_nonzero(col.ALLOC_CPU) and cols.all_nonzero(col.ALLOC_MEMORY)
    cap_cpu, cap_mem = cols.field(col.ALLOC_CPU), cols.field(col.ALLOC_MEMORY)
    return balance_arrays(req_cpu, cap_cpu, req_mem, cap_mem, everywhere=everywhere)


def balance_arrays(
    req_a: np.ndarray,
    cap_a: np.ndarray,
    req_b: np.ndarray,
    cap_b: np.ndarray,
    *,
    everywhere: bool = False,
) -> np.ndarray:
    """_balance_of_two per element (values in [0, _NO_WRAP)): 100 where either allocatable
    is 0. ``everywhere``: no allocatable is 0 (fewer operations)."""
    both = None
    if not everywhere:
        both = (cap_a != 0) & (cap_b != 0)
        cap_a, cap_b = np.maximum(cap_a, 1), np.maximum(cap_b, 1)
    fraction_a = req_a / cap_a.astype(np.float64)  # float64(req) / float64(cap)
    np.minimum(fraction_a, 1.0, out=fraction_a)
    fraction_b = req_b / cap_b.astype(np.float64)
    np.minimum(fraction_b, 1.0, out=fraction_b)
    fraction_a -= fraction_b
    fraction_a /= 2
    std = np.abs(fraction_a, out=fraction_a)
    score = np.subtract(1, std, out=std)
    score *= float(MAX_NODE_SCORE)
    out = score.astype(np.int64)  # int64(): truncation toward zero
    if both is not None:
        out = np.where(both, out, MAX_NODE_SCORE)
    return out
