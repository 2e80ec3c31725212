"""Zones: zone states, eviction rates and the cluster-level disruption logic (a node's zone
key is service.engine.topology.zone_key).

Mirrors, in pkg/controller/nodelifecycle/node_lifecycle_controller.go (k8s 1.35):
isNodeExcludedFromDisruptionChecks, ComputeZoneState, ReducedQPSFunc, HealthyQPSFunc,
setLimiterInZone, addPodEvictorForNewZone and handleDisruption.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.queue import (
    RateLimitedTimedQueue,
    TokenBucketLimiter,
    float32,
)
from service.engine.objects import Node

__all__ = [
    "EXCLUDE_DISRUPTION_LABEL",
    "STATE_FULL",
    "STATE_INITIAL",
    "STATE_NORMAL",
    "STATE_PARTIAL",
    "DisruptionController",
    "ZoneCount",
    "compute_zone_state",
    "healthy_qps",
    "is_excluded_from_disruption",
    "rate_for_state",
    "reduced_qps",
]

EXCLUDE_DISRUPTION_LABEL = "node.kubernetes.io/exclude-disruption"

STATE_INITIAL = "Initial"
STATE_NORMAL = "Normal"
STATE_PARTIAL = "PartialDisruption"
STATE_FULL = "FullDisruption"


def is_excluded_from_disruption(node: Node) -> bool:
    """isNodeExcludedFromDisruptionChecks (k8s 1.35): the exclude-disruption label is present
    (any value). Name-based master exclusion no longer exists."""
    return EXCLUDE_DISRUPTION_LABEL in node.labels


def compute_zone_state(
    ready_statuses: Iterable[str | None], unhealthy_zone_threshold: float
) -> tuple[int, str]:
    """ComputeZoneState (k8s 1.35): (notReady count, state) for one zone's Ready statuses.

    ``None`` is a node without a Ready condition. Ready = status exactly "True"; all else is
    not ready. Full when none is ready and at least one is not; Partial when more than two
    are not ready and notReady / total >= threshold in float32; Normal otherwise (also for
    an empty zone).
    """
    ready = 0
    not_ready = 0
    for status in ready_statuses:
        if status == "True":
            ready += 1
        else:
            not_ready += 1
    if ready == 0 and not_ready > 0:
        return not_ready, STATE_FULL
    if not_ready > 2 and float32(
        float32(float(not_ready)) / float32(float(not_ready + ready))
    ) >= float32(unhealthy_zone_threshold):
        return not_ready, STATE_PARTIAL
    return not_ready, STATE_NORMAL


def reduced_qps(zone_size: int, config: NodeLifecycleConfig) -> float:
    """ReducedQPSFunc (k8s 1.35): the secondary rate when the zone's counted size is strictly
    greater than largeClusterSizeThreshold, else 0 (tainting stops)."""
    if config.partial_disruption_qps_override is not None:
        return config.partial_disruption_qps_override
    if zone_size > config.large_cluster_size_threshold:
        return config.secondary_node_eviction_rate
    return 0.0


def healthy_qps(zone_size: int, config: NodeLifecycleConfig) -> float:
    """HealthyQPSFunc (k8s 1.35): the normal rate (used for a FullDisruption zone while some
    other zone is not fully disrupted)."""
    if config.full_disruption_qps_override is not None:
        return config.full_disruption_qps_override
    return config.node_eviction_rate


def rate_for_state(state: str, zone_size: int, config: NodeLifecycleConfig) -> float | None:
    """The rate setLimiterInZone asks for; None for Initial (it sets nothing)."""
    if state == STATE_NORMAL:
        return config.node_eviction_rate
    if state == STATE_PARTIAL:
        return reduced_qps(zone_size, config)
    if state == STATE_FULL:
        return healthy_qps(zone_size, config)
    return None


@dataclass(frozen=True, slots=True)
class ZoneCount:
    size: int  # counted (non-excluded) nodes
    not_ready: int
    state: str


class DisruptionController:
    """The controller's zone memory: ``zone_states`` and one rate-limited queue per zone.

    The same object serves the NoExecute tainting queues (taint mode) and the legacy
    pod-eviction queues (zonePodEvictor); both use setLimiterInZone identically.
    Iteration over zones follows insertion (first-seen) order where Go iterates a map.
    """

    def __init__(self, config: NodeLifecycleConfig) -> None:
        self.config = config
        self.zone_states: dict[str, str] = {}
        self.queues: dict[str, RateLimitedTimedQueue] = {}
        self.counts: dict[str, ZoneCount] = {}
        self.all_fully_disrupted = False

    def ensure_zone(self, key: str) -> bool:
        """addPodEvictorForNewZone (k8s 1.35): an unknown zone gets state Initial and a new
        queue with a full token bucket at --node-eviction-rate (replacing any old queue)."""
        if key in self.zone_states:
            return False
        self.zone_states[key] = STATE_INITIAL
        self.queues[key] = RateLimitedTimedQueue(TokenBucketLimiter(self.config.node_eviction_rate))
        return True

    def queue(self, key: str) -> RateLimitedTimedQueue:
        return self.queues[key]

    def set_limiter_in_zone(self, key: str, zone_size: int, state: str, now: int) -> None:
        """setLimiterInZone (k8s 1.35)."""
        rate = rate_for_state(state, zone_size, self.config)
        if rate is not None:
            self.queues[key].swap_limiter(rate, now)

    def handle_disruption(
        self,
        zone_statuses: Mapping[str, list[str | None]],
        now: int,
        enter_master_disruption: Callable[[], None],
        exit_master_disruption: Callable[[], None],
    ) -> bool:
        """handleDisruption (k8s 1.35). ``zone_statuses`` maps each zone with counted nodes to
        their current Ready statuses, in node order. Returns allAreFullyDisrupted.

        ``enter_master_disruption`` must remove both NoExecute lifecycle taints from every
        node and drop it from its queue (markNodeAsReachable), or in legacy mode cancel every
        pending eviction; ``exit_master_disruption`` must reset every node's probe and
        ready-transition timestamps to now.
        """
        new_states: dict[str, str] = {}
        all_are = True
        self.counts = {}
        for key, statuses in zone_statuses.items():
            not_ready, state = compute_zone_state(statuses, self.config.unhealthy_zone_threshold)
            self.counts[key] = ZoneCount(len(statuses), not_ready, state)
            if state != STATE_FULL:
                all_are = False
            new_states[key] = state
            if key not in self.zone_states:
                self.zone_states[key] = STATE_INITIAL

        all_was = True
        for key in list(self.zone_states):
            if key not in zone_statuses:
                del self.zone_states[key]
                continue
            if self.zone_states[key] != STATE_FULL:
                all_was = False
                break

        self.all_fully_disrupted = all_are
        if all_are and all_was:
            return all_are
        if all_are:
            enter_master_disruption()
            for key in self.zone_states:
                self.queues[key].swap_limiter(0.0, now)
            for key in self.zone_states:
                self.zone_states[key] = STATE_FULL
            return all_are
        if all_was:
            exit_master_disruption()
            for key in list(self.zone_states):
                state = new_states.get(key, "")
                self.set_limiter_in_zone(key, len(zone_statuses.get(key, ())), state, now)
                self.zone_states[key] = state
            return all_are
        for key, old in list(self.zone_states.items()):
            # A stale zone left behind by the early-stopping scan gets Go's zero value "".
            state = new_states.get(key, "")
            if old == state:
                continue
            self.set_limiter_in_zone(key, len(zone_statuses.get(key, ())), state, now)
            self.zone_states[key] = state
        return all_are

    def effective_rate(self, key: str) -> float:
        """The rate the zone's queue actually drains at (0.0 for the never limiter)."""
        return self.queues[key].limiter.effective_qps
