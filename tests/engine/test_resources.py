"""Effective pod requests and limits (service.engine.resources): every case of the
resource.* conformance groups, plus the scheduler's non-zero variant, the kubelet's
per-resource getter and the resource-name classes; a pod's total is a Quantity sum read with
MilliValue/Value in Go's int64 (never saturated)."""

from __future__ import annotations

import pytest

from service.engine.objects import Container, Pod, PodResources
from service.engine.quantity import wrap_int64
from service.engine.resources import (
    DEFAULT_CPU_REQUEST_MILLI,
    DEFAULT_MEMORY_REQUEST_BYTES,
    is_extended_resource_name,
    is_pod_level_limits_set,
    is_pod_level_resources_set,
    is_scalar_resource_name,
    pod_limits,
    pod_requests,
    pod_requests_non_zero,
    resource_request,
    scheduler_pod_requests,
)
from service.engine.version import DEFAULT_SETTINGS, EngineSettings
from tests.engine.helpers import MAX_MILLI, parsed_pod
from tests.engine.kubelet.helpers import base_units, conformance_cases, k8s_pod

GATE_OFF = EngineSettings(pod_level_resources=False)
MI = 1024 * 1024


def _settings(options: dict) -> EngineSettings:
    return GATE_OFF if options.get("skipPodLevelResources") else EngineSettings()


# --- conformance ----------------------------------------------------------------------------


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("resource.PodRequests+PodLimits"))
def test_conformance_pod_requests_and_limits(inp, expected):
    pod = k8s_pod(inp["pod"])
    exclude = bool(inp["options"].get("excludeOverhead"))
    assert pod_requests(pod, exclude_overhead=exclude, settings=DEFAULT_SETTINGS) == base_units(
        expected["requests"]
    )
    assert pod_limits(pod, exclude_overhead=exclude, settings=DEFAULT_SETTINGS) == base_units(
        expected["limits"]
    )


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("resource.PodRequests"))
def test_conformance_pod_requests(inp, expected):
    pod = k8s_pod(inp["pod"])
    options = inp["options"]
    got = pod_requests(
        pod, exclude_overhead=bool(options.get("excludeOverhead")), settings=_settings(options)
    )
    assert got == base_units(expected["requests"])


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("resource.PodLimits"))
def test_conformance_pod_limits(inp, expected):
    pod = k8s_pod(inp["pod"])
    options = inp["options"]
    got = pod_limits(
        pod, exclude_overhead=bool(options.get("excludeOverhead")), settings=_settings(options)
    )
    assert got == base_units(expected["limits"])


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("resource.PodRequests.podLevel"))
def test_conformance_pod_requests_pod_level(inp, expected):
    pod = k8s_pod(inp["pod"])
    got = pod_requests(pod, settings=_settings(inp["options"]))
    assert got == base_units(expected["requests"])


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("resource.IsPodLevelResourcesSet/IsPodLevelLimitsSet")
)
def test_conformance_is_pod_level_set(inp, expected):
    pod = k8s_pod(inp["pod"])
    assert is_pod_level_resources_set(pod) is expected["isPodLevelResourcesSet"]
    assert is_pod_level_limits_set(pod) is expected["isPodLevelLimitsSet"]


# --- own cases ------------------------------------------------------------------------------


def _pod(*containers, init=(), overhead=None, resources=None) -> Pod:
    return Pod(
        namespace="ns",
        name="p",
        containers=tuple(containers),
        init_containers=tuple(init),
        overhead=overhead or {},
        resources=resources,
    )


def _c(name="c", requests=None, limits=None, sidecar=False) -> Container:
    return Container(
        name=name,
        requests=requests or {},
        limits=limits or {},
        restart_policy="Always" if sidecar else None,
    )


REQUEST_CASES = [
    pytest.param(_pod(), {}, id="no containers"),
    pytest.param(
        _pod(_c(requests={"cpu": 100}), init=[_c("s", {"cpu": 50}, sidecar=True)]),
        {"cpu": 150},
        id="sidecar adds to the container sum",
    ),
    pytest.param(
        _pod(
            _c(requests={"cpu": 100}),
            init=[_c("i", {"cpu": 500}), _c("s", {"cpu": 50}, sidecar=True)],
        ),
        {"cpu": 500},
        id="sidecar declared after an init container does not add to its use",
    ),
    pytest.param(
        _pod(
            _c(requests={"cpu": 100}),
            init=[_c("s", {"cpu": 50}, sidecar=True), _c("i", {"cpu": 500})],
        ),
        {"cpu": 550},
        id="sidecar declared before an init container adds to its use",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 100}), init=[_c("i", {"memory": 10})]),
        {"cpu": 100, "memory": 10},
        id="a key only in init containers is taken from them",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 100}), overhead={"memory": 7}),
        {"cpu": 100, "memory": 7},
        id="overhead creates keys",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 0})),
        {"cpu": 0},
        id="explicit zero keeps its key",
    ),
    pytest.param(
        _pod(
            _c(requests={"cpu": 100, "memory": 5, "ephemeral-storage": 9}),
            resources=PodResources(requests={"memory": 50, "ephemeral-storage": 1}),
            overhead={"memory": 1},
        ),
        {"cpu": 100, "memory": 51, "ephemeral-storage": 9},
        id="pod-level replaces supported names only, then overhead",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 100}), resources=PodResources(requests={"ephemeral-storage": 1})),
        {"cpu": 100},
        id="only unsupported pod-level requests: no override",
    ),
]


