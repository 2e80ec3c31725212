"""The framework runtime: one profile's plugins run at each extension point, in order.

Mirrors kubernetes/kubernetes ``pkg/scheduler/framework/runtime/framework.go`` (v1.35):
``RunPreFilterPlugins`` (Skip, rejection, PreFilterResult node sets intersected),
``RunFilterPlugins`` (the first rejecting plugin decides the node),
``RunFilterPluginsWithNominatedPods`` (two passes, nominated pods of equal or higher
priority added in the first), ``RunPreScorePlugins`` (Skip) and ``RunScorePlugins`` (Score,
then NormalizeScore, then the weight). An Error status, or a normalized score outside
0..100, fails the whole scheduling cycle: ``CycleError``.

A plugin may also answer ``can_reject(state)``: False when its Filter passes every node for
this pod (NodeName for a pod without ``spec.nodeName``); the runtime then does not call it,
which changes nothing but time.

Plugins Verdict does not model are never silently passed over: a ``CycleState`` carries
``not_modelled``, the profile's enabled unmodelled plugins that could matter for this pod.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from service.engine.objects import Pod
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    UNRESOLVABLE,
    CycleState,
    NodeInfo,
    NodeInfoPods,
    Plugin,
    PodInfo,
    ScoreError,
    Status,
)
from service.engine.scheduler.plugins import REGISTRY
from service.engine.scheduler.plugins.pod_topology_spread import default_selector
from service.engine.scheduler.profile import (
    IN_TREE,
    DefaultPreemptionArgs,
    PodTopologySpreadArgs,
    Profile,
)
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.version import EngineSettings

__all__ = ["CycleError", "Framework", "NodeScores", "filter_error", "invalid_score", "node_state"]

# findNodesThatFitPod's status for a node outside PreFilterResult's node set.
_PREFILTER_RESULT_REASON = "node(s) didn't satisfy plugin(s) [{}]"

_RESTRICTED_BY = "framework/preFilterResult"  # the plugins whose PreFilterResult named nodes
_ON_SUMS = "framework/reprieveOnSums"  # whether preemption may reprieve on running sums
_EXTENSIONS = "framework/activeExtensions"  # the PreFilterExtensions whose PreFilter ran
_COUNTED_PODS = "framework/countedPods"  # see Framework._counted_pods
_PER_NODE = "framework/keepsVerdict"  # the filters asked per node, see Framework._counted_pods

# Filters whose verdict on a node does not depend on the node's pods: preemption removing
# or reprieving pods never changes them.
POD_INDEPENDENT_FILTERS = frozenset(
    {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "DynamicResources"}
)
_SUMMABLE_FILTERS = POD_INDEPENDENT_FILTERS | {"NodePorts", "NodeResourcesFit"}
_VOLUME_PLUGINS = ("VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding", "VolumeZone")
_DEFAULT_SPREADING_OWNERS = frozenset({"ReplicaSet", "StatefulSet", "ReplicationController"})


@dataclass(slots=True)
class NodeScores:
    """RunScorePlugins' answer for the scored nodes (parallel lists): per plugin the raw
    score, the score after NormalizeScore, and the plugin's weight."""

    plugins: list[str]
    weights: dict[str, int]
    raw: dict[str, list[int]]
    normalized: dict[str, list[int]]
    # a Score plugin's error (RunScorePlugins fails: the cycle fails)
    error: CycleError | None = None

    def total(self, i: int) -> int:
        """Σ weight × normalized score of node ``i``."""
        return sum(self.weights[p] * self.normalized[p][i] for p in self.plugins)


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


def invalid_score(scores: NodeScores, node_names: Sequence[str]) -> CycleError | None:
    """RunScorePlugins' weighting step refuses a normalized score outside
    [0, MaxNodeScore] (a wrapped int64 sum can give one). Upstream weighs the nodes in
    parallel and reports whichever error comes first; Verdict names the first node, in the
    order the nodes were filtered, and its first such plugin in the profile's order."""
    bad = [p for p in scores.plugins
           if min(scores.normalized[p]) < 0 or max(scores.normalized[p]) > MAX_NODE_SCORE]  # fmt: skip
    if not bad:
        return None
    for i, name in enumerate(node_names):
        for plugin in bad:
            score = scores.normalized[plugin][i]
            if 0 <= score <= MAX_NODE_SCORE:
                continue
            message = (
                "applying score defaultWeights on Score plugins: "
                f'plugin "{plugin}" returns an invalid score {score}, it should in the range '
                f"of [0, {MAX_NODE_SCORE}] after normalizing"
            )
            return CycleError("Score", plugin, name, message)
    return None  # pragma: no cover - a bad plugin has a bad score on some node


def node_state(state: CycleState, ni: NodeInfo) -> NodeInfo | NodeInfoPods:
    """The node as this pod sees it: its pods, minus any predecessor taken off for the pod
    (holds.py). A NodeInfo reads as its own unmodified NodeInfoPods."""
    removed = state.removed.get(ni.name)
    if not removed:
        return ni
    return ni.base_state().with_pods([], removed)


