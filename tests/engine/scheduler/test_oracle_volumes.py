"""Verdict against the real kube-scheduler of every release with an oracle (full default
profile) on random clusters whose StatefulSets claim zonal and WaitForFirstConsumer volumes,
with CSI attach limits on some nodes (random_volumes.py): every node's verdict, scores and
the chosen node; for preemption the candidates, their victims and the nominated node.
Skipped where a release's oracle binary is absent."""

from __future__ import annotations

import pytest

from tests.engine.scheduler.oracle import placement_differences, preemption_differences
from tests.engine.scheduler.random_clusters import random_case
from tests.engine.scheduler.test_oracle_differential import _marked, seeds


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(3000, 10)))
def test_placement_with_volumes_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_case(seed, "placement", volumes=True)
    assert placement_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(4000, 8)))
def test_preemption_with_volumes_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_case(seed, "preemption", volumes=True)
    assert preemption_differences(case, version) == [], f"{version} seed {seed}"
