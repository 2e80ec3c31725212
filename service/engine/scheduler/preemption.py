"""DefaultPreemption: the scheduler's PostFilter, exactly as upstream decides it.

Mirrors kubernetes/kubernetes (master, about v1.35/1.36; spec/scheduler.md §3):

* ``pkg/scheduler/framework/plugins/defaultpreemption/default_preemption.go``:
  ``PostFilter`` (the "preemption: " prefix), ``calculateNumCandidates``,
  ``SelectVictimsOnNode``, ``PodEligibleToPreemptOthers``, ``podTerminatingByPreemption``,
  ``filterPodsWithPDBViolation``, ``isPreemptionAllowed`` (default ``IsEligiblePod``: true);
* ``pkg/scheduler/framework/preemption/preemption.go``: ``Evaluator.Preempt``,
  ``findCandidates``, ``DryRunPreemption`` (bounded non-violating / violating lists, early
  stop), ``SelectCandidate``, ``pickOneNodeForPreemption``, ``getLowerPriorityNominatedPods``;
* ``pkg/scheduler/framework/types.go``: ``NodeToStatus.NodesForStatusCode``,
  ``FitError.Error`` (the "0/N nodes are available: ..." histogram);
* ``pkg/scheduler/util``: ``MoreImportantPod``, ``GetEarliestPodStartTime``.

Where upstream is random, Verdict is deterministic and says so: the start offset is an input
(potential nodes in snapshot order, visited from ``offset``), nodes are evaluated
sequentially (upstream runs 16 in parallel, which may overshoot the early stop), equal pods
keep snapshot order (upstream's sort is unstable), a pod without ``status.startTime`` is the
newest ("now"), and pickOneNodeForPreemption's final tie goes to the first candidate in
evaluation order (upstream: Go map order). Extenders are not modelled.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from service.engine.objects import Cluster, Pod
from service.engine.ports import HostPorts
from service.engine.scheduler.filters import (
    DEFAULT_FIT_ARGS,
    ERROR,
    SUCCESS,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    FitArgs,
    NodeInfo,
    NodeState,
    PodContext,
    PodInfo,
    SchedulerView,
    Status,
    pod_context,
    scheduler_view,
    state_of,
)
from service.engine.scheduler.holds import (
    Hold,
    HoldPlan,
    apply_holds,
    hold_keys,
    hold_reason,
    hold_reasons,
    without_holds,
)
from service.engine.scheduler.nominated import (
    lower_priority_nominated_pods,
    prepare_nominated,
    run_filters_with_nominated,
)

__all__ = [
    "MSG_NEVER",
    "MSG_NOT_HELPFUL",
    "MSG_NO_VICTIMS",
    "MSG_TERMINATING",
    "Candidate",
    "PreemptionArgs",
    "PreemptionOutcome",
    "calculate_num_candidates",
    "dry_run_preemption",
    "filter_pods_with_pdb_violation",
    "fit_error_message",
    "nodes_for_status_code",
    "nodes_where_preemption_might_help_legacy",
    "pick_one_node_for_preemption",
    "pod_eligible_to_preempt_others",
    "preempt",
    "select_candidate",
    "select_victims_on_node",
    "select_victims_reference",
    "terminating_by_preemption",
]

MSG_NEVER = "not eligible due to preemptionPolicy=Never."
MSG_TERMINATING = "not eligible due to a terminating pod on the nominated node."
MSG_NO_VICTIMS = "No preemption victims found for incoming pod"
MSG_NOT_HELPFUL = "Preemption is not helpful for scheduling"
MSG_NO_CANDIDATE = "no candidate node for preemption"
PREFIX = "preemption: "

_INT32_MIN = -(2**31)
_MAX_INT32_PLUS_ONE = 2**31


@dataclass(frozen=True, slots=True)
class PreemptionArgs:
    """DefaultPreemptionArgs (defaults 10 and 100)."""

    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(slots=True)
class Candidate:
    """preemption.Candidate: a node and its victims (most important first)."""

    node_name: str
    victims: list[PodInfo]
    num_pdb_violations: int


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


def nodes_for_status_code(
    node_names: Sequence[str],
    statuses: Mapping[str, str],
    absent_code: str,
    code: str,
) -> list[str]:
    """NodeToStatus.NodesForStatusCode: the nodes whose status code (explicit, or the absent
    status for unlisted nodes) equals ``code``. When the absent code matches, every node is
    considered in snapshot order; otherwise only listed nodes (upstream iterates its map in
    random order; Verdict keeps snapshot order)."""
    if absent_code == code:
        return [n for n in node_names if statuses.get(n, absent_code) == code]
    return [n for n in node_names if n in statuses and statuses[n] == code]


def nodes_where_preemption_might_help_legacy(
    node_names: Sequence[str], statuses: Mapping[str, str]
) -> list[str]:
    """The legacy nodesWherePreemptionMightHelp (before NodeToStatus): every node whose
    status is not UnschedulableAndUnresolvable, nodes without a status included."""
    return [n for n in node_names if statuses.get(n) != UNRESOLVABLE]


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


def _potential_victims(ctx: PodContext, ni: NodeInfo) -> list[PodInfo]:
    """The node's pods with a priority strictly below the preemptor's, most important first
    (isPreemptionAllowed with the default IsEligiblePod, then the importance sort)."""
    ordered = ni.pods_by_importance()
    victims = ordered[ni.first_below(ctx.priority) :]
    removed = ctx.removed.get(ni.name)
    if removed:
        victims = [pi for pi in victims if pi not in removed]
    return victims


def _wanted_conflict(ctx: PodContext, pi: PodInfo) -> bool:
    """Whether ``pi``'s host ports collide with a port the preemptor wants."""
    if not ctx.wanted_ports or not pi.has_ports or pi.pod is None:
        return False
    own = pi.host_ports
    if own is None:
        own = pi.host_ports = HostPorts.of_pods([pi.pod])  # kept: the pod never changes
    return any(own.conflicts(p.host_ip, p.protocol, p.host_port) for p in ctx.wanted_ports)


