"""The framework runtime: one profile's plugins run at each extension point, in order.

Mirrors kubernetes/kubernetes ``pkg/scheduler/framework/runtime/framework.go`` (v1.35):
``RunPreFilterPlugins`` (Skip, rejection, PreFilterResult node sets intersected),
``RunFilterPlugins`` (the first rejecting plugin decides the node),
``RunFilterPluginsWithNominatedPods`` (two passes, nominated pods of equal or higher
priority added in the first), ``RunPreScorePlugins`` (Skip) and ``RunScorePlugins`` (Score,
then NormalizeScore, then the weight). An Error status, or a normalized score outside
0..100, fails the whole scheduling cycle: ``CycleError``.

Like upstream's runtime, it never names a plugin: it finds each plugin's extension points
by their interfaces, and what it may assume of a plugin to skip work (a Filter that can pass
every node, preemption's fast path) by the capabilities the plugin declares
(``framework.py`` lists both).

Plugins Verdict does not model are never silently passed over: a ``CycleState`` carries
``not_modelled``, the profile's enabled unmodelled plugins that could matter for this pod.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

import numpy as np

from service.engine.addresses import addresses
from service.engine.objects import UNMODELLED_USES, Pod
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    UNRESOLVABLE,
    CanPassEveryNode,
    CountsPods,
    CycleState,
    FilterPlugin,
    FiltersNodes,
    FiltersNodesWithPods,
    IgnoresNodePods,
    KeepsVerdict,
    NodeInfo,
    NodeInfoPods,
    Plugin,
    PodInfo,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ReadsWholePods,
    ScoreError,
    ScoreExtensions,
    ScorePlugin,
    ScoresNodes,
    Status,
    SumsHostPorts,
    SumsRequests,
)
from service.engine.scheduler.plugins import REGISTRY
from service.engine.scheduler.profile import IN_TREE, Profile
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.version import EngineSettings

__all__ = [
    "Column",
    "CycleError",
    "Framework",
    "NodeScores",
    "as_column",
    "filter_error",
    "invalid_score",
    "node_state",
]

# findNodesThatFitPod's status for a node outside PreFilterResult's node set.
_PREFILTER_RESULT_REASON = "node(s) didn't satisfy plugin(s) [{}]"

_RESTRICTED_BY = "framework/preFilterResult"  # the plugins whose PreFilterResult named nodes
_ON_SUMS = "framework/reprieveOnSums"  # whether preemption may reprieve on running sums
_EXTENSIONS = "framework/activeExtensions"  # the PreFilterExtensions whose PreFilter ran
_COUNTED_PODS = "framework/countedPods"  # see Framework._counted_pods
_PER_NODE = "framework/keepsVerdict"  # the filters asked per node, see Framework._counted_pods
_SUMMED = "framework/summedInputs"  # see Framework.summed_inputs
_PLUGIN = attrgetter("plugin")
_NONE_ADDRESS = id(None)  # a filter's answer at this address passed the node
_SLICES_UP_TO = 32  # _kept copies slices while at most one item in this many is dropped
_READ_AT_UP_TO = 8  # _rejections reads by position while at most one answer in this many


# A Score column: one score per scored node, in the nodes' order; a ``list[int]``, or a 1-D
# numpy int64 array whose values lie within ±SAFE_SCORE (``as_column``), where int64
# arithmetic (the plugins' NormalizeScore, the weighted totals) gives Python's answers.
Column = list[int] | np.ndarray
SAFE_SCORE = 2**53


def as_column(raw: Column) -> Column:
    """``raw`` as a column: an array when it is one or holds many nodes' scores
    (BATCH_FROM_NODES), and every score lies within ±SAFE_SCORE; else a list (Python's
    unbounded ints, as a wrapped or huge score needs)."""
    if isinstance(raw, np.ndarray):
        column = raw
    elif len(raw) >= BATCH_FROM_NODES:
        try:
            column = np.array(raw, np.int64)
        except OverflowError:
            return raw
    else:
        return raw
    if len(column) and (column.min() < -SAFE_SCORE or column.max() > SAFE_SCORE):
        return column.tolist()
    return column


def _in_range(column: Column) -> bool:
    """Whether every score of ``column`` lies in [0, MaxNodeScore]."""
    if isinstance(column, np.ndarray):
        return not len(column) or (column.min() >= 0 and column.max() <= MAX_NODE_SCORE)
    return not column or (min(column) >= 0 and max(column) <= MAX_NODE_SCORE)


@dataclass(slots=True)
class NodeScores:
    """RunScorePlugins' answer for the scored nodes: per plugin the raw score column, the
    column after NormalizeScore, and the plugin's weight. A column is a ``list[int]`` or a
    numpy int64 array (``Column``); every consumer takes either."""

    plugins: list[str]
    weights: dict[str, int]
    raw: dict[str, Column]
    normalized: dict[str, Column]
    # a Score plugin's error (RunScorePlugins fails: the cycle fails)
    error: CycleError | None = None
    _invalid: list[str] | None = field(default=None, repr=False)

    def invalid(self) -> list[str]:
        """The plugins with a normalized score outside [0, MaxNodeScore], in order (once)."""
        if self._invalid is None:
            self._invalid = [p for p in self.plugins if not _in_range(self.normalized[p])]
        return self._invalid

    def totals(self, count: int) -> Column:
        """Σ weight × normalized score per node (``count`` nodes). An int64 array when the
        columns are in range and one is an array: the sum cannot wrap (profile.py bounds
        Σ weight × MaxNodeScore by int64); else Python ints, however wide (a failed cycle
        reports them on the nodes)."""
        columns = [(self.normalized[p], self.weights[p]) for p in self.plugins]
        if not self.invalid() and any(isinstance(c, np.ndarray) for c, _ in columns):
            totals = np.zeros(count, np.int64)
            for column, weight in columns:
                totals += column if weight == 1 else np.multiply(column, weight, dtype=np.int64)
            return totals
        totals = [0] * count
        for column, weight in columns:
            values = column.tolist() if isinstance(column, np.ndarray) else column
            totals = [t + weight * v for t, v in zip(totals, values, strict=True)]
        return totals


@dataclass(frozen=True, slots=True)
class CycleError:
    """An error that fails the whole scheduling cycle: schedulingCycle returns it, the pod
    gets PodScheduled=False with reason SchedulerError and this ``message`` (upstream's
    text), and goes back to the queue with backoff; PostFilter (preemption) does not run."""

    extension_point: str
    plugin: str
    node_name: str | None
    message: str


def filter_error(node_name: str, status: Status) -> CycleError:
    """RunFilterPlugins turns a filter's Error into ``running "<plugin>" filter plugin:
    <message>``, and findNodesThatPassFilters cancels the cycle with it."""
    message = f'running "{status.plugin}" filter plugin: {status.message}'
    return CycleError("Filter", status.plugin, node_name, message)


def _named(statuses: list[Status], name: str) -> list[Status]:
    """A filter's rejections with the filter named on those without a plugin, as
    RunFilterPlugins does. A batch's statuses mostly name theirs: that is checked in C."""
    if all(map(_PLUGIN, statuses)):
        return statuses
    return [s if s.plugin else Status(s.code, s.reasons, name) for s in statuses]


