"""NodePorts (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports, v1.35):
PreFilter (the pod's wanted host ports, getContainerPorts) and Filter (fitsPorts against the
node's used ports). No PreFilterExtensions upstream: the node's used ports come with its
NodeInfo (or a copy of it).

The batch (FiltersNodes) keeps the answers per wanted ports and NodeInfo (node_tables.py):
each NodeInfo has its own used ports, so a first time is the per-node Filter, and a repeat
on the NodeInfos a queue run's views share is a lookup."""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.objects import ContainerPort
from service.engine.ports import wanted_host_ports
from service.engine.scheduler.framework import (
    OK,
    SKIPPED,
    UNSCHEDULABLE,
    CycleState,
    FiltersNodes,
    NodeInfo,
    NodeInfoPods,
    PreFilterPlugin,
    PreFilterResult,
    Status,
    SumsHostPorts,
    prefilter_state_missing,
)
from service.engine.scheduler.plugins.node_tables import TableStore
from service.engine.version import EngineSettings

__all__ = ["ERR_REASON_NODE_PORTS", "NodePorts"]

ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"


def _itself(ni: NodeInfo) -> NodeInfo:
    return ni


class NodePorts(PreFilterPlugin, SumsHostPorts, FiltersNodes):
    name = "NodePorts"

    def __init__(self, args: object | None = None, *, settings: EngineSettings) -> None:
        super().__init__(args, settings=settings)
        self._tables = TableStore()

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        """Keep the wanted host ports; Skip for a pod without any."""
        ports = wanted_host_ports(state.pod)
        if not ports:
            return None, SKIPPED
        state.write(self.name, ports)
        return None, OK

    def host_ports_wanted(self, state: CycleState) -> list[ContainerPort]:
        """The pod's host ports as PreFilter stored them (empty when the plugin skipped)."""
        return state.read(self.name) or []

    def filter(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> Status | None:
        wanted = state.read(self.name)
        if wanted is None:  # PreFilter disabled in the profile: upstream's Filter errors too
            return prefilter_state_missing(self.name)
        return self._fits(wanted, ns)

    def _fits(self, wanted: Sequence[ContainerPort], ns: NodeInfo | NodeInfoPods) -> Status | None:
        used = ns.used_ports
        if used is None:
            return None
        for p in wanted:
            if used.conflicts(p.host_ip, p.protocol, p.host_port):
                return Status(UNSCHEDULABLE, (ERR_REASON_NODE_PORTS,), self.name)
        return None

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        """Filter on each node (its own used ports), from the table of the wanted ports."""
        wanted = state.read(self.name)
        if wanted is None:
            return [prefilter_state_missing(self.name)] * len(nodes)
        wanted = tuple(wanted)
        table = self._tables.table(
            state.view, nodes, "itself", _itself, wanted, lambda ni: self._fits(wanted, ni)
        )
        return table.answers(nodes)