def select_victims_on_node(
    ctx: PodContext, view: SchedulerView, ni: NodeInfo
) -> tuple[list[PodInfo], int, Status]:
    """DefaultPreemption.SelectVictimsOnNode: remove every potential victim; if the preemptor
    then fits (filters with nominated pods), reprieve the PDB-violating victims first, then
    the others, most important first, keeping each one the preemptor still fits with.

    Among the modelled filters only NodePorts and NodeResourcesFit depend on the node's pods,
    and both only get stricter as pods are added; so a reprieve test is the pass-1 check of
    those two, done here on running sums (or, with no PDB-violating victim, by bisecting the
    node's prefix sums for the next pod that no longer fits). ``select_victims_reference``
    runs the filters literally for every reprieve; both give the same answer.
    """
    if ctx.removed.get(ni.name):
        return select_victims_reference(ctx, view, ni)
    order = ni.pods_by_importance()
    n = len(order)
    first = ni.first_below(ctx.priority)
    if first == n:
        return [], 0, Status(UNRESOLVABLE, (MSG_NO_VICTIMS,))

    checks = ctx.checks
    cums = [ni.cumulative(name) for name, _ in checks]
    requested = {
        name: ni.requested.get(name, 0) - (cum[n] - cum[first])
        for (name, _), cum in zip(checks, cums, strict=True)
    }
    kept, kept_ports = ni.ports_before(first)
    state = NodeState(requested, first, kept_ports if ctx.wanted_ports else None, port_pods=kept)
    status = run_filters_with_nominated(ctx, ni, state)
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

    additions = ctx.nominated.get(ni.name) or ()
    alloc = ni.allocatable
    remaining = []
    for name, want in checks:
        extra = 0
        for pi in additions:
            extra += pi.requests.get(name, 0)
        remaining.append(alloc.get(name, 0) - requested[name] - extra - want)
    slots = alloc.get("pods", 0) - (first + len(additions)) - 1

    conflicts = [
        pos for pos, pi in ni.port_positions() if pos >= first and _wanted_conflict(ctx, pi)
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
    ctx: PodContext, view: SchedulerView, ni: NodeInfo
) -> tuple[list[PodInfo], int, Status]:
    """SelectVictimsOnNode done literally: a node copy whose pods are re-aggregated and
    re-filtered (with nominated pods) for every reprieve. Quadratic in the node's pods; used
    when a hold takes a predecessor off the node, and to check the fast path in tests."""
    potential = _potential_victims(ctx, ni)
    if not potential:
        return [], 0, Status(UNRESOLVABLE, (MSG_NO_VICTIMS,))
    removed = ctx.removed.get(ni.name) or ()
    gone = {id(pi) for pi in potential} | {id(pi) for pi in removed}
    present = [pi for pi in ni.pods if id(pi) not in gone]

    def fits_with(pods: list[PodInfo]) -> Status:
        return run_filters_with_nominated(ctx, ni, state_of(pods))

    status = fits_with(present)
    if not status.is_success:
        return [], 0, status
    violating, non_violating = filter_pods_with_pdb_violation(view, potential)
    victims: list[PodInfo] = []
    num_violating = 0
    for group, is_violating in ((violating, True), (non_violating, False)):
        for pi in group:
            present.append(pi)
            if not fits_with(present).is_success:
                present.pop()
                victims.append(pi)
                if is_violating:
                    num_violating += 1
    if violating and non_violating:
        victims.sort(key=_importance)
    return victims, num_violating, Status(SUCCESS)


