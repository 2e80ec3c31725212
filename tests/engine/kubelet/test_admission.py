"""Kubelet admission (service.engine.kubelet.admission): every case of the
kubelet.lifecycle.generalFilter and kubelet.lifecycle.rejectPodAdmissionBasedOnOS
conformance groups, plus each predicate, the eviction manager's admission check, request
aggregation in the fit, and the whole admit pipeline with critical-pod preemption."""

from __future__ import annotations

import pytest

import service.engine.kubelet.admission as admission_module
from service.engine.kubelet.admission import (
    AdmitRejection,
    InsufficientResource,
    PodAdmitAttributes,
    PodRequestsMemo,
    PredicateFailure,
    active_pods,
    admit,
    eviction_admit,
    fits_resources,
    general_filter,
    reject_pod_admission_based_on_os_field,
    reject_pod_admission_based_on_os_selector,
    summed_requests,
)
from service.engine.objects import (
    CONFIG_SOURCE_ANNOTATION,
    Container,
    ContainerPort,
    Node,
    NodeCondition,
    Pod,
    PodResources,
    Taint,
    Toleration,
)
from service.engine.version import DEFAULT_SETTINGS, EngineSettings, settings_for
from tests.engine.kubelet.helpers import conformance_cases, k8s_node, k8s_pod

MI = 1024 * 1024


def _expected_reason(r: dict):
    if r["type"] == "InsufficientResource":
        return InsufficientResource(r["resourceName"], r["requested"], r["used"], r["capacity"])
    return PredicateFailure(r["predicateName"], r["predicateDesc"])


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("kubelet.lifecycle.generalFilter"))
def test_conformance_general_filter(inp, expected):
    pod = k8s_pod(inp["pod"])
    others = [
        k8s_pod(p | {"metadata": {"name": f"other-{i}"}}) for i, p in enumerate(inp["otherPods"])
    ]
    node = k8s_node(inp["node"])
    got = general_filter(PodAdmitAttributes(pod, node, others, settings=DEFAULT_SETTINGS))
    assert got == [_expected_reason(r) for r in expected["reasons"]]


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("kubelet.lifecycle.rejectPodAdmissionBasedOnOS")
)
def test_conformance_reject_based_on_os(inp, expected):
    pod = k8s_pod(inp["pod"])
    if inp["check"] == "osLabel":
        node = k8s_node(inp["node"])
        got = reject_pod_admission_based_on_os_selector(pod, node, inp["kubeletOS"])
    else:
        got = reject_pod_admission_based_on_os_field(pod, inp["kubeletOS"])
    assert got is expected["reject"]


# --- building blocks ------------------------------------------------------------------------


def _c(name="c", requests=None, *, limits=None, sidecar=False, ports=()):
    return Container(
        name=name,
        requests=requests or {},
        limits=limits or {},
        restart_policy="Always" if sidecar else None,
        ports=tuple(ports),
    )


def _pod(name="p", *containers, init=(), **kw) -> Pod:
    return Pod(
        namespace=kw.pop("namespace", "ns"),
        name=name,
        containers=tuple(containers) or (_c(),),
        init_containers=tuple(init),
        **kw,
    )


def _node(allocatable=None, **kw) -> Node:
    alloc = {"cpu": 1000, "memory": 1000 * MI, "pods": 10, "ephemeral-storage": 10**9}
    alloc.update(allocatable or {})
    return Node(name="n1", allocatable=alloc, capacity=dict(alloc), **kw)


def _pressure(*types, status="True"):
    return tuple(NodeCondition(type=t, status=status) for t in types)


CRITICAL = {"priority": 2_000_000_000}


# --- resource fit ---------------------------------------------------------------------------

