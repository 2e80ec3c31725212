"""queue.py on its own: float32 rounding, the token bucket, and the rate-limited timed
queue's quirks (swaps, tokens spent on a head not yet due, requeue after a failure)."""

from __future__ import annotations

from service.engine.nodelifecycle.clock import MILLISECOND, SECOND
from service.engine.nodelifecycle.queue import (
    NeverLimiter,
    RateLimitedTimedQueue,
    TokenBucketLimiter,
    float32,
)


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
