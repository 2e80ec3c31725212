"""Effective pod requests and limits, the way Kubernetes components compute them.

One implementation of each aggregation, used everywhere (kubelet admission, preemption,
eviction ranking, scheduler fit and scoring, the snapshot pod listing):

* ``pod_requests`` / ``pod_limits`` — component-helpers ``resource.PodRequests`` /
  ``resource.PodLimits`` (spec only; no in-place-resize status, no DRA), k8s 1.35: sidecars (restartable init containers) add to the container sum and to the peak of
  every later init container; pod-level ``spec.resources`` overrides the supported names
  (cpu, memory, hugepages-*) when the PodLevelResources gate is on; overhead is added to
  every request key, and only to existing non-zero limit keys.
* ``pod_requests_non_zero`` — the scheduler's non-zero variant (framework ``calculateResource``): a
  container with no ``cpu`` key counts 100m, with no ``memory`` key 200Mi.
* ``scheduler_pod_requests`` — both of the above as the scheduler's cache reads them, in one
  call, for building the scheduler view (the one function here whose result may be shared).
* ``resource_request`` — the kubelet's per-resource getter ``GetResourceRequest``
  (pkg/api/v1/resource).

Resource maps are ``dict[str, int]`` in base units (millicores for cpu). Every function but
``scheduler_pod_requests`` returns a fresh dict the caller may mutate. These run for every
pod of a 150,000-pod snapshot, so the common shapes (one container, no init containers, no
pod-level resources) take short paths.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from service.engine.objects import Container, Pod, ResourceList
from service.engine.quantity import (
    BINARY_SI,
    DECIMAL_SI,
    MAX_INT64,
    MIN_INT64,
    from_base_units,
    parse_quantity,
    to_base_units,
)
from service.engine.version import EngineSettings

__all__ = [
    "DEFAULT_CPU_REQUEST_MILLI",
    "DEFAULT_MEMORY_REQUEST_BYTES",
    "aggregate_container_limits",
    "aggregate_container_requests",
    "exact_list",
    "exact_pod_limits",
    "exact_pod_requests",
    "is_extended_resource_name",
    "is_hugepages_resource_name",
    "is_pod_level_limits_set",
    "is_pod_level_requests_set",
    "is_pod_level_resources_set",
    "is_qualified_name",
    "is_scalar_resource_name",
    "is_supported_pod_level_resource",
    "kubelet_resource_requests",
    "pod_limits",
    "pod_requests",
    "pod_requests_non_zero",
    "resource_request",
    "scheduler_pod_requests",
]

# Scheduler defaults for a container without a cpu / memory request (util.DefaultMilliCPURequest,
# util.DefaultMemoryRequest).
DEFAULT_CPU_REQUEST_MILLI = 100
DEFAULT_MEMORY_REQUEST_BYTES = 200 * 1024 * 1024

_HUGEPAGES_PREFIX = "hugepages-"
_GATE_ON = EngineSettings(pod_level_resources=True)


# validation.IsQualifiedName: optional DNS-1123 subdomain prefix and "/", then a name part.
_QUALIFIED_NAME_PART = re.compile(r"[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?\Z")
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)


def is_qualified_name(value: str) -> bool:
    """validation.IsQualifiedName (label keys, topology keys, extended resource names)."""
    prefix, slash, name = value.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN.match(prefix)):
        return False
    if not name or len(name) > 63:
        return False
    return _QUALIFIED_NAME_PART.match(name) is not None


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName (k8s 1.35): a name with a "/" outside the
    ``kubernetes.io/`` namespace, not starting with "requests.", whose "requests." form is a
    qualified name (e.g. ``example.com/gpu``)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return is_qualified_name("requests." + name)


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName (k8s 1.35): extended, hugepages-*, prefixed native
    (``*kubernetes.io/*``) or attachable-volumes-* resources, the ones a scheduler
    framework.Resource keeps besides cpu, memory, ephemeral-storage and pods."""
    return (
        name.startswith(_HUGEPAGES_PREFIX)
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
        or is_extended_resource_name(name)
    )


def is_hugepages_resource_name(name: str) -> bool:
    """v1helper.IsHugePageResourceName: ``hugepages-<size>``."""
    return name.startswith(_HUGEPAGES_PREFIX)


def is_supported_pod_level_resource(name: str) -> bool:
    """component-helpers IsSupportedPodLevelResource (k8s 1.35): cpu, memory, hugepages-*."""
    return name == "cpu" or name == "memory" or name.startswith(_HUGEPAGES_PREFIX)


