"""DefaultPreemption (kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultpreemption
default_preemption.go, v1.35): the plugin's own parts of the scheduler's PostFilter.

``calculateNumCandidates``, ``PodEligibleToPreemptOthers`` (with
``podTerminatingByPreemption``), ``SelectVictimsOnNode`` and ``filterPodsWithPDBViolation``;
``isPreemptionAllowed`` with the default ``IsEligiblePod`` (true). The Evaluator that drives
them (findCandidates, DryRunPreemption, SelectCandidate) is ``scheduler/preemption.py``.

Where upstream is random, Verdict is deterministic: equal pods keep snapshot order (upstream's
sort is unstable) and a pod without ``status.startTime`` is the newest ("now").
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from operator import attrgetter
from typing import TYPE_CHECKING

from service.engine.objects import ContainerPort, Pod
from service.engine.ports import HostPorts
from service.engine.quantity import MAX_INT64
from service.engine.scheduler.framework import (
    SUCCESS,
    UNRESOLVABLE,
    CycleState,
    NodeInfo,
    NodeInfoPods,
    PodInfo,
    Status,
    node_info_pods_of,
)
from service.engine.scheduler.snapshot import SchedulerView

if TYPE_CHECKING:
    from service.engine.scheduler.runtime import Framework

__all__ = [
    "MSG_NEVER",
    "MSG_NO_VICTIMS",
    "MSG_TERMINATING",
    "calculate_num_candidates",
    "filter_pods_with_pdb_violation",
    "pod_eligible_to_preempt_others",
    "select_victims_on_node",
    "select_victims_reference",
    "terminating_by_preemption",
]

MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - 0x100000000 if x & 0x80000000 else x


def calculate_num_candidates(num_nodes: int, percentage: int, absolute: int) -> int:
    """DefaultPreemption.calculateNumCandidates: floor(n * pct / 100) in int32, at least
    ``absolute``, at most n."""
    n = _int32(_int32(num_nodes * percentage) // 100) if num_nodes * percentage >= 0 else 0
    if n < absolute:
        n = absolute
    if n > num_nodes:
        n = num_nodes
    return n


def terminating_by_preemption(pod: Pod) -> bool:
    """podTerminatingByPreemption: deletionTimestamp set and the first DisruptionTarget
    condition is True with reason PreemptionByScheduler (ingest keeps DisruptionTarget)."""
    if pod.deletion_timestamp is None:
        return False
    for cond in pod.conditions:
        if cond.type == "DisruptionTarget":
            return cond.status == "True" and cond.reason == "PreemptionByScheduler"
    return False


def pod_eligible_to_preempt_others(
    view: SchedulerView, pod: Pod, nominated_node_code: str | None
) -> tuple[bool, str]:
    """DefaultPreemption.PodEligibleToPreemptOthers. ``nominated_node_code`` is this cycle's
    status code for the pod's nominated node (None: no status, i.e. Success)."""
    if pod.preemption_policy == "Never":
        return False, MSG_NEVER
    nominated = pod.nominated_node_name
    if nominated:
        if nominated_node_code == UNRESOLVABLE:
            return True, ""
        ni = view.by_name.get(nominated)
        if ni is not None:
            priority = pod.priority if pod.priority is not None else 0
            for pi in ni.pods:
                if (
                    pi.priority < priority
                    and pi.pod is not None
                    and terminating_by_preemption(pi.pod)
                ):
                    return False, MSG_TERMINATING
    return True, ""


def filter_pods_with_pdb_violation(
    view: SchedulerView, pods: Sequence[PodInfo]
) -> tuple[list[PodInfo], list[PodInfo]]:
    """filterPodsWithPDBViolation: split ``pods`` (kept in order) into PDB-violating and
    non-violating, on a fresh copy of each PDB's status.disruptionsAllowed. A pod without
    labels matches nothing; a PDB must be in the pod's namespace, with a valid, non-empty
    selector that matches; a pod listed (by name) in status.disruptedPods does not count."""
    violating: list[PodInfo] = []
    non_violating: list[PodInfo] = []
    if not view.pdbs:
        return violating, list(pods)
    allowed: dict[int, int] = {}
    pdbs = view.pdbs
    for pi in pods:
        violated = False
        for idx in view.matching_pdbs(pi):
            pdb = pdbs[idx]
            if pi.name in pdb.disrupted_pods:
                continue
            left = allowed.get(idx, pdb.disruptions_allowed) - 1
            allowed[idx] = left
            if left < 0:
                violated = True
        (violating if violated else non_violating).append(pi)
    return violating, non_violating


