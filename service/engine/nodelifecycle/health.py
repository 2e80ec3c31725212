"""Node health as the node lifecycle controller sees it.

Two views built on the same rules (k8s 1.35 node_lifecycle_controller.go tryUpdateNodeHealth):

* ``NodeHealthTracker`` keeps the controller's private per-node memory (probe time, ready
  transition time, saved Ready condition, saved Lease) across monitor passes, exactly as the
  controller does; the multi-pass conformance cases drive it.
* ``node_health_at`` is Verdict's stateless approximation of that memory: the
  last sign of life is the later of the Ready condition's lastHeartbeatTime and the node
  Lease's renewTime (creationTimestamp instead of the heartbeat for a node that never posted
  Ready); the node is stale when ``now`` is strictly after that plus the grace period.

Both mark a stale node with ``mark_stale_conditions``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from service.engine.nodelifecycle.clock import SECOND, to_ns
from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.zones import is_excluded_from_disruption
from service.engine.objects import Lease, Node, NodeCondition, Taint
from service.engine.topology import zone_key

__all__ = [
    "GO_ZERO_TIME_NS",
    "Condition",
    "NodeHealth",
    "NodeHealthData",
    "NodeHealthTracker",
    "NodeWorkingCopy",
    "TryUpdateResult",
    "is_stale",
    "lease_renew_ns",
    "mark_stale_conditions",
    "node_health_at",
]

# Go's zero time.Time (0001-01-01T00:00:00Z): what a missing creationTimestamp reads as.
GO_ZERO_TIME_NS = -62135596800 * SECOND

READY = "Ready"
# Condition types the controller marks Unknown on a stale node, in this order;
# NetworkUnavailable is never touched.
STALE_CONDITION_TYPES = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")
REASON_UNKNOWN = "NodeStatusUnknown"
MESSAGE_UNKNOWN = "Kubelet stopped posting node status."
REASON_NEVER_UPDATED = "NodeStatusNeverUpdated"
MESSAGE_NEVER_UPDATED = "Kubelet never posted node status."


@dataclass(slots=True)
class Condition:
    """A v1.NodeCondition the controller may rewrite (times in Unix ns; None = unset)."""

    type: str
    status: str
    last_heartbeat: int | None = None
    last_transition: int | None = None
    reason: str = ""
    message: str = ""

    def copy(self) -> Condition:
        return replace(self)

    def same(self, other: Condition | None) -> bool:
        """apiequality.Semantic.DeepEqual of two conditions (every field equal)."""
        return other is not None and self == other


_UNSET = object()


def _condition(c: NodeCondition) -> Condition:
    return Condition(
        c.type,
        c.status,
        to_ns(c.last_heartbeat_time) if c.last_heartbeat_time else None,
        to_ns(c.last_transition_time) if c.last_transition_time else None,
        c.reason,
    )


class NodeWorkingCopy:
    """The controller's working copy of one Node: what it reads and what it writes.

    ``taints`` is the node as stored in the API server (what the controller's writes
    change); ``listed``, while a monitor pass runs, is the node as the controller's informer
    listed it when the pass started (its decisions and the short-circuits of its taint
    helpers read that copy, as in Go). ``taint_log`` (when not None) records every change of
    the node's NoExecute taints as (time, taints) so the taint eviction controller's view
    can be replayed. Conditions are converted from the model only when first needed (most
    nodes of a large snapshot only ever have their Ready condition read).
    """

    __slots__ = (
        "_conditions",
        "_ready",
        "_source",
        "creation",
        "excluded",
        "labels",
        "listed",
        "name",
        "taint_log",
        "taints",
        "uid",
        "zone",
    )

    def __init__(
        self,
        name: str,
        uid: str = "",
        labels: dict[str, str] | None = None,
        creation: int | None = None,
        conditions: list[Condition] | None = None,
        taints: list[Taint] | None = None,
        *,
        zone: str = "",
        excluded: bool = False,
        taint_log: list[tuple[int, tuple[Taint, ...]]] | None = None,
        source: tuple[NodeCondition, ...] = (),
    ) -> None:
        self.name = name
        self.uid = uid
        self.labels = labels if labels is not None else {}
        self.creation = creation
        self.taints: list[Taint] = taints if taints is not None else []
        self.zone = zone
        self.excluded = excluded
        self.taint_log = taint_log
        self.listed: list[Taint] | None = None
        self._source = source
        self._conditions = conditions
        self._ready: object = _UNSET

    @classmethod
    def from_node(cls, node: Node, *, log_taints: bool = False) -> NodeWorkingCopy:
        return cls(
            node.name,
            node.uid,
            node.labels,
            to_ns(node.creation_timestamp) if node.creation_timestamp else None,
            None,
            list(node.taints),
            zone=zone_key(node.labels),
            excluded=is_excluded_from_disruption(node),
            taint_log=[] if log_taints else None,
            source=node.conditions,
        )

    @property
    def conditions(self) -> list[Condition]:
        if self._conditions is None:
            ready = self._ready
            self._conditions = [
                ready if c.type == READY and isinstance(ready, Condition) else _condition(c)
                for c in self._source
            ]
        return self._conditions

    @conditions.setter
    def conditions(self, value: list[Condition]) -> None:
        self._conditions = value

    def condition(self, type_: str) -> Condition | None:
        for cond in self.conditions:
            if cond.type == type_:
                return cond
        return None

    def ready(self) -> Condition | None:
        if self._conditions is not None:
            return self.condition(READY)
        if self._ready is _UNSET:
            found = None
            for c in self._source:
                if c.type == READY:
                    found = _condition(c)
                    break
            self._ready = found
        return self._ready  # type: ignore[return-value]

    def seen_taints(self) -> list[Taint]:
        """The taints the controller's current view of the node carries."""
        return self.taints if self.listed is None else self.listed

    def set_taints(self, taints: list[Taint], now: int) -> None:
        old_no_execute = tuple(t for t in self.taints if t.effect == "NoExecute")
        self.taints = taints
        if self.taint_log is not None:
            new_no_execute = tuple(t for t in taints if t.effect == "NoExecute")
            if new_no_execute != old_no_execute:
                self.taint_log.append((now, new_no_execute))


