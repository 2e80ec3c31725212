"""NodeName (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodename, v1.35): Filter
only."""

from __future__ import annotations

from service.engine.scheduler.framework import (
    UNRESOLVABLE,
    CanPassEveryNode,
    CycleState,
    IgnoresNodePods,
    NodeInfo,
    Status,
)

__all__ = ["ERR_REASON_NODE_NAME", "NodeName"]

ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name"


class NodeName(CanPassEveryNode, IgnoresNodePods):
    name = "NodeName"

    def can_reject(self, state: CycleState) -> bool:
        return bool(state.pod.node_name)

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """spec.nodeName, when set, must be the node's name (Fits)."""
        wanted = state.pod.node_name
        if not wanted or wanted == ni.name:
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_NODE_NAME,), self.name)