def _has_supported(resources: ResourceList) -> bool:
    for name in resources:
        if name == "cpu" or name == "memory" or name.startswith(_HUGEPAGES_PREFIX):
            return True
    return False


def is_pod_level_resources_set(pod: Pod) -> bool:
    """component-helpers IsPodLevelResourcesSet (k8s 1.35): a supported name in
    ``spec.resources.requests`` or ``.limits``."""
    res = pod.resources
    if res is None:
        return False
    return _has_supported(res.requests) or _has_supported(res.limits)


def is_pod_level_requests_set(pod: Pod) -> bool:
    """component-helpers IsPodLevelRequestsSet (k8s 1.35)."""
    res = pod.resources
    return res is not None and _has_supported(res.requests)


def is_pod_level_limits_set(pod: Pod) -> bool:
    """component-helpers IsPodLevelLimitsSet (k8s 1.35)."""
    res = pod.resources
    return res is not None and _has_supported(res.limits)


def _add_into(acc: dict, more: dict) -> None:
    """addResourceList: a new name takes the value itself (DeepCopy keeps a Quantity's
    cached string), an existing one is summed (Add: the canonical form from then on)."""
    for name, value in more.items():
        old = acc.get(name)
        acc[name] = value if old is None else old + value


def _requests_of(c: Container) -> ResourceList:
    return c.requests


def _limits_of(c: Container) -> ResourceList:
    return c.limits


def _aggregate(
    containers: tuple[Container, ...],
    init_containers: tuple[Container, ...],
    pick: Callable[[Container], ResourceList],
) -> dict[str, int]:
    """component-helpers aggregateContainerResourcesByFn over spec (k8s 1.35): sum of the
    containers and sidecars, maxed with the peak use of each init container (its own
    resources plus the sidecars declared before it; a sidecar's use is the sidecar sum)."""
    if not init_containers and len(containers) == 1:
        return dict(pick(containers[0]))
    total: dict[str, int] = {}
    for c in containers:
        _add_into(total, pick(c))
    if not init_containers:
        return total
    sidecars: dict[str, int] = {}
    peak: dict[str, int] = {}
    for c in init_containers:
        own = pick(c)
        if c.restart_policy == "Always":
            _add_into(total, own)
            _add_into(sidecars, own)
            use: ResourceList = sidecars
        elif sidecars:
            use = dict(own)
            _add_into(use, sidecars)
        else:
            use = own
        for name, value in use.items():
            if name not in peak or value > peak[name]:
                peak[name] = value
    for name, value in peak.items():
        if name not in total or value > total[name]:
            total[name] = value
    return total


def _apply_pod_level_requests(pod: Pod, reqs: dict[str, int], settings: EngineSettings) -> None:
    res = pod.resources
    if res is not None and settings.pod_level_resources and _has_supported(res.requests):
        for name, value in res.requests.items():
            if is_supported_pod_level_resource(name):
                reqs[name] = value


def aggregate_container_requests(pod: Pod) -> dict[str, int]:
    """component-helpers AggregateContainerRequests (k8s 1.35, spec only): sum of containers
    and sidecars, maxed with the peak init-container use."""
    return _aggregate(pod.containers, pod.init_containers, _requests_of)


def aggregate_container_limits(pod: Pod) -> dict[str, int]:
    """component-helpers AggregateContainerLimits (k8s 1.35, spec only)."""
    return _aggregate(pod.containers, pod.init_containers, _limits_of)


def _fits(amounts: dict[str, int]) -> bool:
    """Whether every sum of the pod's integers stays in int64. Then it is the exact sum, and
    MilliValue/Value of the summed Quantities (PodRequests) is that same integer, whatever
    their representation. Past int64 it depends on the representation (Quantity.Add,
    ScaledValue): the totals are then summed in exact Quantities."""
    return all(MIN_INT64 <= value <= MAX_INT64 for value in amounts.values())


def _inexact_requests(pod: Pod) -> bool:
    """Whether some request of the pod is a quantity its integer does not hold exactly (the
    snapshot kept it as written): then the pod's totals are summed in exact Quantities."""
    if pod.overhead_given or (pod.resources is not None and pod.resources.requests_given):
        return True
    return any(c.requests_given for c in pod.containers) or any(
        c.requests_given for c in pod.init_containers
    )


def _inexact_limits(pod: Pod) -> bool:
    if pod.overhead_given or (pod.resources is not None and pod.resources.limits_given):
        return True
    return any(c.limits_given for c in pod.containers) or any(
        c.limits_given for c in pod.init_containers
    )