def _potential_victims(ctx: CycleState, ni: NodeInfo) -> list[PodInfo]:
    """The node's pods with a priority strictly below the preemptor's, most important first
    (isPreemptionAllowed with the default IsEligiblePod, then the importance sort)."""
    ordered = ni.pods_by_importance()
    victims = ordered[ni.first_below(ctx.priority) :]
    removed = ctx.removed.get(ni.name)
    if removed:
        victims = [pi for pi in victims if pi not in removed]
    return victims


def _wanted_conflict(wanted: Sequence[ContainerPort], pi: PodInfo) -> bool:
    """Whether ``pi``'s host ports collide with one of the ports the preemptor wants."""
    if not wanted or not pi.has_ports or pi.pod is None:
        return False
    own = pi.host_ports
    if own is None:
        own = pi.host_ports = HostPorts.of_pods([pi.pod])  # kept: the pod never changes
    return any(own.conflicts(p.host_ip, p.protocol, p.host_port) for p in wanted)


def select_victims_on_node(
    fwk: Framework, ctx: CycleState, view: SchedulerView, ni: NodeInfo
) -> tuple[list[PodInfo], int, Status]:
    """DefaultPreemption.SelectVictimsOnNode: remove every potential victim; if the preemptor
    then fits (filters with nominated pods), reprieve the PDB-violating victims first, then
    the others, most important first, keeping each one the preemptor still fits with.

    The fast path: the filters that depend on the node's pods through sums (``SumsRequests``:
    requests and pod count; ``SumsHostPorts``: host ports) only get stricter as pods are
    added; a filter that ignores the node's pods (``IgnoresNodePods``) never changes; one
    that counts pods (``CountsPods``) none of the node's potential victims is among, or that
    keeps its verdict whichever of them are on the node (``KeepsVerdict``), answers as with
    every victim gone. Where the framework finds every filter left so (``reprieve_on_sums_at``),
    a reprieve test is the summed filters' pass-1 check, done here on running sums (or, with
    no PDB-violating victim, by bisecting the node's prefix sums for the next pod that no
    longer fits). ``select_victims_reference`` runs the filters literally for every reprieve
    and gives the same answer; it is used where the fast path does not apply
    (``_fast_path_applies``).
    """
    order = ni.pods_by_importance()
    n = len(order)
    first = ni.first_below(ctx.priority)
    additions = ctx.nominated.get(ni.name) or ()
    if not _fast_path_applies(fwk, ctx, ni, order[first:], additions):
        return select_victims_reference(fwk, ctx, view, ni)
    if first == n:
        return [], 0, Status(UNRESOLVABLE, (MSG_NO_VICTIMS,))

    checks, wanted = fwk.summed_inputs(ctx)
    cums = [ni.cumulative(name) for name, _ in checks]
    requested = {
        name: ni.requested.get(name, 0) - (cum[n] - cum[first])
        for (name, _), cum in zip(checks, cums, strict=True)
    }
    kept, kept_ports = ni.ports_before(first)
    # The kept pods themselves too, for the volume filters (and the nominated pods of pass 1).
    state = NodeInfoPods(
        requested, first, kept_ports if wanted else None, port_pods=kept, pods=order[:first]
    )
    status = fwk.run_filter_plugins_with_nominated(ctx, ni, state)
    if not status.is_success:
        return [], 0, status

    # filterPodsWithPDBViolation over the potential victims (only PDB-selected pods matter).
    violating_at: list[int] = []
    entries = ni.pdb_positions(view)
    if entries:
        allowed: dict[int, int] = {}
        for k in range(bisect.bisect_left(entries, (first,)), len(entries)):
            pos, matches = entries[k]
            violated = False
            for idx, budget, exempt in matches:
                if exempt:
                    continue
                left = allowed.get(idx, budget) - 1
                allowed[idx] = left
                if left < 0:
                    violated = True
            if violated:
                violating_at.append(pos)

    alloc = ni.allocatable
    remaining = []
    for name, want in checks:
        extra = 0
        for pi in additions:
            extra += pi.requests.get(name, 0)
        remaining.append(alloc.get(name, 0) - requested[name] - extra - want)
    slots = alloc.get("pods", 0) - (first + len(additions)) - 1

    conflicts = [
        pos for pos, pi in ni.port_positions() if pos >= first and _wanted_conflict(wanted, pi)
    ]
    if violating_at:
        return _reprieve_linear(order, cums, remaining, slots, first, violating_at, conflicts)

    victims: list[PodInfo] = []
    skipped = [0] * len(checks)
    start = first
    ci = 0
    while start < n:
        fail = n
        slot_fail = slots + first + len(victims)
        if slot_fail < fail:
            fail = slot_fail
        for r, cum in enumerate(cums):
            threshold = remaining[r] + cum[first] + skipped[r]
            idx = bisect.bisect_right(cum, threshold, start + 1, n + 1)
            if idx - 1 < fail:
                fail = idx - 1
        while ci < len(conflicts) and conflicts[ci] < start:
            ci += 1
        if ci < len(conflicts) and conflicts[ci] < fail:
            fail = conflicts[ci]
        if fail >= n:
            break
        victims.append(order[fail])
        for r, cum in enumerate(cums):
            skipped[r] += cum[fail + 1] - cum[fail]
        start = fail + 1
    return victims, 0, Status(SUCCESS)


