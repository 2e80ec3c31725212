"""The resource scorers' fast paths for cpu and memory (resource_allocation.py
``_least_cpu_memory``, ``_balance_cpu_memory``) give the reference's answer: the per-node
lists of calculateResourceAllocatableRequest scored by least_resource_score and
balanced_resource_score, on random quantities around every boundary (zero allocatable,
requests at and past capacity, values near the no-wrap bound and past int64)."""

from __future__ import annotations

import random

import pytest

from service.engine.scheduler.plugins.noderesources import resource_allocation as ra
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    LEAST_ALLOCATED,
    BalancedAllocationScorer,
    ResourceAllocationScorer,
    ResourceSpec,
    balance_change_score,
    balanced_resource_score,
    least_resource_score,
)
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import pod

_EDGES = (0, 1, 2, 999, 1000, 1001, 4000, 2**53 + 1, ra._NO_WRAP - 1, ra._NO_WRAP, 2**63 - 1)


def _quantity(rng: random.Random) -> int:
    """A quantity: mostly realistic, often at an edge, sometimes negative (a wrapped sum)."""
    roll = rng.random()
    if roll < 0.3:
        return rng.choice(_EDGES)
    if roll < 0.35:
        return -rng.randrange(1, 2**40)
    return rng.randrange(0, 64 * 1024**3)


def _cases(seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        allocatable = {"cpu": _quantity(rng), "memory": _quantity(rng), "pods": 110}
        if rng.random() < 0.1:
            del allocatable["cpu"]
        requested = {"cpu": _quantity(rng), "memory": _quantity(rng)}
        if rng.random() < 0.1:
            del requested["memory"]
        yield allocatable, requested, _quantity(rng), _quantity(rng)


def _pod_request(rng: random.Random) -> tuple[int, int]:
    return rng.choice((0, 1, 100, 250, 2**40)), rng.choice((0, 1, 2**20, 2**30, 2**45))


@pytest.mark.parametrize("weights", [(1, 1), (3, 1), (1, 100)])
@pytest.mark.parametrize("seed", range(4))
def test_least_allocated_fast_path_is_the_reference(seed: int, weights: tuple[int, int]) -> None:
    rng = random.Random(seed)
    resources = (ResourceSpec("cpu", weights[0]), ResourceSpec("memory", weights[1]))
    scorer = ResourceAllocationScorer(LEAST_ALLOCATED, resources)
    fast_taken = 0
    for allocatable, requested, nz_cpu, nz_mem in _cases(seed, 3000):
        prepared = scorer.prepare(pod("p", *_pod_request(rng)), DEFAULT_SETTINGS)
        assert prepared.cpu_memory is not None
        reqs, allocs = prepared.pairs(allocatable, requested, nz_cpu, nz_mem)
        expected = least_resource_score(reqs, allocs, list(weights))
        assert scorer.score(prepared, allocatable, requested, nz_cpu, nz_mem) == expected
        fast = ra._least_cpu_memory(prepared.cpu_memory, weights, allocatable, nz_cpu, nz_mem)
        assert fast is None or fast == expected
        fast_taken += fast is not None
    assert fast_taken > 1000  # the fast path is what these cases exercise


@pytest.mark.parametrize("scores_change", [False, True])
@pytest.mark.parametrize("seed", range(4))
def test_balanced_allocation_fast_path_is_the_reference(seed: int, scores_change: bool) -> None:
    rng = random.Random(seed)
    scorer = BalancedAllocationScorer(scores_change=scores_change)
    fast_taken = 0
    for allocatable, requested, _, _ in _cases(seed, 3000):
        prepared = scorer.prepare(pod("p", *_pod_request(rng)), DEFAULT_SETTINGS)
        if prepared is None:  # best-effort: PreScore skips
            continue
        assert prepared.cpu_memory is not None
        reqs, without, allocs = prepared.pairs_with_and_without(allocatable, requested, 0, 0)
        expected = balanced_resource_score(reqs, allocs)
        if scores_change:
            expected = balance_change_score(expected, balanced_resource_score(without, allocs))
        assert scorer.score(prepared, allocatable, requested) == expected
        fast = ra._balance_cpu_memory(prepared.cpu_memory, allocatable, requested, scores_change)
        assert fast is None or fast == expected
        fast_taken += fast is not None
    assert fast_taken > 1000


def test_no_fast_path_beyond_cpu_and_memory() -> None:
    """Other resource lists, and requests past the bound, keep the reference path."""
    big = pod("p", ra._NO_WRAP, 1)
    assert ResourceAllocationScorer().prepare(big, DEFAULT_SETTINGS).cpu_memory is None
    three = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1), ResourceSpec("x.io/gpu", 1))
    prepared = ResourceAllocationScorer(LEAST_ALLOCATED, three).prepare(
        pod("p", 1, 1), DEFAULT_SETTINGS
    )
    assert prepared.cpu_memory is None
    swapped = (ResourceSpec("memory", 1), ResourceSpec("cpu", 1))
    prepared = BalancedAllocationScorer(swapped).prepare(pod("p", 1, 1), DEFAULT_SETTINGS)
    assert prepared is not None and prepared.cpu_memory is None
