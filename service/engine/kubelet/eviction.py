"""The kubelet eviction manager: one synchronize pass on one node.

Mirrors pkg/kubelet/eviction/eviction_manager.go (managerImpl.synchronize, evictPod,
localStorageEviction) and pkg/kubelet/eviction/helpers.go (signal observations, threshold
bookkeeping, ranking, eviction message), k8s master as of 1.35/1.36, Linux, no swap.

How one pass stands in for the long-running manager:

* **First observation.** The kubelet remembers when each threshold was first met. The
  request's ``first_observed`` (signal → time) supplies that memory for every threshold of
  the signal; a threshold met now without it is first observed ``now``, so a soft threshold's
  grace period has not passed (the pass reports so).
* **Min-reclaim stickiness.** The kubelet keeps last pass's grace-satisfied thresholds
  (``thresholdsMet``) active until available ≥ threshold + minReclaim. A single pass has no
  previous pass; a threshold whose signal appears in ``first_observed`` and whose grace period
  had passed by ``now`` is taken to have been in that set, so it stays met while
  available < threshold + minReclaim. Without ``first_observed`` nothing is sticky.
* **Pressure transition period.** A node condition is reported while now − lastObservedAt <
  evictionPressureTransitionPeriod. Conditions observed in this pass are at ``now``; the
  optional ``conditions_last_observed`` (condition → time) stands for the kubelet's memory of
  earlier passes. Without it, a condition is reported only if a threshold observed now raises it.
* **Stale statistics.** thresholdsUpdatedStats compares with the previous pass's observation
  times; with no previous pass every threshold is kept (as in the kubelet's first pass).
* **Node-level reclaim.** For disk signals the kubelet first runs container/image garbage
  collection and re-measures. What GC would free is unknowable from a snapshot: the pass
  assumes it frees nothing and reports the reclaim functions that would run.
* **Order.** Where the kubelet's order is Go map order: signals and thresholds follow
  eviction_config.SIGNALS; among met thresholds, memory signals come first (as upstream),
  then hard before soft, then configuration order. Pods are taken in snapshot order; the
  ranking sort is stable (upstream: insertion sort up to 12 pods, pdqsort beyond).
* **Pods considered** are the node's pods whose phase is not Failed or Succeeded (the
  kubelet's active pods). The kubelet ranks static pods where the API shows their mirror
  pods; both are critical and never evicted.
* **emptyDir sizeLimit** eviction is not evaluated: the model carries no sizeLimit.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from fractions import Fraction
from functools import partial

from service.engine.duration import format_go_duration
from service.engine.kubelet.eviction_config import (
    OP_LESS_THAN,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_INODES,
    RESOURCE_MEMORY,
    RESOURCE_PIDS,
    SIGNAL_ALLOCATABLE_MEMORY,
    SIGNAL_CONTAINERFS,
    SIGNAL_CONTAINERFS_INODES,
    SIGNAL_IMAGEFS,
    SIGNAL_IMAGEFS_INODES,
    SIGNAL_MEMORY,
    SIGNAL_NODEFS,
    SIGNAL_NODEFS_INODES,
    SIGNAL_PID,
    SIGNAL_TO_NODE_CONDITION,
    SIGNAL_TO_RESOURCE,
    SIGNALS,
    EvictionConfig,
    Threshold,
    compare_threshold_value,
    get_threshold_quantity,
    is_hard_eviction_threshold,
    threshold_quantity_string,
)
from service.engine.objects import (
    CONFIG_MIRROR_ANNOTATION,
    FsStats,
    MemoryStats,
    NodeStats,
    Pod,
    PodStats,
    ResourceList,
)
from service.engine.qos import is_critical_pod
from service.engine.quantity import (
    BINARY_SI,
    DECIMAL_SI,
    Quantity,
    base_units_to_string,
    format_quantity,
    from_base_units,
    parse_quantity,
    wrap_int64,
)
from service.engine.resources import is_pod_level_resources_set, pod_limits, resource_request
from service.engine.version import EngineSettings

__all__ = [
    "FS_IMAGES",
    "FS_LOCAL_VOLUME_SOURCE",
    "FS_LOGS",
    "FS_ROOT",
    "NODE_CONDITIONS",
    "Comparator",
    "Eviction",
    "EvictionPass",
    "PodStatsIndex",
    "RankedPod",
    "Ranker",
    "SignalObservation",
    "active_pods",
    "build_signal_to_node_reclaim_funcs",
    "build_signal_to_rank_func",
    "disk",
    "eviction_message",
    "exceed_disk_requests",
    "exceed_memory_requests",
    "has_threshold",
    "local_storage_eviction",
    "make_signal_observations",
    "measure_disk",
    "measure_memory",
    "measure_pids",
    "memory",
    "merge_thresholds",
    "node_conditions",
    "node_conditions_last_observed_at",
    "node_conditions_observed_since",
    "ordered_by",
    "priority",
    "process",
    "rank_disk_pressure",
    "rank_memory_pressure",
    "rank_pid_pressure",
    "sort_by_eviction_priority",
    "synchronize",
    "thresholds_first_observed_at",
    "thresholds_met",
    "thresholds_met_grace_period",
    "thresholds_updated_stats",
]

# fsStatsType (pkg/kubelet/eviction/types.go)
FS_ROOT = "root"
FS_LOGS = "logs"
FS_LOCAL_VOLUME_SOURCE = "localVolumeSource"
FS_IMAGES = "images"  # contributes nothing per pod

NODE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")

IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS = 1  # eviction_manager.go, hard thresholds
_TERMINAL_PHASES = ("Failed", "Succeeded")
_NS_PER_SECOND = 1_000_000_000

# Local storage limit "signals" (eviction_manager.go metric labels).
SIGNAL_EMPTYDIR_LIMIT = "emptydirfs.limit"
SIGNAL_POD_EPHEMERAL_LIMIT = "ephemeralpodfs.limit"
SIGNAL_CONTAINER_EPHEMERAL_LIMIT = "ephemeralcontainerfs.limit"
SIGNAL_EMPTY_DIR_LIMIT = "emptydirfs.limit"

# Names of the kubelet's node-level reclaim functions.
CONTAINER_GC = "DeleteAllUnusedContainers"
IMAGE_GC = "DeleteUnusedImages"


def _elapsed_ns(now: datetime, then: datetime) -> int:
    delta = now - then
    return (delta.days * 86_400 + delta.seconds) * _NS_PER_SECOND + delta.microseconds * 1_000


# --- observations ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SignalObservation:
    """signalObservation: available and capacity (bytes or counts) and the stats time."""

    available: int | Fraction
    capacity: int
    time: datetime | None = None


def _memory_observation(memory: MemoryStats | None) -> SignalObservation | None:
    if memory is None or memory.available_bytes is None or memory.working_set_bytes is None:
        return None
    # makeSignalObservations converts the uint64 stats with int64(...): past 2^63-1 they wrap
    # (the capacity is the uint64 sum, converted the same way).
    return SignalObservation(
        wrap_int64(memory.available_bytes),
        wrap_int64(memory.available_bytes + memory.working_set_bytes),
        memory.time,
    )


def _fs_observations(
    fs: FsStats | None, bytes_signal: str, inodes_signal: str, out: dict[str, SignalObservation]
) -> None:
    if fs is None:
        return
    if fs.available_bytes is not None and fs.capacity_bytes is not None:
        out[bytes_signal] = SignalObservation(
            wrap_int64(fs.available_bytes), wrap_int64(fs.capacity_bytes), fs.time
        )
    if fs.inodes_free is not None and fs.inodes is not None:
        out[inodes_signal] = SignalObservation(
            wrap_int64(fs.inodes_free), wrap_int64(fs.inodes), fs.time
        )


def make_signal_observations(stats: NodeStats) -> dict[str, SignalObservation]:
    """helpers.go makeSignalObservations (Linux, no swap; k8s 1.35). A signal is observed
    only when both of its fields are present. memory: available = availableBytes, capacity =
    availableBytes + workingSetBytes; allocatableMemory: the same from the "pods" system
    container; pid: available = maxpid − curproc, capacity = maxpid."""
    result: dict[str, SignalObservation] = {}
    memory = _memory_observation(stats.memory)
    if memory is not None:
        result[SIGNAL_MEMORY] = memory
    allocatable = _memory_observation(stats.allocatable_memory)
    if allocatable is not None:
        result[SIGNAL_ALLOCATABLE_MEMORY] = allocatable
    _fs_observations(stats.fs, SIGNAL_NODEFS, SIGNAL_NODEFS_INODES, result)
    _fs_observations(stats.image_fs, SIGNAL_IMAGEFS, SIGNAL_IMAGEFS_INODES, result)
    _fs_observations(stats.container_fs, SIGNAL_CONTAINERFS, SIGNAL_CONTAINERFS_INODES, result)
    rlimit = stats.rlimit
    if (
        rlimit is not None
        and rlimit.max_pid is not None
        and rlimit.num_of_running_processes is not None
    ):
        # int64(MaxPID) - int64(NumOfRunningProcesses), in int64.
        result[SIGNAL_PID] = SignalObservation(
            wrap_int64(rlimit.max_pid - rlimit.num_of_running_processes),
            wrap_int64(rlimit.max_pid),
            rlimit.time,
        )
    return {s: result[s] for s in SIGNALS if s in result}


def signal_quantity_format(signal: str) -> str:
    """Bytes are observed as BinarySI quantities, inode and process counts as DecimalSI."""
    return (
        BINARY_SI
        if SIGNAL_TO_RESOURCE[signal] in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE)
        else DECIMAL_SI
    )


# --- threshold bookkeeping -------------------------------------------------------------------


def thresholds_met(
    thresholds: Iterable[Threshold],
    observations: Mapping[str, SignalObservation],
    enforce_min_reclaim: bool,
) -> list[Threshold]:
    """helpers.go thresholdsMet (k8s 1.35): met iff threshold quantity (+ min-reclaim
    quantity when enforced) > available, strictly; thresholds without an observation are
    skipped."""
    results = []
    for threshold in thresholds:
        observed = observations.get(threshold.signal)
        if observed is None:
            continue
        quantity = get_threshold_quantity(threshold.value, observed.capacity)
        if enforce_min_reclaim and threshold.min_reclaim is not None:
            quantity += get_threshold_quantity(threshold.min_reclaim, observed.capacity)
        if threshold.operator == OP_LESS_THAN and quantity > observed.available:
            results.append(threshold)
    return results


def thresholds_updated_stats(
    thresholds: Iterable[Threshold],
    observations: Mapping[str, SignalObservation],
    last_observations: Mapping[str, SignalObservation],
) -> list[Threshold]:
    """helpers.go thresholdsUpdatedStats: keep a threshold when its observation has no time,
    there is no previous observation, or the observation is strictly newer."""
    results = []
    for threshold in thresholds:
        observed = observations.get(threshold.signal)
        if observed is None:
            continue
        last = last_observations.get(threshold.signal)
        if last is None or observed.time is None or last.time is None or observed.time > last.time:
            results.append(threshold)
    return results


def thresholds_first_observed_at(
    thresholds: Iterable[Threshold], last_observed_at: Mapping[Threshold, datetime], now: datetime
) -> dict[Threshold, datetime]:
    """helpers.go thresholdsFirstObservedAt: keep each met threshold's previous time, else
    now; thresholds no longer met are dropped."""
    return {t: last_observed_at.get(t, now) for t in thresholds}


def thresholds_met_grace_period(
    observed_at: Mapping[Threshold, datetime], now: datetime
) -> list[Threshold]:
    """helpers.go thresholdsMetGracePeriod: now − firstObserved ≥ grace period."""
    return [t for t, at in observed_at.items() if _elapsed_ns(now, at) >= t.grace_period]


def _met_as_keyed_upstream(
    observed: Sequence[Threshold], observed_at: Mapping[Threshold, datetime], now: datetime
) -> list[Threshold]:
    """thresholdsMetGracePeriod over thresholdsFirstObservedAt's map as the kubelet keys it:
    by the Threshold struct, whose quantity and minimum reclaim are pointers. Two thresholds
    of equal value parsed apart (an ``allocatableMemory.available`` in evictionHard beside
    the copy addAllocatableThresholds makes of ``memory.available``) are two keys there, so
    both are met; they are one key only when neither holds a pointer (a percentage without
    a minimum reclaim)."""
    met: list[Threshold] = []
    for threshold in observed:
        if _elapsed_ns(now, observed_at[threshold]) < threshold.grace_period:
            continue
        pointerless = threshold.value.quantity is None and threshold.min_reclaim is None
        if pointerless and threshold in met:
            continue
        met.append(threshold)
    return met


def node_conditions(thresholds: Iterable[Threshold]) -> list[str]:
    """helpers.go nodeConditions: the conditions the thresholds raise, each once."""
    results: list[str] = []
    for threshold in thresholds:
        condition = SIGNAL_TO_NODE_CONDITION.get(threshold.signal)
        if condition is not None and condition not in results:
            results.append(condition)
    return results


def node_conditions_last_observed_at(
    conditions: Iterable[str], last_observed_at: Mapping[str, datetime], now: datetime
) -> dict[str, datetime]:
    """helpers.go nodeConditionsLastObservedAt: conditions observed now get ``now``; the
    others keep their previous time."""
    results = {c: now for c in conditions}
    for condition, at in last_observed_at.items():
        results.setdefault(condition, at)
    return results


def node_conditions_observed_since(
    observed_at: Mapping[str, datetime], period_ns: int, now: datetime
) -> list[str]:
    """helpers.go nodeConditionsObservedSince: reported while now − lastObserved < period
    (strict). In NODE_CONDITIONS order (upstream: Go map order)."""
    reported = {c for c, at in observed_at.items() if _elapsed_ns(now, at) < period_ns}
    ordered = [c for c in NODE_CONDITIONS if c in reported]
    return ordered + sorted(reported.difference(NODE_CONDITIONS))


def has_threshold(inputs: Iterable[Threshold], item: Threshold) -> bool:
    """helpers.go hasThreshold: same grace period, operator, signal and value."""
    return any(
        t.grace_period == item.grace_period
        and t.operator == item.operator
        and t.signal == item.signal
        and compare_threshold_value(t.value, item.value)
        for t in inputs
    )


def merge_thresholds(a: Sequence[Threshold], b: Iterable[Threshold]) -> list[Threshold]:
    """helpers.go mergeThresholds: a, then the entries of b not already in it."""
    results = list(a)
    for threshold in b:
        if not has_threshold(results, threshold):
            results.append(threshold)
    return results


def sort_by_eviction_priority(thresholds: Iterable[Threshold]) -> list[Threshold]:
    """helpers.go byEvictionPriority: memory signals before all others (signals without a
    resource last). Upstream's Less is not a strict order and its input is in Go map order;
    Verdict breaks ties with hard before soft, then the input order (stable)."""

    def key(item: tuple[int, Threshold]) -> tuple[int, int, int]:
        index, t = item
        memory = t.signal in (SIGNAL_MEMORY, SIGNAL_ALLOCATABLE_MEMORY)
        rank = 0 if memory else (1 if t.signal in SIGNAL_TO_RESOURCE else 2)
        return (rank, 0 if is_hard_eviction_threshold(t) else 1, index)

    return [t for _, t in sorted(enumerate(thresholds), key=key)]


def get_reclaimable_threshold(thresholds: Iterable[Threshold]) -> tuple[Threshold, str] | None:
    """helpers.go getReclaimableThreshold: the first threshold with a resource to reclaim."""
    for threshold in thresholds:
        resource = SIGNAL_TO_RESOURCE.get(threshold.signal)
        if resource is not None:
            return threshold, resource
    return None


# --- pod statistics --------------------------------------------------------------------------


class PodStatsIndex:
    """cachedStatsFunc: pod stats by pod UID, as the kubelet matches them.

    Verdict extension for hand-written inputs: when the pod or the stats entry has no UID,
    they are matched by namespace and name. A mirror pod is matched by the static pod's UID
    (its kubernetes.io/config.mirror annotation), as the kubelet itself sees it.
    """

    __slots__ = ("_by_name", "_by_name_without_uid", "_by_uid")

    def __init__(self, pod_stats: Iterable[PodStats]) -> None:
        self._by_uid: dict[str, PodStats] = {}
        self._by_name: dict[tuple[str, str], PodStats] = {}
        self._by_name_without_uid: dict[tuple[str, str], PodStats] = {}
        for ps in pod_stats:
            key = (ps.namespace, ps.name)
            self._by_name[key] = ps
            if ps.uid:
                self._by_uid[ps.uid] = ps
            else:
                self._by_name_without_uid[key] = ps

    def get(self, pod: Pod) -> PodStats | None:
        key = (pod.namespace, pod.name)
        # A mirror pod stands for a static pod: the kubelet knows (and reports stats under)
        # the static pod's UID, which the API server's mirror carries in this annotation.
        uid = pod.annotations.get(CONFIG_MIRROR_ANNOTATION) or pod.uid
        if uid:
            found = self._by_uid.get(uid)
            return found if found is not None else self._by_name_without_uid.get(key)
        return self._by_name.get(key)


def _used_bytes(fs: FsStats | None) -> int:
    """helpers.go diskUsage: int64(usedBytes), wrapping past 2^63-1 (then summed exactly, as
    Quantity.Add sums)."""
    return wrap_int64(fs.used_bytes or 0) if fs is not None else 0


def _inodes_used(fs: FsStats | None) -> int:
    """helpers.go inodeUsage: int64(inodesUsed)."""
    return wrap_int64(fs.inodes_used or 0) if fs is not None else 0


def memory_usage(stats: PodStats) -> int:
    """helpers.go memoryUsage: the pod's working set as int64(workingSetBytes) (0 when
    absent): a uint64 past 2^63-1 wraps to a negative usage, below any request."""
    memory = stats.memory
    return wrap_int64(memory.working_set_bytes or 0) if memory is not None else 0


def pod_disk_usage(
    stats: PodStats, pod: Pod, fs_stats_to_measure: Sequence[str]
) -> tuple[int, int]:
    """helpers.go podDiskUsage: (bytes, inodes) over the containers' rootfs and logs and the
    pod's local volumes (hostPath and local ephemeral volumes), as measured."""
    root = FS_ROOT in fs_stats_to_measure
    logs = FS_LOGS in fs_stats_to_measure
    disk = inodes = 0
    for container in stats.containers:
        if root:
            disk += _used_bytes(container.rootfs)
            inodes += _inodes_used(container.rootfs)
        if logs:
            disk += _used_bytes(container.logs)
            inodes += _inodes_used(container.logs)
    if FS_LOCAL_VOLUME_SOURCE in fs_stats_to_measure:
        for name in pod.local_volume_names:
            for volume in stats.volumes:
                if volume.name == name:
                    disk += wrap_int64(volume.used_bytes or 0)  # diskUsage / inodeUsage
                    inodes += wrap_int64(volume.inodes_used or 0)
                    break
    return disk, inodes


