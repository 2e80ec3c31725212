"""The node lifecycle controller's taint marking: which lifecycle taint a node gets, and the
writes that put it there or take it off.

Mirrors, in pkg/controller/nodelifecycle/node_lifecycle_controller.go (k8s 1.35):
processTaintBaseEviction, markNodeForTainting, markNodeAsReachable, the tainting function of
doNoExecuteTaintingPass, doNoScheduleTaintingPass's condition taints, and
controller/util/node SwapNodeControllerTaint; for the legacy path (k8s 1.26, removed in
1.27): processNoTaintBaseEviction and DeletePods' DaemonSet exemption. When these writes
happen on a timeline, and when the taint eviction controller then deletes each pod, is
``timeline.py``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.nodelifecycle.clock import MILLISECOND, from_ns
from service.engine.nodelifecycle.health import NodeWorkingCopy
from service.engine.nodelifecycle.queue import RateLimitedTimedQueue
from service.engine.nodelifecycle.tainteviction import (
    NO_EXECUTE,
    NOT_READY_TAINT_KEY,
    UNREACHABLE_TAINT_KEY,
)
from service.engine.objects import Node, Pod, Taint

__all__ = [
    "ACTION_ENQUEUE_NOT_READY",
    "ACTION_ENQUEUE_UNREACHABLE",
    "ACTION_NONE",
    "ACTION_REMOVE",
    "ACTION_SWAP_TO_NOT_READY",
    "ACTION_SWAP_TO_UNREACHABLE",
    "LEGACY_CANCEL",
    "LEGACY_ENQUEUE",
    "WANTED_TAINT",
    "is_daemonset_pod",
    "legacy_eviction_due",
    "mark_node_as_reachable",
    "mark_node_for_tainting",
    "no_schedule_condition_taints",
    "process_no_taint_base_eviction",
    "process_taint_base_eviction",
    "reconcile_no_schedule_taints",
    "swap_node_controller_taint",
    "taint_exists",
    "taint_queued_node",
]

ACTION_SWAP_TO_NOT_READY = "swap-to-not-ready"
ACTION_SWAP_TO_UNREACHABLE = "swap-to-unreachable"
ACTION_ENQUEUE_NOT_READY = "enqueue-not-ready"
ACTION_ENQUEUE_UNREACHABLE = "enqueue-unreachable"
ACTION_REMOVE = "remove"
ACTION_NONE = "none"

LEGACY_ENQUEUE = "enqueue"
LEGACY_CANCEL = "cancel"

WANTED_TAINT = {"False": NOT_READY_TAINT_KEY, "Unknown": UNREACHABLE_TAINT_KEY}
RETRY_NO_READY_NS = 50 * MILLISECOND


# --- taint writes (controller/util/node and pkg/util/taints, k8s 1.35) ---


def taint_exists(taints: Sequence[Taint], key: str, effect: str = NO_EXECUTE) -> bool:
    """taintutils.TaintExists with a template: a taint with the same key and effect."""
    return any(t.key == key and t.effect == effect for t in taints)


def _add_or_update_taint(taints: list[Taint], taint: Taint) -> list[Taint]:
    """taintutils.AddOrUpdateTaint: replace the taint with the same key and effect in place
    unless it is identical (timeAdded included), else append it."""
    result = []
    found = False
    for old in taints:
        if old.key == taint.key and old.effect == taint.effect:
            found = True
            result.append(old if old == taint else taint)
        else:
            result.append(old)
    if not found:
        result.append(taint)
    return result


def _remove_taint(taints: list[Taint], key: str, effect: str = NO_EXECUTE) -> list[Taint]:
    return [t for t in taints if not (t.key == key and t.effect == effect)]


def remove_taint_off_node(node: NodeWorkingCopy, key: str, now: int) -> None:
    """controller.RemoveTaintOffNode: nothing when the controller's copy of the node lacks
    the taint (the API-call short-circuit); otherwise removed from the stored node."""
    if not taint_exists(node.seen_taints(), key):
        return
    if taint_exists(node.taints, key):
        node.set_taints(_remove_taint(node.taints, key), now)


def swap_node_controller_taint(
    node: NodeWorkingCopy, add_key: str, remove_key: str, now: int
) -> None:
    """SwapNodeControllerTaint: add ``add_key``:NoExecute with timeAdded = now to the stored
    node, then RemoveTaintOffNode ``remove_key``:NoExecute (two writes: there is never a
    moment without either)."""
    taint = Taint(key=add_key, effect=NO_EXECUTE, time_added=from_ns(now))
    node.set_taints(_add_or_update_taint(node.taints, taint), now)
    remove_taint_off_node(node, remove_key, now)


def mark_node_as_reachable(node: NodeWorkingCopy, queue: RateLimitedTimedQueue, now: int) -> bool:
    """markNodeAsReachable: remove both NoExecute lifecycle taints, drop the node from its
    zone queue (which also forgets it in the de-duplication set)."""
    if not node.seen_taints():  # fast path: nothing to remove (the usual healthy node)
        return queue.remove(node.name)
    remove_taint_off_node(node, UNREACHABLE_TAINT_KEY, now)
    remove_taint_off_node(node, NOT_READY_TAINT_KEY, now)
    return queue.remove(node.name)


def mark_node_for_tainting(
    node: NodeWorkingCopy, status: str, queue: RateLimitedTimedQueue, now: int
) -> bool:
    """markNodeForTainting: when the node lacks the taint for ``status``, Remove it from the
    queue first (resetting de-duplication); then Add it."""
    key = WANTED_TAINT.get(status)
    if key is not None and not taint_exists(node.seen_taints(), key):
        queue.remove(node.name)
    return queue.add(node.name, now, node.uid)


# processTaintBaseEviction's two unhealthy cases, which mirror each other: Ready status ->
# (the taint it wants, the taint it replaces, the action of a swap, the action of a queueing).
_BASE_EVICTION = {
    "False": (
        NOT_READY_TAINT_KEY,
        UNREACHABLE_TAINT_KEY,
        ACTION_SWAP_TO_NOT_READY,
        ACTION_ENQUEUE_NOT_READY,
    ),
    "Unknown": (
        UNREACHABLE_TAINT_KEY,
        NOT_READY_TAINT_KEY,
        ACTION_SWAP_TO_UNREACHABLE,
        ACTION_ENQUEUE_UNREACHABLE,
    ),
}


def process_taint_base_eviction(
    node: NodeWorkingCopy, observed: str, queue: RateLimitedTimedQueue, now: int
) -> str:
    """processTaintBaseEviction on the Ready status ``observed`` at the start of the pass.

    False: a node carrying unreachable:NoExecute is swapped to not-ready at once (no queue,
    no rate limit), else queued; Unknown: the same the other way round; True: both lifecycle
    taints removed and the node dropped from the queue. Returns the action taken.
    """
    branch = _BASE_EVICTION.get(observed)
    if branch is not None:
        wanted, replaced, swapped, queued = branch
        if taint_exists(node.seen_taints(), replaced):
            swap_node_controller_taint(node, wanted, replaced, now)
            return swapped
        mark_node_for_tainting(node, observed, queue, now)
        return queued
    if observed == "True":
        mark_node_as_reachable(node, queue, now)
        return ACTION_REMOVE
    return ACTION_NONE


def taint_queued_node(node: NodeWorkingCopy | None, now: int) -> tuple[bool, int]:
    """The function doNoExecuteTaintingPass gives Try(): re-read the node; gone → drop;
    no Ready condition → retry in 50 ms; False → not-ready (unreachable removed); Unknown →
    unreachable (not-ready removed); anything else → drop without tainting."""
    if node is None:
        return True, 0
    ready = node.ready()
    if ready is None:
        return False, RETRY_NO_READY_NS
    if ready.status == "False":
        swap_node_controller_taint(node, NOT_READY_TAINT_KEY, UNREACHABLE_TAINT_KEY, now)
    elif ready.status == "Unknown":
        swap_node_controller_taint(node, UNREACHABLE_TAINT_KEY, NOT_READY_TAINT_KEY, now)
    return True, 0


def legacy_eviction_due(
    observed: str, probe: int, ready_transition: int, now: int, pod_eviction_timeout: int
) -> bool:
    """The timeout test of processNoTaintBaseEviction (k8s 1.26): Ready False for longer than
    podEvictionTimeout since the ready transition, or Unknown for longer than it since the
    last probe (strictly after)."""
    if observed == "False":
        return now > ready_transition + pod_eviction_timeout
    if observed == "Unknown":
        return now > probe + pod_eviction_timeout
    return False


def process_no_taint_base_eviction(
    node: NodeWorkingCopy,
    observed: str,
    probe: int,
    ready_transition: int,
    queue: RateLimitedTimedQueue,
    now: int,
    pod_eviction_timeout: int,
) -> str:
    """processNoTaintBaseEviction (k8s 1.26, the pre-taint path): an overdue False/Unknown
    node is queued for pod deletion (evictPods); True cancels (cancelPodEviction)."""
    if observed == "True":
        queue.remove(node.name)
        return LEGACY_CANCEL
    if legacy_eviction_due(observed, probe, ready_transition, now, pod_eviction_timeout):
        queue.add(node.name, now, node.uid)
        return LEGACY_ENQUEUE
    return ACTION_NONE


# --- NoSchedule condition taints (doNoScheduleTaintingPass) ---

_NO_SCHEDULE_TAINT_FOR_CONDITION = {
    ("Ready", "False"): NOT_READY_TAINT_KEY,
    ("Ready", "Unknown"): UNREACHABLE_TAINT_KEY,
    ("MemoryPressure", "True"): "node.kubernetes.io/memory-pressure",
    ("DiskPressure", "True"): "node.kubernetes.io/disk-pressure",
    ("NetworkUnavailable", "True"): "node.kubernetes.io/network-unavailable",
    ("PIDPressure", "True"): "node.kubernetes.io/pid-pressure",
}
UNSCHEDULABLE_TAINT_KEY = "node.kubernetes.io/unschedulable"
_CONDITION_TAINT_KEYS = frozenset(_NO_SCHEDULE_TAINT_FOR_CONDITION.values())


def no_schedule_condition_taints(node: Node) -> list[Taint]:
    """The NoSchedule taints doNoScheduleTaintingPass (k8s 1.35) derives from the node's
    conditions (in condition order) and spec.unschedulable; never rate limited, no
    timeAdded, never evict."""
    taints = []
    for cond in node.conditions:
        key = _NO_SCHEDULE_TAINT_FOR_CONDITION.get((cond.type, cond.status))
        if key is not None:
            taints.append(Taint(key=key, effect="NoSchedule"))
    if node.unschedulable:
        taints.append(Taint(key=UNSCHEDULABLE_TAINT_KEY, effect="NoSchedule"))
    return taints


def reconcile_no_schedule_taints(node: Node) -> tuple[list[Taint], list[Taint]]:
    """(to add, to remove): TaintSetDiff of the wanted condition taints against the node's
    NoSchedule taints with a condition or unschedulable key (other taints are left alone)."""
    wanted = no_schedule_condition_taints(node)
    have = [
        t
        for t in node.taints
        if t.effect == "NoSchedule"
        and (t.key == UNSCHEDULABLE_TAINT_KEY or t.key in _CONDITION_TAINT_KEYS)
    ]
    wanted_ids = {(t.key, t.effect) for t in wanted}
    have_ids = {(t.key, t.effect) for t in have}
    return (
        [t for t in wanted if (t.key, t.effect) not in have_ids],
        [t for t in have if (t.key, t.effect) not in wanted_ids],
    )


def is_daemonset_pod(pod: Pod) -> bool:
    """DeletePods skips pods a DaemonSet manages (GetPodDaemonSets); Verdict has no DaemonSet
    objects and uses the pod's controller owner reference instead."""
    owner = pod.controller
    return owner is not None and owner.kind == "DaemonSet"
