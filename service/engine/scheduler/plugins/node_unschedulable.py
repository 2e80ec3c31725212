"""NodeUnschedulable (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable,
v1.35): Filter only."""

from __future__ import annotations

from service.engine.objects import Taint
from service.engine.scheduler.framework import (
    UNRESOLVABLE,
    CycleState,
    IgnoresNodePods,
    NodeInfo,
    Status,
)
from service.engine.tolerations import tolerates_any

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")


class NodeUnschedulable(IgnoresNodePods):
    name = "NodeUnschedulable"

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """An unschedulable node (spec.unschedulable) rejects pods that do not tolerate the
        node.kubernetes.io/unschedulable:NoSchedule taint."""
        if not ni.node.unschedulable or tolerates_any(state.pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), self.name)