# --- ranking ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class RankedPod:
    """One pod as a ranking function saw it. ``usage``/``request`` are in the ranked
    resource's base units (bytes, inodes or processes); ``request`` is the request the
    exceeds-requests step compares with (0 for inodes and pids)."""

    pod: Pod
    has_stats: bool
    priority: int
    exceeds_requests: bool = False
    usage: int | None = None
    request: int = 0
    resource: str = RESOURCE_MEMORY
    _order: int = 0  # usage minus the request the ordering step subtracts (negated in keys)
    # The ranking's comparators on this pod, in order: pods with equal keys are ones the
    # kubelet's comparison cannot order (set by ``ordered_by``).
    rank_key: tuple = ()


# A ranker: one of the kubelet's ranking functions, pods (and their stats) in, pods in
# eviction order out.
Ranker = Callable[[Iterable[Pod], PodStatsIndex, EngineSettings], list[RankedPod]]
# A comparator of helpers.go as a sort key: the smaller key is evicted first.
Comparator = Callable[[RankedPod], int | tuple[int, int]]


def _priority_of(pod: Pod) -> int:
    return pod.priority if pod.priority is not None else 0


def _against_request(pod: Pod, resource: str, usage: int, request: int, order: int) -> RankedPod:
    """A pod with stats whose usage of ``resource`` is compared with its request; ``order``
    is what the usage comparator sorts by (largest first)."""
    return RankedPod(pod, True, _priority_of(pod), usage > request, usage, request, resource, order)


