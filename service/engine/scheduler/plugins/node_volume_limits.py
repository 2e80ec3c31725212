"""NodeVolumeLimits (kubernetes/kubernetes pkg/scheduler/framework/plugins/nodevolumelimits
csi.go, CSILimits, v1.35): PreFilter (Skip for a pod without claims, ephemeral or migratable
inline volumes) and Filter (per CSI driver, the unique volumes of the node's pods plus the
pod's new ones against the node's attach limit). No PreFilterExtensions upstream: the
node's pods are read as the node (or its copy) holds them.

In-tree disks (GCE PD, AWS EBS, Azure Disk, Cinder) count against their CSI driver's limit
with the handle csi-translation-lib gives them (csi_translation.py), once the node has a
CSINode (their migration is GA, isCSIMigrationOn). VolumeAttachments count only those of a
CSI PersistentVolume (getNodeVolumeAttachmentInfo skips a source without
persistentVolumeName, an inline volume's inlineVolumeSpec, and a PV without a CSI source).
A claim not yet bound counts under its class's provisioner with a handle of its own
(getCSIDriverInfoFromSC's random prefix: never equal to a bound volume's)."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from service.engine.objects import (
    CSINode,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodVolume,
)
from service.engine.scheduler.csi_translation import (
    DRIVER_OF_PLUGIN,
    MIGRATIONS,
    TranslationError,
    inline_handle,
    pv_handle,
)
from service.engine.scheduler.framework import (
    ERROR,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleState,
    KeepsVerdict,
    NodeInfo,
    NodeInfoPods,
    PodInfo,
    PreFilterPlugin,
    PreFilterResult,
    Status,
)
from service.engine.scheduler.plugins.helper import ReadsPodVolumes

if TYPE_CHECKING:
    from service.engine.scheduler.snapshot import SchedulerView
from service.engine.scheduler.storage import (
    Storage,
    claim_name,
    ephemeral_owner_error,
    pvc_not_found,
)

__all__ = ["ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED", "NodeVolumeLimits", "attach_limit_key"]

ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"

CSI_ATTACH_LIMIT_PREFIX = "attachable-volumes-csi-"
_RESOURCE_NAME_LENGTH_LIMIT = 63

# SchedulerView.derived keys: each pod's volumes, and per node its CSINode, its limits and
# what is attached to it as the snapshot holds it; the CycleState key of the pod's own
# volumes
_VOLUMES_OF_PODS = "NodeVolumeLimits/volumesOfPods"
_ON_NODE = "NodeVolumeLimits/onNode"
_NEW_VOLUMES = "NodeVolumeLimits/newVolumes"


class _Failure(Exception):
    """An error of filterAttachableVolumes, with the status code the Filter answers."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@lru_cache(maxsize=1024)
def attach_limit_key(driver: str) -> str:
    """volumeutil.GetCSIAttachLimitKey: the prefix and the driver name, shortened with a
    SHA-1 of the name when the key would reach 63 characters."""
    if len(CSI_ATTACH_LIMIT_PREFIX) + len(driver) >= _RESOURCE_NAME_LENGTH_LIMIT:
        digest = hashlib.sha1(driver.encode()).hexdigest()[:16]
        return CSI_ATTACH_LIMIT_PREFIX + driver[:23] + digest
    return CSI_ATTACH_LIMIT_PREFIX + driver


def _migration_on(csi_node: CSINode | None) -> bool:
    """isCSIMigrationOn for the GA-migrated plugins (GCE PD, AWS EBS, Azure Disk, Cinder):
    true once the node has a CSINode, whatever its migrated-plugins annotation says."""
    return csi_node is not None


def _driver_of_pv(pv: PersistentVolume, csi_node: CSINode | None) -> tuple[str, str]:
    """getCSIDriverInfo for a PV: its CSI source, or its in-tree source translated
    (TranslateInTreePVToCSI); a volume the translator refuses is not counted."""
    if pv.csi_driver:
        return pv.csi_driver, pv.csi_handle
    migration = MIGRATIONS.get(pv.in_tree)
    if migration is None or not _migration_on(csi_node):
        return "", ""
    try:
        return migration.driver, pv_handle(pv)
    except TranslationError:
        return "", ""


def _driver_from_class(
    storage: Storage, pvc: PersistentVolumeClaim, csi_node: CSINode | None
) -> tuple[str, str]:
    """getCSIDriverInfoFromSC: the class's provisioner (its CSI driver when in-tree and
    migrated) and a handle unique to the claim."""
    sc = storage.classes.get(pvc.storage_class) if pvc.storage_class else None
    if sc is None:
        return "", ""
    handle = f"\0unbound-{pvc.namespace}/{pvc.name}"
    provisioner = sc.provisioner
    if provisioner in DRIVER_OF_PLUGIN:
        if not _migration_on(csi_node):
            return "", ""
        return DRIVER_OF_PLUGIN[provisioner], handle
    return provisioner, handle


