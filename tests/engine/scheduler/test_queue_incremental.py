"""The queue's step-by-step views (engine/scheduler/queue.py ``_successor``: only what a bind
or a preemption changes is recomputed) against the full recompute (``fresh_views``: every
cycle's view built from the whole snapshot after the step before), on random clusters of
workloads whose replicas spread and repel: the same steps, messages, ties and usage, for
the queue and for capacity."""

from __future__ import annotations

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.capacity import capacity
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.queue import run_queue
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.replica_templates import variant
from tests.engine.scheduler.test_queue_oracle import queue_case
from tests.oracles import seeds

PROFILES = {DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)}


def _steps(run) -> list[tuple]:
    return [
        (s.pod_key, s.outcome, s.node, [v.key for v in s.victims], s.message, s.ties,
         s.reasons, s.cleared_nominations)
        for s in run.steps
    ]  # fmt: skip


def _usage(nodes) -> list[tuple]:
    return [(u.name, u.requested_after, u.pods_after) for u in nodes]


@pytest.mark.parametrize("seed", seeds(30))
def test_the_queue_decides_alike_step_by_step_and_recomputed(seed: int) -> None:
    objects, queue = queue_case(seed)
    pods = [pod_from_object(p) for p in queue]
    runs = [
        run_queue(Cluster(snapshot_from_objects(objects)), pods, profiles=PROFILES,
                  settings=DEFAULT_SETTINGS, fresh_views=fresh)
        for fresh in (False, True)
    ]  # fmt: skip
    assert _steps(runs[0]) == _steps(runs[1])
    assert _usage(runs[0].nodes) == _usage(runs[1].nodes)


@pytest.mark.parametrize("seed", seeds(20))
def test_capacity_decides_alike_step_by_step_and_recomputed(seed: int) -> None:
    objects, queue = queue_case(seed)
    templates = [pod_from_object(p) for p in queue[:2]]
    runs = [
        capacity(Cluster(snapshot_from_objects(objects)), templates, profiles=PROFILES,
                 settings=DEFAULT_SETTINGS, max_replicas=25, fresh_views=fresh)
        for fresh in (False, True)
    ]  # fmt: skip
    assert runs[0].placements == runs[1].placements
    assert [(t.replicas, t.stop, t.message, t.reasons) for t in runs[0].templates] == [
        (t.replicas, t.stop, t.message, t.reasons) for t in runs[1].templates
    ]
    assert _usage(runs[0].nodes) == _usage(runs[1].nodes)


# --- capacity's incremental cycles (engine/scheduler/incremental.py) against full cycles ---


def _answer(run) -> tuple:
    return (
        run.placements,
        [(t.replicas, dict(t.per_node), t.stop, t.message, t.reasons) for t in run.templates],
        _usage(run.nodes),
        run.ties,
    )


@pytest.mark.parametrize("kind", ["as-is", "anyway", "hard", "repel"])
@pytest.mark.parametrize("seed", seeds(20))
def test_incremental_capacity_places_every_replica_as_full_cycles_do(seed: int, kind: str) -> None:
    objects, queue = queue_case(seed)
    templates = [pod_from_object(variant(p, kind)) for p in queue[:2]]
    for tie_break in (None, seed):
        runs = [
            capacity(Cluster(snapshot_from_objects(objects)), templates, profiles=PROFILES,
                     settings=DEFAULT_SETTINGS, max_replicas=30, tie_break_seed=tie_break,
                     incremental=incremental, fresh_views=not incremental)
            for incremental in (True, False)
        ]  # fmt: skip
        assert _answer(runs[0]) == _answer(runs[1])
        assert runs[1].incremental == runs[1].grouped == 0
        assert runs[0].grouped <= runs[0].incremental
        if tie_break is not None:  # selectHost's sampling: never the group path
            assert runs[0].grouped == 0
        placed = sum(t.replicas for t in runs[0].templates)
        # every replica placed is decided without a full cycle
        assert runs[0].incremental == placed


def test_the_group_path_decides_most_spread_replicas() -> None:
    """Over the seeds, most replicas of the templates with zone spread (ScheduleAnyway) are
    placed by incremental.py's group path (score_groups.py); the others (templates with
    pod (anti-)affinity terms) by its node-by-node path."""
    placed = grouped = 0
    for seed in range(20):
        objects, queue = queue_case(seed)
        templates = [pod_from_object(variant(p, "anyway")) for p in queue[:2]]
        run = capacity(Cluster(snapshot_from_objects(objects)), templates, profiles=PROFILES,
                       settings=DEFAULT_SETTINGS, max_replicas=30)  # fmt: skip
        placed += sum(t.replicas for t in run.templates)
        grouped += run.grouped
    assert grouped >= 0.5 * placed > 0