def measure_memory(pod: Pod, stats: PodStats | None, settings: EngineSettings) -> RankedPod:
    """What rankMemoryPressure reads of a pod: its working set against its memory request."""
    request = resource_request(pod, RESOURCE_MEMORY, settings=settings)
    if stats is None:
        return RankedPod(pod, False, _priority_of(pod), request=request)
    usage = memory_usage(stats)
    return _against_request(pod, RESOURCE_MEMORY, usage, request, usage - request)


def measure_pids(pod: Pod, stats: PodStats | None) -> RankedPod:
    """What rankPIDPressure reads of a pod: its process count (no request applies)."""
    if stats is None:
        return RankedPod(pod, False, _priority_of(pod), resource=RESOURCE_PIDS)
    count = stats.process_count or 0
    return RankedPod(pod, True, _priority_of(pod), False, count, 0, RESOURCE_PIDS, count)


def measure_disk(
    pod: Pod,
    stats: PodStats | None,
    settings: EngineSettings,
    fs_stats_to_measure: Sequence[str],
    resource: str,
) -> RankedPod:
    """What rankDiskPressureFunc reads of a pod: the bytes or inodes of the measured
    filesystems against its request for ``resource``; the ordering subtracts the
    ephemeral-storage request whatever the resource (helpers.go disk)."""
    request = resource_request(pod, resource, settings=settings)
    if stats is None:
        return RankedPod(pod, False, _priority_of(pod), request=request, resource=resource)
    disk, inodes = pod_disk_usage(stats, pod, fs_stats_to_measure)
    usage = inodes if resource == RESOURCE_INODES else disk
    storage_request = resource_request(pod, RESOURCE_EPHEMERAL_STORAGE, settings=settings)
    return _against_request(pod, resource, usage, request, usage - storage_request)


