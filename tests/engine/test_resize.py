"""Resized pods (engine/resize.py): the requests a pod resized in place counts for, per
release (InPlacePodVerticalScaling from v1.33, pod-level from v1.36), read from its status
by ingest; in the scheduler's view, in kubelet admission, and against each release's own
scheduler where an oracle is present."""

from __future__ import annotations

import pytest

from service.engine.kubelet.admission import PodAdmitAttributes, fits_resources
from service.engine.objects import Cluster
from service.engine.resize import as_allocated, as_resized, effective_requests
from service.engine.scheduler.placement import place
from service.engine.version import KNOWN_VERSIONS, settings_for
from service.ingest.kube.pods import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.oracle import placement_differences, releases, run_oracle

GI = 1024**3


def _node(name: str = "n1", cpu: str = "4") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {
            "allocatable": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
            "capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"},
        },
    }


def _resized_pod(
    *, spec_cpu="1", actuated="1", allocated="3", infeasible=False, node="n1", sidecar=False
) -> dict:
    """A running pod whose container was resized: the spec asks ``spec_cpu``, the runtime
    runs ``actuated``, the kubelet allocated ``allocated``."""
    container = {"name": "app", "resources": {"requests": {"cpu": spec_cpu, "memory": "1Gi"}}}
    status_entry = {
        "name": "app",
        "resources": {"requests": {"cpu": actuated, "memory": "1Gi"}},
        "allocatedResources": {"cpu": allocated, "memory": "1Gi"},
    }
    spec: dict = {"nodeName": node, "containers": [container]}
    status: dict = {"phase": "Running", "containerStatuses": [status_entry]}
    if sidecar:
        spec["containers"] = [{"name": "main", "resources": {"requests": {"cpu": "100m"}}}]
        spec["initContainers"] = [{**container, "restartPolicy": "Always"}]
        status["containerStatuses"] = []
        status["initContainerStatuses"] = [status_entry]
    if infeasible:
        status["conditions"] = [
            {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}
        ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "resized", "namespace": "default", "uid": "resized"},
        "spec": spec,
        "status": status,
    }


def _incoming(cpu: str = "2") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "incoming", "namespace": "default", "uid": "incoming"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": cpu}}}]},
    }


def test_effective_requests_take_the_largest_and_drop_the_spec_when_infeasible() -> None:
    spec, actuated, allocated = {"cpu": 1000, "memory": 5}, {"cpu": 500}, {"cpu": 3000}
    assert effective_requests(spec, actuated, allocated, False) == {"cpu": 3000, "memory": 5}
    assert effective_requests({"cpu": 4000}, actuated, allocated, True) == {"cpu": 3000}


def test_ingest_reads_the_status_resources() -> None:
    pod = pod_from_object(_resized_pod(infeasible=True))
    assert pod.resize is not None
    assert pod.resize.containers["app"].actuated == {"cpu": 1000, "memory": GI}
    assert pod.resize.containers["app"].allocated == {"cpu": 3000, "memory": GI}
    assert pod.resize.infeasible and pod.resize.pod_actuated is None
    assert pod_from_object(_incoming()).resize is None  # no status resources: nothing kept


@pytest.mark.parametrize("release", KNOWN_VERSIONS)
@pytest.mark.parametrize("sidecar", [False, True], ids=["container", "sidecar"])
def test_a_resized_pod_counts_its_allocation_from_1_33(release, sidecar) -> None:
    """InPlacePodVerticalScaling (beta and on in v1.33, KEP-1287 (kubernetes/enhancements#1287)): the node's pod
    counts max(spec 1, actuated 1, allocated 3) = 3 cpu, so a 2-cpu pod no longer fits the
    4-cpu node; v1.32 counts the spec's 1."""
    pod = pod_from_object(_resized_pod(sidecar=sidecar))
    counted = as_resized(pod, settings_for(release))
    containers = counted.init_containers if sidecar else counted.containers
    resized = next(c for c in containers if c.name == "app")
    assert resized.requests["cpu"] == (1000 if release == "1.32" else 3000)
    cluster = Cluster(snapshot_from_objects([_node(), _resized_pod(sidecar=sidecar)]))
    out = place(cluster, pod_from_object(_incoming()), settings=settings_for(release))
    assert (out.selected_node == "n1") == (release == "1.32")
    node = cluster.node("n1")
    others = cluster.pods_on("n1")
    attrs = PodAdmitAttributes(
        pod_from_object(_incoming()), node, others, settings=settings_for(release)
    )
    assert bool(fits_resources(attrs)) == (release != "1.32")


def test_an_infeasible_resize_counts_what_runs_not_the_spec() -> None:
    """determineEffectiveRequests: with PodResizePending Infeasible the spec's 3.5 cpu will
    not be applied; the pod counts max(actuated 1, allocated 1)."""
    objects = [
        _node(),
        _resized_pod(spec_cpu="3500m", actuated="1", allocated="1", infeasible=True),
    ]
    out = place(
        Cluster(snapshot_from_objects(objects)),
        pod_from_object(_incoming()),
        settings=settings_for("1.35"),
    )
    assert out.selected_node == "n1"
    out = place(
        Cluster(snapshot_from_objects(objects)),
        pod_from_object(_incoming()),
        settings=settings_for("1.32"),
    )
    assert out.selected_node is None


