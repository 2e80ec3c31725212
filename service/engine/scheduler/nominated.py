"""Nominated pods, the two-pass filter, and the scheduling queue's order.

Mirrors kubernetes/kubernetes (master, about v1.35/1.36):

* ``pkg/scheduler/framework/runtime/framework.go`` ``addGENominatedPods``: the pods nominated
  to a node whose priority is >= the incoming pod's (the pod itself excluded by UID), counted
  in pass 1 of ``Framework.run_filter_plugins_with_nominated`` (runtime.py). Nominated pods
  are never part of the node state otherwise (no Requested, no score, never victims).
* the PodNominator (``NominatedPodsForNode``): a pending pod with ``status.nominatedNodeName``.
* ``pkg/scheduler/framework/preemption`` ``getLowerPriorityNominatedPods``: nominations a
  successful preemption clears.
* ``pkg/scheduler/framework/plugins/queuesort`` ``PrioritySort.Less``.
"""

from __future__ import annotations

from datetime import datetime

from service.engine.scheduler.framework import CycleState, PodInfo
from service.engine.scheduler.snapshot import SchedulerView

__all__ = [
    "lower_priority_nominated_pods",
    "prepare_nominated",
    "queue_sort_less",
]


def prepare_nominated(ctx: CycleState, view: SchedulerView) -> None:
    """addGENominatedPods' selection, once per pod: for every node, the nominated pods with
    priority >= the pod's, other than the pod itself. Holds (holds.py) are added to the same
    lists before or after this call."""
    for node_name, pods in view.nominated.items():
        kept = [pi for pi in pods if pi.priority >= ctx.priority and not pi.same_pod(ctx.info)]
        if kept:
            ctx.nominated.setdefault(node_name, []).extend(kept)


def lower_priority_nominated_pods(
    view: SchedulerView, priority: int, node_name: str
) -> list[PodInfo]:
    """getLowerPriorityNominatedPods: pods nominated to ``node_name`` with a priority lower
    than ``priority``; a successful preemption on that node clears their nomination."""
    return [pi for pi in view.nominated_for(node_name) if pi.priority < priority]


def queue_sort_less(
    priority1: int | None,
    queued_at1: datetime | None,
    priority2: int | None,
    queued_at2: datetime | None,
) -> bool:
    """PrioritySort.Less (k8s master, plugins/queuesort): the higher priority goes first; at
    equal priority, the earlier queue timestamp (the time the pod was (re)added to the
    scheduling queue, not creationTimestamp). A missing priority is 0 and a missing timestamp
    the zero time."""
    p1 = priority1 or 0
    p2 = priority2 or 0
    if p1 != p2:
        return p1 > p2
    if queued_at1 is None and queued_at2 is None:
        return False
    if queued_at1 is None:
        return True  # the zero time is before any real time
    if queued_at2 is None:
        return False
    return queued_at1 < queued_at2