def priority(entry: RankedPod) -> int:
    """helpers.go priority: the lower priority is evicted first."""
    return entry.priority


def exceed_memory_requests(entry: RankedPod) -> int:
    """helpers.go exceedMemoryRequests: pods without stats first, then the pods whose usage
    exceeds their request, then the others."""
    if not entry.has_stats:
        return 0
    return 1 if entry.exceeds_requests else 2


# helpers.go exceedDiskRequests: the same test, on the disk usage rankDiskPressureFunc measured.
exceed_disk_requests = exceed_memory_requests


def memory(entry: RankedPod) -> tuple[int, int]:
    """helpers.go memory: pods without stats first (equal to each other), then by usage above
    the request, the largest first."""
    return (0, 0) if not entry.has_stats else (1, -entry._order)


# helpers.go process and disk: the same order, on the process count and on the disk usage
# above the ephemeral-storage request.
process = disk = memory


def ordered_by(entries: list[RankedPod], *comparators: Comparator) -> list[RankedPod]:
    """helpers.go orderedBy(...).Sort: the comparators applied lexicographically (first =
    evicted first). Ties keep the input order here; upstream's sort.Sort is not stable past
    12 items and its input (the pod manager's map) has no order, so pods with equal
    ``rank_key`` may come in any order (``tie_groups``)."""
    keyed = [replace(e, rank_key=tuple([compare(e) for compare in comparators])) for e in entries]
    return sorted(keyed, key=lambda e: e.rank_key)


