"""Differential test of the critical pod admission handler's victim choice
(service.engine.kubelet.preemption.get_pods_to_preempt) against a plain, literal
re-implementation of pkg/kubelet/preemption/preemption.go (k8s 1.35), the oracle in
tests/engine/kubelet/helpers.py, whose helpers and whole search are first checked here
against upstream's own cases.

The engine does not scan every candidate every round as upstream does; these seeded
random cases (small and 110-pod nodes, ties, missing and zero requests, every QoS class,
init containers, pod-level resources, overhead, cpu/memory/pods/other requirements, and
negative or huge requests) check that it still returns the same victims in
the same order, or the same error, for every input.
"""

from __future__ import annotations

import random

import pytest

from service.engine.kubelet.preemption import PreemptionError, _Nearest, get_pods_to_preempt
from service.engine.objects import Container, Pod, PodResources
from service.engine.qos import BEST_EFFORT, BURSTABLE, GUARANTEED
from service.engine.resources import resource_request
from service.engine.version import DEFAULT_SETTINGS, EngineSettings
from tests.engine.kubelet.helpers import (
    OracleError,
    conformance_cases,
    k8s_pod,
    oracle_distance,
    oracle_pods_to_preempt,
    oracle_smaller_resource_request,
    oracle_subtract,
    request_pod,
)

MI = 1024 * 1024
GI = 1024 * MI

# --- the oracle's helpers against upstream's own cases ---------------------------------------


def _reqs(items: list[dict]) -> list[tuple[str, int]]:
    return [(r["resourceName"], r["quantity"]) for r in items]


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("kubelet.admissionRequirementList.distance")
)
def test_conformance_distance(inp, expected):
    got = oracle_distance(_reqs(inp["requirements"]), k8s_pod(inp["pod"]))
    assert got == expected["distance"]


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("kubelet.admissionRequirementList.subtract")
)
def test_conformance_subtract(inp, expected):
    got = oracle_subtract(_reqs(inp["requirements"]), [k8s_pod(inp["pod"])])
    assert sorted(got) == sorted(_reqs(expected["remaining"]))


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("kubelet.smallerResourceRequest"))
def test_conformance_smaller_resource_request(inp, expected):
    got = oracle_smaller_resource_request(k8s_pod(inp["pod1"]), k8s_pod(inp["pod2"]))
    assert got is expected["result"]


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("kubelet.getPodsToPreempt"))
def test_conformance_oracle_get_pods_to_preempt(inp, expected):
    preemptor = k8s_pod(inp["preemptor"])
    pods = [k8s_pod(p) for p in inp["pods"]]
    requirements = _reqs(inp["insufficientResources"])
    if expected["error"]:
        with pytest.raises(OracleError) as err:
            oracle_pods_to_preempt(preemptor, pods, requirements)
        assert expected["messageContains"] in str(err.value)
        return
    got = oracle_pods_to_preempt(preemptor, pods, requirements)
    assert [p.name for p in got] == expected["podsToPreempt"]


# --- random inputs ---------------------------------------------------------------------------

CPU_STEPS = [0, 50, 100, 100, 200, 250, 500, 500, 1000, 2000]
MEMORY_STEPS = [0, 64 * MI, 128 * MI, 128 * MI, 256 * MI, 512 * MI, GI, GI, 2 * GI]
OTHER = "example.com/gpu"
SETTINGS = [
    DEFAULT_SETTINGS,
    EngineSettings(pod_level_resources=False),
    EngineSettings(qos_algorithm="aggregate"),
]


def _amount(rng: random.Random, name: str, spread: float) -> int:
    """A request: from a short list (many ties) or drawn freely (few ties)."""
    if rng.random() < spread:
        top = {"cpu": 4000, "memory": 8 * GI, "ephemeral-storage": 20 * GI, OTHER: 4, "pods": 3}
        return rng.randrange(top[name] + 1)
    steps = {
        "cpu": CPU_STEPS,
        "memory": MEMORY_STEPS,
        "ephemeral-storage": [0, GI, 10 * GI],
        OTHER: [0, 1, 2],
        "pods": [0, 2],
    }[name]
    return rng.choice(steps)