def dry_run_preemption(
    ctx: PodContext,
    view: SchedulerView,
    potential: Sequence[NodeInfo],
    offset: int,
    num_candidates: int,
) -> tuple[list[Candidate], dict[str, Status], list[str]]:
    """Evaluator.DryRunPreemption, sequentially: visit ``potential[(offset + i) % n]``; a node
    with victims is a candidate (non-violating when it violates no PDB); each list keeps at
    most ``num_candidates`` entries; stop once there is a non-violating candidate and the two
    lists together hold ``num_candidates``. Returns non-violating + violating candidates, the
    status of every visited node that is not a candidate, and the error messages."""
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    statuses: dict[str, Status] = {}
    errors: list[str] = []
    n = len(potential)
    for i in range(n):
        ni = potential[(offset + i) % n]
        victims, num_pdb, status = select_victims_on_node(ctx, view, ni)
        if status.is_success and victims:
            candidate = Candidate(ni.name, victims, num_pdb)
            target = non_violating if num_pdb == 0 else violating
            if len(target) < num_candidates:
                target.append(candidate)
            if non_violating and len(non_violating) + len(violating) >= num_candidates:
                break
            continue
        if status.is_success:
            status = Status(ERROR, (f'expected at least one victim pod on node "{ni.name}"',))
        if status.code == ERROR:
            errors.append(status.message)
        statuses[ni.name] = status
    return non_violating + violating, statuses, errors


def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """pickOneNodeForPreemption with the default criteria, each keeping the nodes with the
    highest score: fewest PDB violations; lowest priority of the first (most important)
    victim; lowest sum of (priority + 2^31); fewest victims; latest earliest-start-time among
    the highest-priority victims. A remaining tie goes to the first candidate in evaluation
    order (upstream: Go map order, i.e. random)."""
    if not candidates:
        return None

    def pdb_score(c: Candidate) -> int:
        return -c.num_pdb_violations

    def highest_priority_score(c: Candidate) -> int:
        return -c.victims[0].priority

    def sum_priorities_score(c: Candidate) -> int:
        return -sum(v.priority + _MAX_INT32_PLUS_ONE for v in c.victims)

    def num_pods_score(c: Candidate) -> int:
        return -len(c.victims)

    def latest_start_score(c: Candidate) -> int:
        if not c.victims:
            return -(2**63)
        earliest = c.victims[0].start_ns
        top = c.victims[0].priority
        for v in c.victims:
            if v.priority == top:
                if v.start_ns < earliest:
                    earliest = v.start_ns
            elif v.priority > top:
                top = v.priority
                earliest = v.start_ns
        return earliest

    remaining = list(candidates)
    for score in (
        pdb_score,
        highest_priority_score,
        sum_priorities_score,
        num_pods_score,
        latest_start_score,
    ):
        best = None
        kept: list[Candidate] = []
        for c in remaining:
            s = score(c)
            if best is None or s > best:
                best = s
                kept = [c]
            elif s == best:
                kept.append(c)
        if len(kept) == 1:
            return kept[0]
        remaining = kept
    return remaining[0]