def tie_groups(ranking: Sequence[RankedPod]) -> list[tuple[int, int]]:
    """The runs of adjacent pods (first and last index, two pods or more) that the ranking's
    comparison cannot order: any order among them is one the kubelet may take."""
    groups = []
    start = 0
    for i in range(1, len(ranking) + 1):
        if i == len(ranking) or ranking[i].rank_key != ranking[start].rank_key:
            if i - start > 1:
                groups.append((start, i - 1))
            start = i
    return groups


def rank_memory_pressure(
    pods: Iterable[Pod], stats: PodStatsIndex, settings: EngineSettings
) -> list[RankedPod]:
    """helpers.go rankMemoryPressure: orderedBy(exceedMemoryRequests, priority, memory)."""
    entries = [measure_memory(pod, stats.get(pod), settings) for pod in pods]
    return ordered_by(entries, exceed_memory_requests, priority, memory)


def rank_pid_pressure(
    pods: Iterable[Pod], stats: PodStatsIndex, settings: EngineSettings
) -> list[RankedPod]:
    """helpers.go rankPIDPressure: orderedBy(priority, process)."""
    return ordered_by([measure_pids(pod, stats.get(pod)) for pod in pods], priority, process)


def rank_disk_pressure(
    pods: Iterable[Pod],
    stats: PodStatsIndex,
    settings: EngineSettings,
    *,
    fs_stats_to_measure: Sequence[str],
    resource: str,
) -> list[RankedPod]:
    """helpers.go rankDiskPressureFunc(fsStatsToMeasure, resource): orderedBy(
    exceedDiskRequests, priority, disk) on the filesystems the layout measures (see
    ``build_signal_to_rank_func``)."""
    entries = [
        measure_disk(pod, stats.get(pod), settings, fs_stats_to_measure, resource) for pod in pods
    ]
    return ordered_by(entries, exceed_disk_requests, priority, disk)


_DISK_SIGNALS = {
    signal: resource
    for signal, resource in SIGNAL_TO_RESOURCE.items()
    if resource in (RESOURCE_EPHEMERAL_STORAGE, RESOURCE_INODES)
}


def build_signal_to_rank_func(
    with_image_fs: bool, split_container_image_fs: bool
) -> dict[str, Ranker]:
    """helpers.go buildSignalToRankFunc (k8s 1.35): the ranker of each signal; a disk
    signal's is ``rank_disk_pressure`` with the filesystem stats it measures per pod in that
    filesystem layout."""
    result: dict[str, Ranker] = {
        SIGNAL_MEMORY: rank_memory_pressure,
        SIGNAL_ALLOCATABLE_MEMORY: rank_memory_pressure,
        SIGNAL_PID: rank_pid_pressure,
    }
    if with_image_fs and not split_container_image_fs:
        measure = {
            "nodefs": (FS_LOGS, FS_LOCAL_VOLUME_SOURCE),
            "imagefs": (FS_ROOT, FS_IMAGES),
            "containerfs": (FS_ROOT, FS_IMAGES),
        }
    elif with_image_fs and split_container_image_fs:
        measure = {
            "nodefs": (FS_LOGS, FS_LOCAL_VOLUME_SOURCE, FS_ROOT),
            "imagefs": (FS_IMAGES,),
            "containerfs": (FS_LOGS, FS_LOCAL_VOLUME_SOURCE, FS_ROOT),
        }
    else:
        everything = (FS_IMAGES, FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME_SOURCE)
        measure = {"nodefs": everything, "imagefs": everything, "containerfs": everything}
    for signal, resource in _DISK_SIGNALS.items():
        result[signal] = partial(
            rank_disk_pressure,
            fs_stats_to_measure=measure[signal.split(".", 1)[0]],
            resource=resource,
        )
    return result