def _resources(rng: random.Random, spread: float) -> tuple[dict, dict]:
    requests = {}
    for name, chance in (
        ("cpu", 0.85),
        ("memory", 0.85),
        ("ephemeral-storage", 0.2),
        (OTHER, 0.1),
        ("pods", 0.03),  # the getter says 1 whatever a container asks
    ):
        if rng.random() < chance:
            requests[name] = _amount(rng, name, spread)
    shape = rng.random()
    if shape < 0.1:
        return {}, {}
    if shape < 0.35:
        return requests, dict(requests)
    if shape < 0.75:
        return requests, {}
    return requests, {name: value * 2 for name, value in requests.items()}


def random_pod(rng: random.Random, index: int, spread: float) -> Pod:
    requests, limits = _resources(rng, spread)
    containers = [Container(name="c0", requests=requests, limits=limits)]
    if rng.random() < 0.1:
        more, more_limits = _resources(rng, spread)
        containers.append(Container(name="c1", requests=more, limits=more_limits))
    init_containers = []
    if rng.random() < 0.15:
        init, init_limits = _resources(rng, spread)
        sidecar = "Always" if rng.random() < 0.5 else None
        init_containers.append(
            Container(name="i0", requests=init, limits=init_limits, restart_policy=sidecar)
        )
    pod_level = None
    if rng.random() < 0.08:
        level = {"cpu": _amount(rng, "cpu", spread), "memory": _amount(rng, "memory", spread)}
        pod_level = PodResources(requests=level, limits=dict(level) if rng.random() < 0.5 else {})
    overhead = {}
    if rng.random() < 0.1:
        overhead = {"cpu": rng.choice([0, 10, 250]), "memory": rng.choice([0, 32 * MI])}
        if rng.random() < 0.2:
            overhead["pods"] = 1
    annotations = {}
    if rng.random() < 0.03:
        annotations = {"kubernetes.io/config.mirror": "x"}
    return Pod(
        namespace="ns",
        name=f"p{index}",
        priority=rng.choice([None, 0, 0, 0, 0, 0, 10, 100, 2_000_000_000]),
        annotations=annotations,
        qos_class=rng.choice(["", "", "", "", "", BEST_EFFORT, BURSTABLE, GUARANTEED]),
        containers=tuple(containers),
        init_containers=tuple(init_containers),
        resources=pod_level,
        overhead=overhead,
    )


REQUIREMENT_SHAPES = [
    ["cpu"],
    ["memory"],
    ["cpu", "memory"],
    ["memory", "cpu"],
    ["cpu", "memory", "pods"],
    ["pods", "memory"],
    ["pods"],
    ["cpu", "cpu"],
    ["ephemeral-storage", "memory", "cpu"],
    [OTHER],
    [OTHER, "cpu"],
]


def random_requirements(rng: random.Random, pods: list[Pod]) -> list[tuple[str, int]]:
    """Requirements worth a share of what the pods request (so that most cases need
    several victims and some cannot be met), now and then 0, negative or tiny."""
    requirements = []
    for name in rng.choice(REQUIREMENT_SHAPES):
        total = sum(resource_request(pod, name, settings=DEFAULT_SETTINGS) for pod in pods)
        share = rng.choice([0.02, 0.1, 0.3, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 1.0, 1.3])
        amount = int(total * share) if total else rng.randrange(-1, 4)
        if rng.random() < 0.05:
            amount = rng.choice([0, -1, 1])
        requirements.append((name, amount))
    return requirements


def _outcome(compute):
    try:
        return "victims", [id(pod) for pod in compute()], None
    except (PreemptionError, OracleError) as exc:
        return "error", exc.remaining, str(exc)


