"""Pod QoS class, OOM score adjust, and the kubelet's pod kinds (static, mirror, critical).

Mirrors pkg/apis/core/v1/helper/qos ``GetPodQOS`` (the kubelet's QoS class), pkg/kubelet/qos
``GetContainerOOMScoreAdjust`` and pkg/kubelet/types ``IsStaticPod``, ``IsMirrorPod`` and
``IsCriticalPod`` (k8s 1.35). The QoS algorithm and the PodLevelResources gate come
from ``EngineSettings`` (``qos_algorithm``: "shape" = 1.37 per-container algorithm, default;
"aggregate" = releases up to 1.36).
"""

from __future__ import annotations

from service.engine.objects import (
    CONFIG_MIRROR_ANNOTATION,
    CONFIG_SOURCE_ANNOTATION,
    Container,
    Pod,
    ResourceList,
)
from service.engine.resources import (
    aggregate_container_requests,
    is_pod_level_requests_set,
    is_pod_level_resources_set,
)
from service.engine.version import EngineSettings

__all__ = [
    "BESTEFFORT_OOM_SCORE_ADJ",
    "BEST_EFFORT",
    "BURSTABLE",
    "GUARANTEED",
    "GUARANTEED_OOM_SCORE_ADJ",
    "SYSTEM_CRITICAL_PRIORITY",
    "compute_pod_qos",
    "container_oom_score_adjust",
    "get_pod_qos",
    "is_critical_pod",
    "is_mirror_pod",
    "is_node_critical_pod",
    "is_static_pod",
    "oom_score_adjusts",
    "preemptable",
]

GUARANTEED = "Guaranteed"
BURSTABLE = "Burstable"
BEST_EFFORT = "BestEffort"

# scheduling.SystemCriticalPriority (2 * 10^9).
SYSTEM_CRITICAL_PRIORITY = 2_000_000_000
SYSTEM_NODE_CRITICAL = "system-node-critical"

# pkg/kubelet/qos/policy.go constants (k8s 1.35).
GUARANTEED_OOM_SCORE_ADJ = -997
BESTEFFORT_OOM_SCORE_ADJ = 1000

_QOS_RESOURCES = ("cpu", "memory")


# --- QoS class ------------------------------------------------------------------------------


def _aggregate_qos(blocks: list[tuple[ResourceList, ResourceList]]) -> str:
    """ComputePodQOS, releases up to 1.36 (pkg/apis/core/v1/helper/qos, k8s 1.36): sum the
    positive cpu/memory requests and limits over all blocks; Guaranteed needs every block to
    limit both cpu and memory and the sums to match."""
    req: dict[str, int] = {}
    lim: dict[str, int] = {}
    guaranteed = True
    for requests, limits in blocks:
        for name in _QOS_RESOURCES:
            value = requests.get(name, 0)
            if value > 0:
                req[name] = req.get(name, 0) + value
        found = 0
        for name in _QOS_RESOURCES:
            value = limits.get(name, 0)
            if value > 0:
                lim[name] = lim.get(name, 0) + value
                found += 1
        if found < 2:
            guaranteed = False
    if not req and not lim:
        return BEST_EFFORT
    if guaranteed:
        for name, value in req.items():
            if lim.get(name) != value:
                guaranteed = False
                break
    if guaranteed and len(req) == len(lim):
        return GUARANTEED
    return BURSTABLE


def _shape(requests: ResourceList, limits: ResourceList) -> str:
    """The QoS shape of one requirements block (1.37 per-container algorithm)."""
    if not requests and not limits:
        return BEST_EFFORT
    cpu_req = requests.get("cpu", 0)
    cpu_lim = limits.get("cpu", 0)
    if cpu_req != cpu_lim:
        return BURSTABLE
    mem_req = requests.get("memory", 0)
    mem_lim = limits.get("memory", 0)
    if mem_req != mem_lim:
        return BURSTABLE
    if cpu_req == 0:
        return BEST_EFFORT if mem_req == 0 else BURSTABLE
    return GUARANTEED if mem_req != 0 else BURSTABLE


def _shape_qos(pod: Pod, settings: EngineSettings) -> str:
    """ComputePodQOS, 1.37 per-container "shape" algorithm."""
    if settings.pod_level_resources and is_pod_level_resources_set(pod):
        res = pod.resources
        return _shape(res.requests, res.limits)  # type: ignore[union-attr]
    seen_best_effort = False
    seen_guaranteed = False
    for group in (pod.init_containers, pod.containers):
        for c in group:
            shape = _shape(c.requests, c.limits)
            if shape == BURSTABLE:
                return BURSTABLE
            if shape == GUARANTEED:
                seen_guaranteed = True
            else:
                seen_best_effort = True
    if seen_guaranteed:
        return BURSTABLE if seen_best_effort else GUARANTEED
    return BEST_EFFORT


def compute_pod_qos(pod: Pod, *, settings: EngineSettings) -> str:
    """ComputePodQOS from the spec alone (ignores ``status.qosClass``).

    ``settings.qos_algorithm``: "shape" (k8s 1.37) or "aggregate" (k8s up to 1.36,
    pkg/apis/core/v1/helper/qos ComputePodQOS). Only cpu and memory count.
    """
    if settings.qos_algorithm == "aggregate":
        res = pod.resources
        if settings.pod_level_resources and res is not None:
            return _aggregate_qos([(res.requests, res.limits)])
        blocks = [(c.requests, c.limits) for c in pod.containers]
        blocks.extend((c.requests, c.limits) for c in pod.init_containers)
        return _aggregate_qos(blocks)
    return _shape_qos(pod, settings)


