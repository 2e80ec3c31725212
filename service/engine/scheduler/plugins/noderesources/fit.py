"""NodeResourcesFit (kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources
fit.go, v1.35): PreFilter (computePodResourceRequest), Filter (fitsRequest), PreScore and
Score (the configured scoring strategy, resource_allocation.py).

``fits_request`` is the one resource-fit check of the engine: the kubelet's admission calls
it too, as upstream's kubelet calls this plugin's ``Fits``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from service.engine.addresses import addresses
from service.engine.quantity import MAX_INT64, MIN_INT64, wrap_int64
from service.engine.resources import is_extended_resource_name, is_scalar_resource_name
from service.engine.scheduler.framework import (
    OK,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleState,
    FiltersNodes,
    FiltersNodesWithPods,
    NodeInfo,
    NodeInfoPods,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoresNodes,
    Status,
    SumsRequests,
    prefilter_state_missing,
)
from service.engine.scheduler.plugins.noderesources import columns as col
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    ResourceAllocationScorer,
)
from service.engine.scheduler.profile import NodeResourcesFitArgs
from service.engine.version import EngineSettings

__all__ = [
    "FitState",
    "InsufficientResource",
    "NodeResourcesFit",
    "fit_state",
    "fits_request",
]

_NO_IGNORED = NodeResourcesFitArgs()
_PASS_ONE_KEPT = 4096  # pass 1's rows kept (``_pass_one_values``), then dropped together
_PATCH_SHARE = 8  # pass 1's last array is patched when at most 1/8 of its rows differ
_SCORE_KEY = "NodeResourcesFit/score"  # PreScore's state (the filter's is under the name)


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """noderesources.InsufficientResource, with v1.35's ``Unresolvable`` flag: the request
    alone exceeds the node's allocatable."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclass(frozen=True, slots=True)
class FitState:
    """NodeResourcesFit's preFilterState: the pod's effective request, and the resources
    fitsRequest checks (request > 0; scalar resources by name, ignored ones left out)."""

    request: Mapping[str, int]
    checks: tuple[tuple[str, int], ...]


def fit_state(request: Mapping[str, int], args: NodeResourcesFitArgs = _NO_IGNORED) -> FitState:
    """What fitsRequest will check of ``request``: cpu, memory, ephemeral-storage, then each
    scalar resource in name order (upstream iterates a Go map; the reasons list is what the
    order shows), skipping zero requests and extended resources the args ignore."""
    checks = [(n, request.get(n, 0)) for n in ("cpu", "memory", "ephemeral-storage")]
    checks = [(n, v) for n, v in checks if v > 0]
    for name in sorted(n for n in request if is_scalar_resource_name(n)):
        value = request[name]
        if value != 0 and not (is_extended_resource_name(name) and _ignored(name, args)):
            checks.append((name, value))
    return FitState(request, tuple(checks))


def _ignored(name: str, args: NodeResourcesFitArgs) -> bool:
    if name in args.ignored_resources:
        return True
    return bool(args.ignored_resource_groups) and (
        name.split("/", 1)[0] in args.ignored_resource_groups
    )


def fits_request(
    state: FitState, allocatable: Mapping[str, int], requested: Mapping[str, int], pod_count: int
) -> list[InsufficientResource]:
    """fitsRequest: every shortfall, in the order pods, cpu, memory, ephemeral-storage, then
    scalar resources by name."""
    out: list[InsufficientResource] = []
    allowed = allocatable.get("pods", 0)
    if pod_count + 1 > allowed:
        out.append(InsufficientResource("pods", "Too many pods", 1, pod_count, allowed))
    for name, want in state.checks:
        have = allocatable.get(name, 0)
        used = requested.get(name, 0)
        if want > wrap_int64(have - used):  # int64 subtraction, wrapping as in Go
            out.append(
                InsufficientResource(name, f"Insufficient {name}", want, used, have, want > have)
            )
    return out


