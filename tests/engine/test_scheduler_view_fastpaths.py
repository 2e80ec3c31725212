"""The scheduler view's fast paths give exactly what the general code gives:
``scheduler_pod_requests`` and ``pod_info`` (one-container shortcut, one aggregate when every
container names cpu and memory) against ``pod_requests`` / ``pod_requests_non_zero``; and the
view never mutates the snapshot's dicts it shares instead of copying."""

from __future__ import annotations

import copy
import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from service.engine.objects import (
    Cluster,
    Container,
    ContainerPort,
    Node,
    Pod,
    PodResources,
    Snapshot,
)
from service.engine.resources import (
    pod_requests,
    pod_requests_non_zero,
    scheduler_pod_requests,
)
from service.engine.scheduler.filters import START_TIME_NOW, pod_info, scheduler_view
from service.engine.scheduler.preemption import PreemptionArgs, preempt
from service.engine.version import EngineSettings

GI = 1024**3
T0 = datetime(2026, 11, 17, 4, 49, 5, 123456, tzinfo=UTC)


def _c(name: str = "c", requests: dict | None = None, *, ports=(), restart_policy=None):
    return Container(name=name, requests=requests or {}, ports=ports, restart_policy=restart_policy)


def _pod(containers, **kw) -> Pod:
    return Pod(namespace="ns", name=kw.pop("name", "p"), containers=tuple(containers), **kw)


HOST_PORT = (ContainerPort(container_port=80, host_port=8080),)
NO_HOST_PORT = (ContainerPort(container_port=80),)

CASES = {
    "cpu and memory": _pod([_c(requests={"cpu": 250, "memory": GI})]),
    "no requests": _pod([_c()]),
    "cpu only": _pod([_c(requests={"cpu": 250})]),
    "memory only": _pod([_c(requests={"memory": GI})]),
    "explicit zero cpu": _pod([_c(requests={"cpu": 0, "memory": GI})]),
    "explicit zero memory": _pod([_c(requests={"cpu": 5, "memory": 0})]),
    "explicit zeros": _pod([_c(requests={"cpu": 0, "memory": 0})]),
    "extended only": _pod([_c(requests={"example.com/gpu": 2})]),
    "extended and cpu": _pod([_c(requests={"cpu": 9, "nvidia.com/gpu": 1})]),
    "ephemeral": _pod([_c(requests={"ephemeral-storage": 10 * GI, "memory": 7})]),
    "host port": _pod([_c(requests={"cpu": 1}, ports=HOST_PORT)]),
    "container port only": _pod([_c(requests={"cpu": 1}, ports=NO_HOST_PORT)]),
    "no containers": _pod([]),
    "two containers": _pod([_c("a", {"cpu": 100}), _c("b", {"memory": 5}, ports=HOST_PORT)]),
    "init container": _pod(
        [_c(requests={"cpu": 100, "memory": 10})],
        init_containers=(_c("i", {"cpu": 900}),),
    ),
    "init without requests": _pod(
        [_c(requests={"cpu": 100, "memory": 10})], init_containers=(_c("i"),)
    ),
    "sidecar": _pod(
        [_c(requests={"cpu": 100})],
        init_containers=(_c("s", {"memory": 64}, restart_policy="Always"),),
    ),
    "sidecar then init": _pod(
        [_c()],
        init_containers=(
            _c("s", {"cpu": 10}, restart_policy="Always"),
            _c("i", {"cpu": 500, "memory": 3}),
        ),
    ),
    "overhead": _pod([_c(requests={"cpu": 100, "memory": 10})], overhead={"cpu": 250}),
    "overhead, no requests": _pod([_c()], overhead={"cpu": 250, "memory": 64}),
    "pod-level requests": _pod(
        [_c(requests={"cpu": 100, "memory": 10})],
        resources=PodResources(requests={"cpu": 700}),
    ),
    "pod-level limits only": _pod(
        [_c(requests={"cpu": 100})], resources=PodResources(limits={"memory": GI})
    ),
    "pod-level unsupported name": _pod(
        [_c(requests={"cpu": 100})],
        resources=PodResources(requests={"ephemeral-storage": 5}),
    ),
    "empty pod-level resources": _pod([_c()], resources=PodResources()),
}


def _reference(pod: Pod) -> tuple[dict[str, int], int, int, bool]:
    nz = pod_requests_non_zero(pod)
    has_ports = any(p.host_port > 0 for c in pod.containers for p in c.ports)
    return pod_requests(pod), nz.get("cpu", 0), nz.get("memory", 0), has_ports


@pytest.mark.parametrize("gate", [True, False])
@pytest.mark.parametrize("case", sorted(CASES))
def test_scheduler_pod_requests_matches_the_general_functions(case: str, gate: bool) -> None:
    pod = CASES[case]
    settings = EngineSettings(pod_level_resources=gate)
    requests, nz_cpu, nz_mem = scheduler_pod_requests(pod, settings=settings)
    nz = pod_requests_non_zero(pod, settings=settings)
    expected = pod_requests(pod, settings=settings)
    assert requests == expected
    assert list(requests) == list(expected)
    assert (nz_cpu, nz_mem) == (nz.get("cpu", 0), nz.get("memory", 0))