@pytest.mark.parametrize(("pod", "expected"), REQUEST_CASES)
def test_pod_requests(pod, expected):
    assert pod_requests(pod, settings=DEFAULT_SETTINGS) == expected


def test_pod_requests_gate_off_ignores_pod_level():
    pod = _pod(_c(requests={"cpu": 100}), resources=PodResources(requests={"cpu": 900}))
    assert pod_requests(pod, settings=DEFAULT_SETTINGS) == {"cpu": 900}
    assert pod_requests(pod, settings=GATE_OFF) == {"cpu": 100}


def test_pod_requests_skip_container_level():
    pod = _pod(
        _c(requests={"cpu": 100, "memory": 3}), resources=PodResources(requests={"cpu": 900})
    )
    assert pod_requests(
        pod, skip_container_level=True, exclude_overhead=True, settings=DEFAULT_SETTINGS
    ) == {"cpu": 900}


LIMIT_CASES = [
    pytest.param(
        _pod(_c(limits={"cpu": 100}), overhead={"cpu": 5, "memory": 7}),
        {"cpu": 105},
        id="overhead only on existing limits",
    ),
    pytest.param(
        _pod(_c(limits={"cpu": 0}), overhead={"cpu": 5}),
        {"cpu": 0},
        id="overhead not added to a zero limit",
    ),
    pytest.param(
        _pod(
            _c(limits={"cpu": 100, "memory": 10}),
            resources=PodResources(requests={"cpu": 1}, limits={"memory": 99}),
        ),
        {"cpu": 100, "memory": 99},
        id="pod-level limits replace supported names",
    ),
    pytest.param(
        _pod(_c(limits={"cpu": 100}), resources=PodResources(limits={"ephemeral-storage": 9})),
        {"cpu": 100},
        id="unsupported pod-level limits ignored",
    ),
]


@pytest.mark.parametrize(("pod", "expected"), LIMIT_CASES)
def test_pod_limits(pod, expected):
    assert pod_limits(pod, settings=DEFAULT_SETTINGS) == expected


NON_ZERO_CASES = [
    pytest.param(_pod(), {}, id="no containers: no defaults"),
    pytest.param(
        _pod(_c()),
        {"cpu": DEFAULT_CPU_REQUEST_MILLI, "memory": DEFAULT_MEMORY_REQUEST_BYTES},
        id="empty container gets both defaults",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 0})),
        {"cpu": 0, "memory": 200 * MI},
        id="explicit zero cpu is kept",
    ),
    pytest.param(
        _pod(_c(requests={"memory": 1}), _c("d", {"cpu": 1})),
        {"cpu": 101, "memory": 200 * MI + 1},
        id="defaults per container",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 300, "memory": 1}), init=[_c("i")]),
        {"cpu": 300, "memory": 200 * MI},
        id="init container defaults take part in the max",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 300, "memory": 1}), init=[_c("s", sidecar=True)]),
        {"cpu": 400, "memory": 200 * MI + 1},
        id="sidecar defaults are added",
    ),
    pytest.param(
        _pod(_c(), overhead={"cpu": 10}),
        {"cpu": 110, "memory": 200 * MI},
        id="overhead added",
    ),
]


@pytest.mark.parametrize(("pod", "expected"), NON_ZERO_CASES)
def test_pod_requests_non_zero(pod, expected):
    assert pod_requests_non_zero(pod, settings=DEFAULT_SETTINGS) == expected


GETTER_CASES = [
    pytest.param(_pod(), "pods", 1, id="pods is one"),
    pytest.param(_pod(_c(requests={"pods": 5})), "pods", 1, id="pods is one even if requested"),
    pytest.param(
        _pod(_c(requests={"cpu": 10}), overhead={"cpu": 5}),
        "cpu",
        15,
        id="overhead added to non-zero",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 10}), overhead={"memory": 5}),
        "memory",
        0,
        id="overhead not added to zero",
    ),
    pytest.param(
        _pod(_c(requests={"cpu": 10}), init=[_c("s", {"cpu": 5}, sidecar=True)]),
        "cpu",
        15,
        id="sidecar-aware aggregation",
    ),
    pytest.param(
        _pod(
            _c(requests={"cpu": 10, "ephemeral-storage": 4}),
            resources=PodResources(requests={"cpu": 50}),
        ),
        "ephemeral-storage",
        0,
        id="pod-level set: names absent at pod level count 0",
    ),
    pytest.param(
        _pod(
            _c(requests={"cpu": 10}),
            resources=PodResources(requests={"cpu": 50}),
            overhead={"cpu": 1},
        ),
        "cpu",
        51,
        id="pod-level set: pod-level value plus overhead",
    ),
]