def pod_requests(
    pod: Pod,
    *,
    exclude_overhead: bool = False,
    skip_container_level: bool = False,
    settings: EngineSettings,
) -> dict[str, int]:
    """Effective pod requests: component-helpers ``resource.PodRequests`` (k8s 1.35, spec
    only).

    Container aggregation (unless ``skip_container_level``), then, when the PodLevelResources
    gate is on (``settings.pod_level_resources``) and ``spec.resources.requests`` holds a
    supported name, every supported pod-level request replaces the aggregate; then overhead
    is added to every key (creating keys) unless ``exclude_overhead``.
    """
    if not _inexact_requests(pod):
        if skip_container_level:
            reqs: dict[str, int] = {}
        else:
            reqs = _aggregate(pod.containers, pod.init_containers, _requests_of)
        _apply_pod_level_requests(pod, reqs, settings)
        if not exclude_overhead and pod.overhead:
            _add_into(reqs, pod.overhead)
        if _fits(reqs):
            return reqs
    exact = exact_pod_requests(
        pod,
        exclude_overhead=exclude_overhead,
        skip_container_level=skip_container_level,
        settings=settings,
    )
    return {name: to_base_units(name, q) for name, q in exact.items()}


def pod_limits(
    pod: Pod,
    *,
    exclude_overhead: bool = False,
    settings: EngineSettings,
) -> dict[str, int]:
    """Effective pod limits: component-helpers ``resource.PodLimits`` (k8s 1.35, spec only).

    A container without a limit contributes nothing (it does not make the pod unlimited).
    With the gate on and pod-level resources set (requests or limits), the supported names in
    ``spec.resources.limits`` replace the aggregate. Overhead is added only to limit keys that
    already exist with a non-zero value.
    """
    if not _inexact_limits(pod):
        limits = _aggregate(pod.containers, pod.init_containers, _limits_of)
        res = pod.resources
        if res is not None and settings.pod_level_resources and is_pod_level_resources_set(pod):
            for name, value in res.limits.items():
                if is_supported_pod_level_resource(name):
                    limits[name] = value
        if not exclude_overhead and pod.overhead:
            for name, value in pod.overhead.items():
                current = limits.get(name)
                if current:
                    limits[name] = current + value
        if _fits(limits):
            return limits
    exact = exact_pod_limits(pod, exclude_overhead=exclude_overhead, settings=settings)
    return {name: to_base_units(name, q) for name, q in exact.items()}


def exact_list(amounts: ResourceList, given: dict[str, str], formats: dict[str, str]) -> dict:
    """A resource list as exact Quantities: the quantity as written where the snapshot kept
    it (``*_given``), else rebuilt from its integer in the pod's (node's) first format."""
    return {
        name: parse_quantity(given[name])
        if name in given
        else from_base_units(name, amount, formats.get(name, DECIMAL_SI))
        for name, amount in amounts.items()
    }


def exact_pod_requests(
    pod: Pod,
    *,
    exclude_overhead: bool = False,
    skip_container_level: bool = False,
    settings: EngineSettings,
) -> dict:
    """``pod_requests`` in exact Quantities, as component-helpers ``resource.PodRequests``
    computes them (Add, and Cmp for the init-container peak), for printing: a single
    container's ``80u`` stays ``80u``, a sum is printed in its canonical form."""
    formats = pod.formats
    reqs = {}
    if not skip_container_level:
        reqs = _aggregate(
            pod.containers,
            pod.init_containers,
            lambda c: exact_list(c.requests, c.requests_given, formats),
        )
    res = pod.resources
    if res is not None and settings.pod_level_resources and _has_supported(res.requests):
        for name, value in exact_list(res.requests, res.requests_given, formats).items():
            if is_supported_pod_level_resource(name):
                reqs[name] = value
    if not exclude_overhead and pod.overhead:
        _add_into(reqs, exact_list(pod.overhead, pod.overhead_given, formats))
    return reqs


def exact_pod_limits(pod: Pod, *, exclude_overhead: bool = False, settings: EngineSettings) -> dict:
    """``pod_limits`` in exact Quantities (component-helpers ``resource.PodLimits``)."""
    formats = pod.formats
    limits = _aggregate(
        pod.containers,
        pod.init_containers,
        lambda c: exact_list(c.limits, c.limits_given, formats),
    )
    res = pod.resources
    if res is not None and settings.pod_level_resources and is_pod_level_resources_set(pod):
        for name, value in exact_list(res.limits, res.limits_given, formats).items():
            if is_supported_pod_level_resource(name):
                limits[name] = value
    if not exclude_overhead and pod.overhead:
        for name, value in exact_list(pod.overhead, pod.overhead_given, formats).items():
            current = limits.get(name)
            if current is not None and not current.is_zero():
                limits[name] = current + value
    return limits


