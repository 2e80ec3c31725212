"""Verdict against the real kube-scheduler (v1.35.4's framework, full default profile) on
random clusters whose StatefulSets claim zonal and WaitForFirstConsumer volumes, with CSI
attach limits on some nodes (random_volumes.py): every node's verdict, scores and the chosen
node; for preemption the candidates, their victims and the nominated node. Skipped where
the oracle binary is absent."""

from __future__ import annotations

import pytest

from tests.engine.scheduler.oracle import (
    needs_oracle,
    placement_differences,
    preemption_differences,
)
from tests.engine.scheduler.random_clusters import random_case

pytestmark = needs_oracle


@pytest.mark.parametrize("seed", range(3000, 3060))
def test_placement_with_volumes_matches_the_real_scheduler(seed: int) -> None:
    case = random_case(seed, "placement", volumes=True)
    assert placement_differences(case) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", range(4000, 4040))
def test_preemption_with_volumes_matches_the_real_scheduler(seed: int) -> None:
    case = random_case(seed, "preemption", volumes=True)
    assert preemption_differences(case) == [], f"seed {seed}"
