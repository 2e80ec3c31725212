"""The per-zone rate-limited tainting queue and its token bucket.

Mirrors pkg/controller/nodelifecycle/scheduler/rate_limited_queue.go (RateLimitedTimedQueue,
UniqueQueue, Try, SwapLimiter; k8s 1.35) and client-go util/flowcontrol/throttle.go
(tokenBucketRateLimiter over golang.org/x/time/rate, fakeNeverRateLimiter, k8s 1.35).
Time is an explicit argument (Unix nanoseconds) instead of the wall clock, so the same code
drives the multi-pass conformance cases and the stateless decision's timeline.
"""

from __future__ import annotations

import heapq
import math
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from service.engine.nodelifecycle.clock import MILLISECOND, SECOND

__all__ = [
    "EVICTION_RATE_LIMITER_BURST",
    "NODE_EVICTION_PERIOD_NS",
    "AlwaysLimiter",
    "NeverLimiter",
    "RateLimitedTimedQueue",
    "TimedValue",
    "TokenBucketLimiter",
    "float32",
    "run_queue_loop",
]

# scheduler.NodeEvictionPeriod: the NoExecute tainting loop (and the legacy eviction loop)
# runs every 100 ms; scheduler.EvictionRateLimiterBurst: every zone bucket holds one token.
NODE_EVICTION_PERIOD_NS = 100 * MILLISECOND
EVICTION_RATE_LIMITER_BURST = 1

_FLOAT32_MAX = 3.4028234663852886e38


def float32(value: float) -> float:
    """The value Go holds after ``float32(value)`` (round to nearest even; ±Inf on overflow)."""
    if math.isnan(value) or math.isinf(value):
        return value
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def _duration_seconds(ns: int) -> float:
    """Go time.Duration.Seconds(): whole seconds plus the nanosecond remainder / 1e9."""
    whole, rest = divmod(abs(ns), SECOND)
    seconds = float(whole) + float(rest) / 1e9
    return -seconds if ns < 0 else seconds


class TokenBucketLimiter:
    """flowcontrol.NewTokenBucketRateLimiter(qps, burst): x/time/rate Limiter semantics.

    The bucket starts full. ``try_accept(t)`` is Limiter.AllowN(t, 1): refill by the elapsed
    time (Duration.Seconds() * float64(float32 qps)), cap at burst, take one token if doing
    so needs no wait (a wait that truncates to 0 ns counts as none, as in Go). A denied call
    changes nothing. ``qps == 0`` is x/time/rate's zero Limit: the burst is spent once and
    never refilled. ``reported_qps`` is QPS(): the float32 qps.
    """

    __slots__ = ("_burst", "_last", "_limit", "_tokens", "qps", "reported_qps")

    def __init__(self, qps: float, burst: int = EVICTION_RATE_LIMITER_BURST) -> None:
        self.qps = qps
        self.reported_qps = float32(qps)
        self._limit = self.reported_qps  # rate.Limit(float64(qps)) of the float32 qps
        self._burst = burst
        self._tokens = float(burst)
        self._last: int | None = None  # Go's zero time: the first refill saturates

    @property
    def effective_qps(self) -> float:
        return self.qps

    def _advance(self, t: int) -> float:
        if self._last is None:
            elapsed_tokens = math.inf if self._limit > 0 else 0.0
        else:
            elapsed = t - min(self._last, t)
            elapsed_tokens = _duration_seconds(elapsed) * self._limit if self._limit > 0 else 0.0
        return min(self._tokens + elapsed_tokens, float(self._burst))

    def _wait_ns(self, tokens_after: float) -> int:
        if tokens_after >= 0:
            return 0
        # durationFromTokens: time.Duration((tokens / limit) * 1e9), truncated toward zero.
        return int((-tokens_after / self._limit) * 1e9)

    def can_accept(self, t: int) -> bool:
        """Would ``try_accept(t)`` succeed? (No state change.)"""
        if self._limit == 0:
            return self._burst >= 1
        return self._wait_ns(self._advance(t) - 1.0) <= 0

    def try_accept(self, t: int) -> bool:
        if self._limit == 0:
            if self._burst >= 1:
                self._burst -= 1
                return True
            return False
        tokens = self._advance(t) - 1.0
        if self._wait_ns(tokens) > 0:
            return False
        self._tokens = tokens
        self._last = t
        return True

    def earliest_accept(self, t: int, tick: int, origin: int) -> int | None:
        """The first time ``origin + k * tick`` >= ``t`` at which the bucket would accept."""
        if self._limit == 0:
            return _align(t, tick, origin) if self._burst >= 1 else None
        start = _align(t, tick, origin)
        if self.can_accept(start):
            return start
        deficit = 1.0 - self._advance(start)
        guess = start + int(deficit / self._limit * 1e9) - 2 * tick
        candidate = max(start, _align(guess, tick, origin))
        for _ in range(10_000):
            if self.can_accept(candidate):
                return candidate
            candidate += tick
        return None  # pragma: no cover - the refill arithmetic always gets there sooner