def build_signal_to_node_reclaim_funcs(
    with_image_fs: bool, split_container_image_fs: bool
) -> dict[str, tuple[str, ...]]:
    """helpers.go buildSignalToNodeReclaimFuncs (k8s 1.35): the garbage collections the
    kubelet runs before evicting pods for a disk signal."""
    both = (CONTAINER_GC, IMAGE_GC)
    if with_image_fs and not split_container_image_fs:
        per_fs = {"nodefs": (), "imagefs": both, "containerfs": both}
    elif with_image_fs and split_container_image_fs:
        per_fs = {"nodefs": (CONTAINER_GC,), "imagefs": (IMAGE_GC,), "containerfs": (CONTAINER_GC,)}
    else:
        per_fs = {"nodefs": both, "imagefs": both, "containerfs": both}
    return {signal: per_fs[signal.split(".", 1)[0]] for signal in _DISK_SIGNALS}


# --- messages --------------------------------------------------------------------------------


def _format(pod: Pod, resource: str, amount: int) -> str:
    return base_units_to_string(resource, amount, pod.formats.get(resource, BINARY_SI))


def _request(pod: Pod, resource: str, requests: ResourceList, given: dict[str, str]) -> Quantity:
    """``Resources.Requests[resource]`` as the kubelet holds it, the Quantity it compares and
    prints: as written where the snapshot kept it (``*_given``: sub-byte fractions, another
    spelling), else rebuilt from its integer; the zero Quantity when it is absent."""
    if resource in given:
        return parse_quantity(given[resource])
    return from_base_units(
        resource, requests.get(resource, 0), pod.formats.get(resource, BINARY_SI)
    )


def get_threshold_met_info(
    resource: str, thresholds: Iterable[Threshold], observations: Mapping[str, SignalObservation]
) -> tuple[str, str] | None:
    """helpers.go getThresholdMetInfo: (threshold quantity, available) of the first threshold
    for the resource that has an observation, as canonical quantity strings."""
    for threshold in thresholds:
        if SIGNAL_TO_RESOURCE.get(threshold.signal) != resource:
            continue
        observed = observations.get(threshold.signal)
        if observed is not None:
            quantity = threshold_quantity_string(threshold.value, observed.capacity)
            available = format_quantity(
                observed.available, signal_quantity_format(threshold.signal)
            )
            return quantity, available
    return None


def eviction_message(
    resource: str,
    pod: Pod,
    stats: PodStats | None,
    thresholds: Sequence[Threshold],
    observations: Mapping[str, SignalObservation],
    *,
    settings: EngineSettings,
) -> str:
    """helpers.go evictionMessage (k8s 1.35), the text of the pod's status message and the
    DisruptionTarget condition."""
    message = f"The node was low on resource: {resource}. "
    info = get_threshold_met_info(resource, thresholds, observations)
    if info is not None:
        message += f"Threshold quantity: {info[0]}, available: {info[1]}. "
    if stats is None:
        return message
    if (
        resource == RESOURCE_MEMORY
        and settings.pod_level_resources
        and is_pod_level_resources_set(pod)
        and pod.resources is not None
        and RESOURCE_MEMORY in pod.resources.requests
        and stats.memory is not None
    ):
        usage = format_quantity(memory_usage(stats), BINARY_SI)
        resources = pod.resources
        request = _request(pod, RESOURCE_MEMORY, resources.requests, resources.requests_given)
        message += (
            f"Pod {pod.name} was using {usage}, request is {request}, "
            f"has larger consumption of {resource}. "
        )
    containers = (*pod.containers, *pod.init_containers)
    for container_stats in stats.containers:
        for container in containers:
            if container.name != container_stats.name:
                continue
            usage_amount: int | None = None
            if resource == RESOURCE_EPHEMERAL_STORAGE:
                rootfs, logs = container_stats.rootfs, container_stats.logs
                if (
                    rootfs is not None
                    and rootfs.used_bytes is not None
                    and logs is not None
                    and logs.used_bytes is not None
                ):
                    usage_amount = rootfs.used_bytes + logs.used_bytes
            elif resource == RESOURCE_MEMORY:
                memory = container_stats.memory
                if memory is not None and memory.working_set_bytes is not None:
                    usage_amount = memory.working_set_bytes
            request = _request(pod, resource, container.requests, container.requests_given)
            # usage.Cmp(requests) > 0: exact, so 1 byte used exceeds a request of "0.5".
            if usage_amount is not None and usage_amount > request.value:
                message += (
                    f"Container {container.name} was using "
                    f"{format_quantity(usage_amount, BINARY_SI)}, request is {request}, "
                    f"has larger consumption of {resource}. "
                )
            break
    return message


