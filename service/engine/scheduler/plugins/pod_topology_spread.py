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
import threading
import weakref
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter, itemgetter

import numpy as np

from service.engine.addresses import addresses
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
    FiltersNodes,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    ReadsWholePods,
    ScoreExtensions,
    ScoresNodes,
    Status,
)
from service.engine.scheduler.plugins.helper import node_indexes
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
    for selector in _selecting_services(view.services_of(pod.namespace), pod.labels):
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


# Services lists (a view's per namespace, shared by its successor views) -> the list and
# its non-empty selectors filed by their first (key, value) pair, as (position, selector).
_SERVICE_INDEX: dict[int, tuple[list, dict[tuple[str, str], list[tuple[int, dict]]]]] = {}
_SERVICE_INDEX_KEPT = 256


def _selecting_services(services: list, labels: Mapping[str, str]) -> list[dict[str, str]]:
    """The selectors of the Services selecting a pod with ``labels``, in the Services'
    order (None selects nothing; an empty one, though it selects every pod, adds nothing to
    the merge and is left out): only those filed under one of the pod's labels are tried."""
    if not services or not labels:
        return []
    kept = _SERVICE_INDEX.get(id(services))
    if kept is None or kept[0] is not services:
        index: dict[tuple[str, str], list[tuple[int, dict]]] = {}
        for position, service in enumerate(services):
            selector = service.selector
            if selector:
                index.setdefault(next(iter(selector.items())), []).append((position, selector))
        if len(_SERVICE_INDEX) >= _SERVICE_INDEX_KEPT:
            _SERVICE_INDEX.clear()
        kept = _SERVICE_INDEX[id(services)] = (services, index)
    index = kept[1]
    found = [entry for pair in labels.items() for entry in index.get(pair, ())]
    if len(found) > 1:
        found.sort(key=_FIRST)
    get = labels.get
    return [
        selector
        for _, selector in found
        if all(get(key) == value for key, value in selector.items())
    ]


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


def _matching_per_constraint(
    view, constraints: Sequence[_Constraint], namespace: str
) -> list[dict[str, int]]:
    """``_matching_per_node`` for each constraint, counted once per distinct selector (the
    default constraints share one); each constraint gets its own dict, as carry_pre_score
    adds to them one by one."""
    out: list[dict[str, int]] = []
    for i, c in enumerate(constraints):
        same = next((out[j] for j in range(i) if constraints[j].selector == c.selector), None)
        out.append(_matching_per_node(view, c.selector, namespace) if same is None else dict(same))
    return out


def _has_all_keys(labels: Mapping[str, str], constraints: Sequence[_Constraint]) -> bool:
    """nodeLabelsMatchSpreadConstraints."""
    return all(c.topology_key in labels for c in constraints)


# --- nodes alike: what lets Filter and Score run per domain instead of per node ---


class _OwnName:
    """The value a node class records for the hostname label when it is the node's own name
    (the usual case): each such node is its own hostname domain."""

    __slots__ = ()

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return "<own name>"


_OWN_NAME = _OwnName()


class _NodeClass:
    """Nodes PodTopologySpread cannot tell apart but by name: the same labels (the hostname
    label's value recorded as ``_OWN_NAME`` when it is the node's name) and the same taints.
    ``node`` is one of them, to ask what reads only labels and taints (inclusion policies);
    ``id`` its position in its generation's ``classes`` (what arrays of classes hold)."""

    __slots__ = ("id", "labels", "node")

    def __init__(self, labels: dict, node: Node, generation: _Generation) -> None:
        self.labels = labels
        self.node = node
        self.id = len(generation.classes)
        generation.classes.append(self)


class _Generation:
    """The classes made since the registry was last emptied: by what tells them apart, and
    in order of making (a class's ``id`` is its position: only ever appended to); per
    tuple of topology keys, the classes' combinations of domains (``domains_of``)."""

    __slots__ = ("_domains", "by_key", "classes")

    def __init__(self) -> None:
        self.by_key: dict[tuple, _NodeClass] = {}
        self.classes: list[_NodeClass] = []
        self._domains: dict[tuple[str, ...], _Domains] = {}

    def domains_of(self, keys: tuple[str, ...]) -> _Domains:
        found = self._domains.get(keys)
        if found is None:
            found = self._domains.setdefault(keys, _Domains(keys))
        return found


