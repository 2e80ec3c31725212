"""The eviction manager pass: conformance groups of helpers.go plus one-pass scenarios."""

from __future__ import annotations

from datetime import datetime, timedelta

import msgspec
import pytest

from service.engine.kubelet.eviction import (
    FS_IMAGES,
    FS_LOCAL_VOLUME_SOURCE,
    FS_LOGS,
    FS_ROOT,
    PodStatsIndex,
    SignalObservation,
    build_signal_to_node_reclaim_funcs,
    build_signal_to_rank_func,
    disk,
    eviction_message,
    exceed_disk_requests,
    exceed_memory_requests,
    make_signal_observations,
    measure_disk,
    measure_memory,
    measure_pids,
    memory,
    node_conditions_last_observed_at,
    node_conditions_observed_since,
    ordered_by,
    priority,
    process,
    rank_disk_pressure,
    rank_memory_pressure,
    rank_pid_pressure,
    sort_by_eviction_priority,
    synchronize,
    thresholds_first_observed_at,
    thresholds_met,
    thresholds_met_grace_period,
    thresholds_updated_stats,
)
from service.engine.kubelet.eviction_config import (
    RESOURCE_EPHEMERAL_STORAGE,
    Threshold,
    ThresholdValue,
    build_eviction_config,
)
from service.engine.objects import (
    Container,
    ContainerResize,
    ContainerStats,
    FsStats,
    MemoryStats,
    NodeStats,
    Pod,
    PodResize,
    PodResources,
    PodStats,
    RlimitStats,
    VolumeStats,
)
from service.engine.quantity import parse_quantity
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.engine.kubelet.helpers import (
    NOW,
    ago,
    conformance_cases,
    summary_to_stats,
    threshold_from_case,
)

S = 1_000_000_000
MI = 1024**2
GI = 1024**3

# --- conformance: helpers.go -------------------------------------------------------------------


def _observations(raw: dict) -> dict[str, SignalObservation]:
    result = {}
    for signal, obs in raw.items():
        available = parse_quantity(obs["available"]).value if "available" in obs else 0
        capacity = parse_quantity(obs["capacity"]).int_value() if "capacity" in obs else 0
        result[signal] = SignalObservation(available, capacity)
    return result


@pytest.mark.parametrize(("given", "expected"), conformance_cases("eviction.thresholdsMet"))
def test_conformance_thresholds_met(given, expected):
    thresholds = [threshold_from_case(t) for t in given["thresholds"]]
    got = thresholds_met(
        thresholds, _observations(given["observations"]), given["enforceMinReclaim"]
    )
    assert sorted(thresholds.index(t) for t in got) == sorted(expected["metIndices"])


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.thresholdsMetGracePeriod")
)
def test_conformance_thresholds_met_grace_period(given, expected):
    by_id = {k: threshold_from_case(t) for k, t in given["thresholds"].items()}
    observed_at = {by_id[k]: ago(s) for k, s in given["firstObservedSecondsAgo"].items()}
    got = thresholds_met_grace_period(observed_at, NOW)
    ids = {v: k for k, v in by_id.items()}
    assert sorted(ids[t] for t in got) == sorted(expected["met"])


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.thresholdsFirstObservedAt")
)
def test_conformance_thresholds_first_observed_at(given, expected):
    by_id = {k: threshold_from_case(t) for k, t in given["thresholds"].items()}
    last = {by_id[k]: ago(s) for k, s in given["lastObservedSecondsAgo"].items()}
    got = thresholds_first_observed_at([by_id[k] for k in given["met"]], last, NOW)
    ids = {v: k for k, v in by_id.items()}
    assert {ids[t]: (NOW - at).total_seconds() for t, at in got.items()} == expected[
        "firstObservedSecondsAgo"
    ]


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.nodeConditionsLastObservedAt")
)
def test_conformance_node_conditions_last_observed_at(given, expected):
    last = {c: ago(s) for c, s in given["lastObservedSecondsAgo"].items()}
    got = node_conditions_last_observed_at(given["conditions"], last, NOW)
    assert {c: (NOW - at).total_seconds() for c, at in got.items()} == expected[
        "lastObservedSecondsAgo"
    ]


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.nodeConditionsObservedSince")
)
def test_conformance_node_conditions_observed_since(given, expected):
    last = {c: ago(s) for c, s in given["lastObservedSecondsAgo"].items()}
    got = node_conditions_observed_since(last, given["periodSeconds"] * S, NOW)
    assert got == expected["conditions"]


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.thresholdsUpdatedStats")
)
def test_conformance_thresholds_updated_stats(given, expected):
    thresholds = [threshold_from_case(t) for t in given["thresholds"]]

    def observations(raw):
        return {
            s: SignalObservation(0, 0, datetime.fromisoformat(o["time"]) if o.get("time") else None)
            for s, o in raw.items()
        }

    got = thresholds_updated_stats(
        thresholds, observations(given["observations"]), observations(given["lastObservations"])
    )
    assert [thresholds.index(t) for t in got] == expected["kept"]


@pytest.mark.parametrize(("given", "expected"), conformance_cases("eviction.byEvictionPriority"))
def test_conformance_by_eviction_priority(given, expected):
    thresholds = [
        Threshold(s, value=ThresholdValue(quantity=parse_quantity("1"))) for s in given["signals"]
    ]
    assert [t.signal for t in sort_by_eviction_priority(thresholds)] == expected["signals"]


