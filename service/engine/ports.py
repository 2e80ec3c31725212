"""Host port conflicts, as the scheduler's NodePorts filter and the kubelet's admission see
them (pkg/scheduler/framework HostPortInfo, plugins/nodeports, k8s 1.35).

The ports of regular containers and of restartable (sidecar) init containers count, on both
sides (upstream getContainerPorts and NodeInfo's used ports, 1.35; checked against the real
scheduler: scheduler-oracle.json "sidecar-host-ports-*"). Releases before 1.34 count the
regular containers' only (kubernetes#132040): the scheduler sees their pods through
``without_sidecar_host_ports``; the kubelet's admission (lifecycle generalFilter, which calls
the same release's AdmissionCheck and nodeports.Fits over NewNodeInfo of the node's pods)
passes ``sidecars=False``. A host port of 0 (or less) is ignored;
an empty host IP means 0.0.0.0 and an empty protocol TCP. 0.0.0.0 conflicts with the same
(protocol, port) on any IP; a specific IP conflicts with itself and with 0.0.0.0.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from service.engine.objects import Container, ContainerPort, Pod

__all__ = [
    "DEFAULT_BIND_ALL_HOST_IP",
    "HostPorts",
    "port_containers",
    "wanted_host_ports",
    "without_sidecar_host_ports",
]

DEFAULT_BIND_ALL_HOST_IP = "0.0.0.0"


def port_containers(pod: Pod, *, sidecars: bool = True) -> Iterable[Container]:
    """The containers whose ports a node holds for the pod: its containers and, since
    v1.34 (``sidecars``, kubernetes#132040), its sidecars."""
    yield from pod.containers
    if sidecars:
        for c in pod.init_containers:
            if c.is_sidecar:
                yield c


def without_sidecar_host_ports(pod: Pod) -> Pod:
    """``pod`` as the scheduler before v1.34 counts its host ports (getContainerPorts and
    NodeInfo.updateUsedPorts read ``spec.containers`` only): the same pod when no sidecar
    has a host port, else a copy whose sidecars hold none."""
    if not any(c.is_sidecar and any(p.host_port > 0 for p in c.ports) for c in pod.init_containers):
        return pod
    init = [
        msgspec.structs.replace(c, ports=()) if c.is_sidecar else c for c in pod.init_containers
    ]
    return msgspec.structs.replace(pod, init_containers=tuple(init))


def wanted_host_ports(pod: Pod, *, sidecars: bool = True) -> list[ContainerPort]:
    """nodeports getContainerPorts (k8s 1.35; ``sidecars=False``: 1.32/1.33): the pod's
    container ports with a host port."""
    return [p for c in port_containers(pod, sidecars=sidecars) for p in c.ports if p.host_port > 0]


class HostPorts:
    """framework.HostPortInfo: host ports in use on a node, by IP then (protocol, port)."""

    __slots__ = ("_by_ip",)

    def __init__(self) -> None:
        self._by_ip: dict[str, set[tuple[str, int]]] = {}

    @classmethod
    def of_pods(cls, pods: Iterable[Pod], *, sidecars: bool = True) -> HostPorts:
        """NodeInfo.UsedPorts of ``pods`` (updateUsedPorts; ``sidecars`` as in
        ``port_containers``)."""
        used = cls()
        for pod in pods:
            used.add_pod(pod, sidecars=sidecars)
        return used

    def copy(self) -> HostPorts:
        """An independent copy (NodeInfo.Snapshot of UsedPorts)."""
        other = HostPorts()
        other._by_ip = {ip: set(used) for ip, used in self._by_ip.items()}
        return other

    def add_pod(self, pod: Pod, *, sidecars: bool = True) -> None:
        for c in port_containers(pod, sidecars=sidecars):
            for p in c.ports:
                self.add(p.host_ip, p.protocol, p.host_port)

    def add(self, ip: str, protocol: str, port: int) -> None:
        """HostPortInfo.Add."""
        if port <= 0:
            return
        self._by_ip.setdefault(ip or DEFAULT_BIND_ALL_HOST_IP, set()).add((protocol or "TCP", port))

    def conflicts(self, ip: str, protocol: str, port: int) -> bool:
        """HostPortInfo.CheckConflict."""
        if port <= 0 or not self._by_ip:
            return False
        ip = ip or DEFAULT_BIND_ALL_HOST_IP
        key = (protocol or "TCP", port)
        if ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(key in used for used in self._by_ip.values())
        for candidate in (DEFAULT_BIND_ALL_HOST_IP, ip):
            used = self._by_ip.get(candidate)
            if used is not None and key in used:
                return True
        return False

    def fits(self, pod: Pod, *, sidecars: bool = True) -> bool:
        """nodeports fitsPorts: none of the pod's wanted host ports conflicts."""
        for p in wanted_host_ports(pod, sidecars=sidecars):
            if self.conflicts(p.host_ip, p.protocol, p.host_port):
                return False
        return True
