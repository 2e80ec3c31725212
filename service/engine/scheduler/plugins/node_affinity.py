"""NodeAffinity (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity,
v1.35): PreFilter, Filter, PreScore, Score and NormalizeScore, with NodeAffinityArgs'
``addedAffinity`` (the scheduler-enforced affinity every pod of the profile gets).

Filter: the added required terms first ("node(s) didn't match scheduler-enforced node
affinity"), then the pod's nodeSelector and required terms ("node(s) didn't match Pod's node
affinity/selector"), both UnschedulableAndUnresolvable. Score: the sum of the weights of the
preferred terms (the pod's and the added ones) the node matches, normalized to 0..100 by the
highest.

Batches (FiltersNodes, ScoresNodes): the terms and the nodeSelector read only some label
values of the node (the keys they name) and, with matchFields, its name; the answers are
kept per pod key (its nodeSelector and terms) and NodeInfo, the nodes grouped by those
values (node_tables.py).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence

import numpy as np

from service.engine.nodeaffinity import (
    matches_node_selector_and_affinity,
    matches_node_selector_terms,
)
from service.engine.objects import Node, NodeSelectorTerm, Pod, PreferredSchedulingTerm
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    CycleState,
    FiltersNodes,
    IgnoresNodePods,
    NodeInfo,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScoreExtensions,
    ScoresNodes,
    Status,
)
from service.engine.scheduler.plugins.helper import default_normalize_score, node_indexes
from service.engine.scheduler.plugins.node_tables import TableStore
from service.engine.scheduler.profile import NodeAffinityArgs
from service.engine.version import EngineSettings

__all__ = [
    "ERR_REASON_AFFINITY_CONFLICT",
    "ERR_REASON_ENFORCED",
    "ERR_REASON_POD",
    "NodeAffinity",
    "preferred_score",
]

ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"


def preferred_score(terms: Sequence[PreferredSchedulingTerm], node: Node) -> int:
    """PreferredSchedulingTerms.Score: the weights of the terms matching the node (terms of
    weight 0 are dropped when parsed; an empty term matches nothing)."""
    return sum(
        term.weight
        for term in terms
        if term.weight and matches_node_selector_terms((term.preference,), node)
    )


def _read_of(terms: Iterable[NodeSelectorTerm], selector_keys: Iterable[str] = ()) -> tuple:
    """What matching ``terms`` (and a nodeSelector of ``selector_keys``) reads of a node:
    the label keys (sorted), and whether it reads the node's name (matchFields)."""
    keys = set(selector_keys)
    name = False
    for term in terms:
        keys.update(req.key for req in term.match_expressions)
        name = name or bool(term.match_fields)
    return tuple(sorted(keys)), name


def _reader(read: tuple) -> Callable[[NodeInfo], Hashable]:
    """The node's values of what ``read`` names (None for a missing label)."""
    keys, name = read
    if name:
        return lambda ni: (tuple(map(ni.node.labels.get, keys)), ni.node.name)
    return lambda ni: tuple(map(ni.node.labels.get, keys))


class NodeAffinity(
    PreFilterPlugin, IgnoresNodePods, FiltersNodes, PreScorePlugin, ScoreExtensions, ScoresNodes
):
    name = "NodeAffinity"

    def __init__(self, args: NodeAffinityArgs | None = None, *, settings: EngineSettings) -> None:
        args = args or NodeAffinityArgs()
        super().__init__(args, settings=settings)
        added = args.added_affinity
        self.added_required = added.required if added is not None else None
        self.added_preferred = added.preferred if added is not None and added.preferred else None
        self._tables = TableStore()

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        """Skip when neither the pod nor the args constrain nodes. When every required term
        pins ``metadata.name`` with In (intersected within a term, united across terms), only
        those nodes are filtered; pinned to nothing rejects the pod everywhere."""
        pod = state.pod
        terms = pod.required_node_affinity
        if terms is None and self.added_required is None and not pod.node_selector:
            return None, SKIPPED
        if not terms:
            return None, OK
        names: set[str] | None = None
        for term in terms:
            term_names: set[str] | None = None
            for req in term.match_fields:
                if req.key == "metadata.name" and req.operator == "In":
                    values = set(req.values)
                    term_names = values if term_names is None else term_names & values
            if term_names is None:
                return None, OK  # a term without a node-name pin admits every node
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, Status(UNRESOLVABLE, (ERR_REASON_AFFINITY_CONFLICT,), self.name)
        return (frozenset(names) if names else None), OK

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        return self._filter_node(state.pod, ni.node)

    def _filter_node(self, pod: Pod, node: Node) -> Status | None:
        if self.added_required is not None and not matches_node_selector_terms(
            self.added_required, node
        ):
            return Status(UNRESOLVABLE, (ERR_REASON_ENFORCED,), self.name)
        if matches_node_selector_and_affinity(pod, node):
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_POD,), self.name)

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Filter on each node, from the table of the pod's nodeSelector and required terms."""
        pod = state.pod
        required = pod.required_node_affinity
        read = _read_of((*(self.added_required or ()), *(required or ())), pod.node_selector)
        pod_key = ("filter", tuple(sorted(pod.node_selector.items())), required)
        table = self._tables.table(
            state.view, nodes, read, _reader(read), pod_key,
            lambda ni: self._filter_node(pod, ni.node),
        )  # fmt: skip
        return table.answers(nodes)

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """Skip when there is no preferred term, the pod's (a list, even empty) or added."""
        if state.pod.preferred_node_affinity is None and self.added_preferred is None:
            return SKIPPED
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        return self._score_node(state.pod, ni.node)

    def _score_node(self, pod: Pod, node: Node) -> int:
        count = 0
        if self.added_preferred is not None:
            count += preferred_score(self.added_preferred, node)
        terms = pod.preferred_node_affinity
        if terms:
            count += preferred_score(terms, node)
        return count

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | np.ndarray:
        """Score on each node, from the table of the pod's preferred terms (an int64 column,
        taken by view index: NodeTable.scores)."""
        pod = state.pod
        terms = pod.preferred_node_affinity
        preferences = [t.preference for t in (*(self.added_preferred or ()), *(terms or ()))]
        read = _read_of(preferences)
        table = self._tables.table(
            state.view, nodes, read, _reader(read), ("score", terms),
            lambda ni: self._score_node(pod, ni.node),
        )  # fmt: skip
        return table.scores(state.view, nodes, node_indexes(state, nodes))

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