# helpers.go's comparators by their upstream names, as the conformance cases name them.
COMPARATORS = {
    "priority": priority,
    "exceedMemoryRequests": exceed_memory_requests,
    "memory": memory,
    "exceedDiskRequests": exceed_disk_requests,
    "disk": disk,
    "process": process,
}


def _measure_for(comparators: list[str], given: dict):
    """What the ranker behind these comparators reads of each pod."""
    if {"memory", "exceedMemoryRequests"} & set(comparators):
        return lambda pod, stats: measure_memory(pod, stats, DEFAULT_SETTINGS)
    if {"disk", "exceedDiskRequests"} & set(comparators):
        fs_stats, resource = given.get("fsStatsToMeasure", ()), given.get("resource")
        return lambda pod, stats: measure_disk(
            pod, stats, DEFAULT_SETTINGS, fs_stats, resource or RESOURCE_EPHEMERAL_STORAGE
        )
    return measure_pids


@pytest.mark.parametrize(("given", "expected"), conformance_cases("eviction.rankPods"))
def test_conformance_rank_pods(given, expected):
    pods = [pod_from_object(p) for p in given["pods"]]
    stats = summary_to_stats({"node": {}, "pods": given["podStats"]})
    index = PodStatsIndex(stats.pods)
    measure = _measure_for(given["comparators"], given)
    entries = [measure(pod, index.get(pod)) for pod in pods]
    ranked = ordered_by(entries, *[COMPARATORS[name] for name in given["comparators"]])
    assert [e.pod.name for e in ranked] == expected["order"]


@pytest.mark.parametrize(
    ("given", "expected"), conformance_cases("eviction.makeSignalObservations")
)
def test_conformance_make_signal_observations(given, expected):
    got = make_signal_observations(summary_to_stats(given["summary"]))
    assert {
        s: {"available": o.available, "capacity": o.capacity} for s, o in got.items()
    } == expected["observations"]


# --- builders ----------------------------------------------------------------------------------


def mkpod(
    name: str,
    *,
    memory_request: int | None = None,
    storage_request: int | None = None,
    storage_limit: int | None = None,
    priority: int | None = None,
    phase: str = "Running",
    annotations: dict | None = None,
    tgps: int | None = None,
    local_volumes: tuple[str, ...] = (),
    containers: tuple[Container, ...] | None = None,
    resources: PodResources | None = None,
) -> Pod:
    if containers is None:
        requests = {}
        limits = {}
        if memory_request is not None:
            requests["memory"] = memory_request
        if storage_request is not None:
            requests["ephemeral-storage"] = storage_request
        if storage_limit is not None:
            limits["ephemeral-storage"] = storage_limit
        containers = (Container(name="app", requests=requests, limits=limits),)
    return Pod(
        namespace="default",
        name=name,
        uid=f"uid-{name}",
        node_name="node-1",
        priority=priority,
        phase=phase,
        annotations=annotations or {},
        containers=containers,
        termination_grace_period_seconds=tgps,
        local_volume_names=local_volumes,
        resources=resources,
        formats={"memory": "BinarySI", "ephemeral-storage": "BinarySI"},
    )


def mkstats(
    name: str,
    *,
    working_set: int | None = None,
    rootfs: int = 0,
    logs: int = 0,
    rootfs_inodes: int = 0,
    logs_inodes: int = 0,
    volumes: tuple[VolumeStats, ...] = (),
    processes: int | None = None,
    ephemeral: int | None = None,
    containers: tuple[ContainerStats, ...] | None = None,
) -> PodStats:
    if containers is None:
        containers = (
            ContainerStats(
                name="app",
                memory=MemoryStats(working_set_bytes=working_set)
                if working_set is not None
                else None,
                rootfs=FsStats(used_bytes=rootfs, inodes_used=rootfs_inodes),
                logs=FsStats(used_bytes=logs, inodes_used=logs_inodes),
            ),
        )
    return PodStats(
        namespace="default",
        name=name,
        uid=f"uid-{name}",
        containers=containers,
        memory=MemoryStats(working_set_bytes=working_set) if working_set is not None else None,
        volumes=volumes,
        ephemeral_storage=FsStats(used_bytes=ephemeral) if ephemeral is not None else None,
        process_count=processes,
    )


def mknode(
    pods: tuple[PodStats, ...] = (),
    *,
    memory_available: int = 8 * GI,
    memory_working_set: int = 8 * GI,
    allocatable_available: int | None = None,
    fs: tuple[int, int, int, int] = (80 * GI, 100 * GI, 900_000, 1_000_000),
    image_fs: tuple[int, int, int, int] | None = None,
    container_fs: tuple[int, int, int, int] | None = None,
    pid: tuple[int, int] = (4_194_304, 1000),
) -> NodeStats:
    def fsstats(v):
        if v is None:
            return None
        return FsStats(available_bytes=v[0], capacity_bytes=v[1], inodes_free=v[2], inodes=v[3])

    allocatable = None
    if allocatable_available is not None:
        allocatable = MemoryStats(available_bytes=allocatable_available, working_set_bytes=4 * GI)
    return NodeStats(
        node_name="node-1",
        memory=MemoryStats(available_bytes=memory_available, working_set_bytes=memory_working_set),
        allocatable_memory=allocatable,
        fs=fsstats(fs),
        image_fs=fsstats(image_fs if image_fs is not None else fs),
        container_fs=fsstats(container_fs if container_fs is not None else (image_fs or fs)),
        rlimit=RlimitStats(max_pid=pid[0], num_of_running_processes=pid[1]),
        pods=pods,
    )


