"""QoS class, OOM score adjust and pod kinds (service.engine.qos): every case of
qos.ComputePodQOS (under BOTH algorithms) and kubelet.GetContainerOOMScoreAdjust, plus the
cases where the two QoS algorithms differ, and criticality / preemptability."""

from __future__ import annotations

import pytest

from service.engine.objects import (
    CONFIG_MIRROR_ANNOTATION,
    CONFIG_SOURCE_ANNOTATION,
    Container,
    Pod,
    PodResources,
)
from service.engine.qos import (
    compute_pod_qos,
    get_pod_qos,
    is_critical_pod,
    is_mirror_pod,
    is_node_critical_pod,
    is_static_pod,
    oom_score_adjusts,
    preemptable,
)
from service.engine.version import DEFAULT_SETTINGS, EngineSettings
from tests.engine.kubelet.helpers import conformance_cases, k8s_pod

SHAPE = "shape"
AGGREGATE = "aggregate"


def _settings(algorithm: str, gate) -> EngineSettings:
    return EngineSettings(qos_algorithm=algorithm, pod_level_resources=gate is not False)


@pytest.mark.parametrize("algorithm", [SHAPE, AGGREGATE])
@pytest.mark.parametrize(("inp", "expected"), conformance_cases("qos.ComputePodQOS"))
def test_conformance_compute_pod_qos(inp, expected, algorithm):
    gate = inp.get("featureGates", {}).get("PodLevelResources", "any")
    pod = k8s_pod(inp["pod"])
    assert compute_pod_qos(pod, settings=_settings(algorithm, gate)) == expected["qosClass"]
    assert get_pod_qos(pod, settings=_settings(algorithm, gate)) == expected["qosClass"]


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("kubelet.GetContainerOOMScoreAdjust")
)
def test_conformance_oom_score_adjust(inp, expected):
    gate = inp.get("featureGates", {}).get("PodLevelResources", True)
    settings = EngineSettings(pod_level_resources=gate is not False)
    pod = k8s_pod(inp["pod"])
    got = oom_score_adjusts(pod, inp["memoryCapacity"], settings=settings)
    assert set(got) == set(expected["oomScoreAdj"])
    for name, bounds in expected["oomScoreAdj"].items():
        exact = bounds.get("exactDerived")
        if exact is None and bounds["min"] == bounds["max"]:
            exact = bounds["min"]
        assert bounds["min"] <= got[name] <= bounds["max"], name
        if exact is not None:
            assert got[name] == exact, name


# --- where the algorithms differ ------------------------------------------------------------


def _c(name, requests=None, limits=None, sidecar=False):
    return Container(
        name=name,
        requests=requests or {},
        limits=limits or {},
        restart_policy="Always" if sidecar else None,
    )


def _pod(*containers, init=(), resources=None, qos_class="", **kw) -> Pod:
    return Pod(
        namespace="ns",
        name=kw.pop("name", "p"),
        containers=tuple(containers),
        init_containers=tuple(init),
        resources=resources,
        qos_class=qos_class,
        **kw,
    )


GUARANTEED_C = {"cpu": 100, "memory": 100}

DIFFERENCES = [
    pytest.param(
        _pod(
            _c("a", {"cpu": 1000, "memory": 10}, {"cpu": 2000, "memory": 10}),
            _c("b", {"cpu": 2000, "memory": 10}, {"cpu": 1000, "memory": 10}),
        ),
        "Burstable",
        "Guaranteed",
        id="per-container mismatches cancelling in the sums",
    ),
    pytest.param(
        _pod(_c("a", GUARANTEED_C, GUARANTEED_C), resources=PodResources()),
        "Guaranteed",
        "BestEffort",
        id="empty spec.resources with the gate on",
    ),
    pytest.param(
        _pod(
            _c("a", GUARANTEED_C, GUARANTEED_C),
            resources=PodResources(limits={"ephemeral-storage": 5}),
        ),
        "Guaranteed",
        "BestEffort",
        id="only unsupported names in spec.resources",
    ),
]


@pytest.mark.parametrize(("pod", "shape", "aggregate"), DIFFERENCES)
def test_qos_algorithms_differ(pod, shape, aggregate):
    assert compute_pod_qos(pod, settings=DEFAULT_SETTINGS) == shape  # default: 1.37 shape algorithm
    assert compute_pod_qos(pod, settings=EngineSettings(qos_algorithm=AGGREGATE)) == aggregate


SHAPE_CASES = [
    pytest.param(_pod(), "BestEffort", id="no containers"),
    pytest.param(
        _pod(_c("a", GUARANTEED_C, GUARANTEED_C), _c("b")),
        "Burstable",
        id="guaranteed plus best-effort",
    ),
    pytest.param(
        _pod(_c("a", {"cpu": 5}, {"cpu": 5})), "Burstable", id="cpu guaranteed, memory best-effort"
    ),
    pytest.param(
        _pod(_c("a", {"ephemeral-storage": 5})), "BestEffort", id="only non-QoS resources"
    ),
    pytest.param(
        _pod(
            _c("a", GUARANTEED_C, GUARANTEED_C),
            init=[_c("s", GUARANTEED_C, GUARANTEED_C, sidecar=True)],
        ),
        "Guaranteed",
        id="guaranteed sidecar",
    ),
    pytest.param(
        _pod(_c("a"), resources=PodResources(requests=GUARANTEED_C, limits=GUARANTEED_C)),
        "Guaranteed",
        id="pod-level shape decides",
    ),
]


