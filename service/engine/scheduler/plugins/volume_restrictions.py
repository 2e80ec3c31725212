"""VolumeRestrictions (kubernetes/kubernetes pkg/scheduler/framework/plugins/volumerestrictions,
v1.35): PreFilter (the pod's ReadWriteOncePod claims and how many scheduled pods use them),
PreFilterExtensions (a pod added to or removed from a node changes that count: preemption
frees a claim by removing its holder) and Filter (inline disk conflicts with the node's pods,
then the ReadWriteOncePod conflict)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.engine.objects import Pod, PodVolume
from service.engine.scheduler.framework import (
    OK,
    SKIPPED,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    CycleState,
    KeepsVerdict,
    NodeInfo,
    NodeInfoPods,
    PodInfo,
    PreFilterExtensions,
    PreFilterResult,
    Status,
    prefilter_state_missing,
)
from service.engine.scheduler.plugins.helper import ReadsPodVolumes
from service.engine.scheduler.storage import pvc_not_found

__all__ = [
    "ERR_REASON_DISK_CONFLICT",
    "ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT",
    "VolumeRestrictions",
]

ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode "
    "already in-use by another pod"
)
# The same conflict's reason up to v1.33 (``settings.rwop_reason_says_in_use``).
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_V133 = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"
)
_CONFLICT_SOURCES = frozenset({"gcePersistentDisk", "awsElasticBlockStore", "iscsi", "rbd"})
_USED_CLAIMS = "VolumeRestrictions/usedClaims"


def _is_volume_conflict(volume: PodVolume, existing: Pod) -> bool:
    """isVolumeConflict: the same GCE PD, iSCSI IQN or RBD image (a shared monitor, same pool)
    unless both mounts are read-only; the same EBS volume ID always."""
    source = volume.source
    for other in existing.volumes:
        if other.source != source or other.disk != volume.disk:
            continue
        both_read_only = volume.read_only and other.read_only
        if source == "awsElasticBlockStore":
            return True
        if source in ("gcePersistentDisk", "iscsi") and not both_read_only:
            return True
        if (
            source == "rbd"
            and other.pool == volume.pool
            and set(other.monitors) & set(volume.monitors)
            and not both_read_only
        ):
            return True
    return False


@dataclass(slots=True)
class _PreFilterState:
    """preFilterState: the pod's ReadWriteOncePod claim names and the number of references
    to them by scheduled pods."""

    claims: frozenset[str]
    conflicts: int

    def clone(self) -> _PreFilterState:
        return _PreFilterState(self.claims, self.conflicts)

    def update_with(self, pi: PodInfo, sign: int) -> None:
        """updateWithPod: the references ``pi`` holds to the claims, by claim name alone
        (upstream does not compare namespaces here)."""
        pod = pi.pod
        if pod is None:
            return
        for v in pod.volumes:
            if v.source == "persistentVolumeClaim" and v.claim_name in self.claims:
                self.conflicts += sign


class VolumeRestrictions(PreFilterExtensions, KeepsVerdict, ReadsPodVolumes):
    name = "VolumeRestrictions"

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        """Skip unless the pod has an inline disk to check or a ReadWriteOncePod claim in use;
        a missing claim rejects the pod (UnschedulableAndUnresolvable)."""
        pod = state.pod
        needs_check = any(v.source in _CONFLICT_SOURCES for v in pod.volumes)
        storage = state.view.storage if state.view is not None else None
        claims: set[str] = set()
        for v in pod.volumes:
            if v.source != "persistentVolumeClaim":
                continue
            pvc = storage.pvc(pod.namespace, v.claim_name) if storage else None
            if pvc is None:
                return None, Status(UNRESOLVABLE, (pvc_not_found(v.claim_name),), self.name)
            if "ReadWriteOncePod" in pvc.access_modes:
                claims.add(pvc.name)
        conflicts = 0
        if claims and state.view is not None:
            used = state.view.derived(_USED_CLAIMS, lambda: _claims_in_use(state.view.nodes))
            conflicts = sum(1 for c in claims if (pod.namespace, c) in used)
        if not needs_check and conflicts == 0:
            return None, SKIPPED
        state.write(self.name, _PreFilterState(frozenset(claims), conflicts))
        return None, OK

    def add_pod(self, state: CycleState, added: PodInfo, ni: NodeInfo) -> None:
        found = state.read(self.name)
        if found is not None:
            found.update_with(added, 1)

    def remove_pod(self, state: CycleState, removed: PodInfo, ni: NodeInfo) -> None:
        found = state.read(self.name)
        if found is not None:
            found.update_with(removed, -1)

    def keeps_verdict(self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]) -> bool:
        """Whether the verdict on ``ni`` is the same whichever of ``victims`` are on it: none
        of them holds a disk that conflicts with one of the pod's inline disks or refers to
        one of its ReadWriteOncePod claims (by name, as updateWithPod counts). Not upstream:
        preemption's fast path asks (Framework.reprieve_on_sums_at)."""
        found = state.read(self.name)
        if found is None:  # the filter answers the same error on every node
            return True
        disks = [v for v in state.pod.volumes if v.source in _CONFLICT_SOURCES]
        for pi in victims:
            pod = pi.pod
            if pod is None:
                continue
            if any(_is_volume_conflict(v, pod) for v in disks):
                return False
            if found.claims and any(
                v.source == "persistentVolumeClaim" and v.claim_name in found.claims
                for v in pod.volumes
            ):
                return False
        return True

    def filter(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> Status | None:
        pod = state.pod
        pods = ns.pods if ns.pods is not None else ni.pods
        for v in pod.volumes:
            if v.source not in _CONFLICT_SOURCES:
                continue
            for pi in pods:
                if pi.pod is not None and _is_volume_conflict(v, pi.pod):
                    return Status(UNSCHEDULABLE, (ERR_REASON_DISK_CONFLICT,), self.name)
        found = state.read(self.name)
        if found is None:
            return prefilter_state_missing(self.name)
        if found.conflicts > 0:
            if self.settings.rwop_reason_says_in_use:
                reason = ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT
            else:
                reason = ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT_V133
            return Status(UNSCHEDULABLE, (reason,), self.name)
        return None


def _claims_in_use(nodes: Sequence[NodeInfo]) -> frozenset[tuple[str, str]]:
    """StorageInfos().IsPVCUsedByPods: (namespace, claim) of every claim a scheduled pod
    uses (NodeInfo.PVCRefCounts counts persistentVolumeClaim volumes only)."""
    used: set[tuple[str, str]] = set()
    for ni in nodes:
        for pi in ni.pods:
            pod = pi.pod
            if pod is None:
                continue
            for v in pod.volumes:
                if v.source == "persistentVolumeClaim":
                    used.add((pod.namespace, v.claim_name))
    return frozenset(used)
