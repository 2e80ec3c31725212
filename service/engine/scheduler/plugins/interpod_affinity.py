"""InterPodAffinity (kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity,
v1.35: filtering.go, scoring.go; framework types.go AffinityTerm): PreFilter with
AddPod/RemovePod, Filter, PreScore, Score and NormalizeScore.

Terms are counted per topology pair (the node label ``topologyKey`` and its value):

* existing pods' required anti-affinity terms that match the incoming pod;
* the incoming pod's required affinity terms, on nodes whose pods match *all* of them;
* the incoming pod's required anti-affinity terms, per matching pod.

Filter then rejects a node whose pairs hold no pod the affinity asks for
(UnschedulableAndUnresolvable, unless no pod anywhere matches and the pod matches its own
terms: the first pod of a group), one the anti-affinity forbids, or one where an existing pod's
anti-affinity forbids the incoming pod (both Unschedulable: preemption may help).

A term's namespaces are its ``namespaces``, or the pod's own when it names none and has no
``namespaceSelector``; the incoming pod's ``namespaceSelector`` is resolved against the
snapshot's Namespaces once (``mergeAffinityTermNamespacesIfNotEmpty``), an existing pod's is
matched against the labels of the incoming pod's namespace. ``matchLabelKeys`` and
``mismatchLabelKeys`` are not read: the API server merges them into the selector when it
creates a pod, and the scheduler reads the selector.

What a cycle costs (issue 27: a drain's cycle filters and scores 5,000 nodes) is kept off the
nodes and the existing pods. The existing pods' terms are grouped once per view (carried
from step to step by a queue run, ``existing_terms_after``) and each group is filed under
the namespace and a label value a matching pod must carry (``TermGroups``): a cycle matches
only the groups its pod can meet. Filter and Score work per topology domain: the nodes
grouped by a label's value (``_Topology``, built per label key, shared by every view whose
nodes carry the same labels index by index), the rejected or scored domains' nodes found
from the domains' members and each node's answer then read by its index
(``filter_nodes``, ``score_nodes``: the tests hold them to Filter and Score node by node).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import compress, repeat
from operator import add, attrgetter, is_not

import msgspec
import numpy as np

from service.engine.labels import selector_matches
from service.engine.objects import LabelSelector, Node, Pod, PodAffinityTerm
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CountsPods,
    CycleState,
    FiltersNodes,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    PreScorePlugin,
    ReadsWholePods,
    ScoreExtensions,
    ScoresNodes,
    Status,
)
from service.engine.scheduler.profile import InterPodAffinityArgs
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.version import EngineSettings

__all__ = [
    "ERR_REASON_AFFINITY",
    "ERR_REASON_ANTI_AFFINITY",
    "ERR_REASON_EXISTING_ANTI_AFFINITY",
    "AffinityTerm",
    "InterPodAffinity",
    "PodTerms",
    "existing_term_groups",
    "existing_terms_after",
    "matching_groups",
    "pod_terms",
]

ERR_REASON_AFFINITY = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY = "node(s) didn't satisfy existing pods anti-affinity rules"

_EVERYTHING = LabelSelector()


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """framework.AffinityTerm: namespaces, selector (None selects nothing), topology key,
    namespace selector (None selects nothing), and the weight of a preferred term."""

    namespaces: frozenset[str]
    selector: LabelSelector | None
    topology_key: str
    namespace_selector: LabelSelector | None
    weight: int
    # What decides whether the term matches a given pod, hashable: equal terms (the pods of
    # one workload) are matched once per scheduling cycle.
    key: tuple = field(compare=False)

    def matches(self, pod: Pod, namespace_labels: Mapping[str, str] | None) -> bool:
        """AffinityTerm.Matches: the pod is in the term's namespaces (or its namespace's
        labels match the namespace selector) and its labels match the selector."""
        if pod.namespace in self.namespaces or selector_matches(
            self.namespace_selector, namespace_labels or {}
        ):
            return selector_matches(self.selector, pod.labels)
        return False


def _term(pod: Pod, term: PodAffinityTerm, weight: int = 0) -> AffinityTerm:
    """newAffinityTerm / getNamespacesFromPodAffinityTerm."""
    if not term.namespaces and term.namespace_selector is None:
        namespaces = frozenset((pod.namespace,))
    else:
        namespaces = frozenset(term.namespaces)
    return AffinityTerm(
        namespaces,
        term.label_selector,
        term.topology_key,
        term.namespace_selector,
        weight,
        _term_key(namespaces, term.label_selector, term.namespace_selector),
    )


def _selector_key(selector: LabelSelector | None) -> tuple | None:
    if selector is None:
        return None
    return (tuple(sorted(selector.match_labels.items())), selector.match_expressions)


def _term_key(
    namespaces: frozenset[str], selector: LabelSelector | None, ns_selector: LabelSelector | None
) -> tuple:
    return (namespaces, _selector_key(selector), _selector_key(ns_selector))


@dataclass(frozen=True, slots=True)
class PodTerms:
    """A pod's affinity terms as framework.PodInfo holds them."""

    required_affinity: tuple[AffinityTerm, ...]
    required_anti_affinity: tuple[AffinityTerm, ...]
    preferred_affinity: tuple[AffinityTerm, ...]
    preferred_anti_affinity: tuple[AffinityTerm, ...]


