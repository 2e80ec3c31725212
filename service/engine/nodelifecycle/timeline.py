"""The eviction timeline of one decision: when the node lifecycle controller writes each
NoExecute lifecycle taint, and when taint-based eviction then deletes each pod.

Drives the controller's pieces (``tainting.py``'s marking, ``zones.py``, ``queue.py``) over
the monitor passes of pkg/controller/nodelifecycle/node_lifecycle_controller.go (k8s 1.35:
monitorNodeHealth, doNoExecuteTaintingPass) and replays each node's taints through
pkg/controller/tainteviction (``tainteviction.py``); for the legacy path (k8s 1.26, removed
in 1.27): evictPods, cancelPodEviction, doEvictionPass and DeletePods.

``plan_evictions`` is Verdict's stateless decision at a time ``now``:

* every node's health is taken from ``health.node_health_at``;
* the controller is taken to be in steady state: it knows every node (no restart clean-up),
  a node with a Ready condition that carries a lifecycle taint keeps it and its timeAdded
  (its queue's de-duplication set holds it; a node without one is queued afresh), every
  zone's limiter is the one for the zone's current state, and every zone bucket is full at
  ``now``;
* a monitor pass runs at ``now`` and the next one ``nodeMonitorPeriod`` later; the 100 ms
  tainting loop ticks at ``now`` and every 100 ms after. A node the controller itself marks
  Unknown at ``now`` is therefore queued at the second pass (the decision uses the Ready
  status observed at the start of a pass), a node whose kubelet already reported False or
  Unknown at the first. Queue order: pass order, which is snapshot node order (Kubernetes
  uses 8 parallel workers, so its order is arbitrary: the nodes one pass queues in one zone
  share their slots, which ``slot_group`` marks). Later passes only re-queue pending nodes
  in the same order, so they change nothing and are not run;
* each pod's deletion time is the taint eviction controller's, replayed over its node's
  NoExecute taint history: existing taints from their timeAdded (a taint without timeAdded
  from the snapshot's capturedAt, else ``now``), the controller's writes when it makes them,
  the pod from its creationTimestamp when it was created after the taints; a pod in the
  snapshot is not deleted yet, so a deletion due before ``now`` happens at ``now``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC

from service.engine.nodelifecycle.clock import format_time, from_ns, to_ns
from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.health import (
    NodeHealth,
    NodeWorkingCopy,
    lease_renew_ns,
    node_health_at,
)
from service.engine.nodelifecycle.queue import TimedValue, run_queue_loop
from service.engine.nodelifecycle.tainteviction import (
    NO_EXECUTE,
    NOT_READY_TAINT_KEY,
    UNREACHABLE_TAINT_KEY,
    EvictionOutcome,
    default_toleration_seconds,
    replay_pod,
)
from service.engine.nodelifecycle.tainting import (
    WANTED_TAINT,
    is_daemonset_pod,
    mark_node_as_reachable,
    process_taint_base_eviction,
    taint_exists,
    taint_queued_node,
)
from service.engine.nodelifecycle.zones import STATE_NORMAL, DisruptionController
from service.engine.objects import Cluster, Node, Pod, Taint, Toleration
from service.engine.topology import zone_key_parts

__all__ = ["NodeOutcome", "Plan", "PodOutcome", "ZoneOutcome", "plan_evictions"]


# --- the stateless plan ---


@dataclass(slots=True)
class ZoneOutcome:
    key: str
    region: str
    zone: str
    state: str
    nodes: int
    not_ready: int
    rate: float


@dataclass(slots=True)
class NodeOutcome:
    node: Node
    state: NodeWorkingCopy
    health: NodeHealth
    ready: str  # current Ready status ("Unknown" for a node that has not posted one yet)
    wanted: str | None  # the lifecycle taint key the controller wants on the node
    tainted_at: int | None  # when that taint is, or will be, on the node
    evicted_at: int | None = None  # legacy: when the node's pods are deleted
    # Nodes queued in the same zone by the same pass share this number when there are
    # several: which of them takes which slot upstream is unspecified (None: its own slot).
    slot_group: int | None = None
    events: list[tuple[int, tuple[Taint, ...]]] = field(default_factory=list)

    @classmethod
    def of(cls, node: Node, state: NodeWorkingCopy, health: NodeHealth, **found) -> NodeOutcome:
        """The outcome of ``node``, its current Ready status read off ``health``."""
        return cls(node, state, health, health.current or "Unknown", **found)


@dataclass(slots=True)
class PodOutcome:
    pod: Pod
    evict_at: int | None
    reason: str


@dataclass(slots=True)
class Plan:
    zones: list[ZoneOutcome]
    all_fully_disrupted: bool
    nodes: list[NodeOutcome]
    pods: list[PodOutcome]


def _initial_events(
    taints: Sequence[Taint], origin: int, latest: int | None = None
) -> list[tuple[int, tuple[Taint, ...]]]:
    """The snapshot's NoExecute taints as node updates at their timeAdded (``origin`` when
    unset, and never later than ``latest``: a taint in the snapshot is there by ``now``,
    whatever a skewed clock wrote): at each distinct time, the set of those added by then,
    in node order."""
    no_execute = [t for t in taints if t.effect == NO_EXECUTE]
    if not no_execute:
        return []
    added = [to_ns(t.time_added) if t.time_added is not None else origin for t in no_execute]
    if latest is not None:
        added = [min(a, latest) for a in added]
    events = []
    for moment in sorted(set(added)):
        events.append(
            (moment, tuple(t for t, a in zip(no_execute, added, strict=True) if a <= moment))
        )
    return events


def _format_taint(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def _zone_name(key: str) -> str:
    return "the unlabelled zone" if key == "" else "zone " + key.replace(":\x00:", "/")


def _plan_zones(
    dc: DisruptionController, states: list[NodeWorkingCopy], nodes: Sequence[Node]
) -> list[ZoneOutcome]:
    first: dict[str, Node] = {}
    for state, node in zip(states, nodes, strict=True):
        first.setdefault(state.zone, node)
    result = []
    for key in dc.queues:
        region, zone = zone_key_parts(first[key].labels) if key else ("", "")
        count = dc.counts.get(key)
        result.append(
            ZoneOutcome(
                key=key,
                region=region,
                zone=zone,
                state=count.state if count else STATE_NORMAL,
                nodes=count.size if count else 0,
                not_ready=count.not_ready if count else 0,
                rate=dc.effective_rate(key),
            )
        )
    return result


def _health(
    cluster: Cluster, now: int, config: NodeLifecycleConfig, *, log_taints: bool
) -> tuple[list[NodeWorkingCopy], list[NodeHealth]]:
    leases = cluster.leases_by_node
    states = []
    healths = []
    for node in cluster.snapshot.nodes:
        state = NodeWorkingCopy.from_node(node, log_taints=log_taints)
        healths.append(node_health_at(state, lease_renew_ns(leases.get(node.name)), now, config))
        states.append(state)
    return states, healths


def _zone_statuses(
    states: list[NodeWorkingCopy], healths: list[NodeHealth]
) -> dict[str, list[str | None]]:
    statuses: dict[str, list[str | None]] = {}
    for state, health in zip(states, healths, strict=True):
        if not state.excluded:
            statuses.setdefault(state.zone, []).append(health.current)
    return statuses


def plan_evictions(cluster: Cluster, now: int, config: NodeLifecycleConfig) -> Plan:
    """The node lifecycle controller's and the taint eviction controller's decisions at
    ``now`` (Unix ns) on the snapshot, as described in this module's docstring."""
    if config.mode == "legacy":
        return _plan_legacy(cluster, now, config)
    return _plan_taint(cluster, now, config)


