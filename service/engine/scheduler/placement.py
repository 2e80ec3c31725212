"""Placement: filter the nodes, score the feasible ones, pick the best.

Mirrors kubernetes/kubernetes ``pkg/scheduler/schedule_one.go`` (v1.35) ``schedulePod``,
``findNodesThatFitPod``, ``findNodesThatPassFilters``, ``numFeasibleNodesToFind``,
``prioritizeNodes`` and ``selectHost``, running whatever the profile enables (runtime.py):

* Filter, with nominated pods (two passes) and holds (holds.py). Upstream stops once it has
  ``numFeasibleNodesToFind`` feasible nodes, starting at a rotating index. By default Verdict
  filters and scores every node, so that the answer does not depend on the scheduler's
  rotation state; given ``start_index``, it examines the nodes the scheduler would (in
  order, one at a time: upstream's parallel filtering can overshoot by a few nodes).
* A pod carrying ``status.nominatedNodeName`` is tried on that node first
  (``evaluateNominatedNode``): if it passes, it is chosen without scoring (Verdict still
  reports every node).
* Score: every enabled score plugin that did not Skip at PreScore, normalized, weighted.
* selectHost: the highest total wins; upstream breaks ties at random (reservoir sampling),
  Verdict takes the first of the tied nodes in snapshot order.
* A filter's Error, a Score plugin's error, or a normalized score outside 0..100, fails the cycle (``CycleError``):
  no node is selected. Verdict still reports every node's status and scores. A lone
  feasible node is taken without scoring (schedulePod), so its scores, shown all the same,
  cannot fail the cycle.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter

import numpy as np

from service.engine.addresses import addresses
from service.engine.objects import (
    AllocatedDevice,
    Cluster,
    DeviceAllocationConfiguration,
    Pod,
)
from service.engine.scheduler.framework import ERROR, OK, SUCCESS, NodeInfo, Status
from service.engine.scheduler.holds import Hold, HoldPlan, apply_holds, hold_reasons
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.plugins.dynamic_resources import (
    allocating,
    allocation_config_of,
    allocation_of,
)
from service.engine.scheduler.plugins.helper import give_node_indexes
from service.engine.scheduler.preemption import fit_error_message
from service.engine.scheduler.profile import DEFAULT_PROFILE, Profile
from service.engine.scheduler.runtime import (
    Column,
    CycleError,
    Framework,
    NodeScores,
    filter_error,
    framework_for,
    invalid_score,
    node_state,
)
from service.engine.scheduler.snapshot import as_scheduler_sees, scheduler_view
from service.engine.version import EngineSettings

__all__ = ["NodePlacement", "PlacementOutcome", "num_feasible_nodes_to_find", "place"]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
_INDEX = attrgetter("index")
_CODE = attrgetter("code")


@dataclass(slots=True)
class NodePlacement:
    """One node's verdict: its filter status and, when feasible and scored, each plugin's
    normalized score, the raw scores that normalization changed, and the weighted total.
    ``examined`` is False for a node the scheduler would not have looked at."""

    node_name: str
    status: Status
    reasons: list[str]
    scores: dict[str, int] | None = None
    raw_scores: dict[str, int] | None = None
    total: int | None = None
    examined: bool = True
    # DynamicResources: the devices its Filter allocated here, by claim (feasible nodes)
    allocation: dict[str, list[AllocatedDevice]] | None = None
    # ... and the configuration each claim's allocation carries (claims that carry some)
    allocation_config: dict[str, list[DeviceAllocationConfiguration]] | None = None

    @property
    def feasible(self) -> bool:
        return self.examined and self.status.is_success


@dataclass(slots=True)
class PlacementOutcome:
    selected_node: str | None
    nodes: list[NodePlacement]
    message: str
    weights: dict[str, int] = field(default_factory=dict)
    not_modelled: tuple[str, ...] = ()
    skipped_plugins: tuple[str, ...] = ()
    nominated_node_chosen: bool = False
    holds_freed: dict[str, list[str]] = field(default_factory=dict)
    cycle_error: CycleError | None = None
    # with a start index: how many feasible nodes the scheduler looks for, and where the
    # next cycle starts
    num_nodes_to_find: int | None = None
    next_start_index: int | None = None
    # the scored feasible nodes in snapshot order and their totals (empty when the cycle
    # failed), and the status of each examined node that did not pass (given with the
    # records, or when no node is chosen): what selectHost and the FitError read, without
    # ``nodes`` (``place(records=False)`` leaves it empty)
    feasible_nodes: list[NodeInfo] = field(default_factory=list)
    totals: Column = field(default_factory=list)
    statuses: dict[str, Status] = field(default_factory=dict)


def num_feasible_nodes_to_find(percentage: int | None, num_all_nodes: int) -> int:
    """numFeasibleNodesToFind: every node below 100; else the percentage (the profile's,
    or the adaptive 50 - nodes/125, at least 5) of the nodes, at least 100."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    pct = percentage or 0
    if pct == 0:
        pct = max(50 - num_all_nodes // 125, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    return max(num_all_nodes * pct // 100, MIN_FEASIBLE_NODES_TO_FIND)


def place(
    cluster: Cluster,
    pod: Pod,
    *,
    profile: Profile = DEFAULT_PROFILE,
    settings: EngineSettings,
    start_index: int | None = None,
    hold_statefulset_upgrades: bool = False,
    holds: Sequence[Hold] = (),
    records: bool = True,
) -> PlacementOutcome:
    """Filter and score ``pod`` on the snapshot's nodes; see the module docstring.
    ``records``: build every node's NodePlacement (``nodes``); a caller that needs only the
    choice, the message and the reasons (the scheduling queue) passes False."""
    pod = as_scheduler_sees(pod, settings)
    view = scheduler_view(cluster, settings)
    fwk = framework_for(profile, settings)
    if fwk.needs_whole_pods(pod, view):
        view = scheduler_view(cluster, settings, whole_pods=True)
    state = fwk.cycle_state(pod, view)
    prepare_nominated(state, view, shared=not holds)
    plan = apply_holds(
        state, view, hold_statefulset_upgrades=hold_statefulset_upgrades, holds=holds
    )
    hold_nodes = plan.nodes()

    order = view.nodes
    to_find = None
    if start_index is not None and order:
        to_find = num_feasible_nodes_to_find(profile.percentage_of_nodes_to_score, len(order))
        start = start_index % len(order)
        order = order[start:] + order[:start]

    placed: list[NodePlacement | None] = [None] * len(view.nodes)  # by node index
    examined, found = _filter(fwk, state, order, to_find)
    mask, failed, codes = _passed(found)
    passed = mask.tolist()
    feasible: list[NodeInfo] = list(compress(examined, passed))
    if examined is view.nodes:  # a view's nodes sit at their own index
        give_node_indexes(state, feasible, np.flatnonzero(mask))
    cycle_error = None
    if ERROR in codes:  # the first node whose filters errored fails the cycle
        first = failed[codes.index(ERROR)]
        cycle_error = filter_error(examined[first].name, found[first])
    # The failed nodes' statuses are built only when read: by the records, by the FitError
    # (no node chosen), or with holds (their reasons run the filters again: before Score).
    statuses = (
        _statuses(fwk, state, examined, found, failed, plan) if records or hold_nodes else None
    )
    if records:
        _record_statuses(state, examined, found, passed, statuses, placed)
    processed = len(examined)

    # evaluateNominatedNode: a nominated node that passes is taken before any other node is
    # filtered or scored, so no other node's error can fail the cycle.
    nominated = pod.nominated_node_name
    nominated_chosen = bool(nominated) and any(ni.name == nominated for ni in feasible)
    scores = _score(fwk, state, feasible)
    if nominated_chosen:
        cycle_error = None
    elif cycle_error is None and len(feasible) > 1:
        # schedulePod takes a lone feasible node as it is: it never scores it.
        cycle_error = scores.error or invalid_score(scores, feasible)
    totals = scores.totals(len(feasible))
    if records:
        _record_scores(scores, feasible, placed, totals, with_totals=cycle_error is None)
    if nominated_chosen:
        best_name = nominated
    elif cycle_error is not None:
        best_name = None
    else:
        best_name = _select_host(feasible, totals)
    if statuses is None:
        statuses = _statuses(fwk, state, examined, found, failed, plan) if best_name is None else {}

    nodes = (
        [
            entry or NodePlacement(ni.name, Status(), [], examined=False)
            for ni, entry in zip(view.nodes, placed, strict=True)
        ]
        if records
        else []
    )

    outcome = PlacementOutcome(
        selected_node=best_name,
        nodes=nodes,
        message=_message(
            state.prefilter_status,
            best_name,
            (len(feasible), processed, len(view.nodes)),
            statuses,
            nominated_chosen,
            cycle_error,
        ),
        weights=scores.weights,
        not_modelled=state.not_modelled,
        skipped_plugins=tuple(p.name for p, _ in fwk.score_plugins if p.name in state.skip_score),
        nominated_node_chosen=nominated_chosen,
        holds_freed=plan.freed,
        cycle_error=cycle_error,
        feasible_nodes=feasible if cycle_error is None else [],
        totals=totals if cycle_error is None else [],
        statuses=statuses,
    )
    if to_find is not None:
        outcome.num_nodes_to_find = to_find
        outcome.next_start_index = ((start_index or 0) + processed) % len(view.nodes)
    return outcome


def _statuses(
    fwk: Framework,
    state,
    examined: Sequence[NodeInfo],
    found: list[Status],
    failed: list[int],
    plan: HoldPlan,
) -> dict[str, Status]:
    """Each failed node's status by name (``failed``: their positions among the examined),
    a held node's with its hold reasons."""
    hold_nodes = plan.nodes()
    statuses: dict[str, Status] = {}
    for i in failed:
        ni, status = examined[i], found[i]
        if hold_nodes and ni.name in hold_nodes:
            extra = hold_reasons(fwk, state, ni, status, plan)
            status = Status(status.code, status.reasons + tuple(extra), status.plugin)
        statuses[ni.name] = status
    return statuses


def _record_statuses(
    state,
    examined: Sequence[NodeInfo],
    found: list[Status],
    passed: list[bool],
    statuses: dict[str, Status],
    placed: list[NodePlacement | None],
) -> None:
    """Each examined node's NodePlacement with its filter status (a failed one's from
    ``statuses``; on a feasible node, the devices DynamicResources allocated there)."""
    allocates = allocating(state)
    for ni, status, ok in zip(examined, found, passed, strict=True):
        if not ok:
            status = statuses[ni.name]
            placed[ni.index] = NodePlacement(ni.name, status, list(status.reasons))
        elif allocates:
            placed[ni.index] = NodePlacement(
                ni.name,
                status,
                [],
                allocation=allocation_of(state, ni.name),
                allocation_config=allocation_config_of(state, ni.name),
            )
        else:
            placed[ni.index] = NodePlacement(ni.name, status, [])


def _passed(found: list[Status]) -> tuple[np.ndarray, list[int], list[str]]:
    """Which examined nodes passed the filters (a mask), the positions of the others and
    their codes. A status that is the OK singleton passed, found by address in numpy
    (engine/addresses.py) rather than by Python code per node; any other status passed only
    with code Success, read on those few."""
    mask = addresses(found) == id(OK)
    others = np.flatnonzero(~mask).tolist()
    codes = list(map(_CODE, map(found.__getitem__, others)))
    if SUCCESS in codes:
        mask[[i for i, code in zip(others, codes, strict=True) if code == SUCCESS]] = True
        others = np.flatnonzero(~mask).tolist()
        codes = list(map(_CODE, map(found.__getitem__, others)))
    return mask, others, codes


def _filter(
    fwk: Framework, state, order: Sequence[NodeInfo], to_find: int | None
) -> tuple[Sequence[NodeInfo], list[Status]]:
    """The nodes examined, in ``order``, and their filter statuses: every node, plugin by
    plugin (Framework.filter_all); with ``to_find``, node by node until that many are
    feasible (findNodesThatPassFilters' early stop)."""
    if to_find is None:
        return order, fwk.filter_all(state, order)
    examined: list[NodeInfo] = []
    found: list[Status] = []
    feasible = 0
    for ni in order:
        if feasible >= to_find:
            break
        status = fwk.run_filter_plugins_with_nominated(state, ni)
        examined.append(ni)
        found.append(status)
        feasible += status.code == SUCCESS
    return examined, found


def _record_scores(
    scores: NodeScores,
    feasible: list[NodeInfo],
    placed: list[NodePlacement | None],
    totals: Column,
    *,
    with_totals: bool,
) -> None:
    """Each feasible node's scores onto its NodePlacement, as Python ints: the normalized
    score per plugin, the raw scores that normalization changed, and (``with_totals``) the
    weighted total."""
    plugins = scores.plugins
    columns = [_as_list(scores.normalized[p]) for p in plugins]
    raws = [_as_list(scores.raw[p]) for p in plugins]
    # the plugins whose normalization changed some score: only they get rawScores
    renormalized = [(p, raw, norm) for p, raw, norm in zip(plugins, raws, columns, strict=True)
                    if raw != norm]  # fmt: skip
    rows = zip(*columns, strict=True) if columns else [()] * len(feasible)
    for i, (ni, row, total) in enumerate(zip(feasible, rows, _as_list(totals), strict=True)):
        entry = placed[ni.index]
        entry.scores = dict(zip(plugins, row, strict=True))  # type: ignore[union-attr]
        entry.raw_scores = (  # type: ignore[union-attr]
            {p: raw[i] for p, raw, norm in renormalized if raw[i] != norm[i]}
            if renormalized
            else {}
        )
        entry.total = total if with_totals else None  # type: ignore[union-attr]


def _as_list(column: Column) -> list[int]:
    """A column as Python ints (what the records and their JSON hold)."""
    return column.tolist() if isinstance(column, np.ndarray) else column


def _select_host(feasible: list[NodeInfo], totals: Column) -> str | None:
    """selectHost: the highest total; ties go to the first node in snapshot order, whatever
    order the nodes were visited in."""
    if not feasible:
        return None
    if len(feasible) == 1:
        return feasible[0].name
    top = np.asarray(totals)
    tied = np.flatnonzero(top == top.max()).tolist()
    return min((feasible[i] for i in tied), key=_INDEX).name


def _score(fwk: Framework, state, feasible: list[NodeInfo]) -> NodeScores:
    """PreScore then Score over the feasible nodes (none: nothing to score)."""
    if not feasible:
        return NodeScores([], {}, {}, {})
    fwk.run_pre_score_plugins(state, feasible)
    states = [node_state(state, ni) for ni in feasible] if state.removed else feasible
    return fwk.run_score_plugins(state, feasible, states)


def _message(
    prefilter_status: Status | None,
    best_name: str | None,
    counts: tuple[int, int, int],
    statuses: dict[str, Status],
    nominated_chosen: bool,
    cycle_error: CycleError | None,
) -> str:
    """The outcome's message; ``counts``: the feasible, examined and all nodes."""
    feasible, examined, total = counts
    if cycle_error is not None:
        return (
            f"the scheduling cycle fails: {cycle_error.message}; the scheduler records the "
            "error (PodScheduled=False, reason SchedulerError) and retries the pod after "
            "backoff, without trying preemption"
        )
    if best_name is None and prefilter_status is not None:
        # FitError with a PreFilter message: "0/N nodes are available: <message>."
        return f"0/{total} nodes are available: {prefilter_status.message}."
    if best_name is None:
        return fit_error_message(total, statuses)
    if nominated_chosen:
        return (
            f'the pod\'s nominated node "{best_name}" passes the filters, so the scheduler '
            "takes it without scoring other nodes"
        )
    return f'{feasible}/{examined} nodes are feasible; "{best_name}" scores highest'
