"""NodeAffinity (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity).
PreFilter and Filter so far (the score side and addedAffinity are being added)."""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.nodeaffinity import matches_node_selector_and_affinity
from service.engine.scheduler.framework import (
    OK,
    UNRESOLVABLE,
    CycleState,
    NodeInfo,
    Plugin,
    Status,
)

__all__ = ["NodeAffinity"]

ERR_REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"


class NodeAffinity(Plugin):
    name = "NodeAffinity"

    def pre_filter(
        self, state: CycleState, nodes: Sequence[NodeInfo]
    ) -> tuple[frozenset[str] | None, Status]:
        """When every required term pins ``metadata.name`` with In (intersected within a
        term, united across terms), only those nodes are filtered; pinned to nothing is
        UnschedulableAndUnresolvable for the whole pod."""
        terms = state.pod.required_node_affinity
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
                return None, OK
            names = term_names if names is None else names | term_names
        if names is not None and not names:
            return None, Status(UNRESOLVABLE, (ERR_REASON_AFFINITY_CONFLICT,), self.name)
        return (frozenset(names) if names else None), OK

    def can_reject(self, state: CycleState) -> bool:
        pod = state.pod
        return bool(pod.node_selector) or pod.required_node_affinity is not None

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        pod = state.pod
        if not pod.node_selector and pod.required_node_affinity is None:
            return None
        if matches_node_selector_and_affinity(pod, ni.node):
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_NODE_AFFINITY,), self.name)