def _fast_path_applies(
    fwk: Framework,
    ctx: CycleState,
    ni: NodeInfo,
    victims: Sequence[PodInfo],
    additions: Sequence[PodInfo],
) -> bool:
    """Whether the fast path gives the literal answer on this node: no hold took a pod off
    it for this pod (the sums are the node's own pods'), the framework finds every filter
    left summed or unmoved by these victims (``Framework.reprieve_on_sums_at``, from the
    plugins' capabilities), and no sum leaves int64 (``_may_wrap``)."""
    if ctx.removed.get(ni.name):
        return False
    if not fwk.reprieve_on_sums_at(ctx, ni, victims):
        return False
    checks = fwk.summed_inputs(ctx)[0]
    return not _may_wrap(checks, [ni.cumulative(name) for name, _ in checks], additions)


def _may_wrap(
    checks: Sequence[tuple[str, int]], cums: list[list[int]], additions: Sequence[PodInfo]
) -> bool:
    """Whether some Requested the literal selection builds could leave int64: the node's
    pods (all of them, the most any kept set holds) and its nominated pods summed exactly
    past 2^63-1. Then NodeInfo.update's ``+=`` wraps in Go, fitsRequest's ``allocatable -
    requested`` wraps too, and a reprieved pod can make the preemptor fit again: the
    reprieve is no longer monotone in the pods kept, which the running sums and the bisection
    assume, so the selection is done literally. Below that bound every Requested, free
    amount and difference the literal path computes is the exact integer the sums use
    (requests are never negative and each is at most 2^63-1)."""
    for (name, _), cum in zip(checks, cums, strict=True):
        total = cum[-1]
        for pi in additions:
            total += pi.requests.get(name, 0)
        if total > MAX_INT64:
            return True
    return False