def run(pods, stats, config: dict, first_observed=None, conditions=None, now: datetime = NOW):
    return synchronize(
        pods,
        stats,
        build_eviction_config(config),
        now,
        first_observed,
        conditions,
        settings=DEFAULT_SETTINGS,
    )


# --- one pass per signal -----------------------------------------------------------------------

MEMORY_PODS = (
    mkpod("guaranteed", memory_request=GI),
    mkpod("burstable", memory_request=100 * MI),
    mkpod("besteffort"),
)
MEMORY_STATS = (
    mkstats("guaranteed", working_set=900 * MI),
    mkstats("burstable", working_set=700 * MI),
    mkstats("besteffort", working_set=300 * MI),
)


def test_memory_available_hard_threshold():
    result = run(MEMORY_PODS, mknode(MEMORY_STATS, memory_available=50 * MI), {})
    assert [t.signal for t in result.thresholds_observed] == ["memory.available"]
    assert result.node_conditions == ["MemoryPressure"]
    assert result.starved_resource == "memory"
    # burstable exceeds by 600Mi, besteffort by 300Mi; guaranteed stays below its request
    assert [e.pod.name for e in result.ranking] == ["burstable", "besteffort", "guaranteed"]
    assert result.victim.pod.name == "burstable"
    assert result.victim.grace_period_seconds == 1  # hard: immediateEvictionGracePeriodSeconds
    assert result.victim.signal == "memory.available"
    assert result.message == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container app was using 700Mi, request is 100Mi, has larger consumption of memory. "
    )
    assert result.node_level_reclaim == ()


def test_allocatable_memory_available_copy_of_hard_memory_threshold():
    stats = mknode(MEMORY_STATS, memory_available=4 * GI, allocatable_available=60 * MI)
    result = run(MEMORY_PODS, stats, {})
    assert [t.signal for t in result.thresholds_met] == ["allocatableMemory.available"]
    assert result.starved_resource == "memory"
    assert result.victim.pod.name == "burstable"
    assert "Threshold quantity: 100Mi, available: 60Mi. " in result.message


def test_allocatable_memory_not_copied_without_pods_enforcement():
    stats = mknode(MEMORY_STATS, memory_available=4 * GI, allocatable_available=60 * MI)
    result = run(MEMORY_PODS, stats, {"enforceNodeAllocatable": []})
    assert result.thresholds_observed == []
    assert result.victim is None
    assert result.message == "no resources are starved"


DISK_PODS = (
    mkpod("logs-heavy", local_volumes=("scratch",)),
    mkpod("rootfs-heavy"),
    mkpod("requested", storage_request=GI),
)
DISK_STATS = (
    mkstats(
        "logs-heavy",
        rootfs=100 * MI,
        logs=300 * MI,
        volumes=(VolumeStats("scratch", 200 * MI, 50),),
        rootfs_inodes=10,
        logs_inodes=10,
    ),
    mkstats("rootfs-heavy", rootfs=700 * MI, logs=10 * MI, rootfs_inodes=5000, logs_inodes=1),
    mkstats("requested", rootfs=900 * MI, logs=200 * MI, rootfs_inodes=100, logs_inodes=100),
)


def test_nodefs_available_single_filesystem_measures_everything():
    stats = mknode(DISK_STATS, fs=(5 * GI, 100 * GI, 900_000, 1_000_000))
    result = run(DISK_PODS, stats, {})
    # nodefs, and on one filesystem imagefs/containerfs observe the same numbers
    assert {t.signal for t in result.thresholds_met} == {
        "nodefs.available",
        "imagefs.available",
        "containerfs.available",
    }
    assert result.thresholds_met[0].signal == "nodefs.available"
    assert result.node_conditions == ["DiskPressure"]
    assert result.starved_resource == "ephemeral-storage"
    assert result.node_level_reclaim == ("DeleteAllUnusedContainers", "DeleteUnusedImages")
    # every pod exceeds its request (0, 0 and 1Gi), so usage − request decides:
    # rootfs-heavy 710Mi, logs-heavy 600Mi (its emptyDir counted), requested 1100Mi − 1Gi
    assert [e.pod.name for e in result.ranking] == ["rootfs-heavy", "logs-heavy", "requested"]
    assert all(e.exceeds_requests for e in result.ranking)
    assert result.victim.pod.name == "rootfs-heavy"
    # 10% (float32) of 100Gi is 10737418400, not a multiple of 1024
    assert result.message == (
        "The node was low on resource: ephemeral-storage. Threshold quantity: 10737418400, "
        "available: 5Gi. Container app was using 710Mi, request is 0, has larger "
        "consumption of ephemeral-storage. "
    )


