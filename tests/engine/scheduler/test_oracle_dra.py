"""Verdict against the real kube-scheduler (v1.35.4's framework, full default profile) on
random GPU clusters (random_dra.py): every node's verdict with DynamicResources' reasons,
the scores (DynamicResources' among them), the chosen node within the top set, the devices
the allocator picks on each feasible node served by one pool (``draAllocation``), and for
preemption the candidates, their victims and the nominated node. Skipped where the oracle
binary is absent. Thousands of seeds: bench/RESULTS.md ("DynamicResources")."""

from __future__ import annotations

import pytest

from tests.engine.scheduler.oracle import (
    needs_oracle,
    placement_differences,
    preemption_differences,
)
from tests.engine.scheduler.random_dra import random_dra_case

pytestmark = needs_oracle


@pytest.mark.parametrize("seed", range(5000, 5040))
def test_placement_with_devices_matches_the_real_scheduler(seed: int) -> None:
    case = random_dra_case(seed, "placement")
    assert placement_differences(case) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(6000, 6030))
def test_preemption_with_devices_matches_the_real_scheduler(seed: int) -> None:
    case = random_dra_case(seed, "preemption")
    assert preemption_differences(case) == [], f"seed {seed}"


# Seeds that once disagreed: 11341 (an All subrequest validated under the previous
# subrequest's key), the others Go map order and parallel filters (the harness's).
@pytest.mark.parametrize("seed", [10642, 10820, 11341, 11764, 11843, 11857])
def test_placement_seeds_that_once_disagreed(seed: int) -> None:
    case = random_dra_case(seed, "placement")
    assert placement_differences(case) == [], f"seed {seed}"


def test_the_preemption_seed_that_once_disagreed() -> None:
    case = random_dra_case(20140, "preemption")
    assert preemption_differences(case) == []