FIT_CASES = [
    pytest.param(
        _pod("p", _c(requests={"cpu": 600})),
        [_pod("o", _c(requests={"cpu": 500}))],
        {},
        [InsufficientResource("cpu", 600, 500, 1000)],
        id="cpu",
    ),
    pytest.param(
        _pod("p", _c(requests={"cpu": 500})),
        [_pod("o", _c(requests={"cpu": 500}))],
        {},
        [],
        id="exactly fits",
    ),
    pytest.param(
        _pod("p"),
        [_pod(f"o{i}") for i in range(10)],
        {},
        [InsufficientResource("pods", 1, 10, 10)],
        id="pods only even for a pod requesting nothing",
    ),
    pytest.param(
        _pod("p"),
        [],
        {"pods": 0},
        [InsufficientResource("pods", 1, 0, 0)],
        id="no pods allocatable",
    ),
    pytest.param(
        _pod("p", _c(requests={"cpu": 600, "memory": 600 * MI, "ephemeral-storage": 6 * 10**8})),
        [_pod("o", _c(requests={"cpu": 500, "memory": 500 * MI, "ephemeral-storage": 5 * 10**8}))],
        {},
        [
            InsufficientResource("cpu", 600, 500, 1000),
            InsufficientResource("memory", 600 * MI, 500 * MI, 1000 * MI),
            InsufficientResource("ephemeral-storage", 6 * 10**8, 5 * 10**8, 10**9),
        ],
        id="all failures collected in order",
    ),
    pytest.param(
        _pod("p", _c(requests={"example.com/gpu": 1, "cpu": 1})),
        [],
        {},
        [],
        id="extended resource unknown to the node is dropped",
    ),
    pytest.param(
        _pod("p", _c(requests={"example.com/gpu": 1})),
        [],
        {"example.com/gpu": 0},
        [InsufficientResource("example.com/gpu", 1, 0, 0)],
        id="extended resource with zero allocatable is kept",
    ),
    pytest.param(
        _pod(
            "p", _c(requests={"hugepages-2Mi": 4 * MI, "b.example.com/x": 2, "a.example.com/y": 3})
        ),
        [],
        {"a.example.com/y": 1, "b.example.com/x": 1},
        [
            InsufficientResource("a.example.com/y", 3, 0, 1),
            InsufficientResource("b.example.com/x", 2, 0, 1),
            InsufficientResource("hugepages-2Mi", 4 * MI, 0, 0),
        ],
        id="scalar resources in name order; hugepages never dropped",
    ),
    pytest.param(
        _pod(
            "p",
            _c(requests={"cpu": 100}),
            init=[_c("s", {"cpu": 400}, sidecar=True), _c("i", {"cpu": 450})],
        ),
        [_pod("o", _c(requests={"cpu": 200}))],
        {},
        # containers 100 + sidecar 400 = 500; init "i" uses 450 + sidecar 400 = 850
        [InsufficientResource("cpu", 850, 200, 1000)],
        id="sidecar and init containers in the request",
    ),
    pytest.param(
        _pod("p", _c(requests={"cpu": 100}), overhead={"cpu": 250}),
        [_pod("o", _c(requests={"cpu": 600}), overhead={"cpu": 100})],
        {},
        [InsufficientResource("cpu", 350, 700, 1000)],
        id="overhead on both sides",
    ),
    pytest.param(
        _pod("p", _c(requests={"cpu": 100}), resources=PodResources(requests={"cpu": 800})),
        [_pod("o", _c(requests={"cpu": 100}), resources=PodResources(requests={"cpu": 300}))],
        {},
        [InsufficientResource("cpu", 800, 300, 1000)],
        id="pod-level requests on both sides",
    ),
    pytest.param(
        _pod("p", _c(limits={"cpu": 5000})),
        [],
        {},
        [],
        id="limits do not count",
    ),
]


@pytest.mark.parametrize(("pod", "others", "alloc", "expected"), FIT_CASES)
def test_fits_resources(pod, others, alloc, expected):
    assert (
        fits_resources(PodAdmitAttributes(pod, _node(alloc), others, settings=DEFAULT_SETTINGS))
        == expected
    )