# --- local ephemeral storage limits ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Eviction:
    """One pod the pass evicts, with the kill grace period and the status message."""

    pod: Pod
    signal: str  # the threshold's signal, or a local-storage limit label
    grace_period_seconds: int
    message: str


def _empty_dir_limit_eviction(pod: Pod, pod_stats: PodStats) -> Eviction | None:
    """eviction_manager.go emptyDirLimitEviction (k8s 1.35): the first emptyDir volume (in
    spec order, any medium) whose reported usage exceeds its positive sizeLimit."""
    if not pod.empty_dir_limits:
        return None
    used = {v.name: v.used_bytes for v in pod_stats.volumes if v.used_bytes is not None}
    for limit in pod.empty_dir_limits:
        usage = used.get(limit.volume)
        if usage is not None and usage > limit.limit:
            return Eviction(
                pod,
                SIGNAL_EMPTY_DIR_LIMIT,
                IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS,
                f'Usage of EmptyDir volume "{limit.volume}" exceeds the limit "{limit.text}". ',
            )
    return None


def local_storage_eviction(
    pods: Iterable[Pod],
    stats: PodStatsIndex,
    dedicated_image_fs: bool,
    *,
    settings: EngineSettings,
) -> list[Eviction]:
    """eviction_manager.go localStorageEviction (k8s 1.35), pods with stats in order: a pod
    whose ephemeral-storage usage exceeds its PodLimits ephemeral-storage, else a pod with a
    container whose logs (+ rootfs unless there is a dedicated image filesystem) exceed that
    container's ephemeral-storage limit, is evicted with grace 1s; several pods may be.
    Critical pods are never evicted. First of all (emptyDirLimitEviction), a pod with an
    emptyDir volume whose usage exceeds its sizeLimit is evicted."""
    evicted: list[Eviction] = []
    for pod in pods:
        pod_stats = stats.get(pod)
        if pod_stats is None or is_critical_pod(pod):
            continue
        empty_dir = _empty_dir_limit_eviction(pod, pod_stats)
        if empty_dir is not None:
            evicted.append(empty_dir)
            continue
        # PodLimits has an ephemeral-storage key only when some container limits it (pod-level
        # resources cannot, overhead only adds to existing keys): skip the aggregation otherwise.
        if not any(
            RESOURCE_EPHEMERAL_STORAGE in c.limits for c in (*pod.containers, *pod.init_containers)
        ):
            continue
        limits = pod_limits(pod, settings=settings)
        if RESOURCE_EPHEMERAL_STORAGE in limits:
            limit = limits[RESOURCE_EPHEMERAL_STORAGE]
            usage = _used_bytes(pod_stats.ephemeral_storage)
            if usage > limit:
                text = _format(pod, RESOURCE_EPHEMERAL_STORAGE, limit)
                evicted.append(
                    Eviction(
                        pod,
                        SIGNAL_POD_EPHEMERAL_LIMIT,
                        IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS,
                        f"Pod ephemeral local storage usage exceeds the total limit of containers {text}. ",
                    )
                )
                continue
        container_limits = {
            c.name: c.limits[RESOURCE_EPHEMERAL_STORAGE]
            for c in pod.containers
            if c.limits.get(RESOURCE_EPHEMERAL_STORAGE, 0) != 0
        }
        if not container_limits:
            continue
        for container_stats in pod_stats.containers:
            used = _used_bytes(container_stats.logs)
            if not dedicated_image_fs:
                used += _used_bytes(container_stats.rootfs)
            limit = container_limits.get(container_stats.name)
            if limit is not None and limit < used:
                text = _format(pod, RESOURCE_EPHEMERAL_STORAGE, limit)
                evicted.append(
                    Eviction(
                        pod,
                        SIGNAL_CONTAINER_EPHEMERAL_LIMIT,
                        IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS,
                        f'Container {container_stats.name} exceeded its local ephemeral storage limit "{text}". ',
                    )
                )
                break
    return evicted


# --- the pass --------------------------------------------------------------------------------


def active_pods(pods: Iterable[Pod]) -> list[Pod]:
    """The kubelet's active pods as far as a snapshot shows them: not Failed or Succeeded
    (a pod being deleted stays active until it terminates)."""
    return [p for p in pods if p.phase not in _TERMINAL_PHASES]


def soft_eviction_grace_period(pod: Pod, max_pod_grace_period: int) -> int:
    """eviction_manager.go synchronize (k8s 1.35): a soft threshold kills with
    evictionMaxPodGracePeriod, lowered to the pod's terminationGracePeriodSeconds when set."""
    grace = max_pod_grace_period
    termination = pod.termination_grace_period_seconds
    if termination is not None:
        grace = min(grace, termination)
    return grace


@dataclass(slots=True)
class EvictionPass:
    """Everything one synchronize pass decided, for the decision to render."""

    observations: dict[str, SignalObservation]
    thresholds_observed: list[Threshold] = field(default_factory=list)
    first_observed_at: dict[Threshold, datetime] = field(default_factory=dict)
    thresholds_met: list[Threshold] = field(default_factory=list)  # grace passed, sorted
    node_conditions: list[str] = field(default_factory=list)
    threshold_to_reclaim: Threshold | None = None
    starved_resource: str | None = None
    node_level_reclaim: tuple[str, ...] = ()
    ranking: list[RankedPod] = field(default_factory=list)
    evictions: list[Eviction] = field(default_factory=list)
    message: str = ""
    # Every pod the kubelet might evict: the victim and the non-critical pods it ties with
    # (empty without a ranked victim).
    victim_candidates: list[Pod] = field(default_factory=list)

    @property
    def victim(self) -> Eviction | None:
        return self.evictions[0] if self.evictions else None


