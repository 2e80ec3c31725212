"""NodePorts (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeports, v1.35):
PreFilter (the pod's wanted host ports, getContainerPorts) and Filter (fitsPorts against the
node's used ports). No PreFilterExtensions upstream: the node's used ports come with its
NodeInfo (or a copy of it)."""

from __future__ import annotations

from collections.abc import Sequence

from service.engine.objects import ContainerPort
from service.engine.ports import wanted_host_ports
from service.engine.scheduler.framework import (
    OK,
    SKIPPED,
    UNSCHEDULABLE,
    CycleState,
    NodeInfo,
    NodeInfoPods,
    PreFilterPlugin,
    PreFilterResult,
    Status,
    SumsHostPorts,
    prefilter_state_missing,
)

__all__ = ["ERR_REASON_NODE_PORTS", "NodePorts"]

ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"


class NodePorts(PreFilterPlugin, SumsHostPorts):
    name = "NodePorts"

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
        used = ns.used_ports
        if used is None:
            return None
        for p in wanted:
            if used.conflicts(p.host_ip, p.protocol, p.host_port):
                return Status(UNSCHEDULABLE, (ERR_REASON_NODE_PORTS,), self.name)
        return None
