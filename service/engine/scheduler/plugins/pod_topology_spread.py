"""PodTopologySpread (kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread,
v1.35: common.go, filtering.go, scoring.go; plugins/helper/spread.go DefaultSelector):
PreFilter with AddPod/RemovePod, Filter, PreScore, Score and NormalizeScore.

The pod's own constraints decide, else the profile's default constraints (the "System" ones,
hostname maxSkew 3 and zone maxSkew 5, both ScheduleAnyway), whose selector is derived from
the Services selecting the pod and its ReplicaSet, StatefulSet or ReplicationController. The
Filter reads the DoNotSchedule constraints, the scores the ScheduleAnyway ones.

Domains are counted only on nodes carrying every constraint's topology key and passing the
constraint's node inclusion policies (nodeAffinityPolicy Honor by default: the pod's node
selector and required affinity; nodeTaintsPolicy Ignore by default). Terminating pods and pods
of other namespaces do not count. The global minimum is tracked as upstream tracks it, in two
"critical paths" (exact after PreFilter; AddPod/RemovePod update them as upstream does).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from service.engine.labels import selector_matches
from service.engine.nodeaffinity import matches_node_selector_and_affinity
from service.engine.objects import (
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    TopologySpreadConstraint,
)
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CarriesPreScore,
    CountsPods,
    CycleState,
    FilterPlugin,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    ReadsWholePods,
    ScoreExtensions,
    Status,
)
from service.engine.scheduler.profile import SYSTEM_DEFAULT_CONSTRAINTS, PodTopologySpreadArgs
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.tolerations import find_untolerated
from service.engine.version import EngineSettings

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "PodTopologySpread",
    "default_selector",
]

ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"
LABEL_HOSTNAME = "kubernetes.io/hostname"
_MAX_INT32 = 2**31 - 1
_SCORE_KEY = "PodTopologySpread/score"  # PreScore's state
_DO_NOT_SCHEDULE_TAINTS = ("NoSchedule", "NoExecute")
_OWNER_KINDS = {
    ("v1", "ReplicationController"),
    ("apps/v1", "ReplicaSet"),
    ("apps/v1", "StatefulSet"),
}


@dataclass(frozen=True, slots=True)
class _Constraint:
    """topologySpreadConstraint: a constraint with its selector built and its defaults."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"

    def includes_every_node(self, pod: Pod) -> bool:
        """Whether ``includes(pod, node)`` holds whatever the node: the policies check
        nothing this pod has (no nodeSelector nor required node affinity; taints ignored)."""
        return self.node_taints_policy != "Honor" and (
            self.node_affinity_policy != "Honor"
            or (not pod.node_selector and pod.required_node_affinity is None)
        )

    def includes(self, pod: Pod, node: Node) -> bool:
        """matchNodeInclusionPolicies."""
        if self.node_affinity_policy == "Honor" and not matches_node_selector_and_affinity(
            pod, node
        ):
            return False
        return not (
            self.node_taints_policy == "Honor"
            and node.taints
            and find_untolerated(node.taints, pod.tolerations, _DO_NOT_SCHEDULE_TAINTS) is not None
        )


def _with_match_label_keys(
    c: TopologySpreadConstraint, labels: Mapping[str, str]
) -> LabelSelector | None:
    """The constraint's selector with ``matchLabelKeys`` merged in (the pod's values of those
    keys, as requirements; harmless where the API server already merged them)."""
    selector = c.label_selector
    extra = tuple(
        LabelSelectorRequirement(key, "In", (labels[key],))
        for key in c.match_label_keys
        if key in labels
    )
    if not extra:
        return selector
    base = selector or LabelSelector()
    return LabelSelector(
        match_labels=base.match_labels, match_expressions=(*base.match_expressions, *extra)
    )


def _constraints(pod: Pod, action: str) -> list[_Constraint]:
    """filterTopologySpreadConstraints for the pod's own constraints."""
    return [
        _Constraint(
            c.max_skew,
            c.topology_key,
            _with_match_label_keys(c, pod.labels),
            c.min_domains if c.min_domains is not None else 1,
            c.node_affinity_policy or "Honor",
            c.node_taints_policy or "Ignore",
        )
        for c in pod.topology_spread_constraints
        if c.when_unsatisfiable == action
    ]


