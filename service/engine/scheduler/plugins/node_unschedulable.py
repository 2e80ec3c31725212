"""NodeUnschedulable (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeunschedulable,
v1.35): Filter only.

The batch (FiltersNodes) reads only spec.unschedulable of each node: a pod tolerating the
unschedulable taint passes every node, the others are looked up in one table per lineage of
views (node_tables.py)."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter

from service.engine.objects import Taint
from service.engine.scheduler.framework import (
    UNRESOLVABLE,
    CanPassEveryNode,
    CycleState,
    FiltersNodes,
    IgnoresNodePods,
    NodeInfo,
    Status,
)
from service.engine.scheduler.plugins.node_tables import TableStore
from service.engine.tolerations import tolerates_any
from service.engine.version import EngineSettings

__all__ = ["ERR_REASON_UNSCHEDULABLE", "NodeUnschedulable"]

ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
_UNSCHEDULABLE_TAINT = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule")
_UNSCHEDULABLE = attrgetter("node.unschedulable")


class NodeUnschedulable(IgnoresNodePods, CanPassEveryNode, FiltersNodes):
    name = "NodeUnschedulable"

    def __init__(self, args: object | None = None, *, settings: EngineSettings) -> None:
        super().__init__(args, settings=settings)
        self._tables = TableStore()
        self._rejected = Status(UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), self.name)

    def can_reject(self, state: CycleState) -> bool:
        """A pod tolerating the unschedulable taint passes every node."""
        return not tolerates_any(state.pod.tolerations, _UNSCHEDULABLE_TAINT)

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """An unschedulable node (spec.unschedulable) rejects pods that do not tolerate the
        node.kubernetes.io/unschedulable:NoSchedule taint."""
        if not ni.node.unschedulable or tolerates_any(state.pod.tolerations, _UNSCHEDULABLE_TAINT):
            return None
        return Status(UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), self.name)

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        if not self.can_reject(state):
            return [None] * len(nodes)
        rejected = self._rejected

        def answer(ni: NodeInfo) -> Status | None:
            return rejected if ni.node.unschedulable else None

        table = self._tables.table(state.view, nodes, "unschedulable", _UNSCHEDULABLE, (), answer)
        return table.answers(nodes)