_NO_TERMS = PodTerms((), (), (), ())

# pod_terms' memo: the encoded namespace and four term lists (everything _term reads) -> the
# pod's PodTerms. The pods of one workload carry equal terms: parsed once, not once per pod.
_TERMS_MEMO: dict[bytes, PodTerms] = {}
_TERMS_MEMO_KEPT = 8192
_ENCODE = msgspec.msgpack.Encoder().encode


def pod_terms(pod: Pod) -> PodTerms:
    """The pod's terms (framework.PodInfo's), memoized on exactly what they are made of:
    the pod's namespace and its four lists of terms, encoded (equal bytes, equal terms)."""
    if not (
        pod.pod_affinity_required
        or pod.pod_anti_affinity_required
        or pod.pod_affinity_preferred
        or pod.pod_anti_affinity_preferred
    ):
        return _NO_TERMS
    key = _ENCODE(
        (
            pod.namespace,
            pod.pod_affinity_required,
            pod.pod_anti_affinity_required,
            pod.pod_affinity_preferred,
            pod.pod_anti_affinity_preferred,
        )
    )
    found = _TERMS_MEMO.get(key)
    if found is None:
        if len(_TERMS_MEMO) >= _TERMS_MEMO_KEPT:
            _TERMS_MEMO.clear()
        found = _TERMS_MEMO[key] = _parse_terms(pod)
    return found


def _parse_terms(pod: Pod) -> PodTerms:
    """pod_terms without the memo (the tests hold the memo to it)."""
    return PodTerms(
        tuple(_term(pod, t) for t in pod.pod_affinity_required),
        tuple(_term(pod, t) for t in pod.pod_anti_affinity_required),
        tuple(_term(pod, w.term, w.weight) for w in pod.pod_affinity_preferred),
        tuple(_term(pod, w.term, w.weight) for w in pod.pod_anti_affinity_preferred),
    )


def _merge_namespaces(
    term: AffinityTerm, namespaces: Mapping[str, Mapping[str, str]]
) -> AffinityTerm:
    """mergeAffinityTermNamespacesIfNotEmpty: a namespace selector other than "everything"
    becomes the names of the snapshot's Namespaces it selects (and then selects nothing)."""
    selector = term.namespace_selector
    if selector is None or selector == _EVERYTHING:
        return term  # nothing to merge: the term as it is
    names = term.namespaces | {
        n for n, labels in namespaces.items() if selector_matches(selector, labels)
    }
    return replace(term, namespaces=frozenset(names), namespace_selector=None)


Pair = tuple[str, str]


def _add(counts: dict[Pair, int], node: Node, key: str, value: int) -> None:
    """topologyToMatchedTermCount.update: only on nodes carrying the key; zero entries go."""
    label = node.labels.get(key)
    if label is None:
        return
    pair = (key, label)
    total = counts.get(pair, 0) + value
    if total:
        counts[pair] = total
    else:
        counts.pop(pair, None)


def _matches_all(terms: Sequence[AffinityTerm], pod: Pod) -> bool:
    """podMatchesAllAffinityTerms (false for no terms)."""
    return bool(terms) and all(t.matches(pod, None) for t in terms)


