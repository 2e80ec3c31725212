"""NodeName (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename, v1.35): Filter
only."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from service.engine.scheduler.framework import (
    UNRESOLVABLE,
    CanPassEveryNode,
    CycleState,
    FiltersNodes,
    IgnoresNodePods,
    NodeInfo,
    Status,
)

__all__ = ["ERR_REASON_NODE_NAME", "NodeName"]

ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name"
_NAME = attrgetter("name")


class NodeName(CanPassEveryNode, IgnoresNodePods, FiltersNodes):
    name = "NodeName"

    def can_reject(self, state: CycleState) -> bool:
        return bool(state.pod.node_name)

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """spec.nodeName, when set, must be the node's name (Fits)."""
        wanted = state.pod.node_name
        if not wanted or wanted == ni.name:
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_NODE_NAME,), self.name)

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Every node rejected but those of the wanted name (found by list.index, in C)."""
        wanted = state.pod.node_name
        if not wanted:
            return [None] * len(nodes)
        out: list[Status | None] = [Status(UNRESOLVABLE, (ERR_REASON_NODE_NAME,), self.name)] * len(
            nodes
        )
        names = list(map(_NAME, nodes))
        at = 0
        while True:
            try:
                at = names.index(wanted, at)
            except ValueError:
                return out
            out[at] = None
            at += 1