def test_nodefs_inodes_free():
    stats = mknode(DISK_STATS, fs=(80 * GI, 100 * GI, 40_000, 1_000_000))
    result = run(DISK_PODS, stats, {"evictionHard": {"nodefs.inodesFree": "5%"}})
    assert [t.signal for t in result.thresholds_met] == [
        "nodefs.inodesFree",
        "containerfs.inodesFree",
    ]
    assert result.starved_resource == "inodes"
    # inode usage: rootfs-heavy 5001, requested 200, logs-heavy 70 (volume counted); every pod
    # exceeds its inode request of 0, and the ORDERING subtracts the ephemeral-storage request
    # even for inodes, so "requested" (200 − 1Gi) comes last
    assert [e.pod.name for e in result.ranking] == ["rootfs-heavy", "logs-heavy", "requested"]
    assert [e.usage for e in result.ranking] == [5001, 70, 200]
    assert all(e.request == 0 for e in result.ranking)
    # GetThresholdQuantity makes a BinarySI quantity even for inodes (50000 is printed as is),
    # while the inode observation is DecimalSI (40k)
    assert result.message == (
        "The node was low on resource: inodes. Threshold quantity: 50000, available: 40k. "
    )


def test_imagefs_available_dedicated_image_fs_measures_rootfs_only():
    stats = mknode(
        DISK_STATS,
        fs=(80 * GI, 100 * GI, 900_000, 1_000_000),
        image_fs=(2 * GI, 50 * GI, 900_000, 1_000_000),
    )
    result = run(DISK_PODS, stats, {"filesystemLayout": "dedicatedImageFs"})
    assert [t.signal for t in result.thresholds_met] == [
        "imagefs.available",
        "containerfs.available",
    ]
    assert result.node_level_reclaim == ("DeleteAllUnusedContainers", "DeleteUnusedImages")
    # rootfs only: requested 900Mi (below its 1Gi request), rootfs-heavy 700Mi, logs-heavy 100Mi
    assert [e.pod.name for e in result.ranking] == ["rootfs-heavy", "logs-heavy", "requested"]
    assert [e.usage for e in result.ranking] == [700 * MI, 100 * MI, 900 * MI]


def test_containerfs_split_filesystem():
    stats = mknode(
        DISK_STATS,
        fs=(80 * GI, 100 * GI, 900_000, 1_000_000),
        image_fs=(40 * GI, 50 * GI, 900_000, 1_000_000),
        container_fs=(1 * GI, 50 * GI, 900_000, 1_000_000),
    )
    result = run(DISK_PODS, stats, {"filesystemLayout": "split"})
    assert [t.signal for t in result.thresholds_met] == ["containerfs.available"]
    assert result.thresholds_met[0].value.percentage == pytest.approx(0.1)  # copied from nodefs
    assert result.node_level_reclaim == ("DeleteAllUnusedContainers",)
    # logs + volumes + rootfs, ordered by usage − ephemeral-storage request
    assert [e.pod.name for e in result.ranking] == ["rootfs-heavy", "logs-heavy", "requested"]
    assert [e.usage for e in result.ranking] == [710 * MI, 600 * MI, 1100 * MI]
    assert result.victim.pod.name == "rootfs-heavy"


def test_pid_available():
    pods = (mkpod("low", priority=1), mkpod("many", priority=1), mkpod("high", priority=5))
    stats = mknode(
        (
            mkstats("low", processes=10),
            mkstats("many", processes=500),
            mkstats("high", processes=9000),
        ),
        pid=(10_000, 9_950),
    )
    result = run(pods, stats, {"evictionHard": "pid.available<100"})
    assert result.node_conditions == ["PIDPressure"]
    assert result.starved_resource == "pids"
    assert [e.pod.name for e in result.ranking] == ["many", "low", "high"]  # priority, then count
    assert result.victim.pod.name == "many"
    assert (
        result.message
        == "The node was low on resource: pids. Threshold quantity: 100, available: 50. "
    )


# --- soft thresholds and grace periods ---------------------------------------------------------

SOFT = {
    "evictionHard": "",
    "evictionSoft": {"memory.available": "1Gi"},
    "evictionSoftGracePeriod": {"memory.available": "1m"},
    "evictionMaxPodGracePeriod": 60,
}


def test_soft_threshold_without_first_observed_is_first_observed_now():
    result = run(MEMORY_PODS, mknode(MEMORY_STATS, memory_available=500 * MI), SOFT)
    assert [t.signal for t in result.thresholds_observed] == ["memory.available"]
    assert result.first_observed_at[result.thresholds_observed[0]] == NOW
    assert result.node_conditions == ["MemoryPressure"]  # raised before the grace period
    assert result.thresholds_met == []
    assert result.victim is None and result.starved_resource is None
    assert result.message == (
        "eviction thresholds met, but their grace periods have not passed: "
        "memory.available (grace period 1m0s, met for 0s)"
    )


@pytest.mark.parametrize(
    ("seconds_ago", "acts"),
    [
        pytest.param(30, False, id="within grace"),
        pytest.param(60, True, id="exactly the grace period"),
        pytest.param(600, True, id="long past"),
    ],
)
def test_soft_threshold_grace_period_from_first_observed(seconds_ago, acts):
    result = run(
        MEMORY_PODS,
        mknode(MEMORY_STATS, memory_available=500 * MI),
        SOFT,
        first_observed={"memory.available": ago(seconds_ago)},
    )
    assert (result.victim is not None) is acts
    assert bool(result.thresholds_met) is acts