def test_scheduler_pod_requests_shares_only_the_one_container_dict() -> None:
    one = CASES["cpu and memory"]
    assert scheduler_pod_requests(one)[0] is one.containers[0].requests
    for case in ("overhead", "pod-level requests", "init container", "two containers"):
        pod = CASES[case]
        requests = scheduler_pod_requests(pod)[0]
        assert all(requests is not c.requests for c in pod.containers + pod.init_containers)


@pytest.mark.parametrize("case", sorted(CASES))
def test_pod_info_matches_the_general_requests(case: str) -> None:
    pod = CASES[case]
    info = pod_info(pod)
    requests, nz_cpu, nz_mem, has_ports = _reference(pod)
    assert info.requests == requests
    assert list(info.requests) == list(requests)  # same key order as well
    assert (info.nz_cpu, info.nz_mem, info.has_ports) == (nz_cpu, nz_mem, has_ports)


def test_pod_info_matches_the_general_requests_on_random_pods() -> None:
    rnd = random.Random(1)
    names = ["cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi"]

    def requests() -> dict[str, int]:
        return {n: rnd.choice([0, 1, 100, 5 * GI]) for n in names if rnd.random() < 0.5}

    for i in range(500):
        containers = [_c(f"c{j}", requests()) for j in range(rnd.choice([0, 1, 1, 1, 2, 3]))]
        inits = tuple(
            _c(f"i{j}", requests(), restart_policy=rnd.choice([None, "Always"]))
            for j in range(rnd.choice([0, 0, 1, 2]))
        )
        extra: dict = {}
        if rnd.random() < 0.2:
            extra["overhead"] = requests()
        if rnd.random() < 0.2:
            extra["resources"] = PodResources(requests=requests(), limits=requests())
        pod = _pod(containers, name=f"p{i}", init_containers=inits, **extra)
        info = pod_info(pod)
        reqs, nz_cpu, nz_mem, has_ports = _reference(pod)
        assert scheduler_pod_requests(pod) == (reqs, nz_cpu, nz_mem), pod
        assert (info.requests, info.nz_cpu, info.nz_mem, info.has_ports) == (
            reqs,
            nz_cpu,
            nz_mem,
            has_ports,
        ), pod


def _start_ns_reference(moment: datetime | None) -> int:
    if moment is None:
        return START_TIME_NOW
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    delta = moment - datetime(1970, 1, 1, tzinfo=UTC)
    return (delta.days * 86_400 + delta.seconds) * 10**9 + delta.microseconds * 1000


@pytest.mark.parametrize(
    "moment",
    [
        None,
        T0,
        T0.replace(tzinfo=None),  # naive: taken as UTC
        T0.astimezone(timezone(timedelta(hours=5, minutes=30))),
        T0.astimezone(timezone(timedelta(hours=-8))),
        datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2262, 4, 11, tzinfo=UTC),
    ],
)
def test_pod_info_start_time(moment: datetime | None) -> None:
    info = pod_info(_pod([_c()], start_time=moment))
    assert info.start_ns == _start_ns_reference(moment)


def test_priority_defaults_to_zero() -> None:
    assert pod_info(_pod([_c()])).priority == 0
    assert pod_info(_pod([_c()], priority=-10)).priority == -10


def test_view_and_preemption_leave_the_snapshot_dicts_alone() -> None:
    """pod_info shares a one-container pod's requests dict; nothing may write to it."""
    nodes = [
        Node(name=f"n{i}", allocatable={"cpu": 1000, "memory": 4 * GI, "pods": 10})
        for i in range(3)
    ]
    pods = [
        Pod(
            namespace="ns",
            name=f"p{i}",
            uid=f"u{i}",
            node_name=f"n{i % 3}",
            priority=i % 4,
            start_time=T0 + timedelta(seconds=i),
            containers=(
                _c(requests={"cpu": 100 + i, "memory": GI // 8}, ports=HOST_PORT if i == 4 else ()),
            ),
        )
        for i in range(24)
    ]
    snapshot = Snapshot(nodes=tuple(nodes), pods=tuple(pods))
    before = copy.deepcopy([c.requests for p in pods for c in p.containers])
    cluster = Cluster(snapshot)
    view = scheduler_view(cluster)
    preemptor = _pod(
        [_c(requests={"cpu": 900, "memory": GI}, ports=HOST_PORT)], name="pre", priority=10
    )
    for _ in range(2):
        out = preempt(cluster, preemptor, args=PreemptionArgs(100, 100))
        assert out.victims
    for ni in view.nodes:
        for name in ("cpu", "memory"):
            ni.cumulative(name)
    assert [c.requests for p in pods for c in p.containers] == before
