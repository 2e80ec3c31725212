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
    LabelSelector,
    LabelSelectorRequirement,
    Node,
    Pod,
    PodDisruptionBudget,
    PodResources,
    Snapshot,
)
from service.engine.resources import (
    pod_requests,
    pod_requests_non_zero,
    scheduler_pod_requests,
)
from service.engine.scheduler.framework import (
    START_TIME_NOW,
    NodeInfo,
    PodInfo,
    pod_info,
    used_ports_of,
)
from service.engine.scheduler.preemption import preempt
from service.engine.scheduler.profile import DefaultPreemptionArgs as PreemptionArgs
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS, EngineSettings
from tests.engine.scheduler import helpers

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
    nz = pod_requests_non_zero(pod, settings=DEFAULT_SETTINGS)
    has_ports = any(p.host_port > 0 for c in pod.containers for p in c.ports)
    return (
        pod_requests(pod, settings=DEFAULT_SETTINGS),
        nz.get("cpu", 0),
        nz.get("memory", 0),
        has_ports,
    )


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
    assert scheduler_pod_requests(one, settings=DEFAULT_SETTINGS)[0] is one.containers[0].requests
    for case in ("overhead", "pod-level requests", "init container", "two containers"):
        pod = CASES[case]
        requests = scheduler_pod_requests(pod, settings=DEFAULT_SETTINGS)[0]
        assert all(requests is not c.requests for c in pod.containers + pod.init_containers)


@pytest.mark.parametrize("case", sorted(CASES))
def test_pod_info_matches_the_general_requests(case: str) -> None:
    pod = CASES[case]
    info = pod_info(pod, settings=DEFAULT_SETTINGS)
    requests, nz_cpu, nz_mem, has_ports = _reference(pod)
    assert info.requests == requests
    assert list(info.requests) == list(requests)  # same key order as well
    assert (info.nz_cpu, info.nz_mem, info.has_ports) == (nz_cpu, nz_mem, has_ports)


@pytest.mark.parametrize("seed", range(4))
def test_pod_info_matches_the_general_requests_on_random_pods(seed: int) -> None:
    rnd = random.Random(seed)
    names = ["cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi"]

    def requests() -> dict[str, int]:
        picked = [n for n in names if rnd.random() < 0.5]
        rnd.shuffle(picked)  # key order varies too
        return {n: rnd.choice([0, 1, 100, 5 * GI]) for n in picked}

    shapes = set()
    for i in range(1000):
        containers = [
            _c(f"c{j}", requests(), ports=rnd.choice([(), NO_HOST_PORT, HOST_PORT]))
            for j in range(rnd.choice([0, 1, 1, 1, 2, 3]))
        ]
        inits = tuple(
            _c(f"i{j}", requests(), restart_policy=rnd.choice([None, "Always"]))
            for j in range(rnd.choice([0, 0, 1, 2, 3]))
        )
        extra: dict = {}
        if rnd.random() < 0.2:
            extra["overhead"] = requests()
        if rnd.random() < 0.2:
            extra["resources"] = PodResources(requests=requests(), limits=requests())
        pod = _pod(containers, name=f"p{i}", init_containers=inits, **extra)
        shapes.add((len(containers), len(inits), bool(pod.overhead), pod.resources is None))
        info = pod_info(pod, settings=DEFAULT_SETTINGS)
        reqs, nz_cpu, nz_mem, has_ports = _reference(pod)
        got = scheduler_pod_requests(pod, settings=DEFAULT_SETTINGS)
        assert got == (reqs, nz_cpu, nz_mem), pod
        assert list(got[0]) == list(reqs), pod
        assert (info.requests, info.nz_cpu, info.nz_mem, info.has_ports) == (
            reqs,
            nz_cpu,
            nz_mem,
            has_ports,
        ), pod
        assert list(info.requests) == list(reqs), pod
        assert (info.cpu, info.memory) == (reqs.get("cpu", 0), reqs.get("memory", 0)), pod
    assert len(shapes) >= 55


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
    info = pod_info(_pod([_c()], start_time=moment), settings=DEFAULT_SETTINGS)
    assert info.start_ns == _start_ns_reference(moment)