@pytest.mark.parametrize(
    ("tgps", "grace"),
    [
        pytest.param(None, 60, id="no terminationGracePeriodSeconds: max"),
        pytest.param(30, 30, id="pod grace below max"),
        pytest.param(120, 60, id="pod grace above max"),
        pytest.param(0, 0, id="pod grace zero"),
    ],
)
def test_soft_eviction_kill_grace_period(tgps, grace):
    pods = (mkpod("victim", tgps=tgps),)
    result = run(
        pods,
        mknode((mkstats("victim", working_set=GI),), memory_available=500 * MI),
        SOFT,
        first_observed={"memory.available": ago(120)},
    )
    assert result.victim.grace_period_seconds == grace


def test_hard_before_soft_among_memory_thresholds():
    config = {**SOFT, "evictionHard": "memory.available<600Mi"}
    result = run(
        MEMORY_PODS,
        mknode(MEMORY_STATS, memory_available=500 * MI),
        config,
        first_observed={"memory.available": ago(120)},
    )
    assert [t.grace_period for t in result.thresholds_met][:2] == [0, 60 * S]
    assert result.victim.grace_period_seconds == 1


def test_future_first_observed_is_not_met_even_for_hard():
    """Upstream compares now − firstObserved ≥ grace; a negative duration never passes."""
    result = run(
        MEMORY_PODS,
        mknode(MEMORY_STATS, memory_available=50 * MI),
        {},
        first_observed={"memory.available": NOW + timedelta(seconds=5)},
    )
    assert result.thresholds_met == []


# --- minimum reclaim stickiness ----------------------------------------------------------------

RECLAIM = {
    "evictionHard": "memory.available<100Mi",
    "evictionMinimumReclaim": "memory.available=500Mi",
}


@pytest.mark.parametrize(
    ("available", "first_observed", "sticky"),
    [
        pytest.param(300 * MI, None, False, id="above threshold, no history: resolved"),
        pytest.param(300 * MI, 30, True, id="eviction under way: below threshold+minReclaim"),
        pytest.param(600 * MI, 30, False, id="reclaimed past threshold+minReclaim"),
        pytest.param(599 * MI, 30, True, id="1Mi short of threshold+minReclaim"),
    ],
)
def test_min_reclaim_is_sticky_only_for_previously_met_thresholds(
    available, first_observed, sticky
):
    fo = {"memory.available": ago(first_observed)} if first_observed is not None else None
    result = run(MEMORY_PODS, mknode(MEMORY_STATS, memory_available=available), RECLAIM, fo)
    assert bool(result.thresholds_observed) is sticky
    assert (result.victim is not None) is sticky


def test_min_reclaim_not_sticky_for_soft_threshold_within_grace():
    config = {
        "evictionHard": "",
        "evictionSoft": "memory.available<100Mi",
        "evictionSoftGracePeriod": "memory.available=5m",
        "evictionMinimumReclaim": "memory.available=500Mi",
    }
    result = run(
        MEMORY_PODS,
        mknode(MEMORY_STATS, memory_available=300 * MI),
        config,
        first_observed={"memory.available": ago(60)},
    )
    assert result.thresholds_observed == []


# --- node conditions and the pressure transition period ----------------------------------------


@pytest.mark.parametrize(
    ("last_seen", "period", "reported"),
    [
        pytest.param(60, None, ["MemoryPressure"], id="1m ago, 5m default period"),
        pytest.param(600, None, [], id="10m ago: transition period over"),
        pytest.param(60, "30s", [], id="1m ago, 30s period"),
    ],
)
def test_pressure_transition_period(last_seen, period, reported):
    config = {"evictionPressureTransitionPeriod": period} if period else {}
    result = run(
        MEMORY_PODS,
        mknode(MEMORY_STATS),
        config,
        conditions={"MemoryPressure": ago(last_seen)},
    )
    assert result.thresholds_observed == []
    assert result.node_conditions == reported


def test_conditions_in_fixed_order():
    stats = mknode(
        MEMORY_STATS, memory_available=10 * MI, pid=(1000, 990), fs=(GI, 100 * GI, 10, 10**6)
    )
    result = run(
        MEMORY_PODS,
        stats,
        {"evictionHard": "pid.available<50,nodefs.available<5%,memory.available<1Gi"},
    )
    assert result.node_conditions == ["MemoryPressure", "DiskPressure", "PIDPressure"]
    assert result.starved_resource == "memory"


# --- critical pods and pods considered ---------------------------------------------------------


@pytest.mark.parametrize(
    "critical",
    [
        pytest.param({"priority": 2_000_000_000}, id="system priority"),
        pytest.param({"annotations": {"kubernetes.io/config.source": "file"}}, id="static"),
        pytest.param({"annotations": {"kubernetes.io/config.mirror": "abc"}}, id="mirror"),
    ],
)
def test_critical_pods_are_passed_over(critical):
    pods = (mkpod("system", **critical), mkpod("app", memory_request=GI))
    stats = mknode((mkstats("app", working_set=GI),), memory_available=50 * MI)  # system: no stats
    result = run(pods, stats, {})
    assert [e.pod.name for e in result.ranking] == ["system", "app"]  # no stats ranks first
    assert result.victim.pod.name == "app"


def test_only_critical_pods_means_no_victim():
    pods = (mkpod("a", priority=2_000_000_000), mkpod("b", priority=2_000_001_000))
    result = run(pods, mknode((), memory_available=50 * MI), {})
    assert result.starved_resource == "memory"
    assert len(result.ranking) == 2
    assert result.victim is None
    assert result.message.startswith("unable to evict any pods from the node")


