"""The small engine pieces on their own: the token bucket and queue quirks,
the health tracker's lease memory, time formatting, the taint eviction replay."""

from __future__ import annotations

import pytest

from service.engine.nodelifecycle.clock import MILLISECOND, SECOND, format_time
from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.health import (
    Condition,
    LeaseSeen,
    NodeHealthTracker,
    NodeWorkingCopy,
)
from service.engine.nodelifecycle.queue import (
    NeverLimiter,
    RateLimitedTimedQueue,
    TokenBucketLimiter,
    float32,
)
from service.engine.nodelifecycle.tainteviction import replay_pod
from service.engine.nodelifecycle.zones import DisruptionController
from service.engine.objects import Taint, Toleration


def test_float32():
    assert float32(0.1) == 0.10000000149011612
    assert float32(0.01) == 0.009999999776482582
    assert float32(1e39) == float("inf")


def test_token_bucket_starts_full_and_refills_at_the_rate():
    bucket = TokenBucketLimiter(0.1)
    assert bucket.try_accept(0)
    assert not bucket.try_accept(9_999 * MILLISECOND)
    assert bucket.try_accept(10 * SECOND)
    assert bucket.reported_qps == float32(0.1)


def test_zero_rate_bucket_spends_its_burst_once():
    # A new zone's queue is created with NewTokenBucketRateLimiter(--node-eviction-rate): at
    # 0 qps x/time/rate still grants the burst once, and never refills.
    bucket = TokenBucketLimiter(0.0)
    assert bucket.try_accept(0)
    assert not bucket.try_accept(3600 * SECOND)


def test_swap_from_a_stopped_zone_starts_drained():
    queue = RateLimitedTimedQueue(NeverLimiter())
    queue.swap_limiter(0.1, 0)
    assert isinstance(queue.limiter, TokenBucketLimiter)
    assert not queue.limiter.can_accept(9 * SECOND)
    assert queue.limiter.can_accept(10 * SECOND)


def test_swap_is_skipped_when_the_reported_qps_matches():
    queue = RateLimitedTimedQueue(NeverLimiter())
    queue.swap_limiter(1.0, 0)  # the never limiter reports QPS 1
    assert isinstance(queue.limiter, NeverLimiter)
    limiter = TokenBucketLimiter(0.1)
    queue = RateLimitedTimedQueue(limiter)
    queue.swap_limiter(0.1, 0)
    assert queue.limiter is limiter


def test_try_consumes_a_token_even_when_the_head_is_not_due():
    queue = RateLimitedTimedQueue(TokenBucketLimiter(0.1))
    queue.add("n", 5 * SECOND)
    queue.try_process(0, lambda item: (True, 0))
    assert queue.queued() == ["n"]
    assert not queue.limiter.can_accept(5 * SECOND)


def test_failed_item_is_requeued_after_its_wait():
    queue = RateLimitedTimedQueue(TokenBucketLimiter(1000.0))
    queue.add("a", 0)
    queue.add("b", 0)
    queue.try_process(0, lambda item: (item.value == "b", 50 * MILLISECOND))
    assert queue.queued() == ["b", "a"]


def test_zone_with_only_excluded_nodes_is_dropped_and_recreated():
    dc = DisruptionController(NodeLifecycleConfig())
    dc.ensure_zone("z")
    dc.handle_disruption({}, 0, lambda: None, lambda: None)
    assert "z" not in dc.zone_states
    assert dc.ensure_zone("z")  # a fresh queue next pass


def _state(heartbeat: int) -> NodeWorkingCopy:
    return NodeWorkingCopy("n", conditions=[Condition("Ready", "True", heartbeat, 0)])


def test_tracker_forgets_the_lease_when_the_heartbeat_changes():
    # Go builds a new nodeHealthData without the lease when Ready.lastHeartbeatTime changes;
    # the next pass then treats the unchanged lease as new and resets the probe time.
    tracker = NodeHealthTracker(NodeLifecycleConfig())
    lease = LeaseSeen(0)
    tracker.try_update(_state(0), lease, 0)
    tracker.try_update(_state(10 * SECOND), lease, 10 * SECOND)
    assert tracker.data["n"].lease is None
    tracker.try_update(_state(10 * SECOND), lease, 55 * SECOND)
    assert tracker.data["n"].probe == 55 * SECOND


def test_tracker_marks_a_silent_node_unknown_after_the_grace():
    tracker = NodeHealthTracker(NodeLifecycleConfig())
    tracker.try_update(_state(0), None, 0)
    state = _state(0)
    result = tracker.try_update(state, None, 50 * SECOND)
    assert not result.posted and result.current.status == "True"
    result = tracker.try_update(state, None, 50 * SECOND + 1)
    assert result.posted and result.current.status == "Unknown"
    assert [c.type for c in state.conditions] == [
        "Ready",
        "MemoryPressure",
        "DiskPressure",
        "PIDPressure",
    ]


@pytest.mark.parametrize(
    ("ns", "text"),
    [
        (0, "1970-01-01T00:00:00Z"),
        (1_700_000_000 * SECOND + 100 * MILLISECOND, "2023-11-14T22:13:20.1Z"),
        (1_700_000_000 * SECOND + 1, "2023-11-14T22:13:20.000000001Z"),
    ],
)
def test_format_time(ns, text):
    assert format_time(ns) == text


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