def _driver_of_claim(
    storage: Storage, pvc: PersistentVolumeClaim, csi_node: CSINode | None
) -> tuple[str, str]:
    if not pvc.volume_name:
        return _driver_from_class(storage, pvc, csi_node)
    pv = storage.pvs.get(pvc.volume_name)
    if pv is None:
        return _driver_from_class(storage, pvc, csi_node)
    return _driver_of_pv(pv, csi_node)


def _attachable_volumes(
    storage: Storage,
    pod: Pod,
    csi_node: CSINode | None,
    new_pod: bool,
    into: dict[str, str],
) -> None:
    """filterAttachableVolumes: "<driver>/<handle>" -> limit key for each of the pod's
    volumes that counts. Raises _Failure as upstream returns an error."""
    for v in pod.volumes:
        name = claim_name(pod, v)
        if name is None:
            _inline_volume(v, csi_node, into)
            continue
        if not name:
            raise _Failure(ERROR, "PersistentVolumeClaim had no name")
        pvc = storage.pvc(pod.namespace, name)
        if pvc is None:
            if new_pod:
                raise _Failure(
                    UNRESOLVABLE, f"looking up PVC {pod.namespace}/{name}: {pvc_not_found(name)}"
                )
            continue
        if v.source == "ephemeral":
            problem = ephemeral_owner_error(pod, pvc)
            if problem is not None:
                raise _Failure(ERROR, problem)
        driver, handle = _driver_of_claim(storage, pvc, csi_node)
        if driver and handle:
            into[f"{driver}/{handle}"] = attach_limit_key(driver)


def _inline_volume(v: PodVolume, csi_node: CSINode | None, into: dict[str, str]) -> None:
    """checkAttachableInlineVolume: a migratable inline disk counts under its CSI driver
    (TranslateInTreeInlineVolumeToCSI's handle); one the translator refuses is an error."""
    migration = MIGRATIONS.get(v.source)
    if migration is None or not _migration_on(csi_node):
        return
    try:
        handle = inline_handle(v.source, v.disk)
    except TranslationError as exc:
        raise _Failure(ERROR, f"converting volume({v.name}) from inline to csi: {exc}") from None
    into[f"{migration.driver}/{handle}"] = attach_limit_key(migration.driver)


def _volumes_of(
    known: dict, storage: Storage, pod: Pod, csi_node: CSINode | None
) -> dict[str, str] | _Failure:
    """_attachable_volumes of a pod of the view (an existing pod), kept per view: a pod's
    volumes depend only on the storage objects and on whether its node has a CSINode
    (migration), and preemption asks for the same pods again at every reprieve."""
    key = (id(pod), csi_node is not None)
    hit = known.get(key)
    if hit is not None and hit[0] is pod:
        return hit[1]
    found: dict[str, str] = {}
    try:
        _attachable_volumes(storage, pod, csi_node, False, found)
    except _Failure as failure:
        known[key] = (pod, failure)
        return failure
    known[key] = (pod, found)
    return found


def _attached_by_volume_attachments(storage: Storage, node_name: str) -> dict[str, str]:
    """The CSI volumes VolumeAttachments put on the node, attached yet or not:
    "<attacher>/<handle of the PV>" -> the attacher's limit key (a PV missing from the
    snapshot, or not a CSI volume, is not counted). As the 1.35 scheduler counts them
    (observed with its framework: see the README)."""
    found: dict[str, str] = {}
    for va in storage.attachments_on(node_name):
        pv = storage.pvs.get(va.persistent_volume_name)
        if pv is None or not pv.csi_handle:
            continue
        found[f"{va.attacher}/{pv.csi_handle}"] = attach_limit_key(va.attacher)
    return found


def _volume_limits(csi_node: CSINode | None) -> dict[str, int]:
    """getVolumeLimits: the CSINode's per-driver allocatable counts (1.35 no longer reads the
    node's attachable-volumes-* allocatable)."""
    if csi_node is None:
        return {}
    return {
        attach_limit_key(d.name): d.allocatable_count
        for d in csi_node.drivers
        if d.allocatable_count is not None
    }