def test_terminal_pods_are_not_active():
    pods = (mkpod("done", phase="Succeeded"), mkpod("failed", phase="Failed"))
    result = run(pods, mknode((), memory_available=50 * MI), {})
    assert result.ranking == []
    assert result.message == "eviction thresholds have been met, but no pods are active to evict"


def test_pods_without_stats_rank_first_in_snapshot_order():
    pods = (mkpod("x"), mkpod("y"), *MEMORY_PODS)
    result = run(pods, mknode(MEMORY_STATS, memory_available=50 * MI), {})
    assert [e.pod.name for e in result.ranking][:2] == ["x", "y"]
    assert not result.ranking[0].has_stats and result.ranking[0].usage is None
    assert result.victim.pod.name == "x"
    assert result.message == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
    )


def test_stats_are_matched_by_uid():
    pods = (mkpod("a", memory_request=GI),)
    renamed = PodStats(
        namespace="other", name="other", uid="uid-a", memory=MemoryStats(working_set_bytes=2 * GI)
    )
    result = run(pods, mknode((renamed,), memory_available=50 * MI), {})
    assert result.ranking[0].has_stats and result.ranking[0].exceeds_requests


def test_idle_manager_without_thresholds_and_isolation():
    result = run(
        MEMORY_PODS,
        mknode(MEMORY_STATS, memory_available=1),
        {
            "evictionHard": "",
            "localStorageCapacityIsolation": False,
        },
    )
    assert result.victim is None and result.thresholds_observed == []
    assert "does nothing" in result.message


# --- messages ----------------------------------------------------------------------------------


def test_message_lists_every_container_over_its_request_in_stats_order():
    pod = mkpod(
        "multi",
        containers=(
            Container("web", requests={"memory": 100 * MI}),
            Container("sidecar", requests={"memory": 500 * MI}),
        ),
    )
    pod = Pod(
        **{
            **{f: getattr(pod, f) for f in pod.__struct_fields__},
            "init_containers": (Container("init", requests={}),),
        }
    )
    stats = PodStats(
        namespace="default",
        name="multi",
        uid="uid-multi",
        memory=MemoryStats(working_set_bytes=GI),
        containers=(
            ContainerStats("sidecar", memory=MemoryStats(working_set_bytes=200 * MI)),
            ContainerStats("init", memory=MemoryStats(working_set_bytes=1536)),
            ContainerStats("web", memory=MemoryStats(working_set_bytes=123_456_789)),
        ),
    )
    threshold = Threshold("memory.available", value=ThresholdValue(quantity=parse_quantity("1Gi")))
    message = eviction_message(
        "memory",
        pod,
        stats,
        [threshold],
        {"memory.available": SignalObservation(900 * MI, 8 * GI)},
        settings=DEFAULT_SETTINGS,
    )
    assert message == (
        "The node was low on resource: memory. Threshold quantity: 1Gi, available: 900Mi. "
        "Container init was using 1536, request is 0, has larger consumption of memory. "
        "Container web was using 123456789, request is 100Mi, has larger consumption of memory. "
    )


def test_message_with_pod_level_memory_request():
    pod = mkpod("pl", memory_request=100 * MI, resources=PodResources(requests={"memory": 2 * GI}))
    stats = mkstats("pl", working_set=GI)
    message = eviction_message("memory", pod, stats, [], {}, settings=DEFAULT_SETTINGS)
    assert message == (
        "The node was low on resource: memory. "
        "Pod pl was using 1Gi, request is 2Gi, has larger consumption of memory. "
        "Container app was using 1Gi, request is 100Mi, has larger consumption of memory. "
    )


def test_message_percentage_threshold_printed_as_quantity():
    threshold = Threshold("nodefs.available", value=ThresholdValue(percentage=0.10000000149011612))
    message = eviction_message(
        "ephemeral-storage",
        mkpod("p"),
        None,
        [threshold],
        {"nodefs.available": SignalObservation(1000, 10 * GI)},
        settings=DEFAULT_SETTINGS,
    )
    assert message == (
        # BinarySI amounts below 1024 print in DecimalSI form, as Quantity.String does
        "The node was low on resource: ephemeral-storage. Threshold quantity: 1073741840, "
        "available: 1k. "
    )


def test_message_ephemeral_storage_needs_rootfs_and_logs():
    stats = PodStats(
        namespace="default",
        name="p",
        uid="uid-p",
        containers=(ContainerStats("app", rootfs=FsStats(used_bytes=GI), logs=None),),
    )
    message = eviction_message(
        "ephemeral-storage", mkpod("p"), stats, [], {}, settings=DEFAULT_SETTINGS
    )
    assert message == "The node was low on resource: ephemeral-storage. "


# --- local ephemeral storage limits ------------------------------------------------------------


def test_pod_ephemeral_storage_limit_eviction_preempts_threshold_eviction():
    pods = (
        mkpod("over", storage_limit=GI),
        mkpod("critical-over", storage_limit=GI, priority=2_000_000_000),
        *MEMORY_PODS,
    )
    stats = mknode(
        (
            mkstats("over", ephemeral=2 * GI),
            mkstats("critical-over", ephemeral=2 * GI),
            *MEMORY_STATS,
        ),
        memory_available=50 * MI,
    )
    result = run(pods, stats, {})
    assert [(e.pod.name, e.signal, e.grace_period_seconds) for e in result.evictions] == [
        ("over", "ephemeralpodfs.limit", 1)
    ]
    assert (
        result.message
        == "Pod ephemeral local storage usage exceeds the total limit of containers 1Gi. "
    )
    assert result.starved_resource == "memory"  # the threshold is met, but not acted on this pass