# The columns (columns.py) fitsRequest reads for each resource the batch checks:
# (allocatable, allocatable - requested).
_BATCH_RESOURCES = {
    "cpu": (col.ALLOC_CPU, col.FREE_CPU),
    "memory": (col.ALLOC_MEMORY, col.FREE_MEMORY),
    "ephemeral-storage": (col.ALLOC_EPHEMERAL, col.FREE_EPHEMERAL),
}


class NodeResourcesFit(
    PreFilterPlugin,
    SumsRequests,
    FiltersNodes,
    FiltersNodesWithPods,
    PreScorePlugin,
    ScoresNodes,
):
    name = "NodeResourcesFit"

    def __init__(
        self, args: NodeResourcesFitArgs | None = None, *, settings: EngineSettings
    ) -> None:
        args = args or NodeResourcesFitArgs()
        super().__init__(args, settings=settings)
        strategy = args.scoring_strategy
        self.scorer = ResourceAllocationScorer(strategy.type, strategy.resources, strategy.shape)
        # The batch's statuses by checked resource names, indexed by shortfall bits
        # (``_shortfall_bits``); built once per plugin and list of names.
        self._status_tables: dict[tuple[str, ...], np.ndarray] = {}
        # Pass 1's rows by (NodeInfo, NodeInfoPods, names): ``_pass_one_values``
        self._pass_one_rows: dict[tuple[int, int, tuple[str, ...]], tuple] = {}
        # The last pass-1 array: (names, the NodeInfos' and NodeInfoPods' addresses, the
        # array, the two lists, which hold them): ``_pass_one_values``
        self._pass_one_last: tuple | None = None

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        """computePodResourceRequest: the effective request the pod's PodInfo holds."""
        state.write(self.name, fit_state(state.info.requests, self.args))
        return None, OK

    def requests_checked(self, state: CycleState) -> Sequence[tuple[str, int]]:
        """The resources Filter checks, with the pod's request of each (PreFilter's state)."""
        return state.read(self.name).checks

    def filter(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> Status | None:
        """Unschedulable with every shortfall; UnschedulableAndUnresolvable when any of them
        is unresolvable (v1.34 on, ``settings.fit_unresolvable_beyond_allocatable``,
        kubernetes#131345; v1.33 and before: always Unschedulable)."""
        fit: FitState | None = state.data.get(self.name)
        if fit is None:  # PreFilter disabled in the profile: upstream's Filter errors too
            return prefilter_state_missing(self.name)
        alloc = ni.allocatable
        requested = ns.requested
        if ns.pod_count + 1 <= ni.allowed_pods:
            for name, want in fit.checks:  # most nodes pass: build records only on failure
                free = alloc.get(name, 0) - requested.get(name, 0)
                if want > free or not MIN_INT64 <= free <= MAX_INT64:
                    break
            else:
                return None
        failures = fits_request(fit, alloc, requested, ns.pod_count)
        if not failures:
            return None
        unresolvable = self.settings.fit_unresolvable_beyond_allocatable and any(
            f.unresolvable for f in failures
        )
        code = UNRESOLVABLE if unresolvable else UNSCHEDULABLE
        return Status(code, tuple(f.reason for f in failures), self.name)

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Filter on every node at once: the shortfalls of all nodes from the columns
        (columns.py), each node's set of shortfalls a small integer, and one Status per set.
        Nodes with values out of the exact range, and pods checking a scalar resource or
        without PreFilter state, take ``filter``."""
        fit: FitState | None = state.data.get(self.name)
        checks = _batch_checks(fit)
        if checks is None or not nodes:
            return [self.filter(state, ni, ni) for ni in nodes]
        cols = col.columns_of(nodes)
        bits = _shortfall_bits(cols, checks)
        table = self._status_table(tuple(name for name, _ in checks))
        failing = np.flatnonzero(bits)
        if len(failing) * 8 < len(bits):  # most nodes pass: only the others looked up
            out: list[Status | None] = [None] * len(bits)
            for k, failed in zip(failing.tolist(), bits[failing].tolist(), strict=True):
                out[k] = table[failed]
        else:
            out = table[bits].tolist()
        passed = bits == 0
        if not cols.all_plain:
            for k in np.flatnonzero(~cols.plain).tolist():
                out[k] = self.filter(state, nodes[k], nodes[k])
                passed[k] = out[k] is None
        col.expect_sublist(cols, passed.nonzero()[0])  # Score may get the nodes passed
        return out

    def filter_with_pods(
        self, state: CycleState, nodes: Sequence[NodeInfo], pods: Sequence[NodeInfoPods]
    ) -> list[Status | None]:
        """Filter on every node at once with its pods as in ``pods`` (their requested sums):
        each node's set of shortfalls a small integer (as ``_shortfall_bits``), one Status
        per set. In int64 numpy, allocatable - requested wraps as Go's; values beyond int64,
        and pods checking a scalar resource or without PreFilter state, take ``filter``."""
        fit: FitState | None = state.data.get(self.name)
        checks = _batch_checks(fit)
        if checks is None or not nodes:
            return [self.filter(state, ni, ns) for ni, ns in zip(nodes, pods, strict=True)]
        names = tuple(name for name, _ in checks)
        try:
            values = self._pass_one_values(nodes, pods, names)
        except OverflowError:  # a value beyond int64
            return [self.filter(state, ni, ns) for ni, ns in zip(nodes, pods, strict=True)]
        bits = (values[:, 0] >= values[:, 1]).view(np.uint8)  # pods + 1 > allowed pods
        for j, (_, want) in enumerate(checks):
            alloc = values[:, 2 + 2 * j]
            short = alloc - values[:, 3 + 2 * j] < want  # arrays wrap silently
            if short.any():
                bits |= short.view(np.uint8) << (1 + 2 * j)
                bits |= (short & (alloc < want)).view(np.uint8) << (2 + 2 * j)
        out: list[Status | None] = [None] * len(nodes)
        table = self._status_table(tuple(name for name, _ in checks))
        failing = np.flatnonzero(bits)
        for k, failed in zip(failing.tolist(), bits[failing].tolist(), strict=True):
            out[k] = table[failed]
        return out

    def _pass_one_values(
        self, nodes: Sequence[NodeInfo], pods: Sequence[NodeInfoPods], names: tuple[str, ...]
    ) -> np.ndarray:
        """Per node (a row): its pod count with the nominated pods, allowed pods, then each
        of ``names``' allocatable and requested sum; int64 (OverflowError beyond). The last
        call's array is kept with its lists: lists of the same length that differ from them
        in a few places (a queue step replaced a NodeInfo) take it with those rows redone,
        the NodeInfos and NodeInfoPods compared by address. Read-only."""
        held = list(nodes), list(pods)  # kept with the array: their addresses stay theirs
        found = addresses(held[0]), addresses(held[1])
        last = self._pass_one_last
        if last is not None and last[0] == names and len(last[1]) == len(found[0]):
            changed = np.flatnonzero((found[0] != last[1]) | (found[1] != last[2]))
            if len(changed) * _PATCH_SHARE <= len(found[0]):
                values = last[3]
                if len(changed):
                    at = changed.tolist()
                    redone = self._pass_one_array(
                        [nodes[k] for k in at], [pods[k] for k in at], names
                    )
                    values = values.copy()
                    values[changed] = redone
                    values.flags.writeable = False
                self._pass_one_last = (names, *found, values, held)
                return values
        values = self._pass_one_array(nodes, pods, names)
        values.flags.writeable = False
        self._pass_one_last = (names, *found, values, held)
        return values

    def _pass_one_array(
        self, nodes: Sequence[NodeInfo], pods: Sequence[NodeInfoPods], names: tuple[str, ...]
    ) -> np.ndarray:
        """``_pass_one_values``' rows of ``nodes``, each kept by the identity of its NodeInfo
        and NodeInfoPods, which pass 1 meets cycle after cycle (NodeInfo.with_nominated
        keeps them; neither ever changes)."""
        kept = self._pass_one_rows
        if len(kept) > _PASS_ONE_KEPT:
            kept.clear()
        values: list[int] = []  # the rows one after another: numpy reads a flat list faster
        for ni, ns in zip(nodes, pods, strict=True):
            key = (id(ni), id(ns), names)
            found = kept.get(key)
            if found is None:
                alloc, requested = ni.allocatable, ns.requested
                row = [ns.pod_count, ni.allowed_pods]
                for name in names:
                    row += (alloc.get(name, 0), requested.get(name, 0))
                found = kept[key] = (row, ni, ns)  # holds them: their ids stay theirs
            values += found[0]
        return np.array(values, np.int64).reshape(len(nodes), 2 + 2 * len(names))

    def _status_table(self, names: tuple[str, ...]) -> np.ndarray:
        """Filter's answer for every set of shortfalls of ``names`` (``_shortfall_bits``):
        None for none; the reasons in fitsRequest's order (pods, then ``names``)."""
        table = self._status_tables.get(names)
        if table is None:
            table = np.empty(1 << (1 + 2 * len(names)), object)
            for bits in range(len(table)):
                table[bits] = self._status_of_bits(names, bits)
            self._status_tables[names] = table
        return table

    def _status_of_bits(self, names: tuple[str, ...], bits: int) -> Status | None:
        if not bits:
            return None
        reasons = ["Too many pods"] if bits & 1 else []
        unresolvable = False
        for j, name in enumerate(names):
            if bits >> (1 + 2 * j) & 1:
                reasons.append(f"Insufficient {name}")
            unresolvable = unresolvable or bool(bits >> (2 + 2 * j) & 1)
        unresolvable = unresolvable and self.settings.fit_unresolvable_beyond_allocatable
        return Status(UNRESOLVABLE if unresolvable else UNSCHEDULABLE, tuple(reasons), self.name)

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | np.ndarray:
        """Score on every node at once (ResourceAllocationScorer.score_columns); nodes out
        of the batch's exact range, and pods or strategies without a batch, take ``score``."""
        prepared = state.data.get(_SCORE_KEY)
        if prepared is None:  # PreScore disabled: computed here, as upstream falls back
            self.pre_score(state, ())
            prepared = state.data[_SCORE_KEY]
        scores = None
        if nodes:
            scores = self.scorer.score_columns(prepared, cols := col.scored_columns(state, nodes))
        if scores is None:
            return [self.score(state, ni, ni) for ni in nodes]
        return col.with_others(scores, cols, nodes, lambda ni: self.score(state, ni, ni))

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """The pod's non-zero requests per scored resource, once."""
        state.data[_SCORE_KEY] = self.scorer.prepare(state.pod, self.settings)
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> int:
        prepared = state.data.get(_SCORE_KEY)
        if prepared is None:  # PreScore disabled: computed here, as upstream falls back
            self.pre_score(state, ())
            prepared = state.data[_SCORE_KEY]
        return self.scorer.score(prepared, ni.allocatable, ns.requested, ns.nz_cpu, ns.nz_mem)


def _batch_checks(fit: FitState | None) -> list[tuple[str, int]] | None:
    """The pod's checks when the batch can make them: cpu, memory, ephemeral-storage only
    (the columns), requests below the columns' bound; None otherwise."""
    if fit is None:
        return None
    for name, want in fit.checks:
        if name not in _BATCH_RESOURCES or not 0 < want < col.NO_WRAP:
            return None
    return list(fit.checks)


def _shortfall_bits(cols: col.Columns, checks: Sequence[tuple[str, int]]) -> np.ndarray:
    """fitsRequest per node as a small integer (uint8: at most 7 bits): bit 0 too many
    pods; for the j-th check, bit 1 + 2j its shortfall and bit 2 + 2j its request beyond
    allocatable (unresolvable). On a plain node nothing wraps: the free column,
    allocatable - requested, is Go's int64 difference."""
    bits = (cols.field(col.POD_ROOM) < 1).view(np.uint8)  # pods + 1 > allowed pods
    for j, (name, want) in enumerate(checks):
        alloc_field, free_field = _BATCH_RESOURCES[name]
        short = cols.field(free_field) < want
        if not short.any():
            continue
        bits = bits | (short.view(np.uint8) << (1 + 2 * j))
        unresolvable = short & (cols.field(alloc_field) < want)
        bits |= unresolvable.view(np.uint8) << (2 + 2 * j)
    return bits