class NeverLimiter:
    """flowcontrol.NewFakeNeverRateLimiter: accepts nothing and reports QPS() == 1 (sic)."""

    __slots__ = ()
    qps = 0.0
    reported_qps = 1.0
    effective_qps = 0.0

    def can_accept(self, t: int) -> bool:
        return False

    def try_accept(self, t: int) -> bool:
        return False

    def earliest_accept(self, t: int, tick: int, origin: int) -> int | None:
        return None


class AlwaysLimiter:
    """flowcontrol.NewFakeAlwaysRateLimiter (tests): accepts everything, reports QPS() == 1."""

    __slots__ = ()
    qps = 1.0
    reported_qps = 1.0
    effective_qps = math.inf

    def can_accept(self, t: int) -> bool:
        return True

    def try_accept(self, t: int) -> bool:
        return True

    def earliest_accept(self, t: int, tick: int, origin: int) -> int | None:
        return _align(t, tick, origin)


Limiter = TokenBucketLimiter | NeverLimiter | AlwaysLimiter


def _align(t: int, tick: int, origin: int) -> int:
    """The first grid point ``origin + k * tick`` (k integer) at or after ``t``."""
    return origin + -((origin - t) // tick) * tick


@dataclass(slots=True)
class TimedValue:
    value: str
    uid: str
    added_at: int
    process_at: int


class RateLimitedTimedQueue:
    """A unique queue of node names ordered by processAt, consumed under a rate limiter.

    Mirrors RateLimitedTimedQueue / UniqueQueue (k8s 1.35):
    * ``add`` inserts only when the name is not in the de-duplication set;
    * ``remove`` deletes it from the queue and the set (so it may be added again);
    * an item processed successfully leaves the queue but stays in the set;
    * ``try_process`` is Try(): per item, take a token (stop if none), stop if the head's
      processAt is still in the future, process it; a failed item is re-queued at
      now + wait + 1 ns.
    Go's heap is not stable for equal processAt; items with equal processAt keep insertion
    order here (documented tie-break).
    """

    __slots__ = ("_entries", "_heap", "_seq", "_set", "limiter")

    def __init__(self, limiter: Limiter) -> None:
        self.limiter: Limiter = limiter
        self._heap: list[tuple[int, int, str]] = []
        self._entries: dict[str, tuple[int, int, TimedValue]] = {}
        self._set: set[str] = set()
        self._seq = 0

    # --- UniqueQueue ---

    def _push(self, item: TimedValue) -> None:
        self._seq += 1
        self._entries[item.value] = (item.process_at, self._seq, item)
        heapq.heappush(self._heap, (item.process_at, self._seq, item.value))

    def _drop_from_queue(self, name: str) -> bool:
        return self._entries.pop(name, None) is not None

    def add(self, name: str, now: int, uid: str = "") -> bool:
        if name in self._set:
            return False
        self._push(TimedValue(name, uid, now, now))
        self._set.add(name)
        return True

    def remove(self, name: str) -> bool:
        if name not in self._set:
            return False
        self._set.discard(name)
        self._drop_from_queue(name)
        return True

    def mark_processed(self, name: str) -> None:
        """Put ``name`` in the de-duplication set without queueing it: the state the queue
        is in after it processed the name successfully (used to start from steady state)."""
        self._set.add(name)

    def head(self) -> TimedValue | None:
        heap = self._heap
        while heap:
            _process_at, seq, name = heap[0]
            entry = self._entries.get(name)
            if entry is not None and entry[1] == seq:
                return entry[2]
            heapq.heappop(heap)
        return None

    def clear(self) -> None:
        self._heap.clear()
        self._entries.clear()
        self._set.clear()

    def queued(self) -> list[str]:
        """Names still waiting, in processing order."""
        return [name for _, _, name in sorted((*v[:2], k) for k, v in self._entries.items())]

    def in_set(self) -> set[str]:
        return set(self._set)

    def __len__(self) -> int:
        return len(self._entries)

    # --- RateLimitedTimedQueue ---

    def try_process(self, now: int, fn: Callable[[TimedValue], tuple[bool, int]]) -> None:
        """Try(fn) at time ``now``: ``fn`` returns (done, retry_after_ns)."""
        item = self.head()
        while item is not None:
            if not self.limiter.try_accept(now):
                break
            if now < item.process_at:
                break
            done, wait = fn(item)
            if done:
                self._drop_from_queue(item.value)  # RemoveFromQueue: stays in the set
            else:
                self._drop_from_queue(item.value)
                item.process_at = now + wait + 1
                self._push(item)
            item = self.head()

    def swap_limiter(self, new_qps: float, now: int) -> None:
        """SwapLimiter(newQPS): no-op when the reported QPS already equals float32(newQPS);
        rate <= 0 installs the never limiter; a new bucket starts drained when the old
        limiter had no token at that moment."""
        qps32 = float32(new_qps)
        if self.limiter.reported_qps == qps32:
            return
        new: Limiter
        if qps32 <= 0:
            new = NeverLimiter()
        else:
            new = TokenBucketLimiter(new_qps)
            if not self.limiter.try_accept(now):
                new.try_accept(now)
        self.limiter = new


def run_queue_loop(
    queues: dict[str, RateLimitedTimedQueue],
    process: Callable[[str, TimedValue, int], tuple[bool, int]],
    start: int,
    until: int | None = None,
    arrivals: Iterable[tuple[int, Callable[[], None]]] = (),
    tick: int = NODE_EVICTION_PERIOD_NS,
) -> None:
    """Run the 100 ms loop (doNoExecuteTaintingPass / doEvictionPass) over ``queues``.

    Ticks fall on ``start + k * tick``; at each tick every zone queue runs Try() in the
    order of ``queues``. ``arrivals`` are (time, callback) events (a monitor pass adding
    nodes) applied before the tick at or after their time. Ticks where Try() could do
    nothing (empty queue, no token) are skipped, which is exact: a denied TryAccept changes
    no state. Stops at ``until`` (exclusive) or when nothing can happen any more.
    """
    pending = sorted(arrivals, key=lambda a: a[0])
    index = 0
    t = start
    while True:
        horizon = t if until is None else min(t, until - 1)
        while index < len(pending) and pending[index][0] <= horizon:
            pending[index][1]()
            index += 1
        if until is not None and t >= until:
            return
        for zone, queue in queues.items():
            if len(queue):
                queue.try_process(t, lambda item, zone=zone, t=t: process(zone, item, t))
        # The next tick at which anything can happen.
        candidates: list[int] = []
        for queue in queues.values():
            if not len(queue):
                continue
            nxt = queue.limiter.earliest_accept(t + tick, tick, start)
            if nxt is not None:
                candidates.append(nxt)
        if index < len(pending):
            candidates.append(_align(pending[index][0], tick, start))
        if not candidates:
            return
        t = min(candidates)
