"""The snapshot builder: the tables of the kinds Verdict reads (which wire struct, which
converter, where each is kept), and ``SnapshotBuilder``, which collects objects one by one,
checks their uniqueness and builds the ``Snapshot``."""

from __future__ import annotations

from collections import Counter
from datetime import datetime
from typing import Any

import msgspec

from service.engine import objects as m
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError
from service.ingest.kube.decode import Interner, decode_json
from service.ingest.kube.nodes import node_stats, to_lease, to_node
from service.ingest.kube.pods import to_pod
from service.ingest.kube.resource import RESOURCE_KINDS
from service.ingest.kube.storage import (
    to_csi_driver,
    to_csi_node,
    to_csi_storage_capacity,
    to_persistent_volume,
    to_persistent_volume_claim,
    to_storage_class,
    to_volume_attachment,
)
from service.ingest.kube.workloads import (
    to_namespace,
    to_pdb,
    to_priority_class,
    to_service,
    workload_converter,
)
from service.ingest.names import metadata_errors

# kind -> (Snapshot field, namespaced)
_STORAGE_KINDS = {
    "PersistentVolume": ("persistent_volumes", False),
    "PersistentVolumeClaim": ("persistent_volume_claims", True),
    "StorageClass": ("storage_classes", False),
    "CSINode": ("csi_nodes", False),
    "CSIDriver": ("csi_drivers", False),
    "CSIStorageCapacity": ("csi_storage_capacities", True),
    "VolumeAttachment": ("volume_attachments", False),
}


_KINDS = {
    "Pod": (wire.Pod, to_pod),
    "Node": (wire.Node, to_node),
    "PodDisruptionBudget": (wire.PodDisruptionBudget, to_pdb),
    "PriorityClass": (wire.PriorityClass, to_priority_class),
    "Lease": (wire.Lease, to_lease),
    "Namespace": (wire.Namespace, to_namespace),
    "Service": (wire.Service, to_service),
    "ReplicaSet": (wire.Workload, workload_converter("ReplicaSet")),
    "StatefulSet": (wire.Workload, workload_converter("StatefulSet")),
    "ReplicationController": (
        wire.ReplicationController,
        workload_converter("ReplicationController"),
    ),
    "PersistentVolume": (wire.PersistentVolume, to_persistent_volume),
    "PersistentVolumeClaim": (wire.PersistentVolumeClaim, to_persistent_volume_claim),
    "StorageClass": (wire.StorageClass, to_storage_class),
    "CSINode": (wire.CSINode, to_csi_node),
    "CSIDriver": (wire.CSIDriver, to_csi_driver),
    "CSIStorageCapacity": (wire.CSIStorageCapacity, to_csi_storage_capacity),
    "VolumeAttachment": (wire.VolumeAttachment, to_volume_attachment),
    **{kind: (raw, convert) for kind, (raw, convert, _, _) in RESOURCE_KINDS.items()},
}
_CONTROLLER_KINDS = ("ReplicaSet", "StatefulSet", "ReplicationController")
_CLUSTER_SCOPED_KINDS = ("Node", "PriorityClass", "Namespace", "DeviceClass", "ResourceSlice")
# The builder's list of each kind outside storage; the workload controllers share one.
_COLLECTED_IN = {
    "Node": "nodes",
    "Pod": "pods",
    "PodDisruptionBudget": "pdbs",
    "PriorityClass": "priority_classes",
    "Namespace": "namespaces",
    "Service": "services",
    "Lease": "leases",
    **dict.fromkeys(_CONTROLLER_KINDS, "controllers"),
}