class _PreFilterState:
    """preFilterState: the incoming pod's merged required terms, its namespace's labels and
    the three counts; cloned for each node copy, updated by AddPod / RemovePod. A clone
    shares the counts until either side changes them (``shared``: copy before a change),
    since most clones (a node's nominated pods) change nothing."""

    __slots__ = (
        "affinity",
        "affinity_counts",
        "anti",
        "anti_counts",
        "existing_anti",
        "ns_labels",
        "pod",
        "shared",
    )

    def __init__(self, pod, affinity, anti, ns_labels, existing_anti, affinity_counts, anti_counts):
        self.pod = pod
        self.affinity = affinity
        self.anti = anti
        self.ns_labels = ns_labels
        self.existing_anti = existing_anti
        self.affinity_counts = affinity_counts
        self.anti_counts = anti_counts
        self.shared = False

    def clone(self) -> _PreFilterState:
        other = _PreFilterState(
            self.pod, self.affinity, self.anti, self.ns_labels,
            self.existing_anti, self.affinity_counts, self.anti_counts,
        )  # fmt: skip
        self.shared = other.shared = True
        return other

    def _own(self) -> None:
        """Copy the counts this state shares with a clone before changing them."""
        if self.shared:
            self.existing_anti = dict(self.existing_anti)
            self.affinity_counts = dict(self.affinity_counts)
            self.anti_counts = dict(self.anti_counts)
            self.shared = False

    def update_with_pod(self, other: Pod, terms: PodTerms, node: Node, multiplier: int) -> None:
        """preFilterState.updateWithPod."""
        for t in terms.required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                self._own()
                _add(self.existing_anti, node, t.topology_key, multiplier)
        if _matches_all(self.affinity, other):
            self._own()
            for t in self.affinity:
                _add(self.affinity_counts, node, t.topology_key, multiplier)
        for t in self.anti:
            if t.matches(other, None):
                self._own()
                _add(self.anti_counts, node, t.topology_key, multiplier)