def check_case(rng: random.Random, size: int, spread: float) -> str:
    pods = [random_pod(rng, i, spread) for i in range(size)]
    preemptor = Pod(
        namespace="ns",
        name="preemptor",
        priority=rng.choice([2_000_000_000] * 6 + [50, None]),
    )
    requirements = random_requirements(rng, pods)
    settings = rng.choice(SETTINGS)
    want = _outcome(lambda: oracle_pods_to_preempt(preemptor, pods, requirements, settings))
    got = _outcome(lambda: get_pods_to_preempt(preemptor, pods, requirements, settings=settings))
    names = {id(pod): pod.name for pod in pods}
    assert got == want, (
        requirements,
        [names.get(i, i) for i in got[1]],
        [names.get(i, i) for i in want[1]],
    )
    return want[0]


@pytest.mark.parametrize("seed", range(6))
def test_small_nodes_match_upstream(seed):
    rng = random.Random(seed)
    kinds = {"victims": 0, "error": 0}
    for _ in range(500):
        kinds[check_case(rng, rng.randrange(13), rng.choice([0.0, 0.3, 1.0]))] += 1
    assert kinds["victims"] > 100 and kinds["error"] > 50  # both outcomes are exercised


@pytest.mark.parametrize("seed", range(8))
def test_large_nodes_match_upstream(seed):
    rng = random.Random(1000 + seed)
    for _ in range(25):
        check_case(rng, rng.choice([30, 60, 110, 110]), rng.choice([0.0, 0.5, 1.0]))


def _node(requests: list[tuple[int, int]]) -> list[Pod]:
    return [
        Pod(
            namespace="ns",
            name=f"p{i}",
            priority=0,
            containers=(Container(name="c", requests={"cpu": cpu, "memory": memory}),),
        )
        for i, (cpu, memory) in enumerate(requests)
    ]


CRITICAL = Pod(namespace="ns", name="critical", priority=2_000_000_000)


def _assert_same(pods: list[Pod], requirements: list[tuple[str, int]]) -> list[str]:
    want = _outcome(lambda: oracle_pods_to_preempt(CRITICAL, pods, requirements))
    got = _outcome(
        lambda: get_pods_to_preempt(CRITICAL, pods, requirements, settings=DEFAULT_SETTINGS)
    )
    assert got == want
    names = {id(pod): pod.name for pod in pods}
    return [names[i] for i in got[1]] if got[0] == "victims" else []