class SnapshotBuilder:
    """Collects objects one by one, checks uniqueness, and builds the Snapshot."""

    def __init__(self) -> None:
        self.nodes: list[m.Node] = []
        self.pods: list[m.Pod] = []
        self.pdbs: list[m.PodDisruptionBudget] = []
        self.priority_classes: list[m.PriorityClass] = []
        self.leases: list[m.Lease] = []
        self.namespaces: list[m.Namespace] = []
        self.services: list[m.Service] = []
        self.controllers: list[m.WorkloadController] = []
        self.storage: dict[str, list[Any]] = {field: [] for field, _ in _STORAGE_KINDS.values()}
        self.storage.update({field: [] for _, _, field, _ in RESOURCE_KINDS.values()})
        self.ignored: Counter[str] = Counter()
        self.stats: dict[str, m.NodeStats] = {}
        self.kubelet_configs: dict[str, dict] = {}
        self._seen: dict[tuple[str, str, str], str] = {}
        self.errors: list[FieldError] = []
        self.shared = Interner()
        # kind -> (the list its objects are collected in, whether they are namespaced)
        self._collected_in = (
            {
                kind: (getattr(self, attr), kind not in _CLUSTER_SCOPED_KINDS)
                for kind, attr in _COLLECTED_IN.items()
            }
            | {
                kind: (self.storage[field], namespaced)
                for kind, (field, namespaced) in _STORAGE_KINDS.items()
            }
            | {
                kind: (self.storage[field], namespaced)
                for kind, (_, _, field, namespaced) in RESOURCE_KINDS.items()
            }
        )

    def _unique(self, kind: str, namespace: str, name: str, path: str) -> bool:
        key = (kind, namespace, name)
        first = self._seen.get(key)
        if first is not None:
            what = f"{namespace}/{name}" if namespace else name
            self.errors.append(
                FieldError(f"{path}.metadata.name", f"duplicate {kind} {what!r} (first at {first})")
            )
            return False
        self._seen[key] = path
        return True

    def add_raw(self, kind: str, raw: Any, path: str) -> None:
        invalid = metadata_errors(
            kind, raw.metadata, path, namespaced=kind not in _CLUSTER_SCOPED_KINDS
        )
        if invalid:
            self.errors.extend(invalid)
            return
        try:
            if kind == "Pod":
                obj = to_pod(raw, path, self.shared)
            else:
                obj = _KINDS[kind][1](raw, path)
        except IngestError as exc:
            self.errors.extend(exc.errors)
            return
        collected, namespaced = self._collected_in[kind]
        if self._unique(kind, obj.namespace if namespaced else "", obj.name, path):
            collected.append(obj)

    def add_json_item(self, data: msgspec.Raw, path: str) -> None:
        """Add one object's JSON: a missing kind, or metadata that is not an object, is an
        error, one Verdict does not read is counted as ignored, and one it reads is decoded into its wire struct and added."""
        try:
            first = decode_json(data, wire.TypeOnly, path)
        except IngestError as exc:
            self.errors.extend(exc.errors)
            return
        kind = first.kind
        if first.metadata and memoryview(first.metadata)[:1] != b"{":
            # Every Kubernetes object's metadata is an object, of a kind Verdict ignores too.
            self.errors.append(FieldError(f"{path}.metadata", "expected an object"))
            return
        entry = _KINDS.get(kind)
        if entry is None:
            if not kind:
                self.errors.append(FieldError(f"{path}.kind", "object has no kind"))
            else:
                self.ignored[kind] += 1
            return
        try:
            raw = decode_json(data, entry[0], path)
        except IngestError as exc:
            self.errors.extend(exc.errors)
            return
        self.add_raw(kind, raw, path)

    def add_stats(self, node_name: str, summary: wire.Summary) -> None:
        self.stats[node_name] = node_stats(node_name, summary)

    def add_kubelet_config(self, node_name: str, config: dict) -> None:
        """A node's configz answer: the KubeletConfiguration, bare or as configz wraps it."""
        inner = config.get("kubeletconfig", config)
        if not isinstance(inner, dict):
            self.errors.append(FieldError(f"kubeletConfigs.{node_name}", "expected an object"))
            return
        self.kubelet_configs[node_name] = inner

    def build(self, captured_at: datetime | None = None) -> m.Snapshot:
        node_names = {n.name for n in self.nodes}
        for field_name, per_node in (
            ("stats", self.stats),
            ("kubeletConfigs", self.kubelet_configs),
        ):
            for name in per_node:
                if name not in node_names:
                    self.errors.append(
                        FieldError(f"{field_name}.{name}", "no node of that name in the snapshot")
                    )
        if self.errors:
            raise IngestError(self.errors)
        return m.Snapshot(
            nodes=tuple(self.nodes),
            pods=tuple(self.pods),
            pdbs=tuple(self.pdbs),
            priority_classes=tuple(self.priority_classes),
            leases=tuple(self.leases),
            stats=self.stats,
            namespaces=tuple(self.namespaces),
            services=tuple(self.services),
            controllers=tuple(self.controllers),
            **{field: tuple(objs) for field, objs in self.storage.items()},
            captured_at=captured_at,
            ignored=dict(sorted(self.ignored.items())),
            kubelet_configs=self.kubelet_configs,
        )