def test_priority_defaults_to_zero() -> None:
    assert pod_info(_pod([_c()]), settings=DEFAULT_SETTINGS).priority == 0
    assert pod_info(_pod([_c()], priority=-10), settings=DEFAULT_SETTINGS).priority == -10


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
    view = scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    preemptor = _pod(
        [_c(requests={"cpu": 900, "memory": GI}, ports=HOST_PORT)], name="pre", priority=10
    )
    for _ in range(2):
        out = preempt(cluster, preemptor, args=PreemptionArgs(100, 100), settings=DEFAULT_SETTINGS)
        assert out.victims
    for ni in view.nodes:
        for name in ("cpu", "memory"):
            ni.cumulative(name)
    assert [c.requests for p in pods for c in p.containers] == before


# --- the view's per-node indexes and the PDB memo against literal computations ---


def _random_cluster(seed: int) -> Cluster:
    rnd = random.Random(seed)
    apps = ["a", "b", "c"]
    nodes = [
        Node(name=f"n{i}", allocatable={"cpu": 4000, "memory": 16 * GI, "pods": 40})
        for i in range(4)
    ]
    pods = []
    for i in range(120):
        labels = {}
        if rnd.random() < 0.9:
            labels["app"] = rnd.choice(apps)
        if rnd.random() < 0.5:
            labels["tier"] = rnd.choice(["web", "db"])
        if rnd.random() < 0.3:
            labels["pod-template-hash"] = rnd.choice(["x", "y"])
        requests = {n: rnd.choice([0, 50, 300]) for n in ("cpu", "memory") if rnd.random() < 0.8}
        if rnd.random() < 0.1:
            requests["ephemeral-storage"] = 7
        pods.append(
            Pod(
                namespace=rnd.choice(["ns1", "ns2", "ns3"]),
                name=f"p{i}",
                uid=f"u{i}",
                node_name=f"n{i % 4}",
                labels=labels,
                priority=rnd.choice([None, -10, 0, 0, 5, 100]),
                start_time=rnd.choice([None, T0, T0 + timedelta(seconds=rnd.randrange(5))]),
                containers=(_c(requests=requests, ports=HOST_PORT if rnd.random() < 0.1 else ()),),
            )
        )

    def sel(match_labels=None, exprs=()):
        return LabelSelector(match_labels=match_labels or {}, match_expressions=exprs)

    def req(key, op, *values):
        return LabelSelectorRequirement(key=key, operator=op, values=values)

    disrupted = {f"p{i}": T0 for i in range(0, 120, 3)}
    pdbs = [
        PodDisruptionBudget(namespace="ns1", name="a", selector=sel({"app": "a"})),
        PodDisruptionBudget(
            namespace="ns1",
            name="ab",
            selector=sel(exprs=(req("app", "In", "a", "b"),)),
            disruptions_allowed=1,
        ),
        PodDisruptionBudget(
            namespace="ns1",
            name="web",
            selector=sel({"app": "b", "tier": "web"}),
            disrupted_pods=disrupted,
        ),
        PodDisruptionBudget(
            namespace="ns2",
            name="no-tier",
            selector=sel(exprs=(req("tier", "DoesNotExist"), req("app", "NotIn", "c"))),
            disruptions_allowed=2,
        ),
        PodDisruptionBudget(
            namespace="ns2", name="hash", selector=sel(exprs=(req("pod-template-hash", "Exists"),))
        ),
        PodDisruptionBudget(namespace="ns2", name="empty", selector=sel()),
        PodDisruptionBudget(
            namespace="ns3", name="c", selector=sel({"app": "c"}), disrupted_pods=disrupted
        ),
        PodDisruptionBudget(namespace="ns2", name="nil"),
        PodDisruptionBudget(
            namespace="ns2", name="invalid", selector=sel(exprs=(req("app", "In"),))
        ),
    ]
    return Cluster(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pdbs=tuple(pdbs)))