def _non_zero(c: Container) -> ResourceList:
    reqs = c.requests
    if "cpu" in reqs and "memory" in reqs:
        return reqs
    filled = dict(reqs)
    if "cpu" not in filled:
        filled["cpu"] = DEFAULT_CPU_REQUEST_MILLI
    if "memory" not in filled:
        filled["memory"] = DEFAULT_MEMORY_REQUEST_BYTES
    return filled


def pod_requests_non_zero(pod: Pod, *, settings: EngineSettings) -> dict[str, int]:
    """The scheduler's non-zero pod request: PodRequests with
    ``NonMissingContainerRequests`` = {cpu: 100m, memory: 200Mi}, as the scheduler's
    framework.NewResource / calculateResource (k8s 1.35) compute it.

    Per container (regular and init), a missing ``cpu`` key counts 100 millicores and a
    missing ``memory`` key 200Mi; an explicit ``0`` is kept. A pod without containers gets 0
    (no defaults). Pod-level requests override and overhead is added, as in ``pod_requests``.
    Only cpu and memory are meaningful in the result (the scheduler reads only those).
    """
    if not _inexact_requests(pod):
        total = _aggregate(pod.containers, pod.init_containers, _non_zero)
        _apply_pod_level_requests(pod, total, settings)
        if pod.overhead:
            _add_into(total, pod.overhead)
        if _fits(total):
            return total
    exact = _exact_pod_requests_non_zero(pod, settings)
    return {name: to_base_units(name, q) for name, q in exact.items()}


def _exact_pod_requests_non_zero(pod: Pod, settings: EngineSettings) -> dict:
    """``pod_requests_non_zero`` in exact Quantities (PodRequests with
    NonMissingContainerRequests, then MilliValue/Value of the sum): two containers of
    ``500u`` cpu are 1 millicore, not the 2 that adding each one's rounded integer gives."""
    formats = pod.formats
    defaults = {
        "cpu": from_base_units("cpu", DEFAULT_CPU_REQUEST_MILLI, DECIMAL_SI),
        "memory": from_base_units("memory", DEFAULT_MEMORY_REQUEST_BYTES, BINARY_SI),
    }

    def pick(c: Container) -> dict:
        own = exact_list(c.requests, c.requests_given, formats)
        for name, value in defaults.items():
            own.setdefault(name, value)
        return own

    total = _aggregate(pod.containers, pod.init_containers, pick)
    res = pod.resources
    if res is not None and settings.pod_level_resources and _has_supported(res.requests):
        for name, value in exact_list(res.requests, res.requests_given, formats).items():
            if is_supported_pod_level_resource(name):
                total[name] = value
    if pod.overhead:
        _add_into(total, exact_list(pod.overhead, pod.overhead_given, formats))
    return total


def scheduler_pod_requests(
    pod: Pod, *, settings: EngineSettings
) -> tuple[dict[str, int], int, int]:
    """``(pod_requests(pod), non-zero cpu, non-zero memory)``: what the scheduler's
    NodeInfo.AddPod (calculateResource, k8s 1.35) adds for a pod, computed with as little
    work as the pod's shape allows. For the scheduler view only (150,000 pods per build).

    The returned dict is NOT a copy when the pod has exactly one container and no init
    containers, overhead or pod-level ``resources``: it is that container's own requests,
    shared with the snapshot. Callers must never mutate it.

    Without overhead or pod-level ``resources``, both aggregates are computed in one pass
    (``_requests_and_non_zero``). Otherwise, when every container (regular and init) has
    both a ``cpu`` and a ``memory`` key, the non-zero defaults never apply, so the non-zero
    aggregate equals PodRequests and is not computed a second time.
    """
    containers = pod.containers
    init_containers = pod.init_containers
    if not pod.overhead and pod.resources is None:
        if len(containers) == 1 and not init_containers:
            reqs = containers[0].requests
            return (
                reqs,
                reqs.get("cpu", DEFAULT_CPU_REQUEST_MILLI),
                reqs.get("memory", DEFAULT_MEMORY_REQUEST_BYTES),
            )
        if not _inexact_requests(pod):
            reqs, nz_cpu, nz_mem = _requests_and_non_zero(containers, init_containers)
            if _fits(reqs) and nz_cpu <= MAX_INT64 and nz_mem <= MAX_INT64:
                return reqs, nz_cpu, nz_mem
    reqs = pod_requests(pod, settings=settings)
    for group in (containers, init_containers):
        for c in group:
            own = c.requests
            if "cpu" not in own or "memory" not in own:
                nz = pod_requests_non_zero(pod, settings=settings)
                return reqs, nz.get("cpu", 0), nz.get("memory", 0)
    return reqs, reqs.get("cpu", 0), reqs.get("memory", 0)