def is_stale(probe: int, grace: int, now: int) -> bool:
    """nc.now().After(probeTimestamp.Add(gracePeriod)): strictly after, the boundary is not."""
    return now > probe + grace


def mark_stale_conditions(node: NodeWorkingCopy, now: int) -> None:
    """The Unknown marking of tryUpdateNodeHealth (k8s 1.35) for a stale node, in place.

    For Ready, MemoryPressure, DiskPressure and PIDPressure: a missing condition is
    appended Unknown / NodeStatusNeverUpdated with lastHeartbeatTime = creationTimestamp and
    lastTransitionTime = now; a present condition that is not Unknown becomes Unknown /
    NodeStatusUnknown with lastTransitionTime = now (heartbeat kept); Unknown stays as is.
    """
    creation = node.creation if node.creation is not None else GO_ZERO_TIME_NS
    for type_ in STALE_CONDITION_TYPES:
        cond = node.condition(type_)
        if cond is None:
            node.conditions.append(
                Condition(
                    type_,
                    "Unknown",
                    creation,
                    now,
                    REASON_NEVER_UPDATED,
                    MESSAGE_NEVER_UPDATED,
                )
            )
        elif cond.status != "Unknown":
            cond.status = "Unknown"
            cond.reason = REASON_UNKNOWN
            cond.message = MESSAGE_UNKNOWN
            cond.last_transition = now


# --- the controller's memory across passes ---


@dataclass(slots=True)
class LeaseSeen:
    renew: int | None


@dataclass(slots=True)
class NodeHealthData:
    probe: int
    ready_transition: int
    saved_ready: Condition | None
    lease: LeaseSeen | None = None


@dataclass(slots=True)
class TryUpdateResult:
    grace: int
    observed: Condition  # the Ready condition at the start of the pass (or the fake one)
    current: Condition | None  # the Ready condition after the controller's marking
    posted: bool  # the controller wrote the node status