class InterPodAffinity(
    CountsPods, FiltersNodes, PreScorePlugin, ScoreExtensions, ScoresNodes, ReadsWholePods
):
    name = "InterPodAffinity"

    def __init__(
        self, args: InterPodAffinityArgs | None = None, *, settings: EngineSettings
    ) -> None:
        super().__init__(args or InterPodAffinityArgs(), settings=settings)

    # --- helpers over the view ---

    @staticmethod
    def _namespaces(state: CycleState) -> Mapping[str, Mapping[str, str]]:
        return state.view.namespace_labels

    def _terms(self, state: CycleState, pi: PodInfo) -> PodTerms:
        return state.view.pod_terms(pi, pod_terms)

    # --- PreFilter and its extensions ---

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        pod = state.pod
        namespaces = self._namespaces(state)
        own = pod_terms(pod)
        affinity = tuple(_merge_namespaces(t, namespaces) for t in own.required_affinity)
        anti = tuple(_merge_namespaces(t, namespaces) for t in own.required_anti_affinity)
        ns_labels = namespaces.get(pod.namespace, {})
        existing: dict[Pair, int] = {}
        view = state.view
        groups = view.derived(EXISTING_ANTI_TERMS, lambda: _existing_anti_terms(view))
        for _, counts, _ in matching_groups(groups, pod, ns_labels):
            for pair, count in counts.items():
                existing[pair] = existing.get(pair, 0) + count
        affinity_counts: dict[Pair, int] = {}
        anti_counts: dict[Pair, int] = {}
        if affinity:
            for ni, other in _term_pods(view, affinity[0]):
                if _matches_all(affinity, other):
                    for t in affinity:
                        _add(affinity_counts, ni.node, t.topology_key, 1)
        for t in anti:
            for ni, other in _term_pods(view, t):
                if t.matches(other, None):
                    _add(anti_counts, ni.node, t.topology_key, 1)
        if not existing and not affinity and not anti:
            return None, SKIPPED
        state.write(
            self.name,
            _PreFilterState(pod, affinity, anti, ns_labels, existing, affinity_counts, anti_counts),
        )
        return None, OK

    def add_pod(self, state: CycleState, added: PodInfo, ni: NodeInfo) -> None:
        s: _PreFilterState = state.data[self.name]
        s.update_with_pod(added.pod, self._terms(state, added), ni.node, 1)

    def remove_pod(self, state: CycleState, removed: PodInfo, ni: NodeInfo) -> None:
        s: _PreFilterState = state.data[self.name]
        s.update_with_pod(removed.pod, self._terms(state, removed), ni.node, -1)

    def reads_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        """The other pods' labels and terms are read when the pod has affinity terms or a pod
        in the view has (anti-)affinity terms of its own."""
        return bool(
            pod.pod_affinity_required
            or pod.pod_anti_affinity_required
            or pod.pod_affinity_preferred
            or pod.pod_anti_affinity_preferred
            or view.inter_pod_affinity_in_use
        )

    def counted_pods(self, state: CycleState) -> frozenset[int] | None:
        """The ids of the view's pods whose AddPod / RemovePod may change the state: those
        whose required anti-affinity matches the incoming pod, those matching all its
        affinity terms or one of its anti-affinity terms; None when a term's selector names
        no label value. Not upstream: preemption reprieves on sums on a node none of whose
        potential victims is among them."""
        s: _PreFilterState = state.data[self.name]
        view = state.view
        found: set[int] = set()
        groups = view.derived(EXISTING_ANTI_TERMS, lambda: _existing_anti_terms(view))
        for _, _, pods in matching_groups(groups, s.pod, s.ns_labels):
            found.update(pods)
        if s.affinity:
            candidates = _term_candidates(view, s.affinity[0])
            if candidates is None:
                return None
            found.update(id(pi) for pi in candidates if _matches_all(s.affinity, pi.pod))
        for t in s.anti:
            candidates = _term_candidates(view, t)
            if candidates is None:
                return None
            found.update(id(pi) for pi in candidates if t.matches(pi.pod, None))
        return frozenset(found)

    # --- Filter ---

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        s: _PreFilterState | None = state.data.get(self.name)
        if s is None:
            return None
        labels = ni.node.labels
        if not _satisfies_affinity(s, labels):
            return Status(UNRESOLVABLE, (ERR_REASON_AFFINITY,), self.name)
        if s.anti_counts:
            for t in s.anti:
                value = labels.get(t.topology_key)
                if value is not None and s.anti_counts.get((t.topology_key, value), 0) > 0:
                    return Status(UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY,), self.name)
        if s.existing_anti:
            for pair in labels.items():
                if s.existing_anti.get(pair, 0) > 0:
                    return Status(UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY,), self.name)
        return None

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Filter on every node at once, per topology domain: the nodes passing the pod's
        affinity, and those in a domain its anti-affinity or an existing pod's forbids, found
        from the domains' members; each node then takes its verdict by its index, in
        Filter's order of checks (affinity, anti-affinity, existing anti-affinity)."""
        s: _PreFilterState | None = state.data.get(self.name)
        if s is None or not nodes:
            return [None] * len(nodes)
        topology = _topology(state.view)
        passing = _passing_affinity(s, topology) if s.affinity else None
        anti = _members(topology, (p for p, c in s.anti_counts.items() if c > 0),
                        {t.topology_key for t in s.anti})  # fmt: skip
        existing = _members(topology, (p for p, c in s.existing_anti.items() if c > 0), None)
        if passing is None:
            default = None
            verdicts: dict[int, Status | None] = dict.fromkeys(existing, _EXISTING_ANTI)
            verdicts.update(dict.fromkeys(anti, _ANTI))
        else:
            default = _AFFINITY
            verdicts = dict.fromkeys(passing)
            verdicts.update(dict.fromkeys(existing & passing, _EXISTING_ANTI))
            verdicts.update(dict.fromkeys(anti & passing, _ANTI))
        if not verdicts:
            return [default] * len(nodes)
        return list(map(verdicts.get, map(_INDEX, nodes), repeat(default)))

    # --- PreScore, Score, NormalizeScore ---

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """The topology scores every existing pod contributes (scoring.go PreScore and
        processExistingPod); Skip when there are none."""
        pod = state.pod
        own = pod_terms(pod)
        has_constraints = bool(own.preferred_affinity or own.preferred_anti_affinity)
        args: InterPodAffinityArgs = self.args
        if args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return SKIPPED
        namespaces = self._namespaces(state)
        preferred = tuple(_merge_namespaces(t, namespaces) for t in own.preferred_affinity)
        preferred_anti = tuple(
            _merge_namespaces(t, namespaces) for t in own.preferred_anti_affinity
        )
        ns_labels = namespaces.get(pod.namespace, {})
        view = state.view
        scores: dict[str, dict[str, int]] = {}
        hard = args.hard_pod_affinity_weight

        for terms, sign in ((preferred, 1), (preferred_anti, -1)):
            for t in terms:
                for ni, other in _term_pods(view, t):
                    if t.matches(other, None):
                        _score(scores, ni.node, t.topology_key, sign * t.weight)
        # Existing pods' terms against the incoming pod (processExistingPod's last three
        # steps), from the view's terms grouped by what decides a match: each distinct term
        # is matched once, its contributions added together.
        groups = view.derived(EXISTING_TERMS, lambda: _existing_terms(view))
        for _, contributions in matching_groups(groups, pod, ns_labels):
            for (key, value), (weight, preferred, required) in contributions.items():
                if hard > 0:
                    weight += hard * required
                elif not preferred:
                    continue  # only required terms, and no hardPodAffinityWeight
                by_value = scores.setdefault(key, {})
                by_value[value] = by_value.get(value, 0) + weight
        if not scores:
            return SKIPPED
        state.write(self.name + "/score", scores)
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        scores: dict[str, dict[str, int]] | None = state.data.get(self.name + "/score")
        if scores is None:  # PreScore disabled: computed here
            self.pre_score(state, ())
            scores = state.data.get(self.name + "/score") or {}
            state.write(self.name + "/score", scores)
        labels = ni.node.labels
        total = 0
        for key, by_value in scores.items():
            value = labels.get(key)
            if value is not None:
                total += by_value.get(value, 0)
        return total

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int]:
        """Score on every node at once: per topology key, each domain's topology score
        (PreScore's) spread to the domain's nodes by their index, the keys' columns added."""
        scores: dict[str, dict[str, int]] | None = state.data.get(self.name + "/score")
        if scores is None:  # PreScore disabled: computed here, as Score does
            self.pre_score(state, ())
            scores = state.data.get(self.name + "/score") or {}
            state.write(self.name + "/score", scores)
        if not scores or not nodes:
            return [0] * len(nodes)
        topology = _topology(state.view)
        indexes = [ni.index for ni in nodes]
        total: list[int] | None = None
        for key, by_value in scores.items():
            domains = topology.domains(key)
            per_domain = [0] * (len(domains.ids) + 1)  # the last: the nodes without the key
            ids = domains.ids
            for value, score in by_value.items():
                d = ids.get(value)
                if d is not None:
                    per_domain[d] = score
            of_node = indexes if domains.one_per_node else map(domains.of_node.__getitem__, indexes)
            column = list(map(per_domain.__getitem__, of_node))
            total = column if total is None else list(map(add, total, column))
        return total  # type: ignore[return-value]

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        """Min-max normalization onto 0..100 (float64, truncated): on an int64 column in
        numpy (scores within ±2**53: each difference converts exactly), on a list once per
        distinct score (the nodes of a domain share one)."""
        if not len(scores):
            return
        column = isinstance(scores, np.ndarray)
        low, high = (int(scores.min()), int(scores.max())) if column else (min(scores), max(scores))
        spread = high - low
        if spread <= 0:
            scores[:] = 0 if column else [0] * len(scores)
        elif column:
            ratio = (scores - low).astype(np.float64) / float(spread)
            scores[:] = (float(MAX_NODE_SCORE) * ratio).astype(np.int64)
        else:
            scores[:] = map(_Scaled(low, spread).__getitem__, scores)


