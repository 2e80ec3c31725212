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

from collections.abc import Mapping

from service.engine.scheduler.framework import CycleState, PodInfo
from service.engine.scheduler.snapshot import SchedulerView

__all__ = [
    "lower_priority_nominated_pods",
    "prepare_nominated",
]


def prepare_nominated(ctx: CycleState, view: SchedulerView, *, shared: bool = False) -> None:
    """addGENominatedPods' selection, once per pod: for every node, the nominated pods with
    priority >= the pod's, other than the pod itself. Holds (holds.py) are added to the same
    lists before or after this call (each node's list is the cycle's own). The selection by
    priority is kept per nominator map (``_selections``): a queue run's cycles share one map
    and a few priorities; a pod that may be in the map is left out pod by pod. ``shared``:
    the caller adds no holds, so the map may be the kept one (read-only), not a copy: the
    framework then knows it from the cycle before (runtime.Framework._nominated_nodes_of)."""
    selection = _selections(view.nominated).of(ctx.priority, ctx.info)
    counted = ctx.nominated
    if shared and not counted:
        ctx.nominated = selection
        return
    for node_name, pods in selection.items():
        kept = counted.get(node_name)
        if kept is None:
            counted[node_name] = list(pods)
        else:
            kept.extend(pods)


class _Selections:
    """A nominator map's selections by priority (addGENominatedPods), and its pods' UIDs
    and keys: a pod neither of them names is in none of its lists (PodInfo.same_pod
    compares UIDs, or keys when a UID is missing). A view's map is never changed in place
    (queue.py derives a new one), so what is kept stays true while the map is alive."""

    def __init__(self, nominated: Mapping[str, list[PodInfo]]) -> None:
        self.nominated = nominated
        infos = [pi for pods in nominated.values() for pi in pods]
        self.uids = {pi.uid for pi in infos}
        self.keys = {pi.key for pi in infos}
        self.by_priority: dict[int, dict[str, list[PodInfo]]] = {}

    def of(self, priority: int, pod: PodInfo) -> dict[str, list[PodInfo]]:
        """The pods counted for ``pod`` by node (read-only: it may be kept)."""
        if (pod.uid and pod.uid in self.uids) or pod.key in self.keys:
            return _selected(self.nominated, priority, pod)
        found = self.by_priority.get(priority)
        if found is None:
            if len(self.by_priority) >= _PRIORITIES_KEPT:
                self.by_priority.clear()
            found = self.by_priority[priority] = _selected(self.nominated, priority, None)
        return found


_PRIORITIES_KEPT = 16  # selections kept per nominator map
_LAST: list[_Selections] = []  # the last map's selections (one: a queue run shares its map)


def _selections(nominated: Mapping[str, list[PodInfo]]) -> _Selections:
    """The selections of ``nominated``, kept while it stays the map asked about."""
    last = _LAST[0] if _LAST else None
    if last is None or last.nominated is not nominated:
        last = _Selections(nominated)
        _LAST[:] = [last]
    return last


def _selected(
    nominated: Mapping[str, list[PodInfo]], priority: int, pod: PodInfo | None
) -> dict[str, list[PodInfo]]:
    """Per node (the map's order), its pods of priority >= ``priority`` other than ``pod``
    (same_pod is symmetric); nodes left with none are left out."""
    out: dict[str, list[PodInfo]] = {}
    for node_name, pods in nominated.items():
        kept = [pi for pi in pods if pi.priority >= priority and not (pod and pod.same_pod(pi))]
        if kept:
            out[node_name] = kept
    return out


def lower_priority_nominated_pods(
    view: SchedulerView, priority: int, node_name: str
) -> list[PodInfo]:
    """getLowerPriorityNominatedPods: pods nominated to ``node_name`` with a priority lower
    than ``priority``; a successful preemption on that node clears their nomination."""
    return [pi for pi in view.nominated_for(node_name) if pi.priority < priority]
