"""Held resources for StatefulSet pods being upgraded.

Not an upstream kube-scheduler feature: Verdict's own addition, built on the nominated-pod mechanism
(framework/runtime ``addGENominatedPods``), which Verdict applies when the request asks for it
(``holdStatefulSetUpgrades``) or names holds explicitly (``holds``). Without either, every
decision is upstream's.

How a hold acts on a pod Q being placed or preempting:

* A StatefulSet pod T under upgrade is, in the snapshot, a pod with ``deletionTimestamp`` and a
  controller ownerReference of kind StatefulSet. Its *replacement* is a pod with the same
  namespace and name and the same controller owner (owner uid compared).
* Q is T's replacement: T's resources on its node are free for Q (T is taken off the node for
  Q, for fit and for scoring). An explicit hold whose predecessor is Q's predecessor simply
  does not count.
* Q is another pod with priority <= T's: T keeps holding its resources and pod slot. T is still
  on its node in the snapshot, so this is what the scheduler already sees; T is not a victim
  for Q either (victims need a priority strictly below Q's). An explicit hold (predecessor
  already gone) counts in pass 1 of the nominated-pods filter, as a nominated pod of the
  hold's priority would.
* Q has a higher priority than the hold: a nominated pod of lower priority does not count, so
  an explicit hold is ignored; an in-snapshot T is, as upstream, an ordinary pod on its node
  (it counts, and preemption may choose it as a victim).
* Every node whose filter verdict changed because of a hold says so: the reason
  ``node(s) had resources held for <namespace>/<name>`` is added to the node's reasons.

Explicit holds apply whether or not ``holdStatefulSetUpgrades`` is set (the request names
them); the flag turns on the automatic holds of terminating StatefulSet pods in the snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from service.engine.objects import Pod
from service.engine.scheduler.framework import CycleState, NodeInfo, PodInfo, Status
from service.engine.scheduler.snapshot import SchedulerView

if TYPE_CHECKING:
    from service.engine.scheduler.runtime import Framework

__all__ = [
    "Hold",
    "HoldPlan",
    "apply_holds",
    "hold_keys",
    "hold_reason",
    "hold_reasons",
    "without_holds",
]


@dataclass(frozen=True, slots=True)
class Hold:
    """An explicit hold: a predecessor already gone from the snapshot (API ``holds[]``)."""

    node_name: str
    namespace: str
    name: str
    owner_uid: str = ""
    requests: dict[str, int] = field(default_factory=dict)
    priority: int = 0


@dataclass(slots=True)
class HoldPlan:
    """What the holds do for one incoming pod."""

    # node name -> in-snapshot predecessors that hold against this pod (they stay on the node)
    held_pods: dict[str, list[PodInfo]] = field(default_factory=dict)
    # node name -> explicit holds counted in pass 1 for this pod
    held_explicit: dict[str, list[PodInfo]] = field(default_factory=dict)
    # node name -> "namespace/name" of predecessors whose resources were freed for this pod
    freed: dict[str, list[str]] = field(default_factory=dict)

    def nodes(self) -> set[str]:
        return set(self.held_pods) | set(self.held_explicit)


def hold_reason(key: str) -> str:
    return f"node(s) had resources held for {key}"


def _owner_uid(pod: Pod) -> str:
    ctrl = pod.controller
    if ctrl is not None:
        return ctrl.uid
    return pod.owner_references[0].uid if pod.owner_references else ""


def _is_replacement(pod: Pod, namespace: str, name: str, owner_uid: str) -> bool:
    return pod.namespace == namespace and pod.name == name and _owner_uid(pod) == owner_uid


def apply_holds(
    ctx: CycleState,
    view: SchedulerView,
    *,
    hold_statefulset_upgrades: bool = False,
    holds: Sequence[Hold] = (),
) -> HoldPlan:
    """Apply the holds to ``ctx`` (pass-1 additions, predecessors taken off their node) and
    return the plan used to explain the verdicts. Call after ``prepare_nominated``."""
    plan = HoldPlan()
    pod = ctx.pod
    if hold_statefulset_upgrades:
        for node_name, pi in view.terminating_statefulset_pods:
            t = pi.pod
            if t is None or (pi.same_pod(ctx.info) and pi.uid):
                continue
            if _is_replacement(pod, t.namespace, t.name, _owner_uid(t)):
                ctx.removed.setdefault(node_name, []).append(pi)
                plan.freed.setdefault(node_name, []).append(pi.key)
            elif ctx.priority <= pi.priority:
                plan.held_pods.setdefault(node_name, []).append(pi)
    for hold in holds:
        key = f"{hold.namespace}/{hold.name}"
        if _is_replacement(pod, hold.namespace, hold.name, hold.owner_uid):
            plan.freed.setdefault(hold.node_name, []).append(key)
            continue
        if ctx.priority > hold.priority:
            continue
        requests = dict(hold.requests)
        held = PodInfo(
            None,
            namespace=hold.namespace,
            name=hold.name,
            uid=f"hold:{key}",
            priority=hold.priority,
            requests=requests,
            nz_cpu=requests.get("cpu", 0),
            nz_mem=requests.get("memory", 0),
        )
        ctx.nominated.setdefault(hold.node_name, []).append(held)
        plan.held_explicit.setdefault(hold.node_name, []).append(held)
    return plan


def without_holds(ctx: CycleState, plan: HoldPlan, node_name: str) -> CycleState:
    """A copy of ``ctx`` in which the holds on ``node_name`` do not count: explicit holds
    leave pass 1, held predecessors leave the node."""
    nominated = dict(ctx.nominated)
    explicit = plan.held_explicit.get(node_name)
    if explicit:
        nominated[node_name] = [pi for pi in nominated.get(node_name, []) if pi not in explicit]
    removed = dict(ctx.removed)
    pods = plan.held_pods.get(node_name)
    if pods:
        removed[node_name] = [*removed.get(node_name, ()), *pods]
    return ctx.copy(nominated=nominated, removed=removed)


def hold_keys(plan: HoldPlan, node_name: str) -> list[str]:
    return [pi.key for pi in plan.held_pods.get(node_name, [])] + [
        pi.key for pi in plan.held_explicit.get(node_name, [])
    ]


def hold_reasons(
    fwk: Framework, ctx: CycleState, ni: NodeInfo, status: Status, plan: HoldPlan
) -> list[str]:
    """The hold reasons for a node's filter verdict: when the node rejects the pod, and would
    not without the holds counted against it, one reason per hold on the node (docs/decisions/placement.md,
    "Holds")."""
    if status.is_success or ni.name not in plan.nodes():
        return []
    without = fwk.run_filter_plugins_with_nominated(without_holds(ctx, plan, ni.name), ni)
    if not without.is_success:
        return []
    return [hold_reason(key) for key in hold_keys(plan, ni.name)]
