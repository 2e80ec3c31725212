"""Verdict's kubelet against the kubelet's own v1.35 code (kubelet-oracle) on random states
from tests/engine/kubelet/random_states.py: admission (admit, reason, message, every
generalFilter failure, the victims in kill order) and one eviction pass (observations,
thresholds observed and met, node conditions, the reclaim signal, the ranking with ties as
groups, the victim among ``victimCandidates``). Skipped where the oracle is absent;
``VERDICT_ORACLE_SEEDS=2000`` widens every test (bench/RESULTS.md has the local figures)."""

from __future__ import annotations

import pytest

from tests.engine.kubelet.oracle import (
    admission_differences,
    eviction_differences,
    needs_oracle,
)
from tests.engine.kubelet.random_states import admission_case, eviction_case
from tests.oracles import seeds

pytestmark = needs_oracle


@pytest.mark.parametrize("seed", seeds(60))
def test_admission_matches_the_kubelet(seed: int) -> None:
    assert admission_differences(admission_case(seed)) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", seeds(50, 10_000))
def test_eviction_matches_the_kubelet(seed: int) -> None:
    assert eviction_differences(eviction_case(seed)) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", seeds(30, 20_000))
def test_eviction_with_tied_pods_matches_the_kubelet(seed: int) -> None:
    """13-16 pods of equal request and few priorities and usages: sort.Sort is not stable
    past 12 items, so the kubelet's order within a tie group is its own."""
    assert eviction_differences(eviction_case(seed, ties=True)) == [], f"seed {seed}"