@pytest.mark.parametrize(("pod", "others", "alloc", "expected"), FIT_CASES)
def test_fits_resources_with_a_requests_memo(pod, others, alloc, expected):
    """The per-snapshot memo gives the same answers, twice, computing each pod once."""
    memo = PodRequestsMemo(DEFAULT_SETTINGS)
    calls = []

    def counting(other):
        calls.append(other)
        return memo(other)

    for _ in range(2):
        assert (
            fits_resources(
                PodAdmitAttributes(
                    pod, _node(alloc), others, requests_of=counting, settings=DEFAULT_SETTINGS
                )
            )
            == expected
        )
    assert len(memo._found) == len({id(o) for o in calls})
    assert all(memo(o) is memo(o) for o in others)


def test_requests_memo_is_not_used_with_other_settings():
    """A memo holds one release's requests: with the PodLevelResources gate off the pod
    level request must not come from a memo made with it on."""
    other = _pod("o", _c(requests={"cpu": 100}), resources=PodResources(requests={"cpu": 900}))
    memo = PodRequestsMemo(DEFAULT_SETTINGS)
    memo(other)  # cached with the gate on: 900
    pod = _pod("p", _c(requests={"cpu": 800}))
    gate_off = EngineSettings(pod_level_resources=False)
    assert admit(
        PodAdmitAttributes(pod, _node({}), [other], settings=gate_off, requests_of=memo)
    ).admitted
    assert not admit(
        PodAdmitAttributes(pod, _node({}), [other], requests_of=memo, settings=DEFAULT_SETTINGS)
    ).admitted


def test_fit_pod_level_gate_off():
    pod = _pod("p", _c(requests={"cpu": 100}), resources=PodResources(requests={"cpu": 1500}))
    assert fits_resources(PodAdmitAttributes(pod, _node(), [], settings=DEFAULT_SETTINGS)) == [
        InsufficientResource("cpu", 1500, 0, 1000)
    ]
    off = EngineSettings(pod_level_resources=False)
    assert fits_resources(PodAdmitAttributes(pod, _node(), [], settings=off)) == []


def test_active_pods_drop_terminal_phases():
    pods = [
        _pod(n, phase=ph)
        for n, ph in [
            ("a", "Running"),
            ("b", "Succeeded"),
            ("c", "Failed"),
            ("d", "Pending"),
            ("e", ""),
        ]
    ]
    assert [p.name for p in active_pods(pods)] == ["a", "d", "e"]


# --- predicates -----------------------------------------------------------------------------

NO_EXECUTE = Taint(key="dedicated", value="x", effect="NoExecute")
PORT = ContainerPort(container_port=80, host_port=8080)

PREDICATE_CASES = [
    pytest.param(
        _pod(node_selector={"zone": "b"}),
        _node(labels={"zone": "a"}),
        "NodeAffinity",
        id="node selector",
    ),
    pytest.param(_pod(node_name="other"), _node(), "NodeName", id="node name"),
    pytest.param(_pod(node_name="n1"), _node(), None, id="own node name"),
    pytest.param(_pod("p", _c(ports=[PORT])), _node(), "NodePorts", id="host port"),
    pytest.param(_pod(), _node(taints=(NO_EXECUTE,)), "TaintToleration", id="NoExecute taint"),
    pytest.param(
        _pod(tolerations=(Toleration(key="dedicated", operator="Exists"),)),
        _node(taints=(NO_EXECUTE,)),
        None,
        id="tolerated NoExecute taint",
    ),
    pytest.param(
        _pod(), _node(taints=(Taint(key="k", effect="NoSchedule"),)), None, id="NoSchedule ignored"
    ),
    pytest.param(
        _pod(annotations={CONFIG_SOURCE_ANNOTATION: "file"}),
        _node(taints=(NO_EXECUTE,)),
        None,
        id="static pod ignores taints",
    ),
]


@pytest.mark.parametrize(("pod", "node", "predicate"), PREDICATE_CASES)
def test_predicates(pod, node, predicate):
    others = [_pod("o", _c(ports=[PORT]))]
    got = [
        r.name
        for r in general_filter(PodAdmitAttributes(pod, node, others, settings=DEFAULT_SETTINGS))
    ]
    assert got == ([predicate] if predicate else [])