class TermGroups(dict):
    """Existing pods' terms grouped by the term's key (what decides a match), as a dict, and
    ``hooks``: where a pod finds the groups whose term can match it, so that a cycle matches
    the few groups of its namespace and labels instead of every group (``matching_groups``).

    A group's hook, from its key alone: ``()`` for a term with a namespace selector (any
    namespace may match: always tried); else per namespace of the term, ``(namespace, key,
    value)`` for the term's smallest ``matchLabels`` pair, or one per value of its first
    ``In`` requirement (a pod without that value cannot match), else ``(namespace,)``; a
    nil selector matches nothing and has none."""

    __slots__ = ("hooks",)

    def __init__(self) -> None:
        super().__init__()
        self.hooks: dict[tuple, set[tuple]] = {}

    def add_group(self, t: AffinityTerm, entry: tuple) -> None:
        self[t.key] = entry
        for hook in _hooks(t):
            found = self.hooks.get(hook)
            if found is None:
                self.hooks[hook] = {t.key}
            else:
                found.add(t.key)

    def drop_group(self, t: AffinityTerm) -> None:
        del self[t.key]
        for hook in _hooks(t):
            found = self.hooks.get(hook)
            if found is not None:
                found.discard(t.key)
                if not found:
                    del self.hooks[hook]

    def copied(self, entry_copy) -> TermGroups:
        """A copy, each group's entry copied by ``entry_copy``."""
        out = TermGroups()
        for key, entry in self.items():
            out[key] = entry_copy(entry)
        out.hooks = {hook: set(keys) for hook, keys in self.hooks.items()}
        return out


def _hooks(t: AffinityTerm) -> tuple[tuple, ...]:
    """Where TermGroups files a group of ``t``'s key (see TermGroups)."""
    selector = t.selector
    if selector is None:
        return ()
    if t.namespace_selector is not None:
        return ((),)
    if selector.match_labels:
        pairs: Iterable[tuple[str, str]] = (min(selector.match_labels.items()),)
    else:
        first = next((r for r in selector.match_expressions if r.operator == "In"), None)
        if first is None:
            return tuple((ns,) for ns in sorted(t.namespaces))
        pairs = [(first.key, v) for v in sorted(set(first.values))]
    return tuple((ns, k, v) for ns in sorted(t.namespaces) for k, v in pairs)


def matching_groups(
    groups: TermGroups, pod: Pod, ns_labels: Mapping[str, str] | None
) -> Iterator[tuple]:
    """The entries of ``groups`` whose term matches ``pod`` (AffinityTerm.matches with the
    labels of the pod's namespace), each once, found through the hooks; the same entries as
    matching every group's term (the tests hold it to that)."""
    hooks = groups.hooks
    namespace = pod.namespace
    keys: list[tuple] = []
    for hook in ((), (namespace,)):
        found = hooks.get(hook)
        if found:
            keys.extend(found)
    for key, value in pod.labels.items():
        found = hooks.get((namespace, key, value))
        if found:
            keys.extend(found)
    for key in dict.fromkeys(keys):
        entry = groups.get(key)
        if entry is not None and entry[0].matches(pod, ns_labels):
            yield entry


