"""Kubernetes objects for the volume plugins' table tests, and a runner that takes them
through ingest into a scheduler view and calls one plugin's PreFilter and Filter as
upstream's tests call them (Filter runs even after PreFilter answered Skip or an error)."""

from __future__ import annotations

from service.engine.objects import Cluster
from service.engine.scheduler.framework import OK, CycleState, Status
from service.engine.scheduler.plugins import REGISTRY
from service.engine.scheduler.snapshot import SchedulerView
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
HOSTNAME = "kubernetes.io/hostname"
BIND_COMPLETED = {"pv.kubernetes.io/bind-completed": "yes"}


def k8s_node(name: str, labels: dict | None = None, allocatable: dict | None = None) -> dict:
    alloc = {"cpu": "4", "memory": "8Gi", "pods": "110", **(allocatable or {})}
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": labels or {}},
        "status": {"allocatable": alloc, "capacity": alloc},
    }


def k8s_pod(
    name: str,
    volumes: list | None = None,
    *,
    namespace: str = "default",
    node: str = "",
    uid: str = "",
) -> dict:
    spec: dict = {"containers": [{"name": "c"}], "volumes": volumes or []}
    if node:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": uid or f"uid-{name}"},
        "spec": spec,
        "status": {"phase": "Running"} if node else {},
    }


def claim_volume(claim: str, name: str = "", read_only: bool = False) -> dict:
    source: dict = {"claimName": claim}
    if read_only:
        source["readOnly"] = True
    return {"name": name or f"vol-{claim}", "persistentVolumeClaim": source}


def ephemeral_volume(name: str) -> dict:
    return {"name": name, "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}


def k8s_pvc(
    name: str,
    *,
    namespace: str = "default",
    volume_name: str = "",
    storage_class: str | None = None,
    access_modes: list | None = None,
    request: str | None = None,
    annotations: dict | None = None,
    owner_uid: str = "",
    phase: str = "",
    deleting: bool = False,
    uid: str = "",
    selector: dict | None = None,
    volume_mode: str | None = None,
) -> dict:
    spec: dict = {"volumeName": volume_name}
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if access_modes is not None:
        spec["accessModes"] = access_modes
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    if selector is not None:
        spec["selector"] = selector
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    meta: dict = {"name": name, "namespace": namespace, "annotations": annotations or {}}
    if uid:
        meta["uid"] = uid
    if owner_uid:
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": "owner",
                "uid": owner_uid,
                "controller": True,
            }
        ]
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {
        "kind": "PersistentVolumeClaim",
        "metadata": meta,
        "spec": spec,
        "status": {"phase": phase},
    }


def k8s_pv(
    name: str,
    *,
    labels: dict | None = None,
    storage_class: str = "",
    capacity: str | None = None,
    access_modes: list | None = None,
    node_affinity: list | None = None,
    claim: tuple[str, str] | None = None,
    claim_uid: str = "",
    phase: str = "",
    csi: tuple[str, str] | None = None,
    source: dict | None = None,
    volume_mode: str | None = None,
    deleting: bool = False,
) -> dict:
    spec: dict = {"storageClassName": storage_class}
    if capacity is not None:
        spec["capacity"] = {"storage": capacity}
    if access_modes is not None:
        spec["accessModes"] = access_modes
    if node_affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": node_affinity}}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1], "uid": claim_uid}
    if csi is not None:
        spec["csi"] = {"driver": csi[0], "volumeHandle": csi[1]}
    if volume_mode is not None:
        spec["volumeMode"] = volume_mode
    spec.update(source or {})
    meta: dict = {"name": name, "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    return {"kind": "PersistentVolume", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def k8s_storage_class(
    name: str,
    mode: str | None = None,
    provisioner: str = "",
    allowed_topologies: list | None = None,
) -> dict:
    out: dict = {"kind": "StorageClass", "metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        out["volumeBindingMode"] = mode
    if allowed_topologies is not None:
        out["allowedTopologies"] = allowed_topologies
    return out


def k8s_csi_node(name: str, limits: dict[str, int | None], migrated: str = "") -> dict:
    meta: dict = {"name": name}
    if migrated:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    drivers = []
    for driver, count in limits.items():
        entry: dict = {"name": driver, "nodeID": name}
        if count is not None:
            entry["allocatable"] = {"count": count}
        drivers.append(entry)
    return {"kind": "CSINode", "metadata": meta, "spec": {"drivers": drivers}}


def expression(key: str, operator: str, values: list | None = None) -> dict:
    out: dict = {"key": key, "operator": operator}
    if values is not None:
        out["values"] = values
    return out


def run_plugin(
    plugin: str, pod: dict, objects: list, node: str | None = None
) -> tuple[frozenset[str] | None, Status, Status | None]:
    """(PreFilterResult's nodes, PreFilter status, Filter status on ``node`` or None),
    statuses without the plugin name so rows read like upstream's."""
    view = SchedulerView(Cluster(snapshot_from_objects(objects)), settings=DEFAULT_SETTINGS)
    instance = REGISTRY[plugin](settings=DEFAULT_SETTINGS)
    state = CycleState(pod_from_object(pod), view, settings=DEFAULT_SETTINGS)
    names, pre = instance.pre_filter(state, view.nodes)
    got = None
    if node is not None:
        ni = view.by_name[node]
        got = instance.filter(state, ni, ni) or OK
        got = Status(got.code, got.reasons)
    return names, Status(pre.code, pre.reasons), got