@pytest.mark.parametrize("seed", range(6))
def test_per_node_indexes_match_literal_computations(seed: int) -> None:
    view = scheduler_view(_random_cluster(seed), settings=DEFAULT_SETTINGS)
    positions = {ni.name: ni.pdb_positions(view) for ni in view.nodes}  # bulk lookup first
    for ni in view.nodes:
        order = ni.pods_by_importance()
        assert order == sorted(ni.pods, key=lambda pi: (-pi.priority, pi.start_ns))
        for priority in (-11, -10, 0, 1, 5, 100, 101):
            assert ni.first_below(priority) == sum(1 for pi in order if pi.priority >= priority)
        for name in ("cpu", "memory", "ephemeral-storage", "example.com/gpu"):
            expected = [0]
            for pi in order:
                expected.append(expected[-1] + pi.requests.get(name, 0))
            assert ni.cumulative(name) == expected
        assert ni.port_positions() == [(i, pi) for i, pi in enumerate(order) if pi.has_ports]
        for first in range(len(order) + 1):
            kept = tuple(pi for pi in order[:first] if pi.has_ports)
            got_kept, got_ports = ni.ports_before(first)
            assert got_kept == kept
            expected_ports = used_ports_of(kept)
            if expected_ports is None:
                assert got_ports is None
            else:
                assert got_ports is not None and got_ports._by_ip == expected_ports._by_ip
        expected_pdb = []
        for pos, pi in enumerate(order):
            labels = pi.pod.labels
            matches = [
                i
                for i, info in enumerate(view.pdbs)
                if labels and info.namespace == pi.namespace and info.matches(labels)
            ]
            assert view.matching_pdbs(pi) == tuple(matches)
            assert view.matching_pdbs(pod_info(pi.pod, settings=DEFAULT_SETTINGS)) == tuple(
                matches
            )  # not memoized
            if matches:
                expected_pdb.append(
                    (
                        pos,
                        tuple(
                            (
                                i,
                                view.pdbs[i].disruptions_allowed,
                                pi.name in view.pdbs[i].disrupted_pods,
                            )
                            for i in matches
                        ),
                    )
                )
        assert positions[ni.name] == expected_pdb
    entries = [e for ni in view.nodes for _, found in ni.pdb_positions(view) for e in found]
    assert any(exempt for _, _, exempt in entries)
    assert {view.pdbs[i].namespace for i, _, _ in entries} == {"ns1", "ns2", "ns3"}


def test_pod_info_cpu_and_memory_fields() -> None:
    for pod in CASES.values():
        info = pod_info(pod, settings=DEFAULT_SETTINGS)
        assert (info.cpu, info.memory) == (
            info.requests.get("cpu", 0),
            info.requests.get("memory", 0),
        )


def test_node_sums_read_requests_of_foreign_pod_infos() -> None:
    """A PodInfo made without the cpu/memory fields (as holds make them) is summed from its
    requests."""
    made = pod_info(
        _pod([_c(requests={"cpu": 100, "memory": 10})], name="made", priority=1),
        settings=DEFAULT_SETTINGS,
    )
    foreign = PodInfo(
        None,
        namespace="ns",
        name="foreign",
        uid="f",
        priority=2,
        requests={"cpu": 300, "memory": 7},
        nz_cpu=300,
        nz_mem=7,
    )
    ni = NodeInfo(Node(name="n", allocatable={"pods": 10}), 0, [made, foreign])
    assert ni.pods_by_importance() == [foreign, made]
    assert ni.cumulative("cpu") == [0, 300, 400]
    assert ni.cumulative("memory") == [0, 7, 17]
    assert ni.requested == {"cpu": 400, "memory": 17}


def test_view_is_cached_per_cluster() -> None:
    cl = helpers.cluster([helpers.node("n")], [helpers.pod("a", 100, node="n")])
    assert scheduler_view(cl, settings=DEFAULT_SETTINGS) is scheduler_view(
        cl, settings=DEFAULT_SETTINGS
    )
    assert scheduler_view(cl, settings=DEFAULT_SETTINGS).nodes[0].requested == {"cpu": 100}