def _pod_level_resized() -> dict:
    pod = _resized_pod()
    pod["spec"]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    pod["status"]["containerStatuses"] = []
    pod["status"]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    pod["status"]["allocatedResources"] = {"cpu": "3", "memory": "1Gi"}
    return pod


@pytest.mark.parametrize("release", KNOWN_VERSIONS)
def test_pod_level_requests_from_the_status_from_1_36(release) -> None:
    """InPlacePodLevelResourcesVerticalScaling (beta and on in v1.36, kubernetes#137684):
    a pod-level request of 1 cpu allocated 3 counts 3; pod-level resources themselves
    count from v1.34 (before, the container's 1 cpu)."""
    counted = as_resized(pod_from_object(_pod_level_resized()), settings_for(release))
    assert counted.resources.requests["cpu"] == (3000 if release in ("1.36", "1.37") else 1000)
    cluster = Cluster(snapshot_from_objects([_node(), _pod_level_resized()]))
    out = place(cluster, pod_from_object(_incoming()), settings=settings_for(release))
    assert (out.selected_node is None) == (release in ("1.36", "1.37"))


@pytest.mark.parametrize("version", releases())
@pytest.mark.parametrize("infeasible", [False, True], ids=["feasible", "infeasible"])
def test_resized_pods_against_each_release_scheduler(version, infeasible) -> None:
    """The same cases through kube-scheduler v1.32.5, v1.33.3, v1.34.1 and v1.35.4."""
    spec_cpu = "3500m" if infeasible else "1"
    allocated = "1" if infeasible else "3"
    for sidecar in (False, True):
        case = {
            "kind": "placement",
            "objects": [
                _node("n1"),
                _node("n2", cpu="2500m"),
                _resized_pod(
                    spec_cpu=spec_cpu, allocated=allocated, infeasible=infeasible, sidecar=sidecar
                ),
            ],
            "pod": _incoming(),
        }
        assert placement_differences(case, version) == [], (version, sidecar)
        assert run_oracle(case, "full", version)["maxSet"]  # some node fits


# --- the kubelet's view: the allocation manager's pods -------------------------------------


def _pending_upsize() -> dict:
    """A pod resized from 1 to 3 cpu whose resize the kubelet has not allocated yet (a
    deferred resize): the spec asks 3, the allocation and the runtime hold 1."""
    return _resized_pod(spec_cpu="3", actuated="1", allocated="1")


@pytest.mark.parametrize("release", KNOWN_VERSIONS)
def test_as_allocated_is_the_kubelet_allocation_from_1_33(release) -> None:
    """UpdatePodFromAllocation (pkg/kubelet/allocation, from v1.33 with
    InPlacePodVerticalScaling on; KEP-1287 (kubernetes/enhancements#1287)): the kubelet
    hands its admit handlers each pod with its containers' resources replaced by the
    allocation it checkpointed (``allocatedResources``); v1.32 hands the pods as they are."""
    pod = pod_from_object(_pending_upsize())
    seen = as_allocated(pod, settings_for(release))
    assert seen.containers[0].requests["cpu"] == (3000 if release == "1.32" else 1000)
    assert seen.containers[0].requests["memory"] == GI
    plain = pod_from_object(_incoming())
    assert as_allocated(plain, settings_for(release)) is plain


def test_as_allocated_reads_the_pod_level_allocation_from_1_36() -> None:
    """InPlacePodLevelResourcesVerticalScaling (beta and on in v1.36, kubernetes#137684):
    the pod-level requests are allocated too (``status.allocatedResources``); v1.35 keeps
    the spec's."""
    obj = _incoming()
    obj["spec"]["nodeName"] = "n1"
    obj["spec"]["resources"] = {"requests": {"cpu": "3", "memory": "1Gi"}}
    obj["status"] = {
        "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
        "allocatedResources": {"cpu": "1", "memory": "1Gi"},
    }
    pod = pod_from_object(obj)
    assert as_allocated(pod, settings_for("1.36")).resources.requests["cpu"] == 1000
    assert as_allocated(pod, settings_for("1.35")).resources.requests["cpu"] == 3000


def test_kubelet_admission_does_not_count_a_pending_upsize() -> None:
    """generalFilter (v1.35) sums the allocation manager's pods (``getAllocatedPods``):
    the resized pod counts max(allocated 1, actuated 1) = 1 cpu, not its spec's pending
    3, so a 2-cpu pod fits the 4-cpu node; the scheduler, which reads the API's pod,
    counts max(spec 3, 1, 1) = 3 and finds no room (NodeResourcesFit)."""
    settings = settings_for("1.35")
    cluster = Cluster(snapshot_from_objects([_node(), _pending_upsize()]))
    attrs = PodAdmitAttributes(
        pod_from_object(_incoming()),
        cluster.node("n1"),
        cluster.pods_on("n1"),
        settings=settings,
    )
    assert fits_resources(attrs) == []
    assert place(cluster, pod_from_object(_incoming()), settings=settings).selected_node is None