@pytest.mark.parametrize(("pod", "name", "expected"), GETTER_CASES)
def test_resource_request(pod, name, expected):
    assert resource_request(pod, name, settings=DEFAULT_SETTINGS) == expected


NAME_CASES = [
    ("example.com/gpu", True, True),
    ("nvidia.com/gpu", True, True),
    ("hugepages-2Mi", False, True),
    ("kubernetes.io/foo", False, True),
    ("sub.kubernetes.io/foo", False, True),
    ("attachable-volumes-csi-x", False, True),
    ("cpu", False, False),
    ("storage", False, False),
    ("requests.example.com/x", False, False),
    ("example.com/-bad", False, False),
]


@pytest.mark.parametrize(("name", "extended", "scalar"), NAME_CASES, ids=[c[0] for c in NAME_CASES])
def test_resource_name_classes(name, extended, scalar):
    assert is_extended_resource_name(name) is extended
    assert is_scalar_resource_name(name) is scalar


def test_a_pod_total_is_the_int64_view_of_the_exact_sum():
    # Quantity.Add keeps int64Amount{2, 18} (int64Amount.Add); MilliValue is then
    # AsScaledInt64 -> positiveScaleInt64(2, 21), whose loop returns 0 on overflow (v1.35).
    assert pod_requests(parsed_pod("1E18", "1E18"), settings=DEFAULT_SETTINGS)["cpu"] == 0
    assert (
        pod_limits(parsed_pod("1E18", "1E18", limits=True), settings=DEFAULT_SETTINGS)["cpu"] == 0
    )
    # Two inf.Decs (19 digits) add to Dec{2 * MaxInt64 * 10**6, 9}; scaledValue divides by
    # 10**6 exactly and big.Int.Int64() keeps the low 64 bits: -2.
    assert pod_requests(parsed_pod(MAX_MILLI, MAX_MILLI), settings=DEFAULT_SETTINGS)["cpu"] == -2
    # Each fits but the sum does not: int64Amount.Add of {9223372036854775, 0} twice fits
    # ({18446744073709550, 0}); MilliValue's int64MultiplyScale1000 wraps the product.
    assert pod_requests(
        parsed_pod("9223372036854775", "9223372036854775"), settings=DEFAULT_SETTINGS
    )["cpu"] == wrap_int64(18446744073709550000)
    # 0.5m + 0.5m is 1m exactly; rounding each container up first would say 2m.
    assert pod_requests(parsed_pod("500u", "500u"), settings=DEFAULT_SETTINGS)["cpu"] == 1
    assert pod_requests(parsed_pod("500u"), settings=DEFAULT_SETTINGS)["cpu"] == 1
    # {1000, -6} + {1, 18}: aligning 1E18 to scale -6 overflows, so Add makes an inf.Dec at
    # scale 6 (the larger Dec scale); scaledValue divides by 1000 rounding up (10**21 + 1)
    # and keeps the low 64 bits.
    reqs, nz_cpu, _ = scheduler_pod_requests(
        parsed_pod("500u", "500u", "1E18"), settings=DEFAULT_SETTINGS
    )
    assert reqs["cpu"] == nz_cpu == wrap_int64(10**21 + 1)


def test_non_zero_requests_sum_exact_quantities():
    """The scorers' pod request (resource_allocation.go calculatePodResourceRequest:
    PodRequests with NonMissingContainerRequests, then MilliValue) adds the containers'
    Quantities exactly: two of 500u cpu are 1 millicore; memory gets 200Mi per container."""
    from service.engine.resources import pod_requests_non_zero
    from service.engine.scheduler.plugins.noderesources.resource_allocation import (
        ResourceAllocationScorer,
    )

    p = parsed_pod("500u", "500u")
    assert pod_requests_non_zero(p, settings=DEFAULT_SETTINGS) == {
        "cpu": 1,
        "memory": 2 * 200 * 1024**2,
    }
    reqs, nz_cpu, nz_mem = scheduler_pod_requests(p, settings=DEFAULT_SETTINGS)
    assert (reqs["cpu"], nz_cpu, nz_mem) == (1, 1, 2 * 200 * 1024**2)
    prepared = ResourceAllocationScorer().prepare(p, settings=DEFAULT_SETTINGS)
    assert prepared.pairs({"cpu": 4000, "memory": 2**30}, {}, 0, 0)[0] == [1, 400 * 1024**2]


def test_scalar_resource_names() -> None:
    assert is_scalar_resource_name("example.com/gpu")
    assert is_scalar_resource_name("hugepages-1Gi")
    assert is_scalar_resource_name("kubernetes.io/something")
    assert is_scalar_resource_name("attachable-volumes-aws-ebs")
    assert not is_scalar_resource_name("cpu")
    assert not is_scalar_resource_name("pods")
    assert not is_scalar_resource_name("requests.example.com/x")
