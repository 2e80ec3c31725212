"""Verdict's node-eviction-rate decision against kube-controller-manager's node lifecycle
controller and taint eviction (v1.35, nodelifecycle-oracle) on random clusters from
tests/engine/nodelifecycle/random_clusters.py: zone states and rates, Ready statuses, taint
times (per slot group as a multiset) and pod deletion times up to the horizon. Skipped
where the oracle is absent; ``VERDICT_ORACLE_SEEDS=2000`` widens the run."""

from __future__ import annotations

import pytest

from tests.engine.nodelifecycle.oracle import differences, needs_oracle
from tests.engine.nodelifecycle.random_clusters import random_case
from tests.oracles import seeds

pytestmark = needs_oracle


@pytest.mark.parametrize("seed", seeds(60))
def test_node_lifecycle_matches_the_controller(seed: int) -> None:
    assert differences(random_case(seed)) == [], f"seed {seed}"