class _Domains:
    """The distinct values of ``keys`` among a generation's classes (``values``: a tuple per
    combination, None where a label is missing) and each class's combination by class id
    (``of``): what the Filter and the scores read of a node, so computed once per
    combination. Extended as classes are made."""

    __slots__ = ("_index", "_lock", "_of_class", "keys", "values")

    def __init__(self, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.values: list[tuple] = []
        self._index: dict[tuple, int] = {}
        self._of_class = np.empty(0, np.intp)
        self._lock = threading.Lock()

    def of(self, classes: list[_NodeClass]) -> np.ndarray:
        """The combination id of each class of ``classes`` (its generation's), by class id."""
        found = self._of_class
        made = len(classes)
        if len(found) < made:
            with self._lock:
                found = self._of_class
                if len(found) < made:
                    extra = [self._combination(k) for k in classes[len(found) : made]]
                    found = self._of_class = np.concatenate([found, np.array(extra, np.intp)])
        return found

    def _combination(self, k: _NodeClass) -> int:
        values = tuple(map(k.labels.get, self.keys))
        at = self._index.get(values)
        if at is None:
            at = self._index[values] = len(self.values)
            self.values.append(values)
        return at


class _ByIndex:
    """The class id of each node of a view's ``nodes`` list (by view index) and the
    NodeInfos' addresses, for ``generation``'s classes: the list is held, so that no
    address is reused while they are compared."""

    __slots__ = ("addresses", "generation", "ids", "nodes")

    def __init__(
        self, nodes: list, addresses: np.ndarray, ids: np.ndarray, generation: _Generation
    ) -> None:
        self.nodes = nodes
        self.addresses = addresses
        self.ids = ids
        self.generation = generation


class _Classes(dict):
    """NodeInfo -> its _NodeClass, made on first sight (``__missing__``): a NodeInfo's node
    never changes, and the dict holds its keys alive, so an id is never reused for another.
    One per base view, shared by the views derived from it (``_classes_for``), with the
    class ids of the view last asked (``last``, see ``_view_class_ids``). Bounded: emptied,
    and a new generation of classes begun, when it grows past ``LIMIT`` entries (a
    successor view's new NodeInfos add one each); classes already handed out stay whole
    in their generation."""

    LIMIT = 40_000

    def __init__(self) -> None:
        super().__init__()
        self.generation = _Generation()
        self.last: _ByIndex | None = None
        self._lock = threading.Lock()

    def __missing__(self, ni: NodeInfo) -> _NodeClass:
        node = ni.node
        labels = dict(node.labels)
        if labels.get(LABEL_HOSTNAME) == node.name:
            labels[LABEL_HOSTNAME] = _OWN_NAME
        key = (tuple(sorted(labels.items(), key=_FIRST)), node.taints)
        with self._lock:
            if len(self) >= self.LIMIT:
                self.clear()
                self.generation = _Generation()
            generation = self.generation
            cls = generation.by_key.get(key)
            if cls is None:
                cls = generation.by_key[key] = _NodeClass(labels, node, generation)
            self[ni] = cls
        return cls

    def ids_of(self, nodes: Sequence[NodeInfo]) -> tuple[_Generation, np.ndarray]:
        """The class id of each node, one lookup per node, all of one generation (looked up
        again if the registry was emptied meanwhile)."""
        while True:
            generation = self.generation
            ids = np.fromiter(map(_ID, map(self.__getitem__, nodes)), np.intp, len(nodes))
            if self.generation is generation:
                return generation, ids


# The class maps, by the object a view and the views derived from it share (the base view,
# ``images_key``): a map lives as long as that view, and holds no NodeInfo beyond it.
_CLASS_MAPS: weakref.WeakKeyDictionary[object, _Classes] = weakref.WeakKeyDictionary()
_CLASS_MAPS_LOCK = threading.Lock()


def _classes_for(view: SchedulerView | None) -> _Classes:
    """The class map of ``view`` and of the views derived from it (a new one without a
    view)."""
    anchor = getattr(view, "images_key", None)
    if anchor is None:
        return _Classes()
    found = _CLASS_MAPS.get(anchor)
    if found is None:
        with _CLASS_MAPS_LOCK:
            found = _CLASS_MAPS.get(anchor)
            if found is None:
                found = _CLASS_MAPS[anchor] = _Classes()
    return found


_ID = attrgetter("id")
_NAME = attrgetter("name")
_FIRST = itemgetter(0)
# A view's nodes list differing from the one asked last in at most 1/8 of its places (queue
# steps replace a NodeInfo or two) is patched from it; else looked up whole.
_PATCH_SHARE = 8


def _view_class_ids(view: SchedulerView) -> _ByIndex:
    """The class ids of ``view.nodes`` by view index. A queue step's view differs from the
    one before it in a few NodeInfos: the addresses of the two lists are compared in numpy
    and only the NodeInfos that differ are looked up (engine/addresses.py)."""
    classes = _classes_for(view)
    nodes = view.nodes
    if type(nodes) is not list:  # addresses() reads a list's items
        nodes = list(nodes)
    last = classes.last
    if last is not None and last.nodes is nodes and last.generation is classes.generation:
        return last
    found = addresses(nodes)
    generation, ids = classes.generation, None
    if last is not None and last.generation is generation and len(last.ids) == len(found):
        changed = np.flatnonzero(last.addresses != found)
        if len(changed) * _PATCH_SHARE <= len(found):
            ids = last.ids.copy()
            for k in changed.tolist():
                ids[k] = classes[nodes[k]].id
            if classes.generation is not generation:
                ids = None  # emptied meanwhile: the ids kept belong to the old classes
    if ids is None:
        generation, ids = classes.ids_of(nodes)
    found_now = _ByIndex(nodes, found, ids, generation)
    classes.last = found_now
    return found_now


def _class_ids(state: CycleState, nodes: Sequence[NodeInfo]) -> tuple[_Generation, np.ndarray]:
    """The class of each of ``nodes``: their generation and class ids. For many nodes of
    the cycle's view, read by their view indexes (node_indexes, which the cycle gives
    without reading the nodes) from the view's ids, a node not the view's NodeInfo at its
    index (another list's) looked up itself; else one lookup per node."""
    view = state.view
    classes = _classes_for(view)
    if view is None or type(nodes) is not list or len(nodes) < _BY_INDEX_FROM:
        return classes.ids_of(nodes)
    by_index = _view_class_ids(view)
    at = node_indexes(state, nodes)
    if len(at) and int(at.max()) >= len(by_index.ids):
        return classes.ids_of(nodes)
    ids = by_index.ids[at]
    stray = np.flatnonzero(by_index.addresses[at] != addresses(nodes))
    if len(stray):
        generation = classes.generation
        for p in stray.tolist():
            ids[p] = classes[nodes[p]].id
        if generation is not by_index.generation or classes.generation is not generation:
            return classes.ids_of(nodes)
    return by_index.generation, ids


def _combinations(
    state: CycleState, nodes: Sequence[NodeInfo], keys: tuple[str, ...]
) -> tuple[_Domains, np.ndarray, np.ndarray]:
    """The combinations of ``keys``' values (``_Domains``), each node's combination id and
    the distinct ids."""
    generation, ids = _class_ids(state, nodes)
    domains = generation.domains_of(keys)
    combos = domains.of(generation.classes)[ids]
    return domains, combos, _present(combos)


def _present(ids: np.ndarray) -> np.ndarray:
    """The distinct ids among ``ids``, ascending."""
    return np.flatnonzero(np.bincount(ids)) if len(ids) else ids


def _class_reads_pod_labels_only(pod: Pod) -> bool:
    """Whether the inclusion policies' node affinity for ``pod`` answers alike for every node
    of a class: its nodeSelector and required terms read no field and not the hostname."""
    if LABEL_HOSTNAME in pod.node_selector:
        return False
    for term in pod.required_node_affinity or ():
        if term.match_fields:
            return False
        if any(req.key == LABEL_HOSTNAME for req in term.match_expressions):
            return False
    return True


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

    @classmethod
    def of(cls, counts: Mapping[str, int]) -> _CriticalPaths:
        """The paths after ``update`` of every domain in ``counts``' order. Stops once both
        paths hold the global minimum: no later domain can change them then (none is
        smaller, and each is a new value), which spares a pass over every hostname domain."""
        paths = cls()
        if not counts:
            return paths
        least = min(counts.values())
        kept = paths.paths
        for value, num in counts.items():
            paths.update(value, num)
            if kept[1][1] == least and least < _MAX_INT32:
                break
        return paths


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


# own_scores' marker for a key not scored yet (a score kept may be None)
_UNKNOWN = object()


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
    keys: tuple[str, ...] = field(init=False)  # the constraints' topology keys
    # The nodes PreScore ran on, the combinations of the keys' values, each node's and
    # the distinct ones (score_nodes reuses them for that list), and the raw score of a
    # node with no matching pod of its own per combination of domains (None: such nodes
    # are scored alone), valid until a carried cycle changes the counts.
    nodes: Sequence[NodeInfo] | None = None
    domains: _Domains | None = None
    combos: np.ndarray | None = None
    present: np.ndarray | None = None
    group_scores: dict[tuple, int | None] = field(default_factory=dict)
    # the same for the nodes scored alone, per combination and own matching pods
    own_scores: dict[tuple[tuple, tuple], int | None] = field(default_factory=dict)
    # carry_pre_score's memos: the last added pod's labels and whether each constraint's
    # selector matched them; per Node (by id, the Node held) what adding such a pod there
    # does (_carried_effect)
    last_match: tuple[dict[str, str], tuple[bool, ...]] | None = None
    effects: dict[int, tuple[Node, Pod, tuple]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.keys = tuple(c.topology_key for c in self.constraints)
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

    def group_scores_of(self, domains: _Domains, present: np.ndarray) -> list[int | None]:
        """Score's arithmetic for a node of each combination of domains of ``present``
        (ids in ``domains``) with no matching pod of its own (a hostname constraint counts
        0 for it), computed once; None when a domain of it was not counted (its nodes are
        scored alone)."""
        known = self.group_scores
        out: list[int | None] = []
        for values in map(domains.values.__getitem__, present.tolist()):
            if values not in known:
                known[values] = self._group_score(values)
            out.append(known[values])
        return out

    def alone_scores(
        self, nodes: Sequence[NodeInfo], positions: list[int], domains: _Domains, combos: np.ndarray
    ) -> list[tuple[int, int | None]]:
        """(position, raw score) of the nodes at ``positions`` (``alone``): 0 for an ignored
        node, else Score's arithmetic once per combination of domains and of the node's own
        matching pods under the hostname constraints; None where a domain of the node was
        not counted (``score`` tells)."""
        owns = [per_node.get for _, per_node, _, _, _ in self.terms if per_node is not None]
        known, ignored, values = self.own_scores, self.ignored, domains.values
        out: list[tuple[int, int | None]] = []
        for p, combo in zip(positions, combos[positions].tolist(), strict=True):
            name = nodes[p].name
            if name in ignored:
                out.append((p, 0))
                continue
            key = (values[combo], tuple([own(name, 0) for own in owns]))
            score = known.get(key, _UNKNOWN)
            if score is _UNKNOWN:
                score = known[key] = self._group_score(*key)
            out.append((p, score))
        return out

    def _group_score(self, values: tuple, own: tuple = ()) -> int | None:
        """Score's arithmetic for a node with the keys' ``values`` and ``own`` matching pods
        under each hostname constraint, in order (none given: 0)."""
        total = 0.0
        mine = iter(own)
        for value, (_, per_node, counts, weight, skew) in zip(values, self.terms, strict=True):
            own_count = None if per_node is None else next(mine, 0)
            if value is None:
                continue
            count = counts.get(value) if own_count is None else own_count
            if count is None:
                return None
            total += float(count) * weight + skew
        return _go_round(total)

    def counts_changed(self) -> None:
        """A carried cycle changed a domain's count: the scores kept are stale."""
        if self.group_scores:
            self.group_scores.clear()
        if self.own_scores:
            self.own_scores.clear()

    def alone(self) -> set[str]:
        """The nodes Score reads one by one: those with matching pods of their own under a
        hostname constraint, and the ignored ones."""
        names = set(self.ignored)
        for _, per_node, _, _, _ in self.terms:
            if per_node:
                names.update(per_node)
        return names


def _score_domains(
    constraints: Sequence[_Constraint],
    nodes: Sequence[NodeInfo],
    domains: _Domains,
    combos: np.ndarray,
    present: np.ndarray,
    require_all: bool,
) -> tuple[set[str], list[dict[str, int]]]:
    """initPreScoreState's first half, once per combination of the nodes' domains: the
    nodes ignored (lacking a key, when every key is required) and, per constraint but the
    hostname ones, each domain of the other nodes with a zero count (a missing key is the
    domain ""; the order of the domains matters to nothing). ``combos``: the nodes'
    combinations in ``domains``; ``present``: the distinct ones."""
    listed = present.tolist()
    values = list(map(domains.values.__getitem__, listed))
    ignored: set[str] = set()
    if require_all:
        lacking = [i for i, found in zip(listed, values, strict=True) if None in found]
        if lacking:
            marked = np.zeros(len(domains.values), bool)
            marked[lacking] = True
            ignored = {nodes[p].name for p in np.flatnonzero(marked[combos]).tolist()}
            values = [found for found in values if None not in found]
    counts: list[dict[str, int]] = [{} for _ in constraints]
    spread = [i for i, c in enumerate(constraints) if c.topology_key != LABEL_HOSTNAME]
    for found in values:
        for i in spread:
            value = found[i]
            counts[i].setdefault("" if value is None else value, 0)
    return ignored, counts


def _domain_counts(
    pod: Pod,
    constraints: Sequence[_Constraint],
    matching: Sequence[Mapping[str, int]],
    nodes: Sequence[NodeInfo],
) -> list[dict[str, int]]:
    """PreFilter's TpValueToMatchNum node by node (calPreFilterState): per constraint, each
    domain of the nodes carrying every key and passing its inclusion policies, with the
    matching pods of those nodes summed."""
    counts: list[dict[str, int]] = [{} for _ in constraints]
    for ni in nodes:
        node = ni.node
        if not _has_all_keys(node.labels, constraints):
            continue
        for i, c in enumerate(constraints):
            if not c.includes(pod, node):
                continue
            value = node.labels[c.topology_key]
            counts[i][value] = counts[i].get(value, 0) + matching[i].get(ni.name, 0)
    return counts


def _domain_counts_by_class(
    pod: Pod,
    constraints: Sequence[_Constraint],
    matching: Sequence[Mapping[str, int]],
    view: SchedulerView,
) -> list[dict[str, int]] | None:
    """``_domain_counts`` over every node of the view, one node class at a time: the domains
    (in the order of the nodes that first show them) from each class's labels, then the
    matching pods of the few nodes holding some. None where a class does not decide (a
    hostname key: a domain per node; inclusion policies that read a node's name)."""
    keys = tuple(c.topology_key for c in constraints)
    if LABEL_HOSTNAME in keys:
        return None
    every = [c.includes_every_node(pod) for c in constraints]
    if not all(every) and not _class_reads_pod_labels_only(pod):
        return None
    by_index = _view_class_ids(view)
    generation, ids = by_index.generation, by_index.ids
    counts: list[dict[str, int]] = [{} for _ in constraints]
    # per node (by view index) what it is decided by, and per such id the node's domain
    # per constraint, None where the constraint leaves it out (no row: every constraint)
    if all(every):  # the keys' values alone decide: once per combination of them
        domains = generation.domains_of(keys)
        at = domains.of(generation.classes)[ids]
        rows = {c: _row_of_values(domains.values[c]) for c in _first_shown(at)}
    else:
        at = ids
        rows = {
            k.id: _row_of_class(pod, constraints, every, k)
            for k in map(generation.classes.__getitem__, _first_shown(ids))
        }
    for row in rows.values():
        if row is None:
            continue
        for domain_counts, value in zip(counts, row, strict=True):
            if value is not None and value not in domain_counts:
                domain_counts[value] = 0
    by_name = view.by_name
    for i, per_node in enumerate(matching):
        domain_counts = counts[i]
        for name, count in per_node.items():
            ni = by_name.get(name)
            if ni is None:
                continue
            row = rows[int(at[ni.index])]  # the node's class or combination by view index
            if row is not None and row[i] is not None:
                domain_counts[row[i]] += count
    return counts


def _first_shown(ids: np.ndarray) -> list[int]:
    """The distinct ids among ``ids`` in the order of their first place (the domains'
    order follows the nodes')."""
    distinct, first = np.unique(ids, return_index=True)
    return distinct[np.argsort(first)].tolist()


def _row_of_values(values: tuple) -> tuple | None:
    """A node's domain per constraint when every node passes the inclusion policies: the
    keys' values, None (the node counts nowhere) when one is missing."""
    return None if None in values else values


def _row_of_class(
    pod: Pod, constraints: Sequence[_Constraint], every: list[bool], k: _NodeClass
) -> tuple | None:
    """A node's domain per constraint from its class: None where the constraint's inclusion
    policies leave the node out; None for the row when a key is missing."""
    values = tuple(map(k.labels.get, (c.topology_key for c in constraints)))
    if None in values:
        return None
    return tuple(
        value if every[i] or c.includes(pod, k.node) else None
        for i, (c, value) in enumerate(zip(constraints, values, strict=True))
    )


class PodTopologySpread(
    CountsPods, FiltersNodes, CarriesPreScore, ScoresNodes, ScoreExtensions, ReadsWholePods
):
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
        matching = _matching_per_constraint(state.view, constraints, pod.namespace)
        counts = None
        if state.view is not None and nodes is state.view.nodes:
            counts = _domain_counts_by_class(pod, constraints, matching, state.view)
        if counts is None:
            counts = _domain_counts(pod, constraints, matching, nodes)
        paths = [_CriticalPaths.of(domain_counts) for domain_counts in counts]
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

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """``filter`` on every node, decided once per node class (its domains); the nodes
        that are their own hostname domain with matching pods, one by one."""
        s: _PreFilterState | None = state.data.get(self.name)
        if s is None or not s.constraints:
            return [None] * len(nodes)
        keys = tuple(c.topology_key for c in s.constraints)
        domains, combos, present = _combinations(state, nodes, keys)
        verdicts: list[Status | None] = [None] * len(domains.values)
        for i in present.tolist():
            verdicts[i] = self._domains_verdict(state, s, domains.values[i])
        out = list(map(verdicts.__getitem__, combos.tolist()))
        alone: set[str] = set()  # nodes whose own hostname domain has a count
        for c, domain_counts in zip(s.constraints, s.counts, strict=True):
            if c.topology_key == LABEL_HOSTNAME:
                alone.update(value for value, count in domain_counts.items() if count)
        for p in _named_positions(state, nodes, alone):
            out[p] = self.filter(state, nodes[p], nodes[p])
        return out

    def _domains_verdict(
        self, state: CycleState, s: _PreFilterState, values: tuple
    ) -> Status | None:
        """``filter`` on a node with the constraints' keys' ``values`` (None: missing)
        that is its own hostname domain without matching pods (a domain absent from the
        counts counts 0, as in ``filter``)."""
        pod_labels = state.pod.labels
        for i, c in enumerate(s.constraints):
            value = values[i]
            if value is None:
                return Status(UNRESOLVABLE, (ERR_REASON_NODE_LABEL_NOT_MATCH,), self.name)
            self_match = 1 if selector_matches(c.selector, pod_labels) else 0
            count = 0 if value is _OWN_NAME else s.counts[i].get(value, 0)
            skew = count + self_match - s.min_match_num(i, c.min_domains)
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
        keys = tuple(c.topology_key for c in constraints)
        domains, combos, present = _combinations(state, nodes, keys)
        ignored, counts = _score_domains(constraints, nodes, domains, combos, present, require_all)
        weights = []
        for c, domain_counts in zip(constraints, counts, strict=True):
            hostname = c.topology_key == LABEL_HOSTNAME
            size = len(nodes) - len(ignored) if hostname else len(domain_counts)
            weights.append(math.log(float(size + 2)))
        matching = _matching_per_constraint(view, constraints, pod.namespace)
        # Each node of the view adds its matching pods to its domain's count: only the
        # nodes holding some can change a count, so only they are visited (a hostname
        # constraint counts no domain here, Score reads its matching pods per node). A
        # node's values of the keys are its class's (None: the label is missing).
        by_name, class_map = view.by_name, _classes_for(view)
        for i, (c, domain_counts, matching_pods) in enumerate(
            zip(constraints, counts, matching, strict=True)
        ):
            if not domain_counts:
                continue
            ask = not c.includes_every_node(pod)
            for name, count in matching_pods.items():
                ni = by_name.get(name)
                if ni is None:
                    continue
                values = tuple(map(class_map[ni].labels.get, keys))
                if require_all and None in values:
                    continue
                if ask and not c.includes(pod, ni.node):
                    continue
                value = values[i]
                if value is None:
                    value = ""
                if value in domain_counts:
                    domain_counts[value] += count
        found = _PreScoreState(constraints, ignored, counts, weights, matching)
        found.nodes, found.domains, found.combos, found.present = nodes, domains, combos, present
        state.write(_SCORE_KEY, found)
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
        pod = added.pod
        if pod is None or pod.deletion_timestamp is not None:
            return _NOTHING
        if pod.namespace != state.pod.namespace:
            return _NOTHING
        node = ni.node
        last, kept = s.last_match, s.effects.get(id(node))
        if (
            kept is not None
            and last is not None
            and last[0] is pod.labels
            and kept[0] is node
            and kept[1] is state.pod
        ):
            changed, terms = kept[2]  # the last replica's labels, pod and node
        else:
            require_all = bool(state.pod.topology_spread_constraints) or not (self.system_defaulted)
            changed, terms = _carried_effect(s, pod, state.pod, node, require_all)
        name = ni.name
        counted = False
        for i, value, counts_it in terms:
            per_node = s.matching[i]
            per_node[name] = per_node.get(name, 0) + 1
            if counts_it:
                domain_counts = s.counts[i]
                if value in domain_counts:
                    domain_counts[value] += 1
                    counted = True
        if counted:
            s.counts_changed()
        return changed

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

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | np.ndarray:
        """``score`` on every node, computed once per combination of domains; the nodes with
        matching pods of their own under a hostname constraint, and the ignored ones, one
        by one. An int64 column taken from the combinations' scores by the nodes'
        combination ids (a list only where a score outgrows int64)."""
        s: _PreScoreState | None = state.data.get(_SCORE_KEY)
        if s is None:
            return np.zeros(len(nodes), np.int64)
        if nodes is s.nodes and s.domains is not None:
            domains, combos, present = s.domains, s.combos, s.present
        else:
            domains, combos, present = _combinations(state, nodes, s.keys)
        scores = s.group_scores_of(domains, present)  # type: ignore[arg-type]
        alone = _named_positions(state, nodes, s.alone())
        listed = present.tolist()  # type: ignore[union-attr]
        if None in scores:
            unknown = np.zeros(len(domains.values), bool)  # type: ignore[union-attr]
            unknown[[i for i, score in zip(listed, scores, strict=True) if score is None]] = True
            alone += np.flatnonzero(unknown[combos]).tolist()
            scores = [score or 0 for score in scores]
        try:
            by_combo = np.zeros(len(domains.values), np.int64)  # type: ignore[union-attr]
            by_combo[listed] = scores
            out: list[int] | np.ndarray = by_combo[combos]
        except OverflowError:
            by_id = dict(zip(listed, scores, strict=True))
            out = list(map(by_id.__getitem__, combos.tolist()))  # type: ignore[union-attr]
        for p, score in s.alone_scores(nodes, alone, domains, combos):  # type: ignore[arg-type]
            out[p] = self.score(state, nodes[p], nodes[p]) if score is None else score
        return out

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        """Ignored nodes score 0 and bound neither the lowest nor the highest score; on an
        int64 column in numpy (``_normalize_column``), on a list once per distinct score
        of the others."""
        s: _PreScoreState | None = state.data.get(_SCORE_KEY)
        if s is None:
            return
        ignored_at = _named_positions(state, nodes, s.ignored)
        if isinstance(scores, np.ndarray):
            _normalize_column(scores, ignored_at)
            return
        if not ignored_at:
            _normalize_by_value(scores)
            return
        kept = [True] * len(scores)
        for p in ignored_at:
            kept[p] = False
        counted = list(compress(scores, kept))
        low, high = min(counted, default=2**63 - 1), max(0, max(counted, default=0))
        if high == 0:
            normalized = dict.fromkeys(counted, MAX_NODE_SCORE)
        else:
            top, most = high + low, MAX_NODE_SCORE
            normalized = {v: (top - v) * most // high for v in set(counted)}
        scores[:] = map(normalized.get, scores)  # type: ignore[arg-type]
        for p in ignored_at:
            scores[p] = 0


def _named_positions(
    state: CycleState, nodes: Sequence[NodeInfo], names: Collection[str]
) -> list[int]:
    """The positions in ``nodes`` (the view's) of the nodes named in ``names``, in order. For
    many nodes and fewer names: the names looked up in the view, their nodes marked by view
    index and read at the nodes' indexes (node_indexes, which the cycle gives without
    reading the nodes); else a pass over the nodes' names."""
    if not names:
        return []
    view = state.view
    if view is None or len(nodes) < _BY_INDEX_FROM or len(names) >= len(nodes):
        return list(compress(range(len(nodes)), map(names.__contains__, map(_NAME, nodes))))
    by_name = view.by_name
    named = np.zeros(len(view.nodes), bool)
    named[[ni.index for ni in map(by_name.get, names) if ni is not None]] = True
    return np.flatnonzero(named[node_indexes(state, nodes)]).tolist()


# Below this many nodes _named_positions reads the nodes' names: numpy's fixed costs would
# outweigh the pass (score_groups normalizes over a few nodes per replica).
_BY_INDEX_FROM = 100


def _normalize_by_value(scores: list[int]) -> None:
    """NormalizeScore where no node is ignored: the arithmetic done once per distinct raw
    score (the nodes of a domain share one), mapped onto every node."""
    if not scores:
        return
    values = set(scores)
    low, high = min(values), max(0, max(values))
    if high == 0:
        scores[:] = [MAX_NODE_SCORE] * len(scores)
        return
    top, most = high + low, MAX_NODE_SCORE
    normalized = {v: (top - v) * most // high for v in values}
    scores[:] = map(normalized.__getitem__, scores)


def _normalize_column(scores: np.ndarray, ignored_at: list[int]) -> None:
    """NormalizeScore on an int64 column (scores within ±2**53: no product wraps): the
    nodes not ignored scaled by their lowest and highest score, the ignored ones 0."""
    counted = scores
    if ignored_at:
        kept = np.ones(len(scores), bool)
        kept[ignored_at] = False
        counted = scores[kept]
    if len(counted):
        low, high = int(counted.min()), max(0, int(counted.max()))
        scaled = (high + low - counted) * MAX_NODE_SCORE // high if high else MAX_NODE_SCORE
        if ignored_at:
            scores[kept] = scaled
        else:
            scores[:] = scaled
    if ignored_at:
        scores[ignored_at] = 0


_NOTHING: frozenset[tuple[str, str]] = frozenset()
_NO_EFFECT: tuple[frozenset[tuple[str, str]], tuple] = (_NOTHING, ())


def _carried_effect(
    s: _PreScoreState, pod: Pod, incoming: Pod, node: Node, require_all: bool
) -> tuple[frozenset[tuple[str, str]], tuple[tuple[int, str, bool], ...]]:
    """What counting ``pod`` (of the incoming pod's namespace) on ``node`` does to the
    carried state: the domains (key, value) it changes, and per constraint whose selector
    matches it, (the constraint, the node's domain, whether the domain's count takes it:
    the node carries every key when all are required, and passes the constraint's
    inclusion policies for ``incoming``). Kept per Node while the pods carried have the
    same labels and the incoming pod the same fields the policies read (a template's
    replicas share both)."""
    matches = _carried_matches(s, pod)
    if not any(matches):
        return _NO_EFFECT
    fields = _fields(incoming)
    kept = s.effects.get(id(node))
    if kept is not None and kept[0] is node and (kept[1] is incoming or _fields(kept[1]) == fields):
        s.effects[id(node)] = (node, incoming, kept[2])
        return kept[2]
    labels = node.labels
    counted = not require_all or _has_all_keys(labels, s.constraints)
    changed: set[tuple[str, str]] = set()
    terms = []
    for i, c in enumerate(s.constraints):
        if not matches[i]:
            continue
        value = labels.get(c.topology_key, "")
        changed.add((c.topology_key, value))
        terms.append((i, value, counted and c.includes(incoming, node)))
    effect = (frozenset(changed), tuple(terms))
    if len(s.effects) >= 4096:
        s.effects.clear()
    s.effects[id(node)] = (node, incoming, effect)
    return effect


def _fields(incoming: Pod) -> tuple:
    """What the inclusion policies read of the incoming pod, and whether every key is
    required (which reads its constraints)."""
    return (
        incoming.node_selector,
        incoming.required_node_affinity,
        incoming.tolerations,
        bool(incoming.topology_spread_constraints),
    )


def _carried_matches(s: _PreScoreState, pod: Pod) -> tuple[bool, ...]:
    """Whether each constraint's (non-empty) selector matches ``pod``'s labels: kept for the
    last pod's labels, as the replicas of a template carry the same ones (other labels
    drop the effects kept per node)."""
    last = s.last_match
    labels = pod.labels
    if last is not None and (last[0] is labels or last[0] == labels):
        return last[1]
    found = tuple(
        c.selector is not None
        and bool(c.selector.match_labels or c.selector.match_expressions)
        and selector_matches(c.selector, labels)
        for c in s.constraints
    )
    s.last_match = (labels, found)
    s.effects.clear()
    return found


def _go_round(x: float) -> int:
    """math.Round: half away from zero."""
    t = math.trunc(x)
    if abs(x - t) >= 0.5:
        t += 1 if x > 0 else -1
    return int(t)