AntiGroups = TermGroups  # key -> (term, {pair: count}, [pod ids])
ScoreGroups = TermGroups  # key -> (term, {pair: [weights, preferred, required]})
EXISTING_TERMS = "InterPodAffinity"  # SchedulerView.derived keys of the groups below
EXISTING_ANTI_TERMS = "InterPodAffinity/anti"


def _existing_anti_terms(view) -> AntiGroups:
    """Existing pods' required anti-affinity terms grouped by the term's key: a representative
    term, per (topology key, value of the pod's node) how many terms of the group sit there,
    and the ids of the pods holding them. Nodes without the term's key count nothing
    (topologyToMatchedTermCount.update)."""
    groups = AntiGroups()
    for ni in view.nodes_with_required_anti_affinity():
        labels = ni.node.labels
        for pi in view.pods_with_required_anti_affinity(ni):
            _count_anti_terms(groups, pi, view.pod_terms(pi, pod_terms), labels, 1)
    return groups


def _count_anti_terms(
    groups: AntiGroups, pi: PodInfo, terms: PodTerms, labels: Mapping[str, str], sign: int
) -> None:
    """Count (sign 1) or uncount (-1) one pod's required anti-affinity terms; an uncounted
    pair, and a group left without pods, go as if never counted."""
    for t in terms.required_anti_affinity:
        entry = groups.get(t.key)
        if entry is None:
            entry = (t, {}, [])
            groups.add_group(t, entry)
        _, counts, pods = entry
        if sign > 0:
            pods.append(id(pi))
        else:
            pods.remove(id(pi))
        value = labels.get(t.topology_key)
        if value is not None:
            pair = (t.topology_key, value)
            count = counts.get(pair, 0) + sign
            if count:
                counts[pair] = count
            else:
                del counts[pair]
        if not pods:
            groups.drop_group(entry[0])


def _existing_terms(view) -> ScoreGroups:
    """Every existing pod's scoring terms, grouped by the term's key: a representative term
    and, per (topology key, value of the pod's node), [the preferred weights' sum (+affinity,
    -anti-affinity), how many preferred terms, how many required affinity terms]. Nodes
    without labels, or without the term's key, contribute nothing (processTerm)."""
    groups = ScoreGroups()
    for ni in view.nodes_with_affinity():
        labels = ni.node.labels
        if not labels:
            continue
        for pi in view.pods_with_affinity(ni):
            _count_terms(groups, view.pod_terms(pi, pod_terms), labels, 1)
    return groups


def _count_terms(
    groups: ScoreGroups, terms: PodTerms, labels: Mapping[str, str], sign: int
) -> None:
    """Count (sign 1) or uncount (-1) one pod's scoring terms on a node with ``labels``; a
    pair no term counts any more, and a group without pairs, go as if never counted."""
    if not labels:
        return
    for group, kind in (
        (terms.required_affinity, 0),
        (terms.preferred_affinity, 1),
        (terms.preferred_anti_affinity, -1),
    ):
        for t in group:
            value = labels.get(t.topology_key)
            if value is None:
                continue
            entry = groups.get(t.key)
            if entry is None:
                entry = (t, {})
                groups.add_group(t, entry)
            pair = (t.topology_key, value)
            sums = entry[1].get(pair)
            if sums is None:
                sums = entry[1][pair] = [0, 0, 0]
            if kind:
                sums[0] += sign * kind * t.weight
                sums[1] += sign
            else:
                sums[2] += sign
            if not sums[1] and not sums[2]:
                del entry[1][pair]
                if not entry[1]:
                    groups.drop_group(entry[0])


def existing_term_groups(view: SchedulerView) -> tuple[AntiGroups, ScoreGroups]:
    """The view's groups of the existing pods' terms (``EXISTING_ANTI_TERMS``,
    ``EXISTING_TERMS``), built once per view as PreFilter and PreScore build them. For a
    caller that wants them on a view kept for long (the snapshot's own, before a queue run
    derives its views from it): the run's first step then copies them instead of its first
    cycle building them again over every pod."""
    return (
        view.derived(EXISTING_ANTI_TERMS, lambda: _existing_anti_terms(view)),
        view.derived(EXISTING_TERMS, lambda: _existing_terms(view)),
    )