def default_selector(pod: Pod, view) -> LabelSelector | None:
    """helper.DefaultSelector: the Services selecting the pod (their selectors merged), plus
    the requirements of its controller (ReplicaSet, StatefulSet, ReplicationController); None
    when that selects on nothing."""
    labels: dict[str, str] = {}
    for service in view.services_of(pod.namespace):
        selector = service.selector
        if selector is None:
            continue
        if all(pod.labels.get(k) == v for k, v in selector.items()):
            labels.update(selector)
    expressions: tuple[LabelSelectorRequirement, ...] = ()
    owner = pod.controller
    if owner is not None and (owner.api_version, owner.kind) in _OWNER_KINDS:
        controller = view.controller(owner.kind, pod.namespace, owner.name)
        if controller is not None and controller.selector is not None:
            if owner.kind == "ReplicationController":
                labels.update(controller.selector.match_labels)
            else:
                expressions = (
                    tuple(
                        LabelSelectorRequirement(k, "In", (v,))
                        for k, v in controller.selector.match_labels.items()
                    )
                    + controller.selector.match_expressions
                )
    if not labels and not expressions:
        return None
    return LabelSelector(match_labels=labels, match_expressions=expressions)


def _count_matching(pods: Sequence[PodInfo], selector: LabelSelector | None, namespace: str) -> int:
    """countPodsMatchSelector: an empty selector counts nothing; terminating pods and pods
    of other namespaces do not count."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return 0
    count = 0
    for pi in pods:
        pod = pi.pod
        if (
            pod.deletion_timestamp is None
            and pod.namespace == namespace
            and selector_matches(selector, pod.labels)
        ):
            count += 1
    return count


def _matching_per_node(view, selector: LabelSelector | None, namespace: str) -> dict[str, int]:
    """countPodsMatchSelector for every node of the view at once: node name -> the matching
    pods on it, from the pods the selector can match (the view's label index), or from every
    pod when the selector names no label value."""
    if selector is None or (not selector.match_labels and not selector.match_expressions):
        return {}
    candidates = view.selector_candidates(selector)
    if candidates is None:
        return {ni.name: _count_matching(ni.pods, selector, namespace) for ni in view.nodes}
    out: dict[str, int] = {}
    for pi in candidates:
        pod = pi.pod
        if (
            pod.deletion_timestamp is None
            and pod.namespace == namespace
            and selector_matches(selector, pod.labels)
        ):
            out[pod.node_name] = out.get(pod.node_name, 0) + 1
    return out


def _has_all_keys(labels: Mapping[str, str], constraints: Sequence[_Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    return all(c.topology_key in labels for c in constraints)


class _CriticalPaths:
    """criticalPaths: the two domains with the fewest matching pods, as upstream keeps them."""

    __slots__ = ("paths",)

    def __init__(self, paths: list[list] | None = None) -> None:
        self.paths = paths or [["", _MAX_INT32], ["", _MAX_INT32]]

    def update(self, value: str, num: int) -> None:
        p = self.paths
        i = 0 if value == p[0][0] else 1 if value == p[1][0] else -1
        if i >= 0:
            p[i][1] = num
            if p[0][1] > p[1][1]:
                p[0], p[1] = p[1], p[0]
        elif num < p[0][1]:
            p[1] = p[0]
            p[0] = [value, num]
        elif num < p[1][1]:
            p[1] = [value, num]

    def clone(self) -> _CriticalPaths:
        return _CriticalPaths([list(self.paths[0]), list(self.paths[1])])


class _PreFilterState:
    """preFilterState: the DoNotSchedule constraints, per constraint the matching pods per
    domain (TpValueToMatchNum) and the critical paths."""

    __slots__ = ("constraints", "counts", "paths")

    def __init__(self, constraints, counts, paths) -> None:
        self.constraints: list[_Constraint] = constraints
        self.counts: list[dict[str, int]] = counts
        self.paths: list[_CriticalPaths] = paths

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.constraints, [dict(c) for c in self.counts], [p.clone() for p in self.paths]
        )

    def min_match_num(self, i: int, min_domains: int) -> int:
        """minMatchNum: the global minimum, 0 while fewer domains than minDomains exist."""
        if len(self.counts[i]) < min_domains:
            return 0
        return self.paths[i].paths[0][1]

    def update_with_pod(self, other: Pod, preemptor: Pod, node: Node, delta: int) -> None:
        """preFilterState.updateWithPod."""
        if other.namespace != preemptor.namespace or not _has_all_keys(
            node.labels, self.constraints
        ):
            return
        for i, c in enumerate(self.constraints):
            if not selector_matches(c.selector, other.labels) or not c.includes(preemptor, node):
                continue
            value = node.labels[c.topology_key]
            self.counts[i][value] = self.counts[i].get(value, 0) + delta
            self.paths[i].update(value, self.counts[i][value])


@dataclass(slots=True)
class _PreScoreState:
    constraints: list[_Constraint]
    ignored: set[str]
    counts: list[dict[str, int]]
    weights: list[float]
    matching: list[dict[str, int]]  # per constraint, node name -> its matching pods
    # What Score reads per constraint, gathered once: the topology key, the matching pods
    # per node for a hostname key (None: the domain's count is read), the domain counts,
    # the weight and float(maxSkew - 1). The dicts are the ones above (carried cycles
    # update them in place).
    terms: list[tuple[str, dict[str, int] | None, dict[str, int], float, float]] = field(init=False)

    def __post_init__(self) -> None:
        self.terms = [
            (
                c.topology_key,
                matching if c.topology_key == LABEL_HOSTNAME else None,
                counts,
                weight,
                float(c.max_skew - 1),
            )
            for c, counts, weight, matching in zip(
                self.constraints, self.counts, self.weights, self.matching, strict=True
            )
        ]


class PodTopologySpread(CountsPods, FilterPlugin, CarriesPreScore, ScoreExtensions, ReadsWholePods):
    name = "PodTopologySpread"

    def __init__(
        self, args: PodTopologySpreadArgs | None = None, *, settings: EngineSettings
    ) -> None:
        args = args or PodTopologySpreadArgs()
        super().__init__(args, settings=settings)
        self.system_defaulted = args.defaulting_type == "System"
        self.defaults = (
            SYSTEM_DEFAULT_CONSTRAINTS if self.system_defaulted else args.default_constraints
        )

    def _get_constraints(self, state: CycleState, action: str) -> list[_Constraint]:
        """getConstraints / buildDefaultConstraints."""
        pod = state.pod
        if pod.topology_spread_constraints:
            return _constraints(pod, action)
        defaults = [c for c in self.defaults if c.when_unsatisfiable == action]
        if not defaults:
            return []
        selector = default_selector(pod, state.view)
        if selector is None:
            return []
        return [_Constraint(c.max_skew, c.topology_key, selector) for c in defaults]

    # --- PreFilter and its extensions ---

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        constraints = self._get_constraints(state, DO_NOT_SCHEDULE)
        if not constraints:
            return None, SKIPPED
        pod = state.pod
        counts: list[dict[str, int]] = [{} for _ in constraints]
        matching = [_matching_per_node(state.view, c.selector, pod.namespace) for c in constraints]
        for ni in nodes:
            node = ni.node
            if not _has_all_keys(node.labels, constraints):
                continue
            for i, c in enumerate(constraints):
                if not c.includes(pod, node):
                    continue
                value = node.labels[c.topology_key]
                counts[i][value] = counts[i].get(value, 0) + matching[i].get(ni.name, 0)
        paths = []
        for domain_counts in counts:
            p = _CriticalPaths()
            for value, num in domain_counts.items():
                p.update(value, num)
            paths.append(p)
        state.write(self.name, _PreFilterState(constraints, counts, paths))
        return None, OK

    def add_pod(self, state: CycleState, added: PodInfo, ni: NodeInfo) -> None:
        state.data[self.name].update_with_pod(added.pod, state.pod, ni.node, 1)

    def remove_pod(self, state: CycleState, removed: PodInfo, ni: NodeInfo) -> None:
        state.data[self.name].update_with_pod(removed.pod, state.pod, ni.node, -1)

    def reads_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        """The other pods' labels are read when the pod has constraints, or when default
        constraints apply and its Services or controller select on something."""
        if pod.topology_spread_constraints:
            return True
        return bool(self.defaults) and default_selector(pod, view) is not None

    def counted_pods(self, state: CycleState) -> frozenset[int] | None:
        """The ids of the view's pods whose AddPod / RemovePod may change the state (same
        namespace, matching a constraint's selector), None when a selector names no label
        value. Not upstream: preemption reprieves on sums on a node none of whose potential
        victims is among them."""
        s: _PreFilterState = state.data[self.name]
        pod = state.pod
        found: set[int] = set()
        for c in s.constraints:
            if c.selector is None:
                continue
            candidates = state.view.selector_candidates(c.selector)
            if candidates is None:
                return None
            found.update(
                id(pi)
                for pi in candidates
                if pi.pod.namespace == pod.namespace and selector_matches(c.selector, pi.pod.labels)
            )
        return frozenset(found)

    # --- Filter ---

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        s: _PreFilterState | None = state.data.get(self.name)
        if s is None or not s.constraints:
            return None
        labels = ni.node.labels
        pod_labels = state.pod.labels
        for i, c in enumerate(s.constraints):
            value = labels.get(c.topology_key)
            if value is None:
                return Status(UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,), self.name)
            self_match = 1 if selector_matches(c.selector, pod_labels) else 0
            skew = s.counts[i].get(value, 0) + self_match - s.min_match_num(i, c.min_domains)
            if skew > c.max_skew:
                return Status(UNSCHEDULABLE, (ERR_REASON_CONSTRAINTS_NOT_MATCH,), self.name)
        return None

    # --- PreScore, Score, NormalizeScore ---

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """initPreScoreState, then the matching pods of every domain among all nodes."""
        view = state.view
        if not nodes or not view.nodes:
            return OK
        pod = state.pod
        constraints = self._get_constraints(state, SCHEDULE_ANYWAY)
        if not constraints:
            return SKIPPED
        require_all = bool(pod.topology_spread_constraints) or not self.system_defaulted
        ignored: set[str] = set()
        counts: list[dict[str, int]] = [{} for _ in constraints]
        sizes = [0] * len(constraints)
        for ni in nodes:
            labels = ni.node.labels
            if require_all and not _has_all_keys(labels, constraints):
                ignored.add(ni.name)
                continue
            for i, c in enumerate(constraints):
                if c.topology_key == LABEL_HOSTNAME:
                    continue
                value = labels.get(c.topology_key, "")
                if value not in counts[i]:
                    counts[i][value] = 0
                    sizes[i] += 1
        weights = []
        for i, c in enumerate(constraints):
            size = len(nodes) - len(ignored) if c.topology_key == LABEL_HOSTNAME else sizes[i]
            weights.append(math.log(float(size + 2)))
        matching = [_matching_per_node(view, c.selector, pod.namespace) for c in constraints]
        # Each node of the view adds its matching pods to its domain's count: only the
        # nodes holding some can change a count, so only they are visited (a hostname
        # constraint counts no domain here, Score reads its matching pods per node).
        by_name = view.by_name
        for c, domain_counts, matching_pods in zip(constraints, counts, matching, strict=True):
            if not domain_counts:
                continue
            ask = not c.includes_every_node(pod)
            for name, count in matching_pods.items():
                ni = by_name.get(name)
                if ni is None:
                    continue
                node = ni.node
                labels = node.labels
                if require_all and not _has_all_keys(labels, constraints):
                    continue
                if ask and not c.includes(pod, node):
                    continue
                value = labels.get(c.topology_key, "")
                if value in domain_counts:
                    domain_counts[value] += count
        state.write(
            _SCORE_KEY,
            _PreScoreState(constraints, ignored, counts, weights, matching),
        )
        return OK

    def carry_pre_score(
        self, previous: CycleState, state: CycleState, added: PodInfo, ni: NodeInfo
    ) -> frozenset[tuple[str, str]] | None:
        """PreScore's state of the previous cycle, with ``added`` counted as pre_score counts
        a pod (its node's matching pods, and its domain's when the domain is counted)."""
        s: _PreScoreState | None = previous.data.get(_SCORE_KEY)
        if s is None:
            return None
        state.write(_SCORE_KEY, s)
        pod, node = added.pod, ni.node
        if pod is None or pod.deletion_timestamp is not None:
            return frozenset()
        if pod.namespace != state.pod.namespace:
            return frozenset()
        require_all = bool(state.pod.topology_spread_constraints) or not self.system_defaulted
        counted = not require_all or _has_all_keys(node.labels, s.constraints)
        changed: set[tuple[str, str]] = set()
        for i, c in enumerate(s.constraints):
            selector = c.selector
            if selector is None or (not selector.match_labels and not selector.match_expressions):
                continue
            if not selector_matches(selector, pod.labels):
                continue
            s.matching[i][ni.name] = s.matching[i].get(ni.name, 0) + 1
            value = node.labels.get(c.topology_key, "")
            changed.add((c.topology_key, value))
            if counted and c.includes(state.pod, node) and value in s.counts[i]:
                s.counts[i][value] += 1
        return frozenset(changed)

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        s: _PreScoreState | None = state.data.get(_SCORE_KEY)
        name = ni.name
        if s is None or name in s.ignored:
            return 0
        labels = ni.node.labels
        total = 0.0
        for key, per_node, counts, weight, skew in s.terms:
            value = labels.get(key)
            if value is None:
                continue
            count = counts[value] if per_node is None else per_node.get(name, 0)
            total += float(count) * weight + skew
        return _go_round(total)

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        s: _PreScoreState | None = state.data.get(_SCORE_KEY)
        if s is None:
            return
        # ignored nodes score 0 and bound neither min nor max (one flag per node, the sums
        # at C speed)
        ignored = s.ignored
        skip = [ni.name in ignored for ni in nodes] if ignored else [False] * len(nodes)
        counted = [v for v, out in zip(scores, skip, strict=True) if not out]
        low, high = min(counted, default=2**63 - 1), max(0, max(counted, default=0))
        if high == 0:
            scores[:] = [0 if out else MAX_NODE_SCORE for out in skip]
        else:
            top, most = high + low, MAX_NODE_SCORE
            pairs = zip(scores, skip, strict=True)
            scores[:] = [0 if out else (top - v) * most // high for v, out in pairs]


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)
