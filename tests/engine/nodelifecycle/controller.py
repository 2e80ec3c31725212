"""A stateful node lifecycle controller, pass by pass, built from the engine's pieces.

Mirrors monitorNodeHealth / classifyNodes / doNoExecuteTaintingPass (k8s 1.35) and, in
legacy mode, the pre-1.27 doEvictionPass / evictPods / cancelPodEviction. Kubernetes' own
multi-pass unit tests (and the derived timing vectors) are replayed on it; the stateless
decision (``timeline.plan_evictions``) uses the same pieces: ``NodeHealthTracker`` and
``node_health_at`` share the staleness rule and marking, and both drive the same
``process_taint_base_eviction``, ``DisruptionController.handle_disruption``, queues and
token buckets.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.health import (
    Condition,
    LeaseSeen,
    NodeHealthTracker,
    NodeWorkingCopy,
)
from service.engine.nodelifecycle.queue import TimedValue, run_queue_loop
from service.engine.nodelifecycle.tainting import (
    ACTION_NONE,
    LEGACY_ENQUEUE,
    is_daemonset_pod,
    legacy_eviction_due,
    mark_node_as_reachable,
    process_no_taint_base_eviction,
    process_taint_base_eviction,
    taint_queued_node,
)
from service.engine.nodelifecycle.zones import DisruptionController
from service.engine.objects import Node, Pod

__all__ = ["NodeLifecycleSimulator", "PassRecord"]


@dataclass(frozen=True, slots=True)
class PassRecord:
    """What one monitor pass did to one node."""

    observed: str  # Ready status at the start of the pass ("Unknown" when there was none)
    current: str | None  # Ready status after the controller's marking
    posted: bool  # the controller wrote the node status
    pods_marked_not_ready: bool
    action: str  # the taint (or legacy eviction) action decided from ``observed``
    conditions: tuple[Condition, ...]  # the node's conditions after the pass


class NodeLifecycleSimulator:
    """The controller's state across passes. Node objects given to ``monitor_pass`` are the
    API state at the start of that pass; the controller's writes (status, taints) change
    ``self.nodes`` until the next pass replaces it."""

    def __init__(self, config: NodeLifecycleConfig, pods: Iterable[Pod] = ()) -> None:
        self.config = config
        self.tracker = NodeHealthTracker(config)
        self.disruption = DisruptionController(config)
        self.known: set[str] = set()
        self.nodes: dict[str, NodeWorkingCopy] = {}
        self.pods = list(pods)
        self.eviction_status: dict[str, str] = {}  # legacy nodeEvictionMap
        self.deleted_pods: dict[str, int] = {}  # "ns/name" -> deletion time (legacy)
        self.legacy = config.mode == "legacy"

    # --- API state ---

    def set_nodes(self, nodes: Iterable[Node]) -> None:
        self.nodes = {node.name: NodeWorkingCopy.from_node(node) for node in nodes}

    def _pods_on(self, name: str) -> list[Pod]:
        return [p for p in self.pods if p.node_name == name]

    def _delete_pods(self, name: str, now: int) -> None:
        """DeletePods (k8s 1.26): every pod of the node except pods already being deleted and
        DaemonSet pods."""
        for pod in self._pods_on(name):
            if pod.deletion_timestamp is not None or is_daemonset_pod(pod):
                continue
            self.deleted_pods.setdefault(pod.key, now)

    # --- monitorNodeHealth ---

    def monitor_pass(
        self, now: int, leases: Mapping[str, int | None] | None = None
    ) -> dict[str, PassRecord]:
        leases = leases or {}
        dc = self.disruption
        nodes = list(self.nodes.values())
        for node in nodes:  # the informer's copy the pass works from
            node.listed = list(node.taints)
        names = {n.name for n in nodes}
        added = [n for n in nodes if n.name not in self.known]
        for node in nodes:
            if node.name in self.known and node.zone not in dc.zone_states:
                dc.ensure_zone(node.zone)
        for node in added:
            self.known.add(node.name)
            dc.ensure_zone(node.zone)
            if self.legacy:
                self._cancel_pod_eviction(node)
            else:
                mark_node_as_reachable(node, dc.queue(node.zone), now)
        self.known &= names

        records: dict[str, PassRecord] = {}
        zone_statuses: dict[str, list[str | None]] = {}
        for node in nodes:
            lease = LeaseSeen(leases[node.name]) if node.name in leases else None
            result = self.tracker.try_update(node, lease, now)
            current = result.current
            if not node.excluded:
                zone_statuses.setdefault(node.zone, []).append(
                    current.status if current is not None else None
                )
            action = ACTION_NONE
            marked = False
            if current is not None:
                queue = dc.queue(node.zone)
                if self.legacy:
                    action = self._process_legacy(node, result.observed.status, now)
                else:
                    action = process_taint_base_eviction(node, result.observed.status, queue, now)
                marked = current.status != "True" and result.observed.status == "True"
            records[node.name] = PassRecord(
                observed=result.observed.status,
                current=current.status if current is not None else None,
                posted=result.posted,
                pods_marked_not_ready=marked,
                action=action,
                conditions=tuple(c.copy() for c in node.conditions),
            )

        def enter_master() -> None:
            for node in nodes:
                if self.legacy:
                    self._cancel_pod_eviction(node)
                else:
                    mark_node_as_reachable(node, dc.queue(node.zone), now)

        dc.handle_disruption(
            zone_statuses,
            now,
            enter_master,
            lambda: self.tracker.reset_all([n.name for n in nodes], now),
        )
        for node in nodes:  # the informer catches up with the controller's writes
            node.listed = None
        return records

    def _cancel_pod_eviction(self, node: NodeWorkingCopy) -> bool:
        self.eviction_status[node.name] = "unmarked"
        return self.disruption.queue(node.zone).remove(node.name)

    def _process_legacy(self, node: NodeWorkingCopy, observed: str, now: int) -> str:
        data = self.tracker.data[node.name]
        queue = self.disruption.queue(node.zone)
        timeout = self.config.pod_eviction_timeout_ns
        if self.eviction_status.get(node.name) == "evicted" and legacy_eviction_due(
            observed, data.probe, data.ready_transition, now, timeout
        ):
            # evictPods on a node already evicted deletes its (new) pods at once.
            self._delete_pods(node.name, now)
            return LEGACY_ENQUEUE
        action = process_no_taint_base_eviction(
            node,
            observed,
            data.probe,
            data.ready_transition,
            queue,
            now,
            timeout,
        )
        if action == LEGACY_ENQUEUE:
            self.eviction_status[node.name] = "toBeEvicted"
        elif observed == "True":
            self.eviction_status[node.name] = "unmarked"
        return action

    # --- the 100 ms loop ---

    def run_loop(self, start: int, until: int) -> None:
        """doNoExecuteTaintingPass (or, in legacy mode, doEvictionPass) every 100 ms in
        [start, until)."""

        def process(_zone: str, item: TimedValue, t: int) -> tuple[bool, int]:
            if self.legacy:
                self._delete_pods(item.value, t)
                self.eviction_status[item.value] = "evicted"
                return True, 0
            return taint_queued_node(self.nodes.get(item.value), t)

        run_queue_loop(self.disruption.queues, process, start=start, until=until)

    # --- views for tests ---

    def zone_states(self) -> dict[str, str]:
        return dict(self.disruption.zone_states)

    def zone_rates(self) -> dict[str, float]:
        return {k: self.disruption.effective_rate(k) for k in self.disruption.zone_states}

    def no_execute_taint_keys(self, name: str) -> list[str]:
        return [t.key for t in self.nodes[name].taints if t.effect == "NoExecute"]