def existing_terms_after(
    derived: Mapping[str, object],
    view: SchedulerView,
    added: Sequence[tuple[PodInfo, Mapping[str, str]]],
    removed: Sequence[tuple[PodInfo, Mapping[str, str]]],
    *,
    owned: bool,
) -> dict[str, object]:
    """The existing pods' term groups (``derived``: a view's ``EXISTING_TERMS`` and
    ``EXISTING_ANTI_TERMS``, as far as built) with the ``added`` pods counted and the
    ``removed`` ones uncounted, each with its node's labels: what the groups built anew over
    the view after the change hold (engine/scheduler/queue.py, so that a bind does not
    rebuild them over every pod). ``owned``: the groups are updated in place, else copied
    first. ``view`` gives the pods' parsed terms."""
    out: dict[str, object] = {}
    anti: AntiGroups | None = derived.get(EXISTING_ANTI_TERMS)  # type: ignore[assignment]
    if anti is not None:
        if not owned:
            anti = anti.copied(lambda e: (e[0], dict(e[1]), list(e[2])))
        for pi, labels in removed:
            _count_anti_terms(anti, pi, view.pod_terms(pi, pod_terms), labels, -1)
        for pi, labels in added:
            _count_anti_terms(anti, pi, view.pod_terms(pi, pod_terms), labels, 1)
        out[EXISTING_ANTI_TERMS] = anti
    terms: ScoreGroups | None = derived.get(EXISTING_TERMS)  # type: ignore[assignment]
    if terms is not None:
        if not owned:
            terms = terms.copied(lambda e: (e[0], {pair: list(v) for pair, v in e[1].items()}))
        for pi, labels in removed:
            _count_terms(terms, view.pod_terms(pi, pod_terms), labels, -1)
        for pi, labels in added:
            _count_terms(terms, view.pod_terms(pi, pod_terms), labels, 1)
        out[EXISTING_TERMS] = terms
    return out


def _term_candidates(view, t: AffinityTerm) -> Sequence[PodInfo] | None:
    """The view's pods the term's selector can match (none for a nil selector), None when
    it names no label value."""
    return () if t.selector is None else view.selector_candidates(t.selector)


def _term_pods(view, t: AffinityTerm) -> Iterator[tuple[NodeInfo, Pod]]:
    """The view's pods (with their nodes) that the term's selector can match: those carrying
    one of the values it names (the view's label index), else every pod. The callers still
    match each against the whole term; the counts they add up do not depend on the order."""
    candidates = _term_candidates(view, t)
    if candidates is None:
        for ni in view.nodes:
            for pi in ni.pods:
                yield ni, pi.pod
        return
    by_name = view.by_name
    for pi in candidates:
        yield by_name[pi.pod.node_name], pi.pod


class _Scaled(dict):
    """score -> its normalized score, each computed when first asked (NormalizeScore's
    arithmetic once per distinct score)."""

    __slots__ = ("low", "spread")

    def __init__(self, low: int, spread: int) -> None:
        super().__init__()
        self.low, self.spread = low, spread

    def __missing__(self, score: int) -> int:
        found = self[score] = int(
            float(MAX_NODE_SCORE) * (float(score - self.low) / float(self.spread))
        )
        return found


# --- topology domains: the nodes grouped by the value of a label key ---------------------

_AFFINITY = Status(UNRESOLVABLE, (ERR_REASON_AFFINITY,), InterPodAffinity.name)
_ANTI = Status(UNSCHEDULABLE, (ERR_REASON_ANTI_AFFINITY,), InterPodAffinity.name)
_EXISTING_ANTI = Status(UNSCHEDULABLE, (ERR_REASON_EXISTING_ANTI_AFFINITY,), InterPodAffinity.name)
_INDEX = attrgetter("index")
_NODE = attrgetter("node")
TOPOLOGY = "InterPodAffinity/topology"  # SchedulerView.derived key of the view's _Topology


class _Domains:
    """One label key's domains over a view's nodes: each value's number (``ids``, in node
    order), each node's domain number by node index (``of_node``; a node without the key:
    ``len(ids)``), whether that is the node's index for every node (``one_per_node``), and
    each domain's node indexes (``members``, built when first asked)."""

    __slots__ = ("_members", "ids", "of_node", "one_per_node")

    def __init__(self, values: list[str | None]) -> None:
        self.ids: dict[str, int] = {}
        for value in values:
            if value is not None and value not in self.ids:
                self.ids[value] = len(self.ids)
        self.of_node: list[int] = list(map(self.ids.get, values, repeat(len(self.ids))))
        # every node its own domain, numbered as the nodes are (a hostname key)
        self.one_per_node = self.of_node == list(range(len(values)))
        self._members: list[list[int]] | None = None

    def members(self, value: str) -> list[int]:
        """The indexes of the nodes whose label is ``value``."""
        d = self.ids.get(value)
        if d is None:
            return []
        members = self._members
        if members is None:
            members = [[] for _ in range(len(self.ids) + 1)]
            for i, d2 in enumerate(self.of_node):
                members[d2].append(i)
            self._members = members
        return members[d]

    def with_key(self) -> list[int]:
        """The indexes of the nodes that carry the key."""
        missing = len(self.ids)
        return [i for i, d in enumerate(self.of_node) if d != missing]


