"""tainteviction.py on its own: the taint eviction replay of one pod."""

from __future__ import annotations

import pytest

from service.engine.nodelifecycle.clock import SECOND
from service.engine.nodelifecycle.tainteviction import replay_pod
from service.engine.objects import Taint, Toleration

UNREACHABLE = Taint(key="node.kubernetes.io/unreachable", effect="NoExecute")
NOT_READY = Taint(key="node.kubernetes.io/not-ready", effect="NoExecute")
USER = Taint(key="dedicated", effect="NoExecute", value="x")


def _tol(key: str, seconds: int | None) -> Toleration:
    return Toleration(key=key, operator="Exists", effect="NoExecute", toleration_seconds=seconds)


@pytest.mark.parametrize(
    ("events", "tolerations", "evict_at"),
    [
        pytest.param(
            [(0, (UNREACHABLE,))], [_tol(UNREACHABLE.key, 300)], 300 * SECOND, id="plain 300s"
        ),
        pytest.param(
            [(0, (USER,)), (100 * SECOND, (USER, UNREACHABLE))],
            [_tol("dedicated", 600), _tol(UNREACHABLE.key, 300)],
            600 * SECOND,
            id="later shorter toleration keeps the first deadline",
        ),
        pytest.param(
            [(0, (NOT_READY,)), (15 * SECOND, (NOT_READY, UNREACHABLE)), (15 * SECOND, (UNREACHABLE,))],
            [_tol(UNREACHABLE.key, 0), _tol(NOT_READY.key, 60)],
            60 * SECOND,
            id="a tolerationSeconds 0 taint keeps the earlier timer (processPodOnNode)",
        ),
        pytest.param(
            [(0, (NOT_READY,)), (15 * SECOND, (NOT_READY, UNREACHABLE))],
            [_tol(NOT_READY.key, 60)],
            15 * SECOND,
            id="an untolerated taint deletes at once",
        ),
        pytest.param(
            [(0, (UNREACHABLE,)), (100 * SECOND, ())],
            [_tol(UNREACHABLE.key, 300)],
            None,
            id="taint removed before the deadline",
        ),
        pytest.param(
            [(0, (UNREACHABLE,)), (400 * SECOND, ())],
            [_tol(UNREACHABLE.key, 300)],
            300 * SECOND,
            id="taint removed after the deadline",
        ),
        pytest.param(
            [(0, (UNREACHABLE,)), (100 * SECOND, ()), (200 * SECOND, (UNREACHABLE,))],
            [_tol(UNREACHABLE.key, 300)],
            500 * SECOND,
            id="removed then re-added restarts the countdown",
        ),
        pytest.param(
            [(0, (UNREACHABLE,)), (100 * SECOND, (NOT_READY,))],
            [_tol(UNREACHABLE.key, 300)],
            100 * SECOND,
            id="swap to an untolerated taint",
        ),
        pytest.param(
            [(0, (UNREACHABLE,)), (100 * SECOND, (NOT_READY,))],
            [_tol(UNREACHABLE.key, 300), _tol(NOT_READY.key, None)],
            None,
            id="swap to a taint tolerated for ever cancels",
        ),
    ],
)
def test_replay_pod(events, tolerations, evict_at):
    assert replay_pod(events, tolerations).evict_at == evict_at


def test_replay_pod_seen_later_counts_from_its_binding():
    events = [(0, (UNREACHABLE,))]
    outcome = replay_pod(events, [_tol(UNREACHABLE.key, 300)], seen_from=1000 * SECOND)
    assert outcome.evict_at == 1300 * SECOND
