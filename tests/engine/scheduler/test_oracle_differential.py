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
from tests.engine.scheduler.random_clusters import random_case

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