def _requests_and_non_zero(
    containers: tuple[Container, ...], init_containers: tuple[Container, ...]
) -> tuple[dict[str, int], int, int]:
    """``_aggregate`` (aggregateContainerResourcesByFn) of the requests and of the non-zero
    requests (``_non_zero``) at once, the non-zero one kept for cpu and memory only: the same
    steps, in the same order, as the two calls. A ``_non_zero`` map always has cpu and memory, so its sums and peaks for
    those two are plain numbers; ``nz_keys`` says whether its total has them at all (some
    container or sidecar was added), as ``_aggregate``'s final max needs."""
    total: dict[str, int] = {}
    nz_cpu = nz_mem = 0
    for c in containers:
        own = c.requests
        for name, value in own.items():
            total[name] = total.get(name, 0) + value
        nz_cpu += own.get("cpu", DEFAULT_CPU_REQUEST_MILLI)
        nz_mem += own.get("memory", DEFAULT_MEMORY_REQUEST_BYTES)
    if not init_containers:
        return total, nz_cpu, nz_mem
    nz_keys = bool(containers)
    sidecars: dict[str, int] = {}
    side_cpu = side_mem = 0
    peak: dict[str, int] = {}
    peak_cpu = peak_mem = 0  # set by the first init container
    first = True
    for c in init_containers:
        own = c.requests
        own_cpu = own.get("cpu", DEFAULT_CPU_REQUEST_MILLI)
        own_mem = own.get("memory", DEFAULT_MEMORY_REQUEST_BYTES)
        if c.restart_policy == "Always":
            for name, value in own.items():
                total[name] = total.get(name, 0) + value
                sidecars[name] = sidecars.get(name, 0) + value
            nz_cpu += own_cpu
            nz_mem += own_mem
            nz_keys = True
            side_cpu += own_cpu
            side_mem += own_mem
            use: ResourceList = sidecars
            use_cpu, use_mem = side_cpu, side_mem
        else:
            if sidecars:
                use = dict(own)
                _add_into(use, sidecars)
            else:
                use = own
            use_cpu, use_mem = own_cpu + side_cpu, own_mem + side_mem
        for name, value in use.items():
            if name not in peak or value > peak[name]:
                peak[name] = value
        if first or use_cpu > peak_cpu:
            peak_cpu = use_cpu
        if first or use_mem > peak_mem:
            peak_mem = use_mem
        first = False
    for name, value in peak.items():
        if name not in total or value > total[name]:
            total[name] = value
    if not nz_keys or peak_cpu > nz_cpu:
        nz_cpu = peak_cpu
    if not nz_keys or peak_mem > nz_mem:
        nz_mem = peak_mem
    return total, nz_cpu, nz_mem


def kubelet_resource_requests(pod: Pod, *, settings: EngineSettings) -> dict[str, int]:
    """The requests behind the kubelet getter ``GetResourceRequestQuantity`` (k8s 1.35)
    before overhead: with the gate on and pod-level resources set, only the supported
    pod-level requests; otherwise PodRequests without overhead (the pod-level override
    applies whatever the gate says: upstream passes no SkipPodLevelResources here, and with
    the gate off the API server drops spec.resources anyway)."""
    if settings.pod_level_resources and is_pod_level_resources_set(pod):
        return {
            name: value
            for name, value in pod.resources.requests.items()  # type: ignore[union-attr]
            if is_supported_pod_level_resource(name)
        }
    return pod_requests(pod, exclude_overhead=True, settings=_GATE_ON)


def resource_request(
    pod: Pod,
    name: str,
    *,
    settings: EngineSettings,
    requests: dict[str, int] | None = None,
) -> int:
    """The kubelet's per-resource getter: pkg/api/v1/resource ``GetResourceRequest`` over
    ``GetResourceRequestQuantity`` (k8s 1.35).

    ``pods`` is always 1. Otherwise the value of ``kubelet_resource_requests`` (pass it as
    ``requests`` when asking for several names of one pod), plus the pod overhead for
    ``name`` only when that value is non-zero.
    """
    if name == "pods":
        return 1
    if requests is None:
        requests = kubelet_resource_requests(pod, settings=settings)
    value = requests.get(name, 0)
    if value and name in pod.overhead:
        value += pod.overhead[name]
    return value
