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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace

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
    FilterPlugin,
    NodeInfo,
    PodInfo,
    PreFilterResult,
    PreScorePlugin,
    ReadsWholePods,
    ScoreExtensions,
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


def pod_terms(pod: Pod) -> PodTerms:
    if not (
        pod.pod_affinity_required
        or pod.pod_anti_affinity_required
        or pod.pod_affinity_preferred
        or pod.pod_anti_affinity_preferred
    ):
        return _NO_TERMS
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
    if selector == _EVERYTHING:
        return term
    names = term.namespaces
    if selector is not None:
        names = names | {
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
    the three counts; cloned for each node copy, updated by AddPod / RemovePod."""

    __slots__ = (
        "affinity",
        "affinity_counts",
        "anti",
        "anti_counts",
        "existing_anti",
        "ns_labels",
        "pod",
    )

    def __init__(self, pod, affinity, anti, ns_labels, existing_anti, affinity_counts, anti_counts):
        self.pod = pod
        self.affinity = affinity
        self.anti = anti
        self.ns_labels = ns_labels
        self.existing_anti = existing_anti
        self.affinity_counts = affinity_counts
        self.anti_counts = anti_counts

    def clone(self) -> _PreFilterState:
        return _PreFilterState(
            self.pod, self.affinity, self.anti, self.ns_labels,
            dict(self.existing_anti), dict(self.affinity_counts), dict(self.anti_counts),
        )  # fmt: skip

    def update_with_pod(self, other: Pod, terms: PodTerms, node: Node, multiplier: int) -> None:
        """preFilterState.updateWithPod."""
        for t in terms.required_anti_affinity:
            if t.matches(self.pod, self.ns_labels):
                _add(self.existing_anti, node, t.topology_key, multiplier)
        if _matches_all(self.affinity, other):
            for t in self.affinity:
                _add(self.affinity_counts, node, t.topology_key, multiplier)
        for t in self.anti:
            if t.matches(other, None):
                _add(self.anti_counts, node, t.topology_key, multiplier)


class InterPodAffinity(CountsPods, FilterPlugin, PreScorePlugin, ScoreExtensions, ReadsWholePods):
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
        groups = view.derived(self.name + "/anti", lambda: _existing_anti_terms(view))
        for t, counts, _ in groups.values():
            if t.matches(pod, ns_labels):
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
        groups = view.derived(self.name + "/anti", lambda: _existing_anti_terms(view))
        for t, _, pods in groups.values():
            if t.matches(s.pod, s.ns_labels):
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
        for t, contributions in view.derived(self.name, lambda: _existing_terms(view)).values():
            if not t.matches(pod, ns_labels):
                continue
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

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        """Min-max normalization onto 0..100 (float64, truncated)."""
        if not scores:
            return
        low, high = min(scores), max(scores)
        spread = high - low
        for i, score in enumerate(scores):
            scores[i] = (
                int(float(MAX_NODE_SCORE) * (float(score - low) / float(spread)))
                if spread > 0
                else 0
            )


AntiGroups = dict[tuple, tuple[AffinityTerm, dict[Pair, int], list[int]]]
TermGroups = dict[tuple, tuple[AffinityTerm, dict[Pair, list[int]]]]
EXISTING_TERMS = "InterPodAffinity"  # SchedulerView.derived keys of the groups below
EXISTING_ANTI_TERMS = "InterPodAffinity/anti"


def _existing_anti_terms(view) -> AntiGroups:
    """Existing pods' required anti-affinity terms grouped by the term's key: a representative
    term, per (topology key, value of the pod's node) how many terms of the group sit there,
    and the ids of the pods holding them. Nodes without the term's key count nothing
    (topologyToMatchedTermCount.update)."""
    groups: AntiGroups = {}
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
            entry = groups[t.key] = (t, {}, [])
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
            del groups[t.key]


def _existing_terms(view) -> TermGroups:
    """Every existing pod's scoring terms, grouped by the term's key: a representative term
    and, per (topology key, value of the pod's node), [the preferred weights' sum (+affinity,
    -anti-affinity), how many preferred terms, how many required affinity terms]. Nodes
    without labels, or without the term's key, contribute nothing (processTerm)."""
    groups: TermGroups = {}
    for ni in view.nodes_with_affinity():
        labels = ni.node.labels
        if not labels:
            continue
        for pi in view.pods_with_affinity(ni):
            _count_terms(groups, view.pod_terms(pi, pod_terms), labels, 1)
    return groups


def _count_terms(groups: TermGroups, terms: PodTerms, labels: Mapping[str, str], sign: int) -> None:
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
                entry = groups[t.key] = (t, {})
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
                    del groups[t.key]


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
    anti = derived.get(EXISTING_ANTI_TERMS)
    if anti is not None:
        if not owned:
            anti = {k: (t, dict(c), list(p)) for k, (t, c, p) in anti.items()}  # type: ignore[attr-defined]
        for pi, labels in removed:
            _count_anti_terms(anti, pi, view.pod_terms(pi, pod_terms), labels, -1)  # type: ignore[arg-type]
        for pi, labels in added:
            _count_anti_terms(anti, pi, view.pod_terms(pi, pod_terms), labels, 1)  # type: ignore[arg-type]
        out[EXISTING_ANTI_TERMS] = anti
    terms = derived.get(EXISTING_TERMS)
    if terms is not None:
        if not owned:
            terms = {
                k: (t, {pair: list(sums) for pair, sums in c.items()})
                for k, (t, c) in terms.items()  # type: ignore[attr-defined]
            }
        for pi, labels in removed:
            _count_terms(terms, view.pod_terms(pi, pod_terms), labels, -1)  # type: ignore[arg-type]
        for pi, labels in added:
            _count_terms(terms, view.pod_terms(pi, pod_terms), labels, 1)  # type: ignore[arg-type]
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