def get_pod_qos(pod: Pod, *, settings: EngineSettings) -> str:
    """GetPodQOS (pkg/apis/core/v1/helper/qos, k8s 1.35): ``status.qosClass`` when the API
    server set it (it never changes, even across resizes), else ComputePodQOS."""
    if pod.qos_class:
        return pod.qos_class
    return compute_pod_qos(pod, settings=settings)


# --- pod kinds (pkg/kubelet/types/pod_update.go) --------------------------------------------


def is_static_pod(pod: Pod) -> bool:
    """kubelettypes.IsStaticPod (k8s 1.35): config source annotation present and not "api"."""
    source = pod.annotations.get(CONFIG_SOURCE_ANNOTATION)
    return source is not None and source != "api"


def is_mirror_pod(pod: Pod) -> bool:
    """kubelettypes.IsMirrorPod (k8s 1.35): the config.mirror annotation is present."""
    return CONFIG_MIRROR_ANNOTATION in pod.annotations


def is_critical_pod(pod: Pod) -> bool:
    """kubelettypes.IsCriticalPod (k8s 1.35): static, mirror, or priority >= 2e9.
    The priority class name is not consulted."""
    priority = pod.priority
    if priority is not None and priority >= SYSTEM_CRITICAL_PRIORITY:
        return True
    annotations = pod.annotations
    if not annotations:
        return False
    return is_static_pod(pod) or is_mirror_pod(pod)


def is_node_critical_pod(pod: Pod) -> bool:
    """kubelettypes.IsNodeCriticalPod (k8s 1.35): critical and class system-node-critical."""
    return pod.priority_class_name == SYSTEM_NODE_CRITICAL and is_critical_pod(pod)


def preemptable(preemptor: Pod, victim: Pod) -> bool:
    """kubelettypes.Preemptable (k8s 1.35): a critical preemptor beats any non-critical pod;
    otherwise both priorities must be set (null is not 0 here) and strictly ordered."""
    if is_critical_pod(preemptor) and not is_critical_pod(victim):
        return True
    if preemptor.priority is not None and victim.priority is not None:
        return preemptor.priority > victim.priority
    return False


# --- OOM score adjust (pkg/kubelet/qos/policy.go) -------------------------------------------


def _clamp_burstable(adj: int) -> int:
    if adj < 1000 + GUARANTEED_OOM_SCORE_ADJ:
        return 1000 + GUARANTEED_OOM_SCORE_ADJ
    if adj == BESTEFFORT_OOM_SCORE_ADJ:
        return adj - 1
    return adj


def _burstable_adjusts(pod: Pod, memory_capacity: int, settings: EngineSettings) -> dict[str, int]:
    remaining = 0
    if settings.pod_level_resources and is_pod_level_requests_set(pod):
        pod_memory = pod.resources.requests.get("memory", 0)  # type: ignore[union-attr]
        if pod_memory:
            container_memory = aggregate_container_requests(pod).get("memory", 0)
            count = len(pod.containers) + len(pod.init_containers)
            if count:
                remaining = _go_div(pod_memory - container_memory, count)

    def adjust(memory_request: int) -> int:
        return 1000 - _go_div(1000 * (memory_request + remaining), memory_capacity)

    min_regular: int | None = None
    for c in pod.containers:
        m = c.requests.get("memory", 0)
        if min_regular is None or m < min_regular:
            min_regular = m

    result: dict[str, int] = {}
    for c in pod.containers:
        result[c.name] = _clamp_burstable(adjust(c.requests.get("memory", 0)))
    for c in pod.init_containers:
        adj = adjust(c.requests.get("memory", 0))
        if c.restart_policy == "Always" and min_regular is not None:
            adj = min(adj, adjust(min_regular))
        result[c.name] = _clamp_burstable(adj)
    return result


def _go_div(a: int, b: int) -> int:
    """Go integer division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _containers(pod: Pod) -> tuple[Container, ...]:
    return pod.containers + pod.init_containers


def oom_score_adjusts(
    pod: Pod, memory_capacity: int, *, settings: EngineSettings
) -> dict[str, int]:
    """The OOM score adjust the kubelet gives each container (regular, then init and sidecar,
    in spec order): pkg/kubelet/qos/policy.go GetContainerOOMScoreAdjust (k8s 1.35).

    ``memory_capacity`` is the node's machine memory capacity in bytes (not allocatable).
    Node-critical and Guaranteed pods get -997, BestEffort 1000; Burstable containers
    1000 - 1000*request/capacity (plus the pod-level share, and capped for sidecars by the
    most killable regular container), clamped to [3, 999].
    """
    if is_node_critical_pod(pod):
        return {c.name: GUARANTEED_OOM_SCORE_ADJ for c in _containers(pod)}
    qos = get_pod_qos(pod, settings=settings)
    if qos == GUARANTEED:
        return {c.name: GUARANTEED_OOM_SCORE_ADJ for c in _containers(pod)}
    if qos == BEST_EFFORT:
        return {c.name: BESTEFFORT_OOM_SCORE_ADJ for c in _containers(pod)}
    return _burstable_adjusts(pod, memory_capacity, settings)


def container_oom_score_adjust(
    pod: Pod,
    container_name: str,
    memory_capacity: int,
    *,
    settings: EngineSettings,
) -> int:
    """GetContainerOOMScoreAdjust for one named container (see ``oom_score_adjusts``)."""
    return oom_score_adjusts(pod, memory_capacity, settings=settings)[container_name]