# --- eviction manager admission -------------------------------------------------------------

BEST_EFFORT = _pod("be")
BURSTABLE = _pod("bu", _c(requests={"memory": MI}))
MEMORY_TOLERANT = _pod(
    "be-tol",
    tolerations=(
        Toleration(
            key="node.kubernetes.io/memory-pressure", operator="Exists", effect="NoSchedule"
        ),
    ),
)
WILDCARD_TOLERANT = _pod("be-all", tolerations=(Toleration(operator="Exists"),))
CRITICAL_BE = _pod("crit", **CRITICAL)

EVICTION_CASES = [
    pytest.param(BEST_EFFORT, (), None, id="no pressure"),
    pytest.param(
        BEST_EFFORT, _pressure("MemoryPressure", status="False"), None, id="condition False"
    ),
    pytest.param(BURSTABLE, _pressure("MemoryPressure"), None, id="memory pressure, burstable"),
    pytest.param(
        BEST_EFFORT,
        _pressure("MemoryPressure"),
        "The node had condition: [MemoryPressure]. ",
        id="memory pressure, best effort",
    ),
    pytest.param(MEMORY_TOLERANT, _pressure("MemoryPressure"), None, id="best effort tolerating"),
    pytest.param(WILDCARD_TOLERANT, _pressure("MemoryPressure"), None, id="wildcard toleration"),
    pytest.param(
        BURSTABLE,
        _pressure("DiskPressure"),
        "The node had condition: [DiskPressure]. ",
        id="disk pressure rejects burstable",
    ),
    pytest.param(
        MEMORY_TOLERANT,
        _pressure("MemoryPressure", "PIDPressure"),
        "The node had condition: [MemoryPressure PIDPressure]. ",
        id="memory and pid pressure",
    ),
    pytest.param(
        CRITICAL_BE, _pressure("DiskPressure", "PIDPressure"), None, id="critical admitted"
    ),
]


@pytest.mark.parametrize(("pod", "conditions", "message"), EVICTION_CASES)
def test_eviction_admit(pod, conditions, message):
    got = eviction_admit(pod, _node(conditions=conditions), settings=DEFAULT_SETTINGS)
    if message is None:
        assert got is None
    else:
        assert got == AdmitRejection("Evicted", message)


# --- the admit pipeline ---------------------------------------------------------------------


def test_admit_ok():
    result = admit(
        PodAdmitAttributes(
            _pod("p", _c(requests={"cpu": 100})), _node(), [], settings=DEFAULT_SETTINGS
        )
    )
    assert result.admitted and result.reasons == [] and result.kubelet_reason is None


def test_eviction_handler_runs_before_the_os_checks():
    pod = _pod(labels={"kubernetes.io/os": "windows"})
    result = admit(
        PodAdmitAttributes(
            pod, _node(conditions=_pressure("DiskPressure")), [], settings=DEFAULT_SETTINGS
        )
    )
    assert not result.admitted
    assert result.kubelet_reason == "Evicted"
    assert result.message == "The node had condition: [DiskPressure]. "


@pytest.mark.parametrize(
    ("pod", "reason", "message"),
    [
        pytest.param(
            _pod(labels={"kubernetes.io/os": "windows"}, os_name="windows"),
            "PodOSSelectorNodeLabelDoesNotMatch",
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
            id="label checked first",
        ),
        pytest.param(
            _pod(os_name="windows"),
            "PodOSNotSupported",
            "Failed to admit pod as the OS field doesn't match node OS",
            id="os field",
        ),
    ],
)
def test_os_rejections_are_not_preempted_away(pod, reason, message):
    pod = Pod(**{**{f: getattr(pod, f) for f in pod.__struct_fields__}, "priority": 2_000_000_000})
    result = admit(
        PodAdmitAttributes(
            pod, _node(), [_pod("victim", _c(requests={"cpu": 900}))], settings=DEFAULT_SETTINGS
        )
    )
    assert not result.admitted and result.critical
    assert result.kubelet_reason == reason and result.message == message
    assert result.victims == []