def _kept(items: Sequence[Any], passed: np.ndarray, dropped: np.ndarray) -> list[Any]:
    """The ``items`` a filter passed (``passed``: a mask; ``dropped``: the others' positions,
    ascending), in order. A filter mostly rejects few nodes (the cordoned ones): the runs
    between them are copied as slices, not item by item; many rejections take a mask."""
    if len(dropped) * _SLICES_UP_TO > len(items):
        return list(compress(items, passed.tolist()))
    kept: list[Any] = []
    start = 0
    for end in dropped.tolist():
        kept += items[start:end]
        start = end + 1
    kept += items[start:]
    return kept


def _rejections(found: list[Status | None], dropped: np.ndarray) -> list[Status]:
    """A batch's answers that are not None (at ``dropped``, ascending), in order: read at
    their positions when few, else by testing every answer (a Status is always true)."""
    if len(dropped) * _READ_AT_UP_TO > len(found):
        return list(compress(found, found))
    return list(map(found.__getitem__, dropped.tolist()))


def invalid_score(scores: NodeScores, nodes: Sequence[NodeInfo]) -> CycleError | None:
    """RunScorePlugins' weighting step refuses a normalized score outside
    [0, MaxNodeScore] (a wrapped int64 sum can give one). Upstream weighs the nodes in
    parallel and reports whichever error comes first; Verdict names the first node, in the
    order the nodes were filtered, and its first such plugin in the profile's order."""
    bad = scores.invalid()
    if not bad:
        return None
    columns = [(p, scores.normalized[p]) for p in bad]
    for i, ni in enumerate(nodes):
        for plugin, column in columns:
            score = int(column[i])
            if 0 <= score <= MAX_NODE_SCORE:
                continue
            message = (
                "applying score defaultWeights on Score plugins: "
                f'plugin "{plugin}" returns an invalid score {score}, it should in the range '
                f"of [0, {MAX_NODE_SCORE}] after normalizing"
            )
            return CycleError("Score", plugin, ni.name, message)
    return None  # pragma: no cover - a bad plugin has a bad score on some node