def _plan_taint(cluster: Cluster, now: int, config: NodeLifecycleConfig) -> Plan:
    nodes = cluster.snapshot.nodes
    states, healths = _health(cluster, now, config, log_taints=True)
    origin = to_ns(cluster.snapshot.captured_at) if cluster.snapshot.captured_at else now
    initial = [_initial_events(node.taints, min(origin, now), now) for node in nodes]
    by_name = {state.name: state for state in states}

    dc = DisruptionController(config)
    for state in states:
        dc.ensure_zone(state.zone)
    for state, health in zip(states, healths, strict=True):
        # A lifecycle taint came through the zone queue, which remembers the node, only
        # once the node had a Ready condition; on a node that never posted one (the
        # controller has not written its NodeStatusNeverUpdated yet) someone else put it,
        # so the first pass queues the node and its slot re-stamps the taint.
        if health.has_ready and (
            taint_exists(state.taints, NOT_READY_TAINT_KEY)
            or taint_exists(state.taints, UNREACHABLE_TAINT_KEY)
        ):
            dc.queue(state.zone).mark_processed(state.name)
    statuses = _zone_statuses(states, healths)

    def enter_master(at: int) -> None:
        for state in states:
            mark_node_as_reachable(state, dc.queue(state.zone), at)

    def monitor_pass(at: int, first: bool) -> None:
        for state in states:
            state.listed = list(state.taints)
        for state, health in zip(states, healths, strict=True):
            ready = state.ready()
            if ready is None:
                continue
            observed = health.observed if first else ready.status
            process_taint_base_eviction(state, observed, dc.queue(state.zone), at)
        dc.handle_disruption(statuses, at, lambda: enter_master(at), lambda: None)
        for state in states:
            state.listed = None

    monitor_pass(now, True)
    all_fully_disrupted = dc.all_fully_disrupted
    second = now + config.node_monitor_period_ns
    queued_by: dict[str, tuple[str, int, int]] = {}
    carried: set[str] = set()

    def second_pass() -> None:
        # markNodeForTainting Removes and re-Adds every node still waiting for its taint,
        # so the first pass's leftovers join the second pass's nodes in one draw.
        carried.update(zone for zone, queue in dc.queues.items() if len(queue))
        monitor_pass(second, False)

    def taint_slot(zone: str, item: TimedValue, t: int) -> tuple[bool, int]:
        done, wait = taint_queued_node(by_name.get(item.value), t)
        if done:
            queued_by[item.value] = (zone, item.added_at, t)
        return done, wait

    run_queue_loop(
        dc.queues,
        taint_slot,
        start=now,
        arrivals=[(second, second_pass)],
    )
    slot_groups = _slot_groups(queued_by, carried, second)

    outcomes: list[NodeOutcome] = []
    for node, state, health, events in zip(nodes, states, healths, initial, strict=True):
        ready = state.ready()
        if ready is not None:
            wanted = WANTED_TAINT.get(ready.status)
        else:
            # No Ready condition yet (in its startup grace): the controller leaves the node
            # alone, so a lifecycle taint it carries stays.
            wanted = next(
                (t.key for t in state.taints if t.effect == NO_EXECUTE and t.key in _LIFECYCLE),
                None,
            )
        tainted_at = None
        if wanted is not None:
            for taint in state.taints:
                if taint.key == wanted and taint.effect == NO_EXECUTE:
                    tainted_at = to_ns(taint.time_added) if taint.time_added else min(origin, now)
        outcomes.append(
            NodeOutcome.of(
                node,
                state,
                health,
                wanted=wanted,
                tainted_at=tainted_at,
                events=events + (state.taint_log or []),
                slot_group=slot_groups.get((node.name, tainted_at)),
            )
        )
    zones = _plan_zones(dc, states, nodes)
    rates = {z.key: z for z in zones}
    pods = _taint_pods(cluster, outcomes, rates, all_fully_disrupted, config, now)
    return Plan(zones, all_fully_disrupted, outcomes, pods)