class NodeVolumeLimits(PreFilterPlugin, KeepsVerdict, ReadsPodVolumes):
    name = "NodeVolumeLimits"

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        for v in state.pod.volumes:
            if v.source in ("persistentVolumeClaim", "ephemeral") or v.source in MIGRATIONS:
                return None, OK
        return None, SKIPPED

    def filter(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> Status | None:
        pod = state.pod
        if not pod.volumes or state.view is None:
            return None
        view = state.view
        storage = view.storage
        pods = ns.pods if ns.pods is not None else ni.pods
        csi_node, limits, on_node = _node_entry(view, storage, ni)
        new = self._new_volumes(state, storage, csi_node)
        if isinstance(new, _Failure):  # the pod's own claims are checked on every node
            return Status(new.code, (new.message,), self.name)
        if not new or not limits:
            return None
        if pods is not ni.pods:  # pods added or taken away (nominated pods, preemption)
            on_node = _on_node(view, storage, ni, pods, csi_node)
        if isinstance(on_node, _Failure):
            return Status(ERROR, (on_node.message,), self.name)
        of_pods, attached_count = on_node
        new_count: dict[str, int] = {}
        for unique, key in new.items():
            if unique not in of_pods:  # a volume a pod of the node uses is not counted twice
                new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return Status(UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,), self.name)
        return None

    def keeps_verdict(self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]) -> bool:
        """Whether the verdict on ``ni`` is the same whichever of ``victims`` are on it: the
        pod adds no volume that counts, the node has no limit, or under every limit key of
        the pod's new volumes the most the filter can count (what every pod of the node and
        its VolumeAttachments hold, plus every new volume) is within the limit; a pod whose
        volumes cannot be read fails the filter, and nominated pods are not looked at, so
        both answer no. Not upstream: preemption's fast path asks
        (Framework.reprieve_on_sums_at)."""
        if not state.pod.volumes or state.view is None:
            return True
        storage = state.view.storage
        csi_node, limits, on_node = _node_entry(state.view, storage, ni)
        new = self._new_volumes(state, storage, csi_node)
        if isinstance(new, _Failure) or not new or not limits:
            return True
        if isinstance(on_node, _Failure) or state.nominated.get(ni.name):
            return False
        attached_count = on_node[1]
        new_count: dict[str, int] = {}
        for key in new.values():
            new_count[key] = new_count.get(key, 0) + 1
        for key, count in new_count.items():
            limit = limits.get(key)
            if limit is not None and attached_count.get(key, 0) + count > limit:
                return False
        return True

    @staticmethod
    def _new_volumes(
        state: CycleState, storage: Storage, csi_node: CSINode | None
    ) -> dict[str, str] | _Failure:
        """The pod's own attachable volumes, once per cycle for nodes with a CSINode and
        once for nodes without (only in-tree migration depends on the node)."""
        cache = state.data.setdefault(_NEW_VOLUMES, {})
        key = csi_node is not None
        found = cache.get(key)
        if found is None:
            volumes: dict[str, str] = {}
            try:
                _attachable_volumes(storage, state.pod, csi_node, True, volumes)
                found = volumes
            except _Failure as failure:
                found = failure
            cache[key] = found
        return found


def _node_entry(
    view: SchedulerView, storage: Storage, ni: NodeInfo
) -> tuple[CSINode | None, dict[str, int], tuple[dict[str, str], dict[str, int]] | _Failure | None]:
    """The node as the snapshot holds it, looked at once per view: its CSINode, its limits
    and (where it has a limit) what its pods and VolumeAttachments hold (``_on_node``)."""
    nodes = view.derived(_ON_NODE, dict)
    known = nodes.get(ni.name)
    if known is None:
        csi_node = storage.csi_nodes.get(ni.name)
        limits = _volume_limits(csi_node)
        known = nodes[ni.name] = (
            csi_node,
            limits,
            _on_node(view, storage, ni, ni.pods, csi_node) if limits else None,
        )
    return known


def _on_node(
    view: SchedulerView,
    storage: Storage,
    ni: NodeInfo,
    pods: Sequence[PodInfo],
    csi_node: CSINode | None,
) -> tuple[dict[str, str], dict[str, int]] | _Failure:
    """What is attached to the node: the volumes of ``pods`` (unique name -> limit key),
    and per limit key how many unique volumes they and the node's VolumeAttachments
    hold."""
    known = view.derived(_VOLUMES_OF_PODS, dict)
    of_pods: dict[str, str] = {}
    for pi in pods:
        if pi.pod is not None:
            found = _volumes_of(known, storage, pi.pod, csi_node)
            if isinstance(found, _Failure):
                return found
            of_pods.update(found)
    counts: dict[str, int] = {}
    for key in of_pods.values():
        counts[key] = counts.get(key, 0) + 1
    for unique, key in _attached_by_volume_attachments(storage, ni.name).items():
        if unique not in of_pods:  # counted once, and never taken off the new ones
            counts[key] = counts.get(key, 0) + 1
    return of_pods, counts