@pytest.mark.parametrize(("pod", "expected"), SHAPE_CASES)
def test_shape_algorithm(pod, expected):
    assert compute_pod_qos(pod, settings=DEFAULT_SETTINGS) == expected


def test_status_qos_class_wins():
    pod = _pod(_c("a"), qos_class="Guaranteed")
    assert compute_pod_qos(pod, settings=DEFAULT_SETTINGS) == "BestEffort"
    assert get_pod_qos(pod, settings=DEFAULT_SETTINGS) == "Guaranteed"


def test_oom_guaranteed_and_best_effort_cover_init_containers():
    g = _pod(_c("a", GUARANTEED_C, GUARANTEED_C), init=[_c("i", GUARANTEED_C, GUARANTEED_C)])
    assert oom_score_adjusts(g, 10**9, settings=DEFAULT_SETTINGS) == {"a": -997, "i": -997}
    be = _pod(_c("a"), init=[_c("i")])
    assert oom_score_adjusts(be, 10**9, settings=DEFAULT_SETTINGS) == {"a": 1000, "i": 1000}


def test_oom_sidecar_capped_by_smallest_regular_container():
    pod = _pod(
        _c("big", {"memory": 4 * 10**8}),
        _c("small", {"memory": 10**8}),
        init=[_c("side", {"memory": 0}, sidecar=True), _c("init", {"memory": 0})],
    )
    got = oom_score_adjusts(pod, 10**9, settings=DEFAULT_SETTINGS)
    assert got["big"] == 600
    assert got["small"] == 900
    assert got["side"] == 900  # min(999 own, 900 of the smallest regular container)
    assert got["init"] == 999  # regular init containers use their own request


# --- pod kinds ------------------------------------------------------------------------------

KIND_CASES = [
    # (annotations, priority, class, static, mirror, critical, node-critical)
    pytest.param({}, None, "", False, False, False, False, id="plain"),
    pytest.param(
        {CONFIG_SOURCE_ANNOTATION: "file"}, None, "", True, False, True, False, id="static"
    ),
    pytest.param(
        {CONFIG_SOURCE_ANNOTATION: "api"}, None, "", False, False, False, False, id="source api"
    ),
    pytest.param({CONFIG_MIRROR_ANNOTATION: "x"}, None, "", False, True, True, False, id="mirror"),
    pytest.param({}, 2_000_000_000, "", False, False, True, False, id="priority 2e9"),
    pytest.param(
        {}, 1_999_999_999, "system-node-critical", False, False, False, False, id="class name alone"
    ),
    pytest.param(
        {}, 2_000_001_000, "system-node-critical", False, False, True, True, id="node critical"
    ),
    pytest.param(
        {},
        2_000_000_000,
        "system-cluster-critical",
        False,
        False,
        True,
        False,
        id="cluster critical",
    ),
]


@pytest.mark.parametrize(
    ("ann", "prio", "cls", "static", "mirror", "critical", "node_critical"), KIND_CASES
)
def test_pod_kinds(ann, prio, cls, static, mirror, critical, node_critical):
    pod = _pod(annotations=ann, priority=prio, priority_class_name=cls)
    assert is_static_pod(pod) is static
    assert is_mirror_pod(pod) is mirror
    assert is_critical_pod(pod) is critical
    assert is_node_critical_pod(pod) is node_critical


def _prio(priority, **kw):
    return _pod(priority=priority, name=kw.pop("name", "x"), **kw)


PREEMPTABLE_CASES = [
    pytest.param(_prio(2_000_000_000), _prio(5), True, id="critical beats non-critical"),
    pytest.param(_prio(2_000_000_000), _prio(None), True, id="critical beats null priority"),
    pytest.param(
        _prio(2_000_000_000), _prio(2_000_000_000), False, id="critical vs equal critical"
    ),
    pytest.param(
        _prio(2_000_001_000), _prio(2_000_000_000), True, id="higher critical beats critical"
    ),
    pytest.param(_prio(10), _prio(5), True, id="higher priority"),
    pytest.param(_prio(5), _prio(5), False, id="equal priority"),
    pytest.param(_prio(5), _prio(None), False, id="victim priority null"),
    pytest.param(_prio(None), _prio(-5), False, id="preemptor priority null"),
    pytest.param(
        _prio(None, annotations={CONFIG_SOURCE_ANNOTATION: "file"}),
        _prio(None),
        True,
        id="static preemptor beats null priority",
    ),
]


@pytest.mark.parametrize(("preemptor", "victim", "expected"), PREEMPTABLE_CASES)
def test_preemptable(preemptor, victim, expected):
    assert preemptable(preemptor, victim) is expected