_LIFECYCLE = (NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY)


def _slot_groups(
    queued_by: dict[str, tuple[str, int, int]], carried: set[str], second: int
) -> dict[tuple[str, int], int]:
    """Nodes whose taint slot is one of several handed out to the nodes one pass queued in
    one zone. Upstream, monitorNodeHealth handles nodes on 8 parallel workers, so the order
    in which they enter the zone's queue, and so which slot each gets, is unspecified; the
    slots themselves are exact. Nodes of a zone whose first-pass nodes were still waiting at
    the second pass (``carried``) all draw together. Keyed by (node, slot time); numbered
    from 1 in slot order."""
    members: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for name, (zone, added_at, slot) in queued_by.items():
        drawn = second if zone in carried and added_at < second else added_at
        members.setdefault((zone, drawn), []).append((name, slot))
    groups: dict[tuple[str, int], int] = {}
    number = 0
    for slots in members.values():
        if len(slots) < 2:
            continue
        number += 1
        for slot in slots:
            groups[slot] = number
    return groups


def _tolerations_for(pod: Pod, config: NodeLifecycleConfig, cache: dict) -> tuple[Toleration, ...]:
    if not config.apply_default_tolerations:
        return pod.tolerations
    result = cache.get(pod.tolerations)
    if result is None:
        result = default_toleration_seconds(
            pod.tolerations,
            config.default_not_ready_toleration_seconds,
            config.default_unreachable_toleration_seconds,
        )
        cache[pod.tolerations] = result
    return result


