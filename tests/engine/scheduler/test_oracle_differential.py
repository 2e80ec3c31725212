"""Verdict against the real kube-scheduler of every release with an oracle (v1.32.5,
v1.33.3, v1.34.1, v1.35.4; full default profile unless named) on random clusters: every
node's filter verdict (code, reasons, plugin), every score plugin's weighted score and the
total, the chosen node; for preemption the eligibility, every candidate with its victims in
order and PDB violations, and the nominated node. Each release gets its own seeds (a few
per family here; bench/RESULTS.md has the long local runs). Skipped where a release's
oracle binary is absent."""

from __future__ import annotations

import pytest

from tests.engine.scheduler.oracle import (
    RELEASES,
    placement_differences,
    preemption_differences,
    releases,
)
from tests.engine.scheduler.random_clusters import random_case, random_workload_case


def seeds(base: int, count: int) -> list:
    """``count`` seeds from ``base`` for each release (1.35 keeps the earlier seeds; the
    others are shifted, so that each release sees clusters of its own)."""
    shift = {v: 100 * (len(RELEASES) - 1 - i) for i, v in enumerate(RELEASES)}
    return [
        pytest.param(
            version, base + shift[version] + i, id=f"{version}-{base + shift[version] + i}"
        )
        for version in RELEASES
        for i in range(count)
    ]


def _marked(params: list) -> list:
    """Each (release, seed) skipped where the release's oracle is absent."""
    marks = {p.values[0]: p.marks for p in releases()}
    return [pytest.param(*p.values, id=p.id, marks=marks[p.values[0]]) for p in params]


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(0, 8)))
def test_placement_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_case(seed, "placement")
    assert placement_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(1000, 8)))
def test_preemption_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_case(seed, "preemption")
    assert preemption_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(0, 6)))
def test_spread_and_affinity_placement_matches_the_real_scheduler(version: str, seed: int) -> None:
    """Roomy untainted nodes, so that PodTopologySpread and InterPodAffinity decide."""
    case = random_case(seed, "placement", spread=True)
    assert placement_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(2000, 6)))
def test_spread_and_affinity_preemption_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_case(seed, "preemption", spread=True)
    assert preemption_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(0, 6)))
def test_workload_placement_matches_the_real_scheduler(version: str, seed: int) -> None:
    """Deployments, StatefulSets, ReplicationControllers and Services whose pods use pod
    (anti-)affinity and spread constraints of every kind; the pod is a new replica."""
    case = random_workload_case(seed, "placement")
    assert placement_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(0, 5)))
def test_workload_preemption_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_workload_case(seed, "preemption")
    assert preemption_differences(case, version) == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(3000, 5)))
def test_restricted_profile_placement_matches_the_real_scheduler(version: str, seed: int) -> None:
    """The oracle's restricted profile (the first modelled filters, resource scores only)."""
    case = random_case(seed, "placement")
    assert placement_differences(case, version, "restricted") == [], f"{version} seed {seed}"


@pytest.mark.parametrize(("version", "seed"), _marked(seeds(3500, 5)))
def test_restricted_profile_preemption_matches_the_real_scheduler(version: str, seed: int) -> None:
    case = random_case(seed, "preemption")
    assert preemption_differences(case, version, "restricted") == [], f"{version} seed {seed}"