def _pending_grace_message(observed_at: Mapping[Threshold, datetime], now: datetime) -> str:
    parts = []
    for threshold, at in observed_at.items():
        elapsed = _elapsed_ns(now, at)
        if elapsed < threshold.grace_period:
            parts.append(
                f"{threshold.signal} (grace period {format_go_duration(threshold.grace_period)}, "
                f"met for {format_go_duration(max(elapsed, 0))})"
            )
    return "eviction thresholds met, but their grace periods have not passed: " + ", ".join(parts)


def _tied_candidates(ranking: Sequence[RankedPod], index: int) -> list[Pod]:
    """The non-critical pods that tie with the victim at ``index``: whichever comes first in
    the kubelet's own order is the one it evicts."""
    key = ranking[index].rank_key
    run = itertools.takewhile(lambda e: e.rank_key == key, ranking[index:])
    return [e.pod for e in run if not is_critical_pod(e.pod)]


def synchronize(
    pods: Iterable[Pod],
    stats: NodeStats,
    config: EvictionConfig,
    now: datetime,
    first_observed: Mapping[str, datetime] | None = None,
    conditions_last_observed: Mapping[str, datetime] | None = None,
    *,
    settings: EngineSettings,
) -> EvictionPass:
    """One pass of eviction_manager.go managerImpl.synchronize (k8s 1.35) on one node.

    ``pods`` are the node's pods in snapshot order (terminal ones are skipped); ``stats`` its
    Summary; ``first_observed`` signal → when its thresholds were first met;
    ``conditions_last_observed`` condition → when last observed (see the module docstring).
    """
    first_observed = first_observed or {}
    thresholds = config.thresholds
    observations = make_signal_observations(stats)
    result = EvictionPass(observations=observations)
    if not thresholds and not config.local_storage_capacity_isolation:
        result.message = (
            "no eviction thresholds are configured and local storage capacity isolation is "
            "off: the eviction manager does nothing"
        )
        return result

    # Thresholds met now, ignoring grace periods; then min-reclaim stickiness.
    observed = thresholds_met(thresholds, observations, False)
    previously_met = [
        t
        for t in thresholds
        if t.signal in first_observed
        and _elapsed_ns(now, first_observed[t.signal]) >= t.grace_period
    ]
    if previously_met:
        observed = merge_thresholds(observed, thresholds_met(previously_met, observations, True))
    result.thresholds_observed = observed

    previous_first = {t: first_observed[t.signal] for t in observed if t.signal in first_observed}
    result.first_observed_at = thresholds_first_observed_at(observed, previous_first, now)

    last_seen = node_conditions_last_observed_at(
        node_conditions(observed), conditions_last_observed or {}, now
    )
    result.node_conditions = node_conditions_observed_since(
        last_seen, config.pressure_transition_period, now
    )

    met = _met_as_keyed_upstream(observed, result.first_observed_at, now)
    acting = sort_by_eviction_priority(thresholds_updated_stats(met, observations, {}))
    result.thresholds_met = sort_by_eviction_priority(met)

    candidates = active_pods(pods)
    pod_stats = PodStatsIndex(stats.pods)
    if config.local_storage_capacity_isolation:
        result.evictions = local_storage_eviction(
            candidates, pod_stats, config.dedicated_image_fs, settings=settings
        )
        result.victim_candidates = [e.pod for e in result.evictions[:1]]

    reclaimable = get_reclaimable_threshold(acting)
    if reclaimable is None:
        if result.evictions:
            result.message = result.evictions[0].message
        elif observed:
            result.message = _pending_grace_message(result.first_observed_at, now)
        else:
            result.message = "no resources are starved"
        return result

    threshold, resource = reclaimable
    result.threshold_to_reclaim = threshold
    result.starved_resource = resource
    layout = (config.dedicated_image_fs, config.split_container_image_fs)
    result.node_level_reclaim = build_signal_to_node_reclaim_funcs(*layout).get(
        threshold.signal, ()
    )
    rank = build_signal_to_rank_func(*layout)[threshold.signal]
    result.ranking = rank(candidates, pod_stats, settings)

    if result.evictions:  # local storage evictions end the pass before threshold eviction
        result.message = result.evictions[0].message
        return result
    if not candidates:
        result.message = "eviction thresholds have been met, but no pods are active to evict"
        return result
    for index, entry in enumerate(result.ranking):
        pod = entry.pod
        if is_critical_pod(pod):
            continue  # evictPod refuses critical pods; the next in rank is tried
        result.victim_candidates = _tied_candidates(result.ranking, index)
        if is_hard_eviction_threshold(threshold):
            grace = IMMEDIATE_EVICTION_GRACE_PERIOD_SECONDS
        else:
            grace = soft_eviction_grace_period(pod, config.max_pod_grace_period_seconds)
        message = eviction_message(
            resource, pod, pod_stats.get(pod), acting, observations, settings=settings
        )
        result.evictions = [Eviction(pod, threshold.signal, grace, message)]
        result.message = message
        return result
    result.message = (
        "unable to evict any pods from the node: every active pod is critical "
        "(static, mirror or priority >= 2000000000)"
    )
    return result