def select_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """Evaluator.SelectCandidate: none, the only one, or pickOneNodeForPreemption's choice."""
    if not candidates:
        return None
    if len(candidates) == 1:
        return candidates[0]
    return pick_one_node_for_preemption(candidates)


def fit_error_message(
    num_all_nodes: int,
    statuses: Mapping[str, Status],
    absent_reasons: Sequence[str] = (MSG_NOT_HELPFUL,),
) -> str:
    """FitError.Error: "0/N nodes are available: " and the reason histogram, each entry
    "<count> <reason>", sorted as whole strings, joined by ", ", ending with ".". Nodes without
    an explicit status count once for each absent reason."""
    counts: Counter[str] = Counter()
    for status in statuses.values():
        for reason in status.reasons:
            counts[reason] += 1
    if len(statuses) < num_all_nodes:
        for reason in absent_reasons:
            counts[reason] += num_all_nodes - len(statuses)
    message = f"0/{num_all_nodes} nodes are available:"
    entries = sorted(f"{count} {reason}" for reason, count in counts.items())
    if entries:
        message += " " + ", ".join(entries) + "."
    return message


def _aggregate_errors(messages: Sequence[str]) -> str:
    """utilerrors.NewAggregate(...).Error(): one message as is, several de-duplicated in
    brackets."""
    if len(messages) == 1:
        return messages[0]
    seen: list[str] = []
    for m in messages:
        if m not in seen:
            seen.append(m)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


@dataclass(slots=True)
class PreemptionOutcome:
    """Everything the preemption decision reports.

    ``nominated_node_name``: None when PostFilter returns no result (the pod's nomination is
    left unchanged: ineligible, error, or preemption not needed); "" when the result clears
    the nomination (no candidate); otherwise the chosen node."""

    eligible: bool
    code: str
    message: str
    nominated_node_name: str | None
    victims: list[PodInfo] = field(default_factory=list)
    num_pdb_violations: int = 0
    candidates: list[Candidate] = field(default_factory=list)
    # filter statuses of this scheduling cycle, snapshot order (None when given as input)
    filter_statuses: dict[str, Status] | None = None
    dry_run_statuses: dict[str, Status] = field(default_factory=dict)
    potential_nodes: list[str] = field(default_factory=list)
    num_candidates: int = 0
    offset: int = 0
    cleared_nominations: list[PodInfo] = field(default_factory=list)
    not_modelled: tuple[str, ...] = ()
    fits_without_preemption: list[str] = field(default_factory=list)
    holds_freed: dict[str, list[str]] = field(default_factory=dict)


def filter_statuses(
    ctx: PodContext, view: SchedulerView, plan: HoldPlan | None = None
) -> dict[str, Status]:
    """The Filter phase over every node (RunFilterPluginsWithNominatedPods per node), with hold
    reasons added where a hold changed the verdict."""
    out: dict[str, Status] = {}
    hold_nodes = plan.nodes() if plan is not None else ()
    for ni in view.nodes:
        status = run_filters_with_nominated(ctx, ni)
        if hold_nodes and ni.name in hold_nodes:
            extra = hold_reasons(ctx, ni, status, plan)  # type: ignore[arg-type]
            if extra:
                status = Status(status.code, status.reasons + tuple(extra), status.plugin)
        out[ni.name] = status
    return out


def _explain_holds_in_dry_run(
    ctx: PodContext, view: SchedulerView, plan: HoldPlan, statuses: dict[str, Status]
) -> None:
    """Spec §6 rule 4 for the dry run: a visited node that is no candidate only because of a
    hold gets the hold reasons appended to its dry-run status."""
    for name in plan.nodes():
        status = statuses.get(name)
        if status is None or status.code == ERROR:
            continue
        alt = without_holds(ctx, plan, name)
        victims, _, alt_status = select_victims_reference(alt, view, view.by_name[name])
        if alt_status.is_success and victims:
            extra = tuple(hold_reason(key) for key in hold_keys(plan, name))
            statuses[name] = Status(status.code, status.reasons + extra, status.plugin)


