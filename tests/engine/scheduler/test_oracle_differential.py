"""Verdict against the real kube-scheduler (v1.35.4's framework, full default profile) on
random clusters: every node's filter verdict (code, reasons, plugin), every score plugin's
weighted score and the total, the chosen node; for preemption the eligibility, every
candidate with its victims in order and PDB violations, and the nominated node. Skipped
where the oracle binary is absent."""

from __future__ import annotations

import pytest

from tests.engine.scheduler.oracle import (
    needs_oracle,
    placement_differences,
    preemption_differences,
)
from tests.engine.scheduler.random_clusters import random_case, random_workload_case

pytestmark = needs_oracle


@pytest.mark.parametrize("seed", range(40))
def test_placement_matches_the_real_scheduler(seed: int) -> None:
    assert placement_differences(random_case(seed, "placement")) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(1000, 1030))
def test_preemption_matches_the_real_scheduler(seed: int) -> None:
    assert preemption_differences(random_case(seed, "preemption")) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(30))
def test_spread_and_affinity_placement_matches_the_real_scheduler(seed: int) -> None:
    """Roomy untainted nodes, so that PodTopologySpread and InterPodAffinity decide."""
    case = random_case(seed, "placement", spread=True)
    assert placement_differences(case) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(2000, 2025))
def test_spread_and_affinity_preemption_matches_the_real_scheduler(seed: int) -> None:
    case = random_case(seed, "preemption", spread=True)
    assert preemption_differences(case) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(25))
def test_workload_placement_matches_the_real_scheduler(seed: int) -> None:
    """Deployments, StatefulSets, ReplicationControllers and Services whose pods use pod
    (anti-)affinity and spread constraints of every kind; the pod is a new replica."""
    case = random_workload_case(seed, "placement")
    assert placement_differences(case) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(20))
def test_workload_preemption_matches_the_real_scheduler(seed: int) -> None:
    case = random_workload_case(seed, "preemption")
    assert preemption_differences(case) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(3000, 3020))
def test_restricted_profile_placement_matches_the_real_scheduler(seed: int) -> None:
    """The oracle's restricted profile (the first modelled filters, resource scores only)."""
    case = random_case(seed, "placement")
    assert placement_differences(case, profile="restricted") == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(3500, 3520))
def test_restricted_profile_preemption_matches_the_real_scheduler(seed: int) -> None:
    case = random_case(seed, "preemption")
    assert preemption_differences(case, profile="restricted") == [], f"seed {seed}"
