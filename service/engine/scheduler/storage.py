"""The storage objects of a snapshot as the scheduler's informers list them, for the volume
plugins (VolumeBinding, VolumeZone, NodeVolumeLimits, VolumeRestrictions).

Mirrors the listers those plugins are built with upstream (PersistentVolume, ...Claim,
StorageClass, CSINode, CSIDriver, CSIStorageCapacity) and the lookups they share:
``GetPersistentVolumeClaimClass``, ``ephemeral.VolumeClaimName`` / ``VolumeIsForPod``,
and the API's NotFound messages, which the plugins pass on as their reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from service.engine.objects import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    Pod,
    PodVolume,
    Snapshot,
    StorageClass,
    VolumeAttachment,
)

__all__ = [
    "EMPTY_STORAGE",
    "Storage",
    "claim_name",
    "ephemeral_owner_error",
    "pv_not_found",
    "pvc_not_found",
    "storage_class_not_found",
]


def pvc_not_found(name: str) -> str:
    """The API server's NotFound error for a claim (apierrors.NewNotFound's message)."""
    return f'persistentvolumeclaim "{name}" not found'


def pv_not_found(name: str) -> str:
    return f'persistentvolume "{name}" not found'


def storage_class_not_found(name: str) -> str:
    return f'storageclass.storage.k8s.io "{name}" not found'


def claim_name(pod: Pod, volume: PodVolume) -> str | None:
    """The claim a volume uses: its claimName, or ``<pod>-<volume>`` for a generic ephemeral
    volume (ephemeral.VolumeClaimName); None for an inline volume."""
    if volume.source == "persistentVolumeClaim":
        return volume.claim_name
    if volume.source == "ephemeral":
        return f"{pod.name}-{volume.name}"
    return None


def ephemeral_owner_error(pod: Pod, pvc: PersistentVolumeClaim) -> str | None:
    """ephemeral.VolumeIsForPod: an ephemeral volume's claim must be controlled by the pod."""
    if pvc.controller_uid and pvc.controller_uid == pod.uid:
        return None
    return (
        f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
        f"{pod.namespace}/{pod.name} (pod is not owner)"
    )


@dataclass(slots=True)
class Storage:
    """The listers: objects by name (claims and capacities by namespace too), PVs by class."""

    pvs: dict[str, PersistentVolume] = field(default_factory=dict)
    pvcs: dict[tuple[str, str], PersistentVolumeClaim] = field(default_factory=dict)
    classes: dict[str, StorageClass] = field(default_factory=dict)
    csi_nodes: dict[str, CSINode] = field(default_factory=dict)
    csi_drivers: dict[str, CSIDriver] = field(default_factory=dict)
    capacities: Sequence[CSIStorageCapacity] = ()
    attachments: Sequence[VolumeAttachment] = ()
    _pvs_by_class: dict[str, list[PersistentVolume]] | None = None
    _attachments_by_node: dict[str, list[VolumeAttachment]] | None = None

    @classmethod
    def of(cls, snapshot: Snapshot) -> Storage:
        return cls(
            pvs={pv.name: pv for pv in snapshot.persistent_volumes},
            pvcs={(c.namespace, c.name): c for c in snapshot.persistent_volume_claims},
            classes={sc.name: sc for sc in snapshot.storage_classes},
            csi_nodes={n.name: n for n in snapshot.csi_nodes},
            csi_drivers={d.name: d for d in snapshot.csi_drivers},
            capacities=snapshot.csi_storage_capacities,
            attachments=snapshot.volume_attachments,
        )

    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return self.pvcs.get((namespace, name))

    def pvs_of_class(self, class_name: str) -> list[PersistentVolume]:
        """The PV cache's ListPVs(class): every PV of that class, in snapshot order."""
        by_class = self._pvs_by_class
        if by_class is None:
            by_class = {}
            for pv in self.pvs.values():
                by_class.setdefault(pv.storage_class, []).append(pv)
            self._pvs_by_class = by_class
        return by_class.get(class_name, [])

    def attachments_on(self, node_name: str) -> list[VolumeAttachment]:
        """The VolumeAttachments naming the node, in snapshot order."""
        by_node = self._attachments_by_node
        if by_node is None:
            by_node = {}
            for va in self.attachments:
                by_node.setdefault(va.node_name, []).append(va)
            self._attachments_by_node = by_node
        return by_node.get(node_name, [])


EMPTY_STORAGE = Storage()