def _unmodelled(names: Sequence[str]) -> tuple[str, ...]:
    """The in-tree plugins among ``names`` that Verdict does not model, once each, in order."""
    return tuple(n for n in dict.fromkeys(names) if n not in REGISTRY and n in IN_TREE)


class Framework:
    """frameworkImpl for one profile: the plugin instances, and per extension point the
    enabled plugins Verdict models, in the profile's order."""

    def __init__(self, profile: Profile, settings: EngineSettings) -> None:
        self.profile = profile
        self.settings = settings
        instances: dict[str, Plugin] = {}

        def enabled(names: Sequence[str], method: str) -> list[Any]:
            out = []
            for name in names:
                cls = REGISTRY.get(name)
                if cls is None or not hasattr(cls, method):
                    continue
                if name not in instances:
                    instances[name] = cls(profile.args_of(name), settings=settings)
                out.append(instances[name])
            return out

        self.pre_filter_plugins = enabled(profile.pre_filter, "pre_filter")
        # PreFilterExtensions: the plugins whose PreFilter state follows added/removed pods.
        self.extension_plugins = [p for p in self.pre_filter_plugins if hasattr(p, "add_pod")]
        self.filter_plugins = enabled(profile.filter, "filter")
        self.pre_score_plugins = enabled(profile.pre_score, "pre_score")
        weights = dict(profile.score)
        self.score_plugins = [(p, weights[p.name]) for p in enabled(weights, "score")]
        self.filter_names = frozenset(p.name for p in self.filter_plugins)
        self._filters_by_name = {p.name: p for p in self.filter_plugins}
        # Whether NodePorts and NodeResourcesFit both run and every other filter ignores the
        # node's pods: then preemption may reprieve on running sums (default_preemption.py).
        self.resource_filters_only = (
            "NodePorts" in self.filter_names
            and "NodeResourcesFit" in self.filter_names
            and self.filter_names <= _SUMMABLE_FILTERS
        )
        self.unmodelled_filters = _unmodelled((*profile.pre_filter, *profile.filter))
        self.unmodelled = _unmodelled(
            (*profile.pre_filter, *profile.filter, *profile.pre_score, *weights)
        )
        self.preemption_args: DefaultPreemptionArgs | None = None
        if "DefaultPreemption" in profile.post_filter:
            args = profile.args_of("DefaultPreemption")
            assert isinstance(args, DefaultPreemptionArgs)
            self.preemption_args = args

    def reprieve_on_sums(self, state: CycleState) -> bool:
        """Whether preemption may reprieve on running sums for this pod: the profile runs
        NodePorts and NodeResourcesFit, and every filter left after PreFilter is one of them
        or ignores the node's pods (a pod-affinity filter that skipped is no obstacle).
        Decided once per cycle."""
        found = state.data.get(_ON_SUMS)
        if found is None:
            found = state.data[_ON_SUMS] = self.resource_filters_only or (
                "NodePorts" in self.filter_names
                and "NodeResourcesFit" in self.filter_names
                and all(name in _SUMMABLE_FILTERS for name, _ in state.filters)
            )
        return found

    def reprieve_on_sums_at(
        self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]
    ) -> bool:
        """``reprieve_on_sums``, or, on one node: every filter left is summable, or a
        PreFilterExtension (pod affinity, spreading) whose state none of the node's potential
        victims changes, or a filter that says its verdict on the node is the same whichever
        of them are on it (``keeps_verdict``: the volume filters); so that removing or
        reprieving them leaves those filters' verdict as it is with every victim gone."""
        if self.reprieve_on_sums(state):
            return True
        counted = self._counted_pods(state)
        if counted is None or not counted.isdisjoint(map(id, victims)):
            return False
        return all(p.keeps_verdict(state, ni, victims) for p in state.data[_PER_NODE])

    def _counted_pods(self, state: CycleState) -> frozenset[int] | None:
        """The pods of the view whose AddPod / RemovePod may change an active extension's
        state (their ids), when every filter left after PreFilter is summable, such an
        extension that can tell (``counted_pods``) or one that answers per node
        (``keeps_verdict``, kept in ``state.data[_PER_NODE]``); None otherwise. Once per
        cycle."""
        if _COUNTED_PODS not in state.data:
            counted: frozenset[int] | None = None
            extensions = {p.name: p for p in self.active_extensions(state)}
            per_node = [
                self._filters_by_name[name]
                for name, _ in state.filters
                if hasattr(self._filters_by_name.get(name), "keeps_verdict")
            ]
            if (
                "NodePorts" in self.filter_names
                and "NodeResourcesFit" in self.filter_names
                and all(
                    name in _SUMMABLE_FILTERS
                    or hasattr(extensions.get(name), "counted_pods")
                    or hasattr(self._filters_by_name.get(name), "keeps_verdict")
                    for name, _ in state.filters
                )
            ):
                counted = frozenset()
                for plugin in extensions.values():
                    if hasattr(plugin, "keeps_verdict"):
                        continue
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

    def _enabled(self, name: str) -> bool:
        return name in self.filter_names or any(p.name == name for p, _ in self.score_plugins)

    def needs_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        """Whether this pod's cycle reads other pods whole (their labels and affinity terms:
        inter-pod affinity, topology spreading), which a view restored from its stored form
        does not hold."""
        if view.whole_pods:
            return False
        if pod.volumes and any(self._enabled(name) for name in _VOLUME_PLUGINS):
            return True  # the volume plugins read the storage objects and the pods' volumes
        if self._enabled("InterPodAffinity") and (
            pod.pod_affinity_required
            or pod.pod_anti_affinity_required
            or pod.pod_affinity_preferred
            or pod.pod_anti_affinity_preferred
            or view.inter_pod_affinity_in_use
        ):
            return True
        if not self._enabled("PodTopologySpread"):
            return False
        if pod.topology_spread_constraints:
            return True
        args = self.profile.args_of("PodTopologySpread")
        spreads_by_default = isinstance(args, PodTopologySpreadArgs) and (
            args.defaulting_type == "System" or bool(args.default_constraints)
        )
        return spreads_by_default and default_selector(pod, view) is not None

    def cycle_state(self, pod: Pod, view: SchedulerView, scoring: bool = True) -> CycleState:
        """A new CycleState for ``pod``, PreFilter run. ``scoring``: whether the decision
        scores nodes (placement) or only filters them (preemption)."""
        state = CycleState(pod, view, self.settings)
        unmodelled = self.unmodelled if scoring else self.unmodelled_filters
        state.not_modelled = self._not_modelled(pod, view, unmodelled)
        self.run_pre_filter_plugins(state)
        return state

    def _not_modelled(
        self, pod: Pod, view: SchedulerView, unmodelled: tuple[str, ...]
    ) -> tuple[str, ...]:
        """The enabled plugins Verdict does not model that could change this pod's result."""
        matters: set[str] = set()
        uses = set(pod.unmodelled)
        if "InterPodAffinity" in uses or view.inter_pod_affinity_in_use:
            matters.add("InterPodAffinity")
        if "PodTopologySpread" in uses or self._default_spreading(pod):
            matters.add("PodTopologySpread")
        known = {"InterPodAffinity", "PodTopologySpread"}
        return tuple(n for n in unmodelled if n in matters or n not in known)

    def _default_spreading(self, pod: Pod) -> bool:
        """PodTopologySpread's default constraints apply to a pod its controller selects."""
        args = self.profile.args_of("PodTopologySpread")
        if not isinstance(args, PodTopologySpreadArgs):
            return False
        if args.defaulting_type != "System" and not args.default_constraints:
            return False
        owner = pod.controller
        return owner is not None and owner.kind in _DEFAULT_SPREADING_OWNERS

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
            and (not hasattr(p, "can_reject") or p.can_reject(state))
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
        base = ns.base_state() if isinstance(ns, NodeInfo) else ns
        with_them = state
        if self.active_extensions(state):  # addGENominatedPods, on a copy of the state
            with_them = state.clone()
            for pi in additions:
                self.add_pod(with_them, pi, ni)
        first = self.run_filter_plugins(with_them, ni, base.with_pods(additions))
        if not first.is_success:
            return first
        return self.run_filter_plugins(state, ni, ns)

    def run_pre_score_plugins(self, state: CycleState, nodes: Sequence[NodeInfo]) -> None:
        """RunPreScorePlugins: a Skip drops the plugin's Score for this pod."""
        for plugin in self.pre_score_plugins:
            status = plugin.pre_score(state, nodes)
            if status.is_skip:
                state.skip_score.add(plugin.name)

    def run_score_plugins(
        self,
        state: CycleState,
        nodes: Sequence[NodeInfo],
        states: Sequence[NodeInfo | NodeInfoPods],
    ) -> NodeScores:
        """RunScorePlugins over the feasible ``nodes`` (their pods as in ``states``)."""
        result = NodeScores([], {}, {}, {})
        for plugin, weight in self.score_plugins:
            if plugin.name in state.skip_score:
                continue
            score = plugin.score
            try:
                raw = [score(state, ni, ns) for ni, ns in zip(nodes, states, strict=True)]
            except ScoreError as exc:
                message = f'running Score plugins: plugin "{plugin.name}" failed with: {exc}'
                result.error = result.error or CycleError("Score", plugin.name, None, message)
                raw = [0] * len(nodes)
            normalized = raw
            if hasattr(plugin, "normalize_score"):
                normalized = list(raw)
                plugin.normalize_score(state, nodes, normalized)
            result.plugins.append(plugin.name)
            result.weights[plugin.name] = weight
            result.raw[plugin.name] = raw
            result.normalized[plugin.name] = normalized
        return result
