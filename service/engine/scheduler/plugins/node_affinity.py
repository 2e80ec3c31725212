"""NodeAffinity (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity,
v1.35): PreFilter, Filter, PreScore, Score and NormalizeScore, with NodeAffinityArgs'
``addedAffinity`` (the scheduler-enforced affinity every pod of the profile gets).

Filter: the added required terms first ("node(s) didn't match scheduler-enforced node
affinity"), then the pod's nodeSelector and required terms ("node(s) didn't match Pod's node
affinity/selector"), both UnschedulableAndUnresolvable. Score: the sum of the weights of the
preferred terms (the pod's and the added ones) the node matches, normalized to 0..100 by the
highest.
"""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.nodeaffinity import (
    matches_node_selector_and_affinity,
    matches_node_selector_terms,
)
from service.engine.objects import Node, PreferredSchedulingTerm
from service.engine.scheduler.framework import (
    MAX_NODE_SCORE,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    CycleState,
    NodeInfo,
    Plugin,
    PreFilterResult,
    Status,
)
from service.engine.scheduler.plugins.helper import default_normalize_score
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


class NodeAffinity(Plugin):
    name = "NodeAffinity"

    def __init__(self, args: NodeAffinityArgs | None = None, *, settings: EngineSettings) -> None:
        args = args or NodeAffinityArgs()
        super().__init__(args, settings=settings)
        added = args.added_affinity
        self.added_required = added.required if added is not None else None
        self.added_preferred = added.preferred if added is not None and added.preferred else None

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
        node = ni.node
        if self.added_required is not None and not matches_node_selector_terms(
            self.added_required, node
        ):
            return Status(UNRESOLVABLE, (ERR_REASON_ENFORCED,), self.name)
        if matches_node_selector_and_affinity(state.pod, node):
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_POD,), self.name)

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """Skip when there is no preferred term, the pod's (a list, even empty) or added."""
        if state.pod.preferred_node_affinity is None and self.added_preferred is None:
            return SKIPPED
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        node = ni.node
        count = 0
        if self.added_preferred is not None:
            count += preferred_score(self.added_preferred, node)
        terms = state.pod.preferred_node_affinity
        if terms:
            count += preferred_score(terms, node)
        return count

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        default_normalize_score(MAX_NODE_SCORE, False, scores)
