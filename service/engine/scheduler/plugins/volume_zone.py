"""VolumeZone (kubernetes/kubernetes pkg/scheduler/framework/plugins/volumezone, v1.35):
PreFilter (getPVbyPod: the zone and region labels of the volumes bound to the pod's claims)
and Filter (each label's values against the node's). No PreFilterExtensions upstream."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.engine.objects import PersistentVolume
from service.engine.scheduler.framework import (
    OK,
    SKIPPED,
    UNRESOLVABLE,
    CycleState,
    KeepsVerdict,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    PreFilterResult,
    Status,
)
from service.engine.scheduler.plugins.helper import ReadsPodVolumes
from service.engine.scheduler.storage import (
    pv_not_found,
    pvc_not_found,
    storage_class_not_found,
)

__all__ = ["ERR_REASON_CONFLICT", "VolumeZone", "pv_topologies"]

ERR_REASON_CONFLICT = "node(s) had no available volume zone"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_TO_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}
MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    """pvTopology: one topology label of a PV and the set of values it lists."""

    pv_name: str
    key: str
    values: frozenset[str]


def _label_zones(value: str) -> frozenset[str] | None:
    """volumehelpers.LabelZonesToSet: values split on "__", trimmed; None (the label is
    ignored) when one of them is empty."""
    zones = set()
    for part in value.split(MULTI_ZONE_DELIMITER):
        trimmed = part.strip()
        if not trimmed:
            return None
        zones.add(trimmed)
    return frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> list[PVTopology]:
    """getPVTopologies: the PV's topology labels in upstream's key order."""
    found = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is None:
            continue
        zones = _label_zones(value)
        if zones is not None:
            found.append(PVTopology(pv.name, key, zones))
    return found


class VolumeZone(PreFilterPlugin, KeepsVerdict, ReadsPodVolumes):
    name = "VolumeZone"

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        """getPVbyPod over the pod's persistentVolumeClaim volumes; Skip when none is bound
        to a volume with topology labels."""
        topologies, status = self._pv_by_pod(state)
        if status is not None:
            return None, status
        if not topologies:
            return None, SKIPPED
        state.write(self.name, topologies)
        return None, OK

    def _pv_by_pod(self, state: CycleState) -> tuple[list[PVTopology], Status | None]:
        pod = state.pod
        storage = state.view.storage if state.view is not None else None
        found: list[PVTopology] = []

        def reject(reason: str) -> tuple[list[PVTopology], Status]:
            return [], Status(UNRESOLVABLE, (reason,), self.name)

        for v in pod.volumes:
            if v.source != "persistentVolumeClaim":
                continue
            if not v.claim_name:
                return reject("PersistentVolumeClaim had no name")
            pvc = storage.pvc(pod.namespace, v.claim_name) if storage else None
            if pvc is None:
                return reject(pvc_not_found(v.claim_name))
            if not pvc.volume_name:
                if not pvc.storage_class:
                    return reject("PersistentVolumeClaim had no pv name and storageClass name")
                sc = storage.classes.get(pvc.storage_class) if storage else None
                if sc is None:
                    return reject(storage_class_not_found(pvc.storage_class))
                if sc.volume_binding_mode == "WaitForFirstConsumer":
                    continue  # unbound, bound later by VolumeBinding
                return reject("PersistentVolume had no name")
            pv = storage.pvs.get(pvc.volume_name) if storage else None
            if pv is None:
                return reject(pv_not_found(pvc.volume_name))
            found.extend(pv_topologies(pv))
        return found, None

    def keeps_verdict(self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]) -> bool:
        """Always: the filter reads the pod's volumes and the node's labels, never the node's
        pods (preemption's fast path asks, see Framework.reprieve_on_sums_at)."""
        return True

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        """Every topology label of the pod's volumes must be on a node that has any topology
        label, with one of the label's values (a beta key also matches its GA key)."""
        pod = state.pod
        if not pod.volumes:
            return None
        topologies = state.read(self.name)
        if topologies is None:  # PreFilter disabled: upstream computes the volumes here
            topologies, status = self._pv_by_pod(state)
            if status is not None:
                return status
        labels = ni.node.labels
        if not any(key in labels for key in TOPOLOGY_LABELS):
            return None  # a node without topology labels (single-zone clusters) fits
        for topology in topologies:
            value = labels.get(topology.key)
            if value is None:
                value = labels.get(_TO_GA.get(topology.key, topology.key))
            if value is None or value not in topology.values:
                return Status(UNRESOLVABLE, (ERR_REASON_CONFLICT,), self.name)
        return None
