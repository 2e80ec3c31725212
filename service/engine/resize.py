"""InPlacePodVerticalScaling: the requests a resized pod counts for.

A pod resized in place keeps its new requests in ``spec`` while its status says what the
runtime actuated and the kubelet allocated. From v1.33 (the gate beta and on by default;
GA in v1.35) the scheduler's NodeInfo and the kubelet's admission count a pod through
component-helpers ``resource.PodRequests`` with ``UseStatusResources``: for each regular
container and sidecar whose status carries ``resources``, per resource the largest of the
spec's request, the actuated one and the allocated one (``determineContainerReqs`` in
v1.33.3 and v1.34.1, ``determineEffectiveRequests`` in v1.35.4); when the pod's
PodResizePending condition says Infeasible, the largest of the actuated and the allocated
only (the spec's new request will not be applied). Other init containers keep their spec.
From v1.36 (InPlacePodLevelResourcesVerticalScaling beta and on, kubernetes#137684) the
pod-level requests are read the same way from ``status.resources`` and
``status.allocatedResources``. v1.32 reads the spec only (the gate alpha and off).

``as_resized`` gives the pod with those requests written into its spec, so that every
request computation (resources.py) counts them without knowing about resizes.

The kubelet sees a pod differently: its allocation manager hands the admit handlers the
node's other pods as it allocated them (``getAllocatedPods`` over
``UpdatePodFromAllocation``, pkg/kubelet/allocation, v1.33 on): each container's resources
replaced by its checkpointed allocation, which the kubelet publishes as
``status.containerStatuses[].allocatedResources``, and from v1.36 the pod-level ones by
``status.allocatedResources``. ``as_allocated`` gives that view. Critical-pod preemption
reads the spec of those pods (``GetResourceRequest``), so it counts the allocation; the
eviction manager ranks the pods of ``GetActivePods`` (the pod manager's pods, spec as the
API holds it), so eviction reads the desired spec.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from service.engine.objects import Container, ContainerResize, Pod, PodResize, ResourceList
from service.engine.resources import is_pod_level_requests_set, is_supported_pod_level_resource
from service.engine.version import EngineSettings

__all__ = ["as_allocated", "as_resized", "effective_requests"]


def effective_requests(
    spec: ResourceList, actuated: ResourceList, allocated: ResourceList, infeasible: bool
) -> dict[str, int]:
    """determineEffectiveRequests (v1.35.4): per resource the largest of the lists (a name
    any of them holds); without the spec when the resize is infeasible."""
    out: dict[str, int] = {}
    for source in (actuated, allocated) if infeasible else (spec, actuated, allocated):
        for name, value in source.items():
            current = out.get(name)
            if current is None or value > current:
                out[name] = value
    return out


def _resized(container: Container, status: ContainerResize, infeasible: bool) -> Container:
    requests = effective_requests(container.requests, status.actuated, status.allocated, infeasible)
    if requests == container.requests:
        return container
    # A request now taken from the status is no longer the quantity the spec wrote.
    given = {
        k: v
        for k, v in container.requests_given.items()
        if requests.get(k) == container.requests.get(k)
    }
    return msgspec.structs.replace(container, requests=requests, requests_given=given)


def _containers(
    containers: Sequence[Container], resize: PodResize, *, sidecars_only: bool
) -> tuple[Container, ...] | None:
    """The containers with their effective requests, or None when none changes."""
    out, changed = [], False
    for c in containers:
        status = resize.containers.get(c.name)
        if status is not None and (c.is_sidecar or not sidecars_only):
            resized = _resized(c, status, resize.infeasible)
            changed = changed or resized is not c
            c = resized
        out.append(c)
    return tuple(out) if changed else None


def _pod_level(pod: Pod, resize: PodResize) -> dict[str, int] | None:
    """PodRequests' pod-level requests with InPlacePodLevelResourcesVerticalScaling: each
    supported name of ``spec.resources.requests`` takes the effective request (0 when the
    effective list lacks it, as Go's map read gives), or None when nothing changes."""
    res = pod.resources
    if res is None or resize.pod_actuated is None or not is_pod_level_requests_set(pod):
        return None
    effective = effective_requests(
        res.requests, resize.pod_actuated, resize.pod_allocated, resize.infeasible
    )
    requests = dict(res.requests)
    for name in res.requests:
        if is_supported_pod_level_resource(name):
            requests[name] = effective.get(name, 0)
    return None if requests == res.requests else requests


def as_resized(pod: Pod, settings: EngineSettings) -> Pod:
    """``pod`` with the requests the release counts for it (see the module docstring): the
    same object when the release reads the spec only or the status changes nothing."""
    resize = pod.resize
    if resize is None or not settings.requests_from_resize_status:
        return pod
    changes: dict = {}
    containers = _containers(pod.containers, resize, sidecars_only=False)
    if containers is not None:
        changes["containers"] = containers
    init = _containers(pod.init_containers, resize, sidecars_only=True)
    if init is not None:
        changes["init_containers"] = init
    if settings.pod_level_requests_from_resize_status:
        requests = _pod_level(pod, resize)
        if requests is not None:
            res = pod.resources
            given = {k: v for k, v in res.requests_given.items() if requests[k] == res.requests[k]}
            changes["resources"] = msgspec.structs.replace(
                res, requests=requests, requests_given=given
            )
    return msgspec.structs.replace(pod, **changes) if changes else pod


def _allocated_containers(
    containers: Sequence[Container], resize: PodResize
) -> tuple[Container, ...] | None:
    """The containers with their allocated requests, or None when none changes."""
    out, changed = [], False
    for c in containers:
        status = resize.containers.get(c.name)
        if status is not None and status.allocated and status.allocated != c.requests:
            given = {
                k: v
                for k, v in c.requests_given.items()
                if status.allocated.get(k) == c.requests.get(k)
            }
            c = msgspec.structs.replace(c, requests=dict(status.allocated), requests_given=given)
            changed = True
        out.append(c)
    return tuple(out) if changed else None


def as_allocated(pod: Pod, settings: EngineSettings) -> Pod:
    """The pod as the kubelet's allocation manager hands it to the admit handlers
    (``UpdatePodFromAllocation`` in ``getAllocatedPods``, pkg/kubelet/allocation, v1.35):
    each container whose status publishes ``allocatedResources`` takes those as its
    requests, and from v1.36 (InPlacePodLevelResourcesVerticalScaling) ``spec.resources``
    takes ``status.allocatedResources``. The same object when the release has
    InPlacePodVerticalScaling off (v1.32: the active pods as they are) or nothing differs.
    A container status without ``resources`` is not kept at ingest, so its allocation is
    taken to be its spec."""
    resize = pod.resize
    if resize is None or not settings.requests_from_resize_status:
        return pod
    changes: dict = {}
    containers = _allocated_containers(pod.containers, resize)
    if containers is not None:
        changes["containers"] = containers
    init = _allocated_containers(pod.init_containers, resize)
    if init is not None:
        changes["init_containers"] = init
    res = pod.resources
    if (
        settings.pod_level_requests_from_resize_status
        and res is not None
        and resize.pod_allocated
        and is_pod_level_requests_set(pod)
        and resize.pod_allocated != res.requests
    ):
        allocated = resize.pod_allocated
        given = {
            k: v for k, v in res.requests_given.items() if allocated.get(k) == res.requests.get(k)
        }
        changes["resources"] = msgspec.structs.replace(
            res, requests=dict(allocated), requests_given=given
        )
    return msgspec.structs.replace(pod, **changes) if changes else pod