def preempt(
    cluster: Cluster,
    pod: Pod,
    *,
    args: PreemptionArgs = PreemptionArgs(),
    offset: int = 0,
    node_statuses: Mapping[str, str] | None = None,
    absent_status: str = UNRESOLVABLE,
    hold_statefulset_upgrades: bool = False,
    holds: Sequence[Hold] = (),
    fit_args: FitArgs = DEFAULT_FIT_ARGS,
) -> PreemptionOutcome:
    """DefaultPreemption.PostFilter (Evaluator.Preempt) for ``pod`` on the snapshot.

    Node statuses come from Verdict's own filters (with nominated pods and holds), unless
    ``node_statuses`` (node name -> status code, plus ``absent_status`` for unlisted nodes)
    is given, as the upstream unit tests do. If the pod fits some node, the scheduler would
    not run PostFilter: the outcome says so and preempts nothing. ``offset`` replaces the
    random start (taken modulo the number of potential nodes).
    """
    view = scheduler_view(cluster)
    ctx = pod_context(pod, view, fit_args)
    prepare_nominated(ctx, view)
    plan = apply_holds(ctx, view, hold_statefulset_upgrades=hold_statefulset_upgrades, holds=holds)
    node_names = [ni.name for ni in view.nodes]
    computed: dict[str, Status] | None = None
    if node_statuses is None:
        computed = filter_statuses(ctx, view, plan)
        codes: Mapping[str, str] = {name: st.code for name, st in computed.items()}
        absent = UNRESOLVABLE
    else:
        codes = node_statuses
        absent = absent_status

    nominated_code = None
    if pod.nominated_node_name:
        nominated_code = codes.get(pod.nominated_node_name, absent)
        if nominated_code == SUCCESS:
            nominated_code = None
    eligible, why = pod_eligible_to_preempt_others(view, pod, nominated_code)
    outcome = PreemptionOutcome(
        eligible=eligible,
        code=UNSCHEDULABLE,
        message="",
        nominated_node_name=None,
        filter_statuses=computed,
        not_modelled=ctx.not_modelled,
        holds_freed=plan.freed,
        offset=offset,
    )
    fits = [name for name in node_names if codes.get(name, absent) == SUCCESS]
    if fits:
        outcome.fits_without_preemption = fits
        outcome.code = SUCCESS
        outcome.message = (
            f"preemption not needed: the pod fits on {len(fits)}/{len(node_names)} nodes "
            f'without preempting (first: "{fits[0]}")'
        )
        return outcome
    if not eligible:
        outcome.message = PREFIX + why
        return outcome

    potential_names = nodes_for_status_code(node_names, codes, absent, UNSCHEDULABLE)
    outcome.potential_nodes = potential_names
    if not node_names:
        outcome.code = ERROR
        outcome.message = PREFIX + "no nodes available"
        return outcome
    if not potential_names:
        outcome.nominated_node_name = ""
        outcome.message = PREFIX + fit_error_message(len(node_names), {})
        return outcome

    potential = [view.by_name[name] for name in potential_names]
    num_candidates = calculate_num_candidates(
        len(potential), args.min_candidate_nodes_percentage, args.min_candidate_nodes_absolute
    )
    start = offset % len(potential)
    outcome.num_candidates = num_candidates
    outcome.offset = start
    candidates, dry_statuses, errors = dry_run_preemption(
        ctx, view, potential, start, num_candidates
    )
    _explain_holds_in_dry_run(ctx, view, plan, dry_statuses)
    outcome.dry_run_statuses = dry_statuses
    outcome.candidates = candidates
    if not candidates:
        if errors:
            outcome.code = ERROR
            outcome.message = PREFIX + _aggregate_errors(errors)
            return outcome
        outcome.nominated_node_name = ""
        outcome.message = PREFIX + fit_error_message(len(node_names), dry_statuses)
        return outcome
    best = select_candidate(candidates)
    if best is None:  # pragma: no cover - only extenders can empty the list
        outcome.message = PREFIX + MSG_NO_CANDIDATE
        return outcome
    outcome.code = SUCCESS
    outcome.nominated_node_name = best.node_name
    outcome.victims = best.victims
    outcome.num_pdb_violations = best.num_pdb_violations
    outcome.cleared_nominations = lower_priority_nominated_pods(view, ctx.priority, best.node_name)
    return outcome
