"""kubectl drain's pod filters: which pods of a node are deleted, skipped, or stop the drain.

Mirrors k8s.io/kubectl/pkg/drain ``filters.go`` (v1.35): ``Helper.makeFilters`` runs, in
order, ``skipDeletedFilter``, ``daemonSetFilter``, ``mirrorPodFilter``,
``localStorageFilter`` and ``unreplicatedFilter``; ``GetPodsForDeletion`` stops at the first
filter that does not delete the pod, so a pod's status is that filter's, or the last
filter's when every filter deletes it (a warning of an earlier filter is then dropped, as
upstream's TODO says). A status is ``okay`` (delete), ``skip`` (leave the pod, silently),
``warning`` (delete or leave it, with a message) or ``error`` (the drain of the node fails).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from service.engine.objects import Pod
from service.engine.qos import is_mirror_pod

__all__ = [
    "DAEMONSET_FATAL",
    "DAEMONSET_WARNING",
    "LOCAL_STORAGE_FATAL",
    "LOCAL_STORAGE_WARNING",
    "UNMANAGED_FATAL",
    "UNMANAGED_WARNING",
    "DrainOptions",
    "PodDeleteStatus",
    "pod_delete_status",
]

# filters.go's messages, as kubectl prints them.
DAEMONSET_FATAL = "DaemonSet-managed Pods (use --ignore-daemonsets to ignore)"
DAEMONSET_WARNING = "ignoring DaemonSet-managed Pods"
LOCAL_STORAGE_FATAL = "Pods with local storage (use --delete-emptydir-data to override)"
LOCAL_STORAGE_WARNING = "deleting Pods with local storage"
UNMANAGED_FATAL = "cannot delete Pods that declare no controller (use --force to override)"
UNMANAGED_WARNING = "deleting Pods that declare no controller"

OKAY, SKIP, WARNING, ERROR = "Okay", "Skip", "Warning", "Error"


@dataclass(frozen=True, slots=True)
class DrainOptions:
    """kubectl drain's flags that decide a pod's fate, with kubectl's defaults."""

    ignore_daemonsets: bool = False  # --ignore-daemonsets
    delete_emptydir_data: bool = False  # --delete-emptydir-data
    force: bool = False  # --force
    disable_eviction: bool = False  # --disable-eviction: DELETE, bypassing PDBs
    skip_wait_for_delete_timeout: int = 0  # --skip-wait-for-delete-timeout (seconds)
    ignore_errors: bool = False  # --ignore-errors: go on with the next node


@dataclass(frozen=True, slots=True)
class PodDeleteStatus:
    """upstream's PodDeleteStatus: delete the pod or not, why (``reason``: Okay, Skip,
    Warning, Error), the message, and which filter decided (Verdict's own label)."""

    delete: bool
    reason: str
    message: str = ""
    rule: str = ""  # the filter: SkipDeleted, DaemonSet, MirrorPod, LocalStorage, Unreplicated

    @property
    def is_error(self) -> bool:
        return self.reason == ERROR


_OKAY = PodDeleteStatus(True, OKAY)


def _terminal(pod: Pod) -> bool:
    return pod.phase in ("Succeeded", "Failed")


def skip_deleted(pod: Pod, options: DrainOptions, now: datetime | None) -> PodDeleteStatus:
    """skipDeletedFilter / shouldSkipPod: a pod deleted longer ago than
    --skip-wait-for-delete-timeout (when positive) is skipped."""
    timeout = options.skip_wait_for_delete_timeout
    deleted = pod.deletion_timestamp
    # int(time.Now().Sub(deletionTimestamp).Seconds()) > timeout: truncated seconds.
    if (
        timeout > 0
        and deleted is not None
        and now is not None
        and (int((now - deleted).total_seconds()) > timeout)
    ):
        return PodDeleteStatus(False, SKIP, rule="SkipDeleted")
    return _OKAY


def daemonset(pod: Pod, options: DrainOptions) -> PodDeleteStatus:
    """daemonSetFilter: a running DaemonSet pod is never deleted; without
    --ignore-daemonsets it is an error. The DaemonSet is taken to exist (a snapshot does not
    hold DaemonSets; upstream deletes an orphan under --force)."""
    ref = pod.controller
    if ref is None or ref.kind != "DaemonSet" or _terminal(pod):
        return _OKAY
    if not options.ignore_daemonsets:
        return PodDeleteStatus(False, ERROR, DAEMONSET_FATAL, "DaemonSet")
    return PodDeleteStatus(False, WARNING, DAEMONSET_WARNING, "DaemonSet")


def mirror_pod(pod: Pod) -> PodDeleteStatus:
    """mirrorPodFilter: the API server's copy of a static pod is skipped."""
    if is_mirror_pod(pod):
        return PodDeleteStatus(False, SKIP, rule="MirrorPod")
    return _OKAY


def local_storage(pod: Pod, options: DrainOptions) -> PodDeleteStatus:
    """localStorageFilter over hasLocalStorage (any emptyDir volume, whatever its medium)."""
    if not pod.empty_dir_names or _terminal(pod):
        return _OKAY
    if not options.delete_emptydir_data:
        return PodDeleteStatus(False, ERROR, LOCAL_STORAGE_FATAL, "LocalStorage")
    return PodDeleteStatus(True, WARNING, LOCAL_STORAGE_WARNING, "LocalStorage")


def unreplicated(pod: Pod, options: DrainOptions) -> PodDeleteStatus:
    """unreplicatedFilter: a running pod without a controller reference is an error unless
    --force."""
    if _terminal(pod) or pod.controller is not None:
        return _OKAY
    if options.force:
        return PodDeleteStatus(True, WARNING, UNMANAGED_WARNING, "Unreplicated")
    return PodDeleteStatus(False, ERROR, UNMANAGED_FATAL, "Unreplicated")


def pod_delete_status(pod: Pod, options: DrainOptions, now: datetime | None) -> PodDeleteStatus:
    """GetPodsForDeletion for one pod: the filters in makeFilters' order, stopping at the
    first that does not delete it."""
    status = _OKAY
    for check in (
        lambda: skip_deleted(pod, options, now),
        lambda: daemonset(pod, options),
        lambda: mirror_pod(pod),
        lambda: local_storage(pod, options),
        lambda: unreplicated(pod, options),
    ):
        status = check()
        if not status.delete:
            break
    return status