def _taint_pods(
    cluster: Cluster,
    outcomes: list[NodeOutcome],
    zones: dict[str, ZoneOutcome],
    all_fully_disrupted: bool,
    config: NodeLifecycleConfig,
    now: int,
) -> list[PodOutcome]:
    """Each pod's deletion by taint-based eviction. A pod in the snapshot has not been
    deleted yet, so a deletion already due before ``now`` happens at ``now``: the taint
    eviction controller's TimedWorkerQueue.AddWork runs work whose delay is <= 0 at once
    (createWorker, k8s 1.35)."""
    result: list[PodOutcome] = []
    default_cache: dict = {}
    for outcome in outcomes:
        events = outcome.events
        if not events and outcome.wanted is None:
            continue
        replay_cache: dict = {}
        # Compare datetimes first; convert only the creation times that matter.
        first_event = from_ns(events[0][0]) if events else None
        for pod in cluster.pods_on(outcome.node.name):
            tolerations = _tolerations_for(pod, config, default_cache)
            created = pod.creation_timestamp
            seen_from = None
            if created is not None and first_event is not None:
                if created.tzinfo is None:
                    created = created.replace(tzinfo=UTC)
                if created > first_event:
                    seen_from = to_ns(created)
            key = (tolerations, seen_from)
            cached = replay_cache.get(key)
            if cached is None:
                replayed = replay_pod(events, tolerations, seen_from)
                reason = _taint_reason(replayed, outcome, zones, all_fully_disrupted)
                evict_at = replayed.evict_at
                if evict_at is not None and evict_at < now:
                    reason += f" (due at {format_time(evict_at)}, before now: it runs at once)"
                    evict_at = now
                cached = replay_cache[key] = (evict_at, reason)
            result.append(PodOutcome(pod, cached[0], cached[1]))
    return result


def _taint_reason(
    replayed: EvictionOutcome,
    outcome: NodeOutcome,
    zones: dict[str, ZoneOutcome],
    all_fully_disrupted: bool,
) -> str:
    decision = replayed.decision
    taint = _format_taint(decision.taint) if decision.taint is not None else "a NoExecute taint"
    if replayed.evict_at is not None:
        if decision.cause == "untolerated":
            return (
                f"Taint manager: deleting due to NoExecute taint {taint}, which the pod does "
                "not tolerate"
            )
        if decision.kind == "immediate":
            return (
                f"Taint manager: deleting due to NoExecute taint {taint}: the toleration used "
                "has tolerationSeconds <= 0"
            )
        started = format_time(replayed.decided_at) if replayed.decided_at is not None else "?"
        return (
            f"Taint manager: deleting due to NoExecute taint {taint} after tolerationSeconds="
            f"{decision.seconds}, counted from {started}"
        )
    if decision.forever:
        return "Current tolerations for pod tolerate forever, cancelling any scheduled deletion"
    if outcome.wanted is not None and outcome.tainted_at is None:
        if all_fully_disrupted:
            return (
                "Controller detected that all Nodes are not-Ready. Entering master disruption "
                f"mode: {outcome.wanted}:NoExecute is not added and no pod is evicted"
            )
        zone = zones.get(outcome.state.zone)
        state = zone.state if zone else "?"
        return (
            f"{_zone_name(outcome.state.zone)} is {state} and its eviction rate is 0: "
            f"{outcome.wanted}:NoExecute is never added"
        )
    if replayed.cancelled:
        return "All taints were removed from the node. Cancelling all evictions..."
    return "The node has no NoExecute taint"


# --- the legacy (pre-1.27) path ---