class NodeHealthTracker:
    """nodeHealthMap plus tryUpdateNodeHealth (k8s 1.35), one node at a time."""

    def __init__(self, config: NodeLifecycleConfig) -> None:
        self.config = config
        self.data: dict[str, NodeHealthData] = {}

    def try_update(
        self, node: NodeWorkingCopy, lease: LeaseSeen | None, now: int
    ) -> TryUpdateResult:
        """tryUpdateNodeHealth on ``node`` (modified in place when the controller marks it).

        ``lease`` is the kube-node-lease Lease as listed now (None when there is none).
        """
        cfg = self.config
        health = self.data.get(node.name)
        current = node.ready()
        creation = node.creation if node.creation is not None else GO_ZERO_TIME_NS
        if current is None:
            observed = Condition(READY, "Unknown", creation, creation)
            grace = cfg.node_startup_grace_period_ns
            if health is None:
                health = NodeHealthData(creation, creation, None)
            else:
                health.saved_ready = None  # nodeHealth.status = &node.Status (no Ready)
        else:
            observed = current.copy()
            grace = cfg.node_monitor_grace_period_ns

        saved = health.saved_ready if health is not None else None
        saved_lease = health.lease if health is not None else None
        if health is None or (saved is None and current is not None):
            health = NodeHealthData(now, now, current)
        elif saved is not None and current is None:
            health = NodeHealthData(now, now, None)
        elif (
            saved is not None
            and current is not None
            and saved.last_heartbeat != current.last_heartbeat
        ):
            transition = (
                now if saved.last_transition != current.last_transition else health.ready_transition
            )
            health = NodeHealthData(now, transition, current)
        # Otherwise nothing changes: the saved status stays the one seen before.
        # A fresh NodeHealthData above does not carry the lease over (as in Go).

        if lease is not None and (
            saved_lease is None
            or (
                saved_lease.renew is not None
                and lease.renew is not None
                and saved_lease.renew < lease.renew
            )
        ):
            health.lease = lease
            health.probe = now

        posted = False
        if is_stale(health.probe, grace, now):
            mark_stale_conditions(node, now)
            current = node.ready()
            if not observed.same(current):
                posted = True
                health = NodeHealthData(health.probe, now, current, lease)
        self.data[node.name] = health
        return TryUpdateResult(grace, observed, current, posted)

    def reset_all(self, names: list[str], now: int) -> None:
        """Leaving master disruption mode: probe = readyTransition = now for every node."""
        for name in names:
            health = self.data.get(name)
            if health is not None:
                health.probe = now
                health.ready_transition = now


# --- the stateless approximation ---


def lease_renew_ns(lease: Lease | None) -> int | None:
    if lease is None or lease.renew_time is None:
        return None
    return to_ns(lease.renew_time)


@dataclass(frozen=True, slots=True)
class NodeHealth:
    """A node's health at ``now``, as ``node_health_at`` approximates it."""

    has_ready: bool  # the node status carries a Ready condition
    observed: str  # the Ready status a pass at now acts on (fake "Unknown" without Ready)
    current: str | None  # Ready after the controller's marking (None: no Ready, in grace)
    stale: bool  # now > probe + grace: the controller marks the node Unknown
    probe: int  # last sign of life (Unix ns)
    grace: int
    ready_transition: int | None  # Ready.lastTransitionTime (legacy path)


def node_health_at(
    node: NodeWorkingCopy, lease_renew: int | None, now: int, config: NodeLifecycleConfig
) -> NodeHealth:
    """The controller's view of ``node`` at ``now`` (stateless), marking it in place.

    With a Ready condition: probe = later of lastHeartbeatTime and the Lease renewTime, grace =
    nodeMonitorGracePeriod. Without one: probe = later of creationTimestamp and the Lease
    renewTime, grace = nodeStartupGracePeriod (the startup grace counts from creation, as the
    controller has it). Stale when now > probe + grace; a stale node is marked by
    ``mark_stale_conditions`` so that its Ready condition reads Unknown afterwards.
    """
    ready = node.ready()
    candidates: list[int] = []
    if ready is not None:
        if ready.last_heartbeat is not None:
            candidates.append(ready.last_heartbeat)
        grace = config.node_monitor_grace_period_ns
        observed = ready.status
        transition = ready.last_transition
    else:
        candidates.append(node.creation if node.creation is not None else GO_ZERO_TIME_NS)
        grace = config.node_startup_grace_period_ns
        observed = "Unknown"
        transition = None
    if lease_renew is not None:
        candidates.append(lease_renew)
    probe = max(candidates) if candidates else GO_ZERO_TIME_NS
    stale = is_stale(probe, grace, now)
    if stale:
        mark_stale_conditions(node, now)
    after = node.ready()
    return NodeHealth(
        has_ready=ready is not None,
        observed=observed,
        current=after.status if after is not None else None,
        stale=stale,
        probe=probe,
        grace=grace,
        ready_transition=transition,
    )
