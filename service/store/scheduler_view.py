"""The scheduler's view of a snapshot in a form stored with the snapshot, so that the first
placement or preemption on a stored snapshot restores the view instead of decoding every pod.

A persistence format, so it lives in the store: the engine only builds a view from the parts
kept here (``SchedulerView.restored``, a pure function); this module chooses the parts,
names their format (``FINGERPRINT``) and encodes them with the snapshot
(``store/snapshots.py``).

Decoding a 150,000-pod snapshot and building its SchedulerView takes about 1.5 s, most of it
spent on pod fields the scheduler never reads (labels, annotations, containers, stats). The
stored view keeps, per node, the PodInfos the view holds (requests, priority, start time,
matching PDBs, QoS class) and the node totals, plus the few objects read whole: the nodes,
PDBs and PriorityClasses, the resource.k8s.io claims, classes and slices, the pods with host
ports or a deletionTimestamp, and the nominated pods. It is derived data, derived under the newest release (``VIEW_SETTINGS``):
``FINGERPRINT`` names its format (``FORMAT``) and that release's reading
(``view_release``), and a stored view with another fingerprint is not used. A docstring or
refactoring leaves stored views usable; a change to what they hold, their shape or the values
derived into them, bumps ``FORMAT`` (``tests/store/test_scheduler_view.py`` pins both).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import msgspec

from service.engine.objects import (
    Cluster,
    DeviceClass,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    PriorityClass,
    ResourceClaim,
    ResourceSlice,
    Service,
    Snapshot,
    WorkloadController,
)
from service.engine.qos import get_pod_qos
from service.engine.scheduler.dra_manager import DraManager
from service.engine.scheduler.framework import PodInfo
from service.engine.scheduler.snapshot import SchedulerView, install_view, view_release
from service.engine.version import DEFAULT_SETTINGS

__all__ = [
    "FINGERPRINT",
    "FORMAT",
    "VIEW_SETTINGS",
    "StoredView",
    "restore",
    "restored_cluster",
    "stored_view",
]

# What a stored view holds, by number. Bump it with any change to the StoredView below or the
# model types it holds (its shape), or to the values the engine derives into it (a PodInfo's
# requests, QoS class, ...): tests/store/test_scheduler_view.py pins both for each FORMAT.
FORMAT = 4

# The release a stored view is derived under: the newest (a decision under an older release
# whose view_release differs builds its own view from the snapshot).
VIEW_SETTINGS = DEFAULT_SETTINGS


def _fingerprint() -> bytes:
    """8 bytes naming FORMAT and the release's reading of the view: a view stored in another
    format, or for another release reading, is never restored."""
    digest = hashlib.sha256(f"{FORMAT}:{view_release(VIEW_SETTINGS)}".encode())
    return digest.digest()[:8]


FINGERPRINT = _fingerprint()


class StoredView(msgspec.Struct, array_like=True, gc=False):
    """What ``restore`` needs. ``node_pods[i]`` are node i's PodInfos in snapshot order, with
    ``pod`` kept only where the scheduler reads the pod whole (host ports, deletionTimestamp)
    and ``pdbs`` filled in; ``node_totals[i]`` are NodeInfo's Requested and NonZeroRequested
    sums. ``terminating_statefulset`` holds (node index, position in that node's pods)."""

    nodes: tuple[Node, ...]
    priority_classes: tuple[PriorityClass, ...]
    pdbs: tuple[PodDisruptionBudget, ...]
    pod_count: int
    node_pods: list[list[PodInfo]]
    node_totals: list[tuple[dict[str, int], int, int]]
    nominated: list[Pod]
    terminating_statefulset: list[tuple[int, int]]
    inter_pod_affinity_in_use: bool
    namespaces: tuple[Namespace, ...] = ()
    services: tuple[Service, ...] = ()
    controllers: tuple[WorkloadController, ...] = ()
    resource_claims: tuple[ResourceClaim, ...] = ()
    device_classes: tuple[DeviceClass, ...] = ()
    resource_slices: tuple[ResourceSlice, ...] = ()


def _kept(pi: PodInfo) -> PodInfo:
    """The PodInfo as stored: the pod only where the view reads it, no cached host ports."""
    pod = pi.pod
    if pod is not None and (pi.has_ports or pod.deletion_timestamp is not None):
        if pi.host_ports is None:
            return pi
        return msgspec.structs.replace(pi, host_ports=None)
    return msgspec.structs.replace(
        pi,
        pod=None,
        qos=get_pod_qos(pod, settings=VIEW_SETTINGS) if pod is not None else pi.qos,
        host_ports=None,
    )


def stored_view(view: SchedulerView, snapshot: Snapshot) -> StoredView:
    """The stored form of ``view``, the SchedulerView of ``snapshot``."""
    view.resolve_pdbs()
    positions: dict[int, tuple[int, int]] = {}
    for _, pi in view.terminating_statefulset_pods:
        positions[id(pi)] = (-1, -1)
    node_pods: list[list[PodInfo]] = []
    for i, ni in enumerate(view.nodes):
        if positions:
            for j, pi in enumerate(ni.pods):
                if id(pi) in positions:
                    positions[id(pi)] = (i, j)
        node_pods.append(list(map(_kept, ni.pods)))
    nominated = [pi.pod for pods in view.nominated.values() for pi in pods if pi.pod is not None]
    return StoredView(
        nodes=snapshot.nodes,
        priority_classes=snapshot.priority_classes,
        pdbs=snapshot.pdbs,
        pod_count=len(snapshot.pods),
        node_pods=node_pods,
        node_totals=[(ni.requested, ni.nz_cpu, ni.nz_mem) for ni in view.nodes],
        nominated=nominated,
        terminating_statefulset=[positions[id(pi)] for _, pi in view.terminating_statefulset_pods],
        inter_pod_affinity_in_use=view.inter_pod_affinity_in_use,
        namespaces=snapshot.namespaces,
        services=snapshot.services,
        controllers=snapshot.controllers,
        resource_claims=snapshot.resource_claims,
        device_classes=snapshot.device_classes,
        resource_slices=snapshot.resource_slices,
    )


def restore(stored: StoredView) -> SchedulerView:
    """The SchedulerView ``stored`` was made from (same nodes, pods, order and answers)."""
    return SchedulerView.restored(
        stored.nodes,
        stored.node_pods,
        stored.node_totals,
        stored.nominated,
        stored.terminating_statefulset,
        stored.inter_pod_affinity_in_use,
        (stored.pdbs, stored.namespaces, stored.services, stored.controllers),
        VIEW_SETTINGS,
        DraManager.of(stored.resource_claims, stored.device_classes, stored.resource_slices),
    )


def restored_cluster(stored: StoredView, load: Callable[[], Snapshot]) -> Cluster:
    """A Cluster whose SchedulerView is restored from ``stored`` and whose snapshot ``load``
    decodes the first time something reads it."""
    cluster = Cluster.deferred(
        load,
        nodes=stored.nodes,
        priority_classes=stored.priority_classes,
        pod_count=stored.pod_count,
    )
    install_view(cluster, restore(stored))
    return cluster