def _first_pass_after(threshold: int, now: int, period: int, k0: int) -> int:
    """The first monitor pass ``now + k * period`` (k >= k0) strictly after ``threshold``."""
    start = now + k0 * period
    if start > threshold:
        return start
    k = (threshold - now) // period + 1
    return now + max(k, k0) * period


def _plan_legacy(cluster: Cluster, now: int, config: NodeLifecycleConfig) -> Plan:
    nodes = cluster.snapshot.nodes
    states, healths = _health(cluster, now, config, log_taints=False)
    dc = DisruptionController(config)
    for state in states:
        dc.ensure_zone(state.zone)
    statuses = _zone_statuses(states, healths)
    timeout = config.pod_eviction_timeout_ns
    period = config.node_monitor_period_ns

    def threshold(health: NodeHealth, status: str) -> int:
        if status == "False":
            transition = health.ready_transition
            return (transition if transition is not None else health.probe) + timeout
        return health.probe + timeout

    arrivals: dict[int, list[NodeWorkingCopy]] = {}
    for state, health in zip(states, healths, strict=True):
        if state.ready() is None:
            continue
        current = health.current
        flipped = health.observed != current
        when = None
        if health.observed in WANTED_TAINT and now > threshold(health, health.observed):
            when = now
        elif current in WANTED_TAINT:
            when = _first_pass_after(threshold(health, current), now, period, 1 if flipped else 0)
        if when is not None:
            arrivals.setdefault(when, []).append(state)

    def cancel_all() -> None:
        for state in states:
            dc.queue(state.zone).remove(state.name)

    def add_all(at: int, group: list[NodeWorkingCopy]) -> None:
        for state in group:
            dc.queue(state.zone).add(state.name, at, state.uid)

    # The pass at now queues its nodes before handleDisruption (which may cancel them all).
    add_all(now, arrivals.pop(now, []))
    dc.handle_disruption(statuses, now, cancel_all, lambda: None)
    all_fully_disrupted = dc.all_fully_disrupted

    evicted: dict[str, int] = {}

    def process(_zone: str, item: TimedValue, t: int) -> tuple[bool, int]:
        evicted.setdefault(item.value, t)
        return True, 0

    run_queue_loop(
        dc.queues,
        process,
        start=now,
        arrivals=[
            (at, lambda at=at, group=group: add_all(at, group)) for at, group in arrivals.items()
        ],
    )
    outcomes = [
        NodeOutcome.of(
            node, state, health, wanted=None, tainted_at=None, evicted_at=evicted.get(node.name)
        )
        for node, state, health in zip(nodes, states, healths, strict=True)
    ]
    zones = _plan_zones(dc, states, nodes)
    rates = {z.key: z for z in zones}
    pods: list[PodOutcome] = []
    for outcome in outcomes:
        unhealthy = outcome.state.ready() is not None and outcome.ready in WANTED_TAINT
        if outcome.evicted_at is None and not unhealthy:
            continue
        for pod in cluster.pods_on(outcome.node.name):
            pods.append(_legacy_pod(pod, outcome, rates, all_fully_disrupted))
    return Plan(zones, all_fully_disrupted, outcomes, pods)


def _legacy_pod(
    pod: Pod, outcome: NodeOutcome, zones: dict[str, ZoneOutcome], all_fully_disrupted: bool
) -> PodOutcome:
    node = outcome.node.name
    if outcome.evicted_at is None:
        if all_fully_disrupted:
            reason = (
                "Controller detected that all Nodes are not-Ready. Entering master disruption "
                "mode: pod evictions are cancelled"
            )
        else:
            zone = zones.get(outcome.state.zone)
            reason = (
                f"{_zone_name(outcome.state.zone)} is {zone.state if zone else '?'} and its "
                "eviction rate is 0: the node's pods are never deleted"
            )
        return PodOutcome(pod, None, reason)
    if pod.deletion_timestamp is not None:
        return PodOutcome(pod, None, "The pod is already being deleted")
    if is_daemonset_pod(pod):
        return PodOutcome(
            pod, None, "The pod is managed by a DaemonSet; the node controller does not delete it"
        )
    return PodOutcome(
        pod,
        outcome.evicted_at,
        f"NodeLost: Node {node} which was running pod {pod.name} is unresponsive",
    )