def _reprieve_linear(
    order: list[PodInfo],
    cums: list[list[int]],
    remaining: list[int],
    slots: int,
    first: int,
    violating_at: list[int],
    conflicts: list[int],
) -> tuple[list[PodInfo], int, Status]:
    """The reprieve loop on running sums, over positions in ``order``: the PDB-violating
    victims (``violating_at``) first, then the other potential victims (positions ``first``
    on), each most important first. ``remaining`` is what each checked resource can still
    take back, ``slots`` how many pods can be added back; a pod's requests are read off the
    prefix sums ``cums`` (node-local lists, cheaper than each pod's dict); a pod at a position
    in ``conflicts`` holds a host port the preemptor wants and is never reprieved."""
    marked = set(violating_at)
    non_violating_at = [pos for pos in range(first, len(order)) if pos not in marked]
    blocked = set(conflicts)
    victims: list[PodInfo] = []
    num_violating = 0
    if len(cums) == 2:
        # The common case (cpu and memory) without list building: same test, unrolled.
        cum0, cum1 = cums
        left0, left1 = remaining
        for group, is_violating in ((violating_at, True), (non_violating_at, False)):
            for pos in group:
                if slots >= 1:
                    a = left0 - cum0[pos + 1] + cum0[pos]
                    b = left1 - cum1[pos + 1] + cum1[pos]
                    if a >= 0 and b >= 0 and pos not in blocked:
                        left0, left1 = a, b
                        slots -= 1
                        continue
                victims.append(order[pos])
                if is_violating:
                    num_violating += 1
    else:
        for group, is_violating in ((violating_at, True), (non_violating_at, False)):
            for pos in group:
                fits = slots >= 1
                new_remaining = remaining
                if fits:
                    new_remaining = [
                        left - cum[pos + 1] + cum[pos]
                        for left, cum in zip(remaining, cums, strict=True)
                    ]
                    fits = all(left >= 0 for left in new_remaining) and pos not in blocked
                if fits:
                    remaining = new_remaining
                    slots -= 1
                else:
                    victims.append(order[pos])
                    if is_violating:
                        num_violating += 1
    if violating_at and non_violating_at:
        _sort_by_importance(victims)
    return victims, num_violating, Status(SUCCESS)


def _sort_by_importance(pods: list[PodInfo]) -> None:
    """Sort in place by util.MoreImportantPod (stable), as ``pods.sort(key=_importance)``
    does: two stable sorts on plain attributes, without a Python key call per pod."""
    pods.sort(key=_START_NS)
    pods.sort(key=_PRIORITY, reverse=True)


_PRIORITY = attrgetter("priority")
_START_NS = attrgetter("start_ns")


def _importance(pi: PodInfo) -> tuple[int, int]:
    return (-pi.priority, pi.start_ns)


def select_victims_reference(
    fwk: Framework, ctx: CycleState, view: SchedulerView, ni: NodeInfo
) -> tuple[list[PodInfo], int, Status]:
    """SelectVictimsOnNode done literally: a node copy re-filtered (with nominated pods) for
    every reprieve, its aggregate and a copy of the cycle state kept in step (the plugins'
    RemovePod / AddPod: pod affinity and spreading counts). Used where the fast path does
    not apply (``_fast_path_applies``), and by the tests as the fast path's oracle."""
    potential = _potential_victims(ctx, ni)
    if not potential:
        return [], 0, Status(UNRESOLVABLE, (MSG_NO_VICTIMS,))
    removed = ctx.removed.get(ni.name) or ()
    gone = {id(pi) for pi in potential} | {id(pi) for pi in removed}
    present = [pi for pi in ni.pods if id(pi) not in gone]
    state = ctx.clone() if fwk.active_extensions(ctx) else ctx
    for pi in potential:
        fwk.remove_pod(state, pi, ni)
    # The node copy's aggregate, kept in step as pods are reprieved (NodeInfo.AddPod).
    current = node_info_pods_of(present)
    status = fwk.run_filter_plugins_with_nominated(state, ni, current)
    if not status.is_success:
        return [], 0, status
    violating, non_violating = filter_pods_with_pdb_violation(view, potential)
    victims: list[PodInfo] = []
    num_violating = 0
    for group, is_violating in ((violating, True), (non_violating, False)):
        for pi in group:
            fwk.add_pod(state, pi, ni)
            with_pod = current.with_pods((pi,))
            if fwk.run_filter_plugins_with_nominated(state, ni, with_pod).is_success:
                current = with_pod
            else:
                fwk.remove_pod(state, pi, ni)
                victims.append(pi)
                if is_violating:
                    num_violating += 1
    if violating and non_violating:
        victims.sort(key=_importance)
    return victims, num_violating, Status(SUCCESS)