def node_state(state: CycleState, ni: NodeInfo) -> NodeInfo | NodeInfoPods:
    """The node as this pod sees it: its pods, minus any predecessor taken off for the pod
    (holds.py). A NodeInfo reads as its own unmodified NodeInfoPods."""
    removed = state.removed.get(ni.name)
    if not removed:
        return ni
    return ni.base_state().with_pods([], removed)


def _scores(
    plugin: Any,
    state: CycleState,
    nodes: Sequence[NodeInfo],
    states: Sequence[NodeInfo | NodeInfoPods],
) -> Column:
    """The plugin's Score on every node, its pods as in ``states`` (most often the nodes
    themselves: then no pairs are built, and a plugin that scores many nodes at once,
    ScoresNodes, does)."""
    score = plugin.score
    if states is nodes:
        if isinstance(plugin, ScoresNodes) and len(nodes) >= BATCH_FROM_NODES:
            return plugin.score_nodes(state, nodes)
        return [score(state, ni, ni) for ni in nodes]
    return [score(state, ni, ns) for ni, ns in zip(nodes, states, strict=True)]


# Below this many nodes a cycle filters and scores node by node: the batches (FiltersNodes,
# ScoresNodes) have fixed costs (numpy calls, table lookups) that only many nodes repay.
# bench/RESULTS.md (stop 35) has the measurements it rests on.
BATCH_FROM_NODES = 100


@dataclass(frozen=True, slots=True)
class _NominatedNodes:
    """The nodes with nominated pods counted for a pod (one map of them, ``nominated``):
    their positions in the view's nodes and names, and for each the NodeInfo last seen
    there with its pass-1 pods (NodeInfo.with_nominated). A queue run's cycles count the
    same kept map (nominated.prepare_nominated, shared) on views that replace a node or two
    per step: only those nodes' pass-1 pods are made again."""

    nominated: Mapping[str, list[PodInfo]]
    positions: list[int]
    names: list[str]
    infos: list[NodeInfo]
    pods: list[NodeInfoPods]
    seen: np.ndarray  # the infos' addresses (engine/addresses.py)
    count: int  # the view's nodes
    absent: list[str]  # the map's nodes the view did not have


def _unmodelled(names: Sequence[str]) -> tuple[str, ...]:
    """The in-tree plugins among ``names`` that Verdict does not model, once each, in order."""
    return tuple(n for n in dict.fromkeys(names) if n not in REGISTRY and n in IN_TREE)


# Frameworks built, by profile (its value) and release: the most recently used are kept.
_FRAMEWORKS: OrderedDict[Hashable, Framework] = OrderedDict()
_FRAMEWORKS_KEPT = 64
_FRAMEWORKS_LOCK = threading.Lock()


def _profile_key(profile: Profile) -> Hashable | None:
    """``profile`` as a hashable value (equal profiles, equal keys), or None when one of its
    plugin args cannot be hashed."""
    key = (
        profile.scheduler_name,
        profile.pre_filter,
        profile.filter,
        profile.post_filter,
        profile.pre_score,
        profile.score,
        tuple(sorted(profile.args.items())),
        profile.percentage_of_nodes_to_score,
    )
    try:
        hash(key)
    except TypeError:
        return None
    return key


def framework_for(profile: Profile, settings: EngineSettings) -> Framework:
    """The Framework of ``profile`` under ``settings``, built once and shared by every
    decision that uses them (an impact page replays thousands): like the scheduler's
    frameworkImpl, made once per profile at start, its plugins hold only their args, and
    everything about one pod lives in that pod's CycleState."""
    profile_key = _profile_key(profile)
    if profile_key is None:
        return Framework(profile, settings)
    key = (profile_key, settings)
    with _FRAMEWORKS_LOCK:
        found = _FRAMEWORKS.get(key)
        if found is not None:
            _FRAMEWORKS.move_to_end(key)
            return found
    built = Framework(profile, settings)
    with _FRAMEWORKS_LOCK:
        _FRAMEWORKS[key] = built
        while len(_FRAMEWORKS) > _FRAMEWORKS_KEPT:
            _FRAMEWORKS.popitem(last=False)
    return built