@pytest.mark.parametrize("seed", range(10))
def test_most_of_a_full_node_on_two_resources(seed):
    # The heavy case: 110 burstable pods with distinct requests, 70-90 of them evicted.
    rng = random.Random(seed)
    shapes = [
        lambda: (rng.randrange(50, 2000), rng.randrange(64 * MI, 4 * GI)),
        lambda: (c := rng.randrange(50, 2000), c * rng.randrange(2 * MI, 3 * MI)),
        lambda: (c := rng.randrange(50, 2000), (2100 - c) * MI),
    ]
    for shape in shapes:
        pods = _node([shape() for _ in range(110)])
        cpu = sum(resource_request(pod, "cpu", settings=DEFAULT_SETTINGS) for pod in pods)
        memory = sum(resource_request(pod, "memory", settings=DEFAULT_SETTINGS) for pod in pods)
        victims = _assert_same(pods, [("cpu", cpu * 4 // 5), ("memory", memory * 4 // 5)])
        assert 50 <= len(victims) <= 100


def test_float_absorption_tie_goes_to_the_smaller_request():
    # 0.25 + (1/q)^2 and 0.25 + (2/q)^2 are the same float64: the two pods tie on distance
    # although one requests a byte more memory, and the smaller request wins the tie.
    q = 1 << 40
    pods = _node([(500, q - 1), (500, q - 2), (100, q - 3)])
    assert _assert_same(pods, [("cpu", 1000), ("memory", q)])[0] == "p1"


def test_negative_and_huge_requests_match_upstream():
    # Negative requests (ingest refuses them, a Pod built in code may not) and values of
    # 2**53 or more (not exact as floats); upstream's scan starts from a best distance of
    # len(requirements) + 1 at index 0, which a negative request can beat.
    rng = random.Random(7)
    for _ in range(300):
        values = [-5, -1, 0, 1, 3, 100, 1 << 53, (1 << 60) + 1]
        pods = _node([(rng.choice(values), rng.choice(values)) for _ in range(rng.randrange(8))])
        requirements = [
            (name, rng.choice([-3, 1, 2, 50, 200, 1 << 53, 1 << 61]))
            for name in rng.choice(REQUIREMENT_SHAPES[:6])
        ]
        _assert_same(pods, requirements)
    # Both pods are farther than len(requirements) + 1 (36 each): upstream keeps index 0,
    # not the last of the nearest with the smaller memory request.
    victims = _assert_same(_node([(-50, 100), (100, -50)]), [("cpu", 10), ("memory", 10)])
    assert victims == ["p0", "p1"]
    # Upstream subtracts at least one pod from a requirement of 0 or less: a negative
    # request can bring it back above 0.
    _assert_same(_node([(-5, 0)]), [("cpu", -3)])
    with pytest.raises(PreemptionError, match=r"\[\(res: cpu, q: 2\), \]"):
        get_pods_to_preempt(CRITICAL, _node([(-5, 0)]), [("cpu", -3)], settings=DEFAULT_SETTINGS)


def test_staircase_stays_the_uncovered_live_keys():
    # The structure behind the rounds with one or two requirements, against a brute-force
    # staircase, as candidates go in random order (candidates sharing a key included, so a
    # key stays while one of its candidates does).
    rng = random.Random(11)
    for _ in range(300):
        size = rng.randrange(1, 40)
        grid = rng.choice([3, 6, 1000])
        rows = [(rng.randrange(grid), rng.randrange(grid), i) for i in range(size)]
        cols = rng.choice([[0, 1], [1, 0], [0]])
        near = _Nearest(rows, list(range(size)), cols, rows, same=False)
        live = list(range(size))
        for gone in rng.sample(range(size), size - 1):
            keys = {tuple(rows[i][c] for c in cols) for i in live}
            expected = {
                key
                for key in keys
                if not any(
                    other != key and all(o >= k for o, k in zip(other, key, strict=True))
                    for other in keys
                )
            }
            assert set(near.sky) == expected
            assert len(near.sky) == len(expected)
            # Along it the first request falls and the last rises.
            firsts = [key[0] for key in near.sky]
            lasts = [key[-1] for key in near.sky]
            assert firsts == sorted(firsts, reverse=True)
            assert lasts == sorted(lasts) if len(cols) == 2 else len(lasts) == 1
            live.remove(gone)
            near.remove(gone)


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_upstream_scan_on_random_nodes(seed):
    rng = random.Random(seed)
    pods = []
    for i in range(rng.randint(0, 40)):
        cpu = rng.choice([0, 100, 100, 250, 500, 1000])
        memory = rng.choice([0, MI, MI, 64 * MI, 256 * MI])
        pods.append(
            request_pod(
                f"p{i}",
                cpu,
                memory,
                priority=rng.choice([None, 0, 5, 2_000_000_000]),
                guaranteed=rng.random() < 0.3,
            )
        )
    requirements = [
        (name, q)
        for name, q in (
            ("pods", rng.choice([0, 1, 2])),
            ("cpu", rng.choice([0, 50, 300, 2000])),
            ("memory", rng.choice([0, MI, 100 * MI])),
        )
        if q
    ]
    rng.shuffle(requirements)
    try:
        expected = [p.name for p in oracle_pods_to_preempt(CRITICAL, pods, requirements)]
    except OracleError as exc:
        with pytest.raises(PreemptionError) as err:
            get_pods_to_preempt(CRITICAL, pods, requirements, settings=DEFAULT_SETTINGS)
        assert str(err.value) == str(exc)
        return
    assert [
        p.name for p in get_pods_to_preempt(CRITICAL, pods, requirements, settings=DEFAULT_SETTINGS)
    ] == expected