@pytest.mark.parametrize(
    ("layout", "evicted"),
    [
        pytest.param("single", True, id="rootfs counted on one filesystem"),
        pytest.param("dedicatedImageFs", False, id="rootfs on the image filesystem"),
    ],
)
def test_container_ephemeral_storage_limit(layout, evicted):
    pods = (mkpod("c", storage_limit=500 * MI),)
    stats = mknode((mkstats("c", rootfs=400 * MI, logs=200 * MI),))
    result = run(pods, stats, {"filesystemLayout": layout})
    if evicted:
        assert (
            result.message == 'Container app exceeded its local ephemeral storage limit "500Mi". '
        )
        assert result.victim.signal == "ephemeralcontainerfs.limit"
    else:
        assert result.evictions == []


def test_local_storage_isolation_can_be_turned_off():
    pods = (mkpod("over", storage_limit=GI),)
    result = run(
        pods, mknode((mkstats("over", ephemeral=2 * GI),)), {"localStorageCapacityIsolation": False}
    )
    assert result.evictions == []


# --- rank functions per layout -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("image_fs", "split", "signal", "measured"),
    [
        (False, False, "nodefs.available", (FS_IMAGES, FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME_SOURCE)),
        (
            False,
            False,
            "containerfs.inodesFree",
            (FS_IMAGES, FS_ROOT, FS_LOGS, FS_LOCAL_VOLUME_SOURCE),
        ),
        (True, False, "nodefs.available", (FS_LOGS, FS_LOCAL_VOLUME_SOURCE)),
        (True, False, "imagefs.inodesFree", (FS_ROOT, FS_IMAGES)),
        (True, False, "containerfs.available", (FS_ROOT, FS_IMAGES)),
        (True, True, "nodefs.available", (FS_LOGS, FS_LOCAL_VOLUME_SOURCE, FS_ROOT)),
        (True, True, "containerfs.available", (FS_LOGS, FS_LOCAL_VOLUME_SOURCE, FS_ROOT)),
        (True, True, "imagefs.available", (FS_IMAGES,)),
    ],
)
def test_rank_functions_by_layout(image_fs, split, signal, measured):
    ranker = build_signal_to_rank_func(image_fs, split)[signal]
    assert ranker.func is rank_disk_pressure
    assert ranker.keywords["fs_stats_to_measure"] == measured


@pytest.mark.parametrize(("image_fs", "split"), [(False, False), (True, False), (True, True)])
def test_memory_and_pid_rankers_do_not_depend_on_the_layout(image_fs, split):
    rankers = build_signal_to_rank_func(image_fs, split)
    assert rankers["memory.available"] is rank_memory_pressure
    assert rankers["allocatableMemory.available"] is rank_memory_pressure
    assert rankers["pid.available"] is rank_pid_pressure


def test_node_reclaim_functions_by_layout():
    assert build_signal_to_node_reclaim_funcs(True, False)["nodefs.available"] == ()
    assert build_signal_to_node_reclaim_funcs(True, True)["imagefs.inodesFree"] == (
        "DeleteUnusedImages",
    )
    assert build_signal_to_node_reclaim_funcs(False, False)["imagefs.available"] == (
        "DeleteAllUnusedContainers",
        "DeleteUnusedImages",
    )


def test_make_signal_observations_needs_both_fields():
    stats = NodeStats(
        node_name="n",
        memory=MemoryStats(available_bytes=GI),  # no working set
        fs=FsStats(available_bytes=GI, capacity_bytes=2 * GI),  # no inodes
        rlimit=RlimitStats(max_pid=100),
    )
    assert list(make_signal_observations(stats)) == ["nodefs.available"]


def test_mirror_pod_stats_are_found_under_the_static_pod_uid():
    """The kubelet reports a static pod's stats under its own UID, which the mirror pod
    (what a kubectl dump shows) carries in the kubernetes.io/config.mirror annotation."""
    from service.engine.kubelet.eviction import PodStatsIndex
    from service.engine.objects import Pod, PodStats

    mirror = Pod(
        namespace="kube-system",
        name="kube-apiserver-n1",
        uid="api-server-uid",
        annotations={"kubernetes.io/config.mirror": "static-hash"},
    )
    stats = PodStats(namespace="kube-system", name="kube-apiserver-n1", uid="static-hash")
    other = PodStats(namespace="kube-system", name="kube-apiserver-n1", uid="api-server-uid")
    assert PodStatsIndex([stats]).get(mirror) is stats
    assert PodStatsIndex([other, stats]).get(mirror) is stats


# --- int64 at the edges: the kubelet converts uint64 stats with int64(...) ---------------------

U63 = 2**63