def test_non_critical_rejected_by_first_reason():
    pod = _pod("p", _c(requests={"cpu": 600}), node_name="other")
    result = admit(
        PodAdmitAttributes(
            pod,
            _node(),
            [_pod("o", _c(requests={"cpu": 500}), priority=0)],
            settings=DEFAULT_SETTINGS,
        )
    )
    assert not result.admitted and not result.critical
    assert [type(r).__name__ for r in result.reasons] == [
        "InsufficientResource",
        "PredicateFailure",
    ]
    assert result.kubelet_reason == "OutOfcpu"
    assert (
        result.message
        == "Node didn't have enough resource: cpu, requested: 600, used: 500, capacity: 1000"
    )


def test_critical_pod_admitted_after_preemption():
    pod = _pod("crit", _c(requests={"cpu": 600, "memory": 10 * MI}), **CRITICAL)
    others = [
        _pod("small", _c(requests={"cpu": 100})),
        _pod("big", _c(requests={"cpu": 500})),
        _pod("sys", _c(requests={"cpu": 300}), priority=2_000_000_000),
    ]
    result = admit(PodAdmitAttributes(pod, _node(), others, settings=DEFAULT_SETTINGS))
    assert result.admitted and result.critical
    assert [p.name for p in result.victims] == ["big"]
    assert result.requirements == [("cpu", 500)]
    assert result.reasons == [InsufficientResource("cpu", 600, 900, 1000)]


def test_critical_pod_with_a_non_resource_reason_is_rejected_by_it():
    pod = _pod("crit", _c(requests={"cpu": 600}), node_name="other", **CRITICAL)
    result = admit(
        PodAdmitAttributes(
            pod, _node(), [_pod("o", _c(requests={"cpu": 500}))], settings=DEFAULT_SETTINGS
        )
    )
    assert not result.admitted and result.victims == []
    assert result.kubelet_reason == "NodeName"
    assert (
        result.message == "Predicate NodeName failed: node(s) didn't match the requested node name"
    )


def test_critical_pod_without_a_set_of_victims():
    pod = _pod("crit", _c(requests={"memory": 2 * MI}), **CRITICAL)
    others = [_pod("sys", _c(requests={"memory": 999 * MI}), priority=2_000_000_000)]
    result = admit(PodAdmitAttributes(pod, _node(), others, settings=DEFAULT_SETTINGS))
    assert not result.admitted and result.critical
    assert result.kubelet_reason == "UnexpectedAdmissionError"
    assert result.message == (
        "Unexpected error while attempting to recover from admission failure: preemption: "
        "error finding a set of pods to preempt: no set of running pods found to reclaim "
        "resources: [(res: memory, q: 1048576), ]"
    )
    assert result.reasons == [InsufficientResource("memory", 2 * MI, 999 * MI, 1000 * MI)]


def test_critical_pod_preempts_for_the_pod_count():
    pod = _pod("crit", **CRITICAL)
    others = [_pod(f"o{i}", priority=i) for i in range(10)]
    result = admit(PodAdmitAttributes(pod, _node(), others, settings=DEFAULT_SETTINGS))
    assert result.admitted
    assert len(result.victims) == 1
    assert result.requirements == [("pods", 1)]


# --- sidecars' host ports, per release (kubernetes#132040) ---------------------------------

SIDECAR_PORT_CASES = [
    pytest.param(
        _pod("p", _c(), init=[_c("s", sidecar=True, ports=[PORT])]),
        _pod("o", _c(), init=[_c("s", sidecar=True, ports=[PORT])]),
        id="sidecar against sidecar",
    ),
    pytest.param(
        _pod("p", _c(), init=[_c("s", sidecar=True, ports=[PORT])]),
        _pod("o", _c(ports=[PORT])),
        id="sidecar against container",
    ),
    pytest.param(
        _pod("p", _c(ports=[PORT])),
        _pod("o", _c(), init=[_c("s", sidecar=True, ports=[PORT])]),
        id="container against sidecar",
    ),
]


