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

from service.engine.scheduler.framework import CycleState, PodInfo
from service.engine.scheduler.snapshot import SchedulerView

__all__ = [
    "lower_priority_nominated_pods",
    "prepare_nominated",
]


def prepare_nominated(ctx: CycleState, view: SchedulerView) -> None:
    """addGENominatedPods' selection, once per pod: for every node, the nominated pods with
    priority >= the pod's, other than the pod itself. Holds (holds.py) are added to the same
    lists before or after this call. Plain loops: it runs every cycle over every nominated
    pod, most of them passed whole."""
    priority, same_pod = ctx.priority, ctx.info.same_pod  # same_pod is symmetric
    counted = ctx.nominated
    for node_name, pods in view.nominated.items():
        for pi in pods:
            if pi.priority >= priority and not same_pod(pi):
                kept = counted.get(node_name)
                if kept is None:
                    counted[node_name] = [pi]
                else:
                    kept.append(pi)


def lower_priority_nominated_pods(
    view: SchedulerView, priority: int, node_name: str
) -> list[PodInfo]:
    """getLowerPriorityNominatedPods: pods nominated to ``node_name`` with a priority lower
    than ``priority``; a successful preemption on that node clears their nomination."""
    return [pi for pi in view.nominated_for(node_name) if pi.priority < priority]