class _Topology:
    """The domains of a view's nodes, per label key (built when first asked), by node index.

    They read only the nodes' labels, so a view whose nodes carry the same labels at the
    same indexes shares them: a queue run's successor views replace a few NodeInfos per step
    and keep their Node objects (a cordon replaces one, with the same labels). ``nodes``:
    the Node objects by index of the last view found to carry them (held, so that their
    identities are not reused; the Nodes, not the NodeInfos, so that no pods are held)."""

    __slots__ = ("_keys", "nodes")

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.nodes: list[Node] = [ni.node for ni in nodes]
        self._keys: dict[str, _Domains] = {}

    def domains(self, key: str) -> _Domains:
        found = self._keys.get(key)
        if found is None:
            values = [node.labels.get(key) for node in self.nodes]
            found = self._keys[key] = _Domains(values)
        return found

    def holds(self, nodes: Sequence[NodeInfo]) -> bool:
        """Whether ``nodes`` carry these labels index by index (their Nodes are then kept
        instead): checked only where the Node objects differ."""
        kept = self.nodes
        if len(nodes) != len(kept):
            return False
        changed = list(compress(range(len(nodes)), map(is_not, map(_NODE, nodes), kept)))
        for i in changed:
            if nodes[i].node.labels != kept[i].labels:
                return False
        for i in changed:
            kept[i] = nodes[i].node
        return True


# the topologies built last, most recent first: a new view takes the first that holds
_TOPOLOGIES: list[_Topology] = []
_TOPOLOGIES_KEPT = 4
_TOPOLOGIES_LOCK = threading.Lock()


def _topology(view: SchedulerView) -> _Topology:
    """The domains of ``view``'s nodes: once per view, shared with the views before it whose
    nodes carry the same labels."""
    return view.derived(TOPOLOGY, lambda: _find_topology(view.nodes))


def _find_topology(nodes: Sequence[NodeInfo]) -> _Topology:
    with _TOPOLOGIES_LOCK:
        for i, topology in enumerate(_TOPOLOGIES):
            if topology.holds(nodes):
                _TOPOLOGIES.insert(0, _TOPOLOGIES.pop(i))
                return topology
        topology = _Topology(nodes)
        _TOPOLOGIES.insert(0, topology)
        del _TOPOLOGIES[_TOPOLOGIES_KEPT:]
        return topology


def _members(topology: _Topology, pairs: Iterable[Pair], keys: set[str] | None) -> set[int]:
    """The indexes of the nodes in the domains ``pairs`` (only those of ``keys``, if given)."""
    found: set[int] = set()
    for key, value in pairs:
        if keys is None or key in keys:
            found.update(topology.domains(key).members(value))
    return found


def _passing_affinity(s: _PreFilterState, topology: _Topology) -> set[int]:
    """The indexes of the nodes satisfyPodAffinity passes (``_satisfies_affinity`` node by
    node): carrying every term's key, and in each term's domain pods match all the terms;
    else, when no pod anywhere does and the pod matches its own terms, any node carrying
    the keys."""
    keys = dict.fromkeys(t.topology_key for t in s.affinity)
    anywhere = not s.affinity_counts and _matches_all(s.affinity, s.pod)
    passing: set[int] | None = None
    for key in keys:
        domains = topology.domains(key)
        if anywhere:
            found = set(domains.with_key())
        else:
            found = set()
            for (k, value), count in s.affinity_counts.items():
                if k == key and count > 0:
                    found.update(domains.members(value))
        passing = found if passing is None else passing & found
        if not passing:
            break
    return passing or set()


def _satisfies_affinity(s: _PreFilterState, labels: Mapping[str, str]) -> bool:
    """satisfyPodAffinity: every term's topology label on the node, and pods matching the
    terms in those domains; else only the first pod of a group may go anywhere with the
    labels."""
    pods_exist = True
    for t in s.affinity:
        value = labels.get(t.topology_key)
        if value is None:
            return False
        if s.affinity_counts.get((t.topology_key, value), 0) <= 0:
            pods_exist = False
    if pods_exist:
        return True
    return not s.affinity_counts and _matches_all(s.affinity, s.pod)


def _score(scores: dict[str, dict[str, int]], node: Node, key: str, value: int) -> None:
    label = node.labels.get(key)
    if label is not None:
        by_value = scores.setdefault(key, {})
        by_value[label] = by_value.get(label, 0) + value