@pytest.mark.parametrize(("pod", "other"), SIDECAR_PORT_CASES)
@pytest.mark.parametrize("release", ["1.32", "1.33", "1.34", "1.35", "1.36", "1.37"])
def test_sidecar_host_ports_count_from_1_34(release, pod, other):
    """generalFilter calls the release's AdmissionCheck, whose nodeports.Fits reads
    getContainerPorts(pod) and NewNodeInfo(other pods).UsedPorts: spec.containers only in
    v1.32.5/v1.33.3, sidecars too since kubernetes#132040 (v1.34)."""
    settings = settings_for(release)
    got = [
        r.name for r in general_filter(PodAdmitAttributes(pod, _node(), [other], settings=settings))
    ]
    assert got == ([] if release in ("1.32", "1.33") else ["NodePorts"])


def test_a_sidecar_port_on_another_ip_does_not_conflict():
    other_port = ContainerPort(container_port=80, host_port=8080, host_ip="10.0.0.2")
    mine = ContainerPort(container_port=80, host_port=8080, host_ip="10.0.0.1")
    pod = _pod("p", _c(), init=[_c("s", sidecar=True, ports=[mine])])
    other = _pod("o", _c(ports=[other_port]))
    assert (
        general_filter(PodAdmitAttributes(pod, _node(), [other], settings=DEFAULT_SETTINGS)) == []
    )


@pytest.mark.parametrize(("pod", "others", "alloc", "expected"), FIT_CASES)
def test_fits_resources_with_the_memo_itself_sums_once(pod, others, alloc, expected):
    """Given the memo itself, the other pods' sum is kept per list of pods: the second
    decision on the same pods answers as the first and as the unmemoized path."""
    memo = PodRequestsMemo(DEFAULT_SETTINGS)
    attrs = PodAdmitAttributes(
        pod, _node(alloc), others, requests_of=memo, settings=DEFAULT_SETTINGS
    )
    plain = fits_resources(PodAdmitAttributes(pod, _node(alloc), others, settings=DEFAULT_SETTINGS))
    assert fits_resources(attrs) == plain == expected
    assert fits_resources(attrs) == expected
    assert len(memo._sums) == 1


def test_the_memo_sums_each_list_of_pods_apart():
    """Sums are kept per list of pods (another pod missing, other resource names) and the
    dict returned is the caller's own: changing it does not change the next answer."""
    a = _pod("a", _c(requests={"cpu": 100, "memory": 10}))
    b = _pod("b", _c(requests={"cpu": 200, "memory": 20}))
    memo = PodRequestsMemo(DEFAULT_SETTINGS)
    both = memo.used([a, b], ("cpu", "memory"))
    assert both == summed_requests([a, b], ("cpu", "memory"), memo) == {"cpu": 300, "memory": 30}
    both["cpu"] = 0
    assert memo.used([a, b], ("cpu", "memory")) == {"cpu": 300, "memory": 30}
    assert memo.used([a], ("cpu", "memory")) == {"cpu": 100, "memory": 10}
    assert memo.used([a, b], ("cpu",)) == {"cpu": 300}
    assert memo.used([], ("cpu",)) == {"cpu": 0}


def test_the_memo_keeps_a_bounded_number_of_sums(monkeypatch):
    """Past MAX_KEPT_SUMS a sum is computed, not kept, and is still right."""
    monkeypatch.setattr(admission_module, "MAX_KEPT_SUMS", 1)
    a = _pod("a", _c(requests={"cpu": 100}))
    b = _pod("b", _c(requests={"cpu": 200}))
    memo = PodRequestsMemo(DEFAULT_SETTINGS)
    assert memo.used([a], ("cpu",)) == {"cpu": 100}
    assert memo.used([a, b], ("cpu",)) == {"cpu": 300}
    assert memo.used([a, b], ("cpu",)) == {"cpu": 300}
    assert len(memo._sums) == 1