class Framework:
    """frameworkImpl for one profile: the plugin instances, and per extension point the
    enabled plugins Verdict models, in the profile's order."""

    def __init__(self, profile: Profile, settings: EngineSettings) -> None:
        self.profile = profile
        self.settings = settings
        instances: dict[str, Plugin] = {}

        def enabled(names: Sequence[str], point: type[Plugin]) -> list[Any]:
            out = []
            for name in names:
                cls = REGISTRY.get(name)
                if cls is None or not issubclass(cls, point):
                    continue
                if name not in instances:
                    instances[name] = cls(profile.args_of(name), settings=settings)
                out.append(instances[name])
            return out

        self.pre_filter_plugins = enabled(profile.pre_filter, PreFilterPlugin)
        # PreFilterExtensions: the plugins whose PreFilter state follows added/removed pods.
        self.extension_plugins = [
            p for p in self.pre_filter_plugins if isinstance(p, PreFilterExtensions)
        ]
        self.filter_plugins = enabled(profile.filter, FilterPlugin)
        self.pre_score_plugins = enabled(profile.pre_score, PreScorePlugin)
        weights = dict(profile.score)
        self.score_plugins = [(p, weights[p.name]) for p in enabled(weights, ScorePlugin)]
        self.filter_names = frozenset(p.name for p in self.filter_plugins)
        self._filters_by_name = {p.name: p for p in self.filter_plugins}
        self._capabilities()
        # the last cycle's nodes with nominated pods (_nominated_nodes); replaced whole, so
        # decisions sharing this framework read one consistent value
        self._nominated_nodes: _NominatedNodes | None = None
        self.unmodelled_filters = _unmodelled((*profile.pre_filter, *profile.filter))
        self.unmodelled = _unmodelled(
            (*profile.pre_filter, *profile.filter, *profile.pre_score, *weights)
        )

    def _capabilities(self) -> None:
        """What the enabled plugins declare, sorted once per framework: the filters that
        ignore the node's pods, those preemption may sum (``summable``: these and the summed
        filters), and the plugins that may read other pods whole."""
        filters = self.filter_plugins
        self.ignores_node_pods = frozenset(
            p.name for p in filters if isinstance(p, IgnoresNodePods)
        )
        self._sums_requests = [p for p in filters if isinstance(p, SumsRequests)]
        self._sums_host_ports = [p for p in filters if isinstance(p, SumsHostPorts)]
        # The fast path sums requests and checks host ports on every reprieve: it needs a
        # filter declaring each, or its sums would stand for a filter that does not run.
        self._sums = bool(self._sums_requests and self._sums_host_ports)
        summed = {p.name for p in (*self._sums_requests, *self._sums_host_ports)}
        self.summable = self.ignores_node_pods | summed
        # Whether every filter ignores the node's pods or is summed: then preemption may
        # reprieve on running sums whatever PreFilter skips (default_preemption.py).
        self.resource_filters_only = self._sums and self.filter_names <= self.summable
        readers = {id(p): p for p in filters} | {id(p): p for p, _ in self.score_plugins}
        self._whole_pod_readers = [p for p in readers.values() if isinstance(p, ReadsWholePods)]

    def summed_inputs(self, state: CycleState) -> tuple[list[tuple[str, int]], list[Any]]:
        """What the summed filters check for this pod: the ``(resource, request)`` pairs of
        the SumsRequests filters and the host ports of the SumsHostPorts filters (once per
        cycle, after PreFilter)."""
        found = state.data.get(_SUMMED)
        if found is None:
            checks = [c for p in self._sums_requests for c in p.requests_checked(state)]
            ports = [port for p in self._sums_host_ports for port in p.host_ports_wanted(state)]
            found = state.data[_SUMMED] = (checks, ports)
        return found

    def reprieve_on_sums(self, state: CycleState) -> bool:
        """Whether preemption may reprieve on running sums for this pod: the profile runs a
        SumsRequests and a SumsHostPorts filter, and every filter left after PreFilter is
        summed or ignores the node's pods (a filter that skipped is no obstacle). Decided
        once per cycle."""
        found = state.data.get(_ON_SUMS)
        if found is None:
            found = state.data[_ON_SUMS] = self.resource_filters_only or (
                self._sums and all(name in self.summable for name, _ in state.filters)
            )
        return found

    def reprieve_on_sums_at(
        self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]
    ) -> bool:
        """``reprieve_on_sums``, or, on one node: every filter left is summable, or a
        PreFilterExtension that counts pods (``CountsPods``) none of the node's potential
        victims is among, or a filter that says its verdict on the node is the same whichever
        of them are on it (``KeepsVerdict``); so that removing or reprieving them leaves
        those filters' verdict as it is with every victim gone."""
        if self.reprieve_on_sums(state):
            return True
        counted = self._counted_pods(state)
        if counted is None or not counted.isdisjoint(map(id, victims)):
            return False
        return all(p.keeps_verdict(state, ni, victims) for p in state.data[_PER_NODE])

    def _counted_pods(self, state: CycleState) -> frozenset[int] | None:
        """The pods of the view whose AddPod / RemovePod may change an active extension's
        state (their ids), when every filter left after PreFilter is summable, such an
        extension that can tell (``CountsPods``) or one that answers per node
        (``KeepsVerdict``, kept in ``state.data[_PER_NODE]``); None otherwise. Once per
        cycle."""
        if _COUNTED_PODS not in state.data:
            counted: frozenset[int] | None = None
            extensions = {p.name: p for p in self.active_extensions(state)}
            per_node = [
                self._filters_by_name[name]
                for name, _ in state.filters
                if isinstance(self._filters_by_name.get(name), KeepsVerdict)
            ]
            if self._sums and all(
                name in self.summable
                or isinstance(extensions.get(name), CountsPods)
                or isinstance(self._filters_by_name.get(name), KeepsVerdict)
                for name, _ in state.filters
            ):
                counted = frozenset()
                for plugin in extensions.values():
                    if isinstance(plugin, KeepsVerdict):
                        continue
                    if not isinstance(plugin, CountsPods):
                        counted = None  # an extension that cannot name what it counts
                        break
                    found = plugin.counted_pods(state)
                    if found is None:
                        counted = None
                        break
                    counted |= found
            state.data[_COUNTED_PODS] = counted
            state.data[_PER_NODE] = per_node
        return state.data[_COUNTED_PODS]

    def active_extensions(self, state: CycleState) -> list[Any]:
        """The PreFilterExtensions plugins whose PreFilter ran for this pod (not skipped);
        decided once per cycle, after PreFilter (preemption asks for every victim)."""
        found = state.data.get(_EXTENSIONS)
        if found is None:
            found = state.data[_EXTENSIONS] = [
                p for p in self.extension_plugins if p.name not in state.skip_filter
            ]
        return found

    def add_pod(self, state: CycleState, added: PodInfo, ni: NodeInfo) -> None:
        """RunPreFilterExtensionAddPod. A hold (no Pod behind it) matches no selector."""
        if added.pod is not None:
            for plugin in self.active_extensions(state):
                plugin.add_pod(state, added, ni)

    def remove_pod(self, state: CycleState, removed: PodInfo, ni: NodeInfo) -> None:
        """RunPreFilterExtensionRemovePod."""
        if removed.pod is not None:
            for plugin in self.active_extensions(state):
                plugin.remove_pod(state, removed, ni)

    # --- the cycle ---

    def needs_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        """Whether this pod's cycle reads other pods whole (``ReadsWholePods``, among the
        enabled Filter and Score plugins), which a view restored from its stored form does
        not hold."""
        if view.whole_pods:
            return False
        return any(p.reads_whole_pods(pod, view) for p in self._whole_pod_readers)

    def cycle_state(self, pod: Pod, view: SchedulerView, scoring: bool = True) -> CycleState:
        """A new CycleState for ``pod``, PreFilter run. ``scoring``: whether the decision
        scores nodes (placement) or only filters them (preemption)."""
        state = CycleState(pod, view, self.settings)
        unmodelled = self.unmodelled if scoring else self.unmodelled_filters
        state.not_modelled = self._not_modelled(pod, unmodelled)
        self.run_pre_filter_plugins(state)
        return state

    def _not_modelled(self, pod: Pod, unmodelled: tuple[str, ...]) -> tuple[str, ...]:
        """The enabled plugins Verdict does not model that could change this pod's result:
        those whose use ingest records on a pod (``UNMODELLED_USES``) when this pod uses
        them, and every other."""
        return tuple(n for n in unmodelled if n in pod.unmodelled or n not in UNMODELLED_USES)

    def run_pre_filter_plugins(self, state: CycleState) -> None:
        """RunPreFilterPlugins: each plugin's PreFilter in order; a Skip drops its Filter, a
        rejection rejects the pod everywhere, node sets are intersected."""
        nodes = state.view.nodes if state.view is not None else []
        for plugin in self.pre_filter_plugins:
            names, status = plugin.pre_filter(state, nodes)
            if status.is_skip:
                state.skip_filter.add(plugin.name)
                continue
            if not status.is_success:
                state.prefilter_status = Status(
                    status.code, status.reasons, status.plugin or plugin.name
                )
                break
            if names is not None:
                state.node_names = names if state.node_names is None else state.node_names & names
                state.data.setdefault(_RESTRICTED_BY, []).append(plugin.name)
        state.filters = [
            (p.name, p.filter)
            for p in self.filter_plugins
            if p.name not in state.skip_filter
            and (not isinstance(p, CanPassEveryNode) or p.can_reject(state))
        ]

    def run_filter_plugins(
        self, state: CycleState, ni: NodeInfo, ns: NodeInfo | NodeInfoPods | None = None
    ) -> Status:
        """RunFilterPlugins on ``ni`` with its pods as in ``ns`` (default: as this pod sees
        the node). Nodes outside the PreFilter node set are not filtered at all."""
        if state.prefilter_status is not None:
            return state.prefilter_status
        if state.node_names is not None and ni.name not in state.node_names:
            plugins = sorted(state.data[_RESTRICTED_BY])
            reason = _PREFILTER_RESULT_REASON.format(" ".join(plugins))
            return Status(UNRESOLVABLE, (reason,))  # findNodesThatFitPod's, no plugin
        if ns is None:
            ns = node_state(state, ni) if state.removed else ni
        for name, run in state.filters:
            status = run(state, ni, ns)
            if status is not None:
                return status if status.plugin else Status(status.code, status.reasons, name)
        return OK

    def run_filter_plugins_with_nominated(
        self,
        state: CycleState,
        ni: NodeInfo,
        ns: NodeInfo | NodeInfoPods | None = None,
        additions: list[PodInfo] | None = None,
    ) -> Status:
        """RunFilterPluginsWithNominatedPods: with nominated pods of equal or higher priority
        added to the node, the filters run with them (pass 1) and, when that passes, again
        without them (pass 2); a pass-1 failure is the answer. ``additions`` overrides the
        pass-1 pods (used to explain holds)."""
        if state.prefilter_status is not None:  # PreFilter rejected the pod: no extensions
            return state.prefilter_status
        if additions is None:
            additions = state.nominated.get(ni.name)
        if not additions:
            return self.run_filter_plugins(state, ni, ns)
        if ns is None:
            ns = node_state(state, ni)
        first = self._with_nominated(state, ni, ns, additions)
        if not first.is_success:
            return first
        return self.run_filter_plugins(state, ni, ns)

    def _with_nominated(
        self,
        state: CycleState,
        ni: NodeInfo,
        ns: NodeInfo | NodeInfoPods,
        additions: list[PodInfo],
    ) -> Status:
        """Pass 1 of RunFilterPluginsWithNominatedPods: the filters with ``additions`` on the
        node (addGENominatedPods, on a copy of the state when a plugin follows added pods)."""
        with_them = (
            self._with_added(state, additions, ni) if self.active_extensions(state) else state
        )
        if isinstance(ns, NodeInfo):
            return self.run_filter_plugins(with_them, ni, ns.with_nominated(additions))
        return self.run_filter_plugins(with_them, ni, ns.with_pods(additions))

    def filter_all(
        self, state: CycleState, nodes: Sequence[NodeInfo], batch_from: int | None = None
    ) -> list[Status]:
        """RunFilterPluginsWithNominatedPods on every node of ``nodes``, plugin by plugin
        rather than node by node: each plugin runs (at once, FiltersNodes) on the nodes
        every earlier plugin passed, so each node meets the same filters, in the same order,
        as node by node, and gets the same status (its first rejection, else Success). A
        node with nominated pods gets pass 2 in the batch and pass 1 on its own
        (``_first_passes``); a node with pods taken off for the pod (holds) or outside the
        PreFilter node set is filtered node by node. Fewer nodes than ``batch_from``
        (default ``BATCH_FROM_NODES``) are all filtered node by node: the batches' fixed
        costs outweigh them."""
        if state.prefilter_status is not None:
            return [state.prefilter_status] * len(nodes)
        if len(nodes) < (BATCH_FROM_NODES if batch_from is None else batch_from):
            return [self.run_filter_plugins_with_nominated(state, ni) for ni in nodes]
        out = np.full(len(nodes), OK, object)  # a list at the end
        positions = np.arange(len(nodes))  # the nodes filtered in the batches
        removed, names = state.removed, state.node_names
        if removed or names is not None:
            alone = [ni.name in removed or (names is not None and ni.name not in names)
                     for ni in nodes]  # fmt: skip
            for i in compress(range(len(nodes)), alone):
                out[i] = self.run_filter_plugins_with_nominated(state, nodes[i])
            positions = np.flatnonzero(np.logical_not(alone))
        nominated = state.nominated
        # the nodes with nominated pods (their positions), filtered again in pass 1
        pass_two: list[int] = []
        known: _NominatedNodes | None = None
        view = state.view
        if nominated and view is not None and nodes is view.nodes and len(positions) == len(nodes):
            known = self._nominated_nodes_of(nominated, view)
            pass_two = known.positions
        elif nominated:
            pass_two = [i for i in positions.tolist() if nominated.get(nodes[i].name)]
        # each node's rejecting filter (its index in state.filters; len(filters): none)
        rejected_at = np.full(len(nodes), len(state.filters), np.intp) if pass_two else None
        self._filter_batches(state, nodes, positions, out, rejected_at)
        if pass_two:
            self._first_passes(state, nodes, pass_two, rejected_at, out, known)
        return out.tolist()

    def _filter_batches(
        self,
        state: CycleState,
        nodes: Sequence[NodeInfo],
        positions: np.ndarray,
        out: np.ndarray,
        rejected_at: np.ndarray | None,
    ) -> None:
        """Each filter of the cycle, in order, on the nodes every earlier one passed (those
        of ``nodes`` at ``positions``): its rejections written to ``out`` (and the filter's
        index to ``rejected_at``). A batch answers None or a Status per node: the nodes it
        passed are those whose answer is None itself, found by comparing the answers'
        addresses in numpy (``engine/addresses.py``), not by Python code per node."""
        remaining = (
            nodes if len(positions) == len(nodes) else [nodes[i] for i in positions.tolist()]
        )
        last = len(state.filters) - 1
        for k, (name, run) in enumerate(state.filters):
            if not remaining:
                break
            plugin = self._filters_by_name.get(name)
            if isinstance(plugin, FiltersNodes):
                found = plugin.filter_nodes(state, remaining)
            else:
                found = [run(state, ni, ni) for ni in remaining]
            if type(found) is not list:
                found = list(found)
            passed = addresses(found) == _NONE_ADDRESS
            if passed.all():
                continue
            dropped = np.flatnonzero(~passed)
            at = positions[dropped]
            rejections = _named(_rejections(found, dropped), name)
            out[at] = np.fromiter(rejections, object, len(rejections))
            if rejected_at is not None:
                rejected_at[at] = k
            if k == last:
                break
            positions = positions[passed]
            remaining = _kept(remaining, passed, dropped)

    def _first_passes(
        self,
        state: CycleState,
        nodes: Sequence[NodeInfo],
        pass_two: list[int],
        rejected_at: np.ndarray,
        out: np.ndarray,
        known: _NominatedNodes | None = None,
    ) -> None:
        """Pass 1 of RunFilterPluginsWithNominatedPods on the nodes at ``pass_two`` (their
        nominated pods added, ``NodeInfo.with_nominated``; ``known``: those nodes with their
        pass-1 pods, when found by ``_nominated_nodes_of``), given pass 2's answers (the
        index of the filter that rejected each node): a failure replaces the node's status
        in ``out``. The leading filters that ignore the node's pods (IgnoresNodePods)
        answer as in pass 2, so they are not run again: a node they rejected keeps its
        rejection. The others run filter by filter on the nodes every earlier one passed,
        each node meeting them in the same order as node by node; a filter with a batch
        (FiltersNodesWithPods) and no AddPod of its own takes them at once. The state is
        copied per node for the nominated pods only when a filter still to run follows
        added pods (an active PreFilterExtensions plugin)."""
        filters = state.filters
        lead = 0
        while lead < len(filters) and filters[lead][0] in self.ignores_node_pods:
            lead += 1
        rest = filters[lead:]
        names = {name for name, _ in rest}
        extended = {p.name for p in self.active_extensions(state)}
        nominated = state.nominated
        todo = np.asarray(pass_two, np.intp)
        kept = rejected_at[todo] >= lead
        todo = todo[kept]
        if known is not None:
            mask = kept.tolist()
            infos, pods = list(compress(known.infos, mask)), list(compress(known.pods, mask))
        else:
            infos = [nodes[i] for i in todo.tolist()]
            pods = [ni.with_nominated(nominated[ni.name]) for ni in infos]
        states = [state] * len(infos)
        if not extended.isdisjoint(names):
            states = [self._with_added(state, nominated[ni.name], ni) for ni in infos]
        for name, run in rest:
            if not infos:
                break
            plugin = self._filters_by_name.get(name)
            if isinstance(plugin, FiltersNodesWithPods) and name not in extended:
                found = plugin.filter_with_pods(state, infos, pods)
            else:
                found = [run(*args) for args in zip(states, infos, pods, strict=True)]
            passed = addresses(found) == _NONE_ADDRESS
            if passed.all():
                continue
            rejections = _named(list(compress(found, found)), name)
            out[todo[~passed]] = np.fromiter(rejections, object, len(rejections))
            todo = todo[passed]
            kept = passed.tolist()
            infos, pods, states = (list(compress(items, kept)) for items in (infos, pods, states))

    def _nominated_nodes_of(
        self, nominated: Mapping[str, list[PodInfo]], view: SchedulerView
    ) -> _NominatedNodes:
        """The view's nodes with pods in ``nominated`` (a view's nodes sit at their own
        index) and their pass-1 pods, from the last cycle's while it counted the same map:
        its NodeInfos still in the view keep their pods, the others (a step replaced them,
        under the same name: views derived one from another keep their nodes' names and
        order) get theirs made again. A view of other nodes (another count, a node the map
        names that the last one lacked, another name at a position) is looked up afresh."""
        known = self._nominated_nodes
        nodes, by_name = view.nodes, view.by_name
        if (
            known is not None
            and known.nominated is nominated
            and known.count == len(nodes)
            and not any(name in by_name for name in known.absent)
        ):
            infos = [nodes[i] for i in known.positions]
            seen = addresses(infos)
            moved = np.flatnonzero(seen != known.seen).tolist()
            if not moved:
                return known
            if all(infos[k].name == known.names[k] for k in moved):
                pods = list(known.pods)
                for k in moved:
                    pods[k] = infos[k].with_nominated(nominated[known.names[k]])
                known = _NominatedNodes(
                    nominated,
                    known.positions,
                    known.names,
                    infos,
                    pods,
                    seen,
                    known.count,
                    known.absent,
                )
                self._nominated_nodes = known
                return known
        infos = [by_name[name] for name, pods in nominated.items() if pods and name in by_name]
        pods = [ni.with_nominated(nominated[ni.name]) for ni in infos]
        positions, names = [ni.index for ni in infos], [ni.name for ni in infos]
        absent = [name for name, pods in nominated.items() if pods and name not in by_name]
        known = _NominatedNodes(
            nominated, positions, names, infos, pods, addresses(infos), len(nodes), absent
        )
        self._nominated_nodes = known
        return known

    def _with_added(self, state: CycleState, added: list[PodInfo], ni: NodeInfo) -> CycleState:
        """A copy of the state with ``added`` pods on ``ni`` (addGENominatedPods' AddPod)."""
        with_them = state.clone()
        for pi in added:
            self.add_pod(with_them, pi, ni)
        return with_them

    def run_pre_score_plugins(
        self, state: CycleState, nodes: Sequence[NodeInfo], carried: Collection[str] = ()
    ) -> None:
        """RunPreScorePlugins: a Skip drops the plugin's Score for this pod. ``carried``:
        plugins whose PreScore state the caller carried over (CarriesPreScore)."""
        for plugin in self.pre_score_plugins:
            if plugin.name in carried:
                continue
            status = plugin.pre_score(state, nodes)
            if status.is_skip:
                state.skip_score.add(plugin.name)

    def run_score_plugins(
        self,
        state: CycleState,
        nodes: Sequence[NodeInfo],
        states: Sequence[NodeInfo | NodeInfoPods],
        known: Mapping[str, Column] | None = None,
    ) -> NodeScores:
        """RunScorePlugins over the feasible ``nodes`` (their pods as in ``states``).
        ``known``: plugins whose raw scores over ``nodes`` the caller already has (the
        capacity cache, incremental.py, of scores a bind cannot change): not scored again."""
        result = NodeScores([], {}, {}, {})
        for plugin, weight in self.score_plugins:
            if plugin.name in state.skip_score:
                continue
            raw = known.get(plugin.name) if known else None
            try:
                if raw is None or not len(raw):
                    raw = _scores(plugin, state, nodes, states)
            except ScoreError as exc:
                message = f'running Score plugins: plugin "{plugin.name}" failed with: {exc}'
                result.error = result.error or CycleError("Score", plugin.name, None, message)
                raw = [0] * len(nodes)
            raw = as_column(raw)
            normalized = raw
            if isinstance(plugin, ScoreExtensions):
                normalized = raw.copy()
                plugin.normalize_score(state, nodes, normalized)
            result.plugins.append(plugin.name)
            result.weights[plugin.name] = weight
            result.raw[plugin.name] = raw
            result.normalized[plugin.name] = normalized
        return result