def test_make_signal_observations_converts_uint64_stats_to_int64():
    """helpers.go makeSignalObservations: NewQuantity(int64(*AvailableBytes)), capacity
    int64(available + workingSet) (a uint64 sum), int64(MaxPID) - int64(running): each
    wraps past 2^63-1."""
    stats = NodeStats(
        node_name="n",
        memory=MemoryStats(available_bytes=U63 + 10, working_set_bytes=U63 - 4),
        fs=FsStats(available_bytes=U63, capacity_bytes=2**64 - 1, inodes_free=U63, inodes=5),
        rlimit=RlimitStats(max_pid=U63 + 1, num_of_running_processes=3),
    )
    got = make_signal_observations(stats)
    assert (got["memory.available"].available, got["memory.available"].capacity) == (
        -U63 + 10,
        6,
    )
    assert (got["nodefs.available"].available, got["nodefs.available"].capacity) == (-U63, -1)
    assert got["nodefs.inodesFree"].available == -U63
    assert (got["pid.available"].available, got["pid.available"].capacity) == (
        U63 - 2,
        -U63 + 1,
    )


def test_memory_usage_past_int64_wraps_below_the_request():
    """helpers.go memoryUsage is int64(*WorkingSetBytes): a working set of 2^63 bytes is
    -2^63, so exceedMemoryRequests does not count the pod as above its request and the
    memory ordering puts it last."""
    from service.engine.kubelet.eviction import memory_usage

    assert memory_usage(PodStats("ns", "p", memory=MemoryStats(working_set_bytes=U63))) == -U63
    big = PodStats("ns", "p", memory=MemoryStats(working_set_bytes=U63 + 100))
    assert memory_usage(big) == -U63 + 100


def test_percentage_threshold_of_int64_max_capacity_is_go_int64_conversion():
    """evictionapi.GetThresholdQuantity: int64(float64(capacity) * percentage). 100% of
    2^63-1 is float64 2^63, which int64 cannot hold: on amd64 the conversion gives -2^63."""
    from service.engine.kubelet.eviction_config import get_threshold_quantity

    assert get_threshold_quantity(ThresholdValue(percentage=1.0), U63 - 1) == -U63
    assert get_threshold_quantity(ThresholdValue(percentage=0.5), U63 - 1) == 2**62


def test_message_compares_and_prints_the_request_as_written():
    """evictionMessage compares usage with the request by Quantity.Cmp (exact) and prints
    requests.String(): a request of "0.5" bytes (Value() 1) is exceeded by 1 byte and prints
    as 500m; "1.5Gi" prints in canonical form, 1536Mi."""
    pod = pod_from_object(
        {
            "metadata": {"name": "frac", "namespace": "default", "uid": "uid-frac"},
            "spec": {
                "containers": [
                    {"name": "half", "resources": {"requests": {"memory": "0.5"}}},
                    {"name": "big", "resources": {"requests": {"memory": "1.5Gi"}}},
                ]
            },
        }
    )
    stats = PodStats(
        namespace="default",
        name="frac",
        uid="uid-frac",
        containers=(
            ContainerStats("half", memory=MemoryStats(working_set_bytes=1)),
            ContainerStats("big", memory=MemoryStats(working_set_bytes=2 * GI)),
        ),
    )
    assert eviction_message("memory", pod, stats, [], {}, settings=DEFAULT_SETTINGS) == (
        "The node was low on resource: memory. "
        "Container half was using 1, request is 500m, has larger consumption of memory. "
        "Container big was using 2Gi, request is 1536Mi, has larger consumption of memory. "
    )


def test_an_allocatable_threshold_named_beside_its_copy_is_met_twice():
    """kubelet-oracle seeds 10277, 10776, 11821: evictionHard names allocatableMemory.available
    beside memory.available with ``pods`` enforced, so addAllocatableThresholds adds a copy of
    equal value. thresholdsFirstObservedAt keys its map by the Threshold struct, whose
    quantity is a pointer: the two are two keys and thresholdsMet lists both. Percentages
    without a minimum reclaim hold no pointer, and are one key."""
    from service.engine.kubelet.eviction import _met_as_keyed_upstream
    from service.engine.kubelet.eviction_config import parse_threshold_config

    def met(value: str) -> list[str]:
        hard = {"memory.available": value, "allocatableMemory.available": value}
        thresholds = parse_threshold_config(["pods"], hard, None, None, None)
        observed_at = dict.fromkeys(thresholds, NOW)
        return sorted(t.signal for t in _met_as_keyed_upstream(thresholds, observed_at, NOW))

    assert met("500Mi") == [
        "allocatableMemory.available",
        "allocatableMemory.available",
        "memory.available",
    ]
    assert met("10%") == ["allocatableMemory.available", "memory.available"]


def test_memory_ranking_reads_the_desired_requests_of_a_resized_pod():
    """rankMemoryPressure (pkg/kubelet/eviction/helpers.go, v1.35) ranks the pods of
    ``GetActivePods`` (the pod manager's, spec as the API holds it) by
    ``GetResourceRequestQuantity``, which reads the spec: a pod resized down to 200Mi but
    still allocated and running with 1Gi exceeds its request with 700Mi in use, and is
    evicted before a pod of 500Mi using 450Mi; the allocation would have spared it."""
    resized = msgspec.structs.replace(
        mkpod("resized", memory_request=200 * MI),
        resize=PodResize(
            containers={"app": ContainerResize(actuated={"memory": GI}, allocated={"memory": GI})}
        ),
    )
    pods = (resized, mkpod("steady", memory_request=500 * MI))
    stats = (mkstats("resized", working_set=700 * MI), mkstats("steady", working_set=450 * MI))
    result = run(pods, mknode(stats, memory_available=50 * MI), {})
    assert [e.pod.name for e in result.ranking] == ["resized", "steady"]
    assert result.ranking[0].exceeds_requests and result.ranking[0].request == 200 * MI
