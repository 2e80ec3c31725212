"""Critical pod admission handler (service.engine.kubelet.preemption): every case of the
kubelet.getPodsToPreempt, CriticalPodAdmissionHandler.HandleAdmissionFailure and
InsufficientResourceError.GetInsufficientAmount conformance groups, plus the reasons a pod
is not preemptable and the tie-break / swap-remove order. The distance, subtract and
smallerResourceRequest groups check the differential oracle (tests/engine/kubelet/
helpers.py, checked in test_preemption_differential.py), which the engine is held to."""

from __future__ import annotations

import msgspec
import pytest

from service.engine.kubelet.admission import InsufficientResource, PredicateFailure
from service.engine.kubelet.preemption import (
    PreemptionError,
    get_pods_to_preempt,
    handle_admission_failure,
    requirements_to_string,
)
from service.engine.objects import ContainerResize, Pod, PodResize
from service.engine.version import DEFAULT_SETTINGS, settings_for
from tests.engine.kubelet.helpers import conformance_cases, k8s_pod, request_pod

MI = 1024 * 1024


def _reqs(items: list[dict]) -> list[tuple[str, int]]:
    return [(r["resourceName"], r["quantity"]) for r in items]


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("kubelet.getPodsToPreempt"))
def test_conformance_get_pods_to_preempt(inp, expected):
    preemptor = k8s_pod(inp["preemptor"])
    pods = [k8s_pod(p) for p in inp["pods"]]
    requirements = _reqs(inp["insufficientResources"])
    if expected["error"]:
        with pytest.raises(PreemptionError) as err:
            get_pods_to_preempt(preemptor, pods, requirements, settings=DEFAULT_SETTINGS)
        assert expected["messageContains"] in str(err.value)
        return
    got = get_pods_to_preempt(preemptor, pods, requirements, settings=DEFAULT_SETTINGS)
    assert [p.name for p in got] == expected["podsToPreempt"]


def _reason(r: dict):
    if r["type"] == "InsufficientResource":
        return InsufficientResource(r["resourceName"], r["requested"], r["used"], r["capacity"])
    return PredicateFailure(r["predicateName"], r["predicateDesc"])


@pytest.mark.parametrize(
    ("inp", "expected"),
    conformance_cases("kubelet.CriticalPodAdmissionHandler.HandleAdmissionFailure"),
)
def test_conformance_handle_admission_failure(inp, expected):
    admit_pod = k8s_pod(inp["admitPod"])
    running = [k8s_pod(p) for p in inp["runningPods"]]
    reasons = [_reason(r) for r in inp["failureReasons"]]
    outcome = handle_admission_failure(admit_pod, reasons, running, settings=DEFAULT_SETTINGS)
    assert (outcome.error is not None) is expected["error"]
    if expected["error"]:
        assert expected["messageContains"] in outcome.error_message
    assert [p.name for p in outcome.victims] == expected["preemptedPods"]
    assert [r.reason for r in outcome.reasons] == expected["remainingReasons"]


@pytest.mark.parametrize(
    ("inp", "expected"),
    conformance_cases("kubelet.InsufficientResourceError.GetInsufficientAmount"),
)
def test_conformance_insufficient_amount(inp, expected):
    reason = InsufficientResource(
        inp["resourceName"], inp["requested"], inp["used"], inp["capacity"]
    )
    assert reason.insufficient_amount == expected["amount"]


# --- own cases ------------------------------------------------------------------------------


CRITICAL = request_pod("critical", priority=2_000_000_000)


NOT_PREEMPTABLE = [
    pytest.param(
        request_pod("pre", priority=10), request_pod("v", 100, priority=10), id="equal priority"
    ),
    pytest.param(
        request_pod("pre", priority=10),
        request_pod("v", 100, priority=None),
        id="victim priority null",
    ),
    pytest.param(
        request_pod("pre", priority=None),
        request_pod("v", 100, priority=1),
        id="preemptor priority null",
    ),
    pytest.param(
        CRITICAL, request_pod("v", 100, priority=2_000_000_000), id="victim critical by priority"
    ),
    pytest.param(
        CRITICAL,
        request_pod("v", 100, annotations={"kubernetes.io/config.mirror": "x"}),
        id="victim critical as a mirror pod",
    ),
    pytest.param(
        request_pod("pre", priority=5),
        request_pod("v", 100, priority=9),
        id="victim of higher priority",
    ),
]


@pytest.mark.parametrize(("preemptor", "victim"), NOT_PREEMPTABLE)
def test_not_preemptable_pods_are_never_chosen(preemptor, victim):
    with pytest.raises(PreemptionError) as err:
        get_pods_to_preempt(preemptor, [victim], [("cpu", 50)], settings=DEFAULT_SETTINGS)
    assert str(err.value) == (
        "no set of running pods found to reclaim resources: [(res: cpu, q: 50), ]"
    )


def test_non_critical_preemptor_with_higher_priority_can_preempt():
    # getPodsToPreempt itself only asks Preemptable; HandleAdmissionFailure gates on critical.
    got = get_pods_to_preempt(
        request_pod("pre", priority=10),
        [request_pod("v", 100, priority=5)],
        [("cpu", 50)],
        settings=DEFAULT_SETTINGS,
    )
    assert [p.name for p in got] == ["v"]


def test_non_critical_admit_pod_keeps_its_reasons():
    reasons = [InsufficientResource("cpu", 100, 900, 950)]
    outcome = handle_admission_failure(
        request_pod("pre", priority=10),
        reasons,
        [request_pod("v", 500, priority=1)],
        settings=DEFAULT_SETTINGS,
    )
    assert outcome.reasons == reasons
    assert outcome.victims == []
    assert outcome.error is None


def test_error_message_lists_remaining_requirements():
    outcome = handle_admission_failure(
        CRITICAL,
        [
            InsufficientResource("memory", 2 * MI, 9 * MI, 10 * MI),
            InsufficientResource("pods", 1, 3, 3),
        ],
        [request_pod("v", memory=MI // 2)],
        settings=DEFAULT_SETTINGS,
    )
    assert outcome.requirements == [("memory", MI), ("pods", 1)]
    assert outcome.victims == []
    assert outcome.reasons == []
    assert outcome.error_message == (
        "preemption: error finding a set of pods to preempt: no set of running pods found to "
        "reclaim resources: [(res: memory, q: 524288), ]"
    )


def test_critical_pod_with_only_resource_reasons_gets_victims():
    outcome = handle_admission_failure(
        CRITICAL,
        [
            InsufficientResource("memory", 2 * MI, 9 * MI, 10 * MI),
            InsufficientResource("pods", 1, 3, 3),
        ],
        [request_pod("v", memory=MI)],
        settings=DEFAULT_SETTINGS,
    )
    assert [p.name for p in outcome.victims] == ["v"]
    assert outcome.reasons == []
    assert outcome.error is None


def test_requirements_to_string():
    assert requirements_to_string([("memory", 1048576), ("pods", 1)]) == (
        "[(res: memory, q: 1048576), (res: pods, q: 1), ]"
    )
    assert requirements_to_string([]) == "[]"


def test_last_equal_candidate_wins():
    a, b, c = request_pod("a", 100, MI), request_pod("b", 100, MI), request_pod("c", 100, MI)
    assert [
        p.name
        for p in get_pods_to_preempt(CRITICAL, [a, b, c], [("cpu", 100)], settings=DEFAULT_SETTINGS)
    ] == ["c"]


def test_swap_remove_changes_scan_order():
    # Round 1 picks "a" (memory covered best); the last candidate "d" moves into slot 0, so
    # among the equal "b", "c", "d" the last scanned in the new order [d, b, c] is "c".
    a = request_pod("a", 1, 10 * MI)
    b, c, d = request_pod("b", 100, 0), request_pod("c", 100, 0), request_pod("d", 100, 0)
    got = get_pods_to_preempt(
        CRITICAL, [a, b, c, d], [("memory", 10 * MI), ("cpu", 101)], settings=DEFAULT_SETTINGS
    )
    assert [p.name for p in got] == ["a", "c"]


def test_smaller_request_breaks_distance_ties():
    big = request_pod("big", 200, 2 * MI)
    small = request_pod("small", 200, MI)
    assert [
        p.name
        for p in get_pods_to_preempt(
            CRITICAL, [small, big], [("cpu", 100)], settings=DEFAULT_SETTINGS
        )
    ] == ["small"]


def test_kill_order_is_best_effort_then_burstable_then_guaranteed():
    g = request_pod("g", 300, 300 * MI, guaranteed=True)
    bu = request_pod("bu", 300, 300 * MI)
    be = request_pod("be")
    got = get_pods_to_preempt(
        CRITICAL, [g, bu, be], [("cpu", 500), ("pods", 3)], settings=DEFAULT_SETTINGS
    )
    assert [p.name for p in got] == ["be", "bu", "g"]


def test_guaranteed_spared_when_others_suffice():
    g = request_pod("g", 300, 300 * MI, guaranteed=True)
    bu = request_pod("bu", 300, 300 * MI)
    got = get_pods_to_preempt(CRITICAL, [g, bu], [("cpu", 200)], settings=DEFAULT_SETTINGS)
    assert [p.name for p in got] == ["bu"]


MAX_INT64 = 2**63 - 1


def test_insufficient_amount_wraps_as_int64():
    """HandleAdmissionFailure takes InsufficientResourceError.GetInsufficientAmount, int64
    ``requested - (capacity - used)``: 2^63-1 requested on a node of capacity 0 already using
    5 is 2^63+4 exactly, which wraps to -2^63+4 in Go. A requirement at or below 0 is dropped
    by admissionRequirementList.subtract like any met one, so the critical pod is admitted
    without a victim, where the exact amount would find no set of pods to free it."""
    outcome = handle_admission_failure(
        CRITICAL,
        [InsufficientResource("memory", MAX_INT64, 5, 0)],
        [request_pod("v", memory=MI)],
        settings=DEFAULT_SETTINGS,
    )
    assert outcome.requirements == [("memory", -(2**63) + 4)]
    assert outcome.victims == [] and outcome.error is None and outcome.reasons == []
    # An amount int64 holds is the same either way (the wraps inside cancel out).
    outcome = handle_admission_failure(
        CRITICAL,
        [InsufficientResource("cpu", 5, -2, MAX_INT64)],
        [request_pod("v", 100)],
        settings=DEFAULT_SETTINGS,
    )
    assert outcome.requirements == [("cpu", -(2**63) + 4)]


def _resized(name: str, spec_cpu: int, allocated_cpu: int) -> Pod:
    """A burstable one-container pod whose spec asks ``spec_cpu`` millicores while the
    kubelet allocated (and runs) ``allocated_cpu``."""
    pod = request_pod(name, cpu=spec_cpu)
    status = ContainerResize(actuated={"cpu": allocated_cpu}, allocated={"cpu": allocated_cpu})
    return msgspec.structs.replace(pod, resize=PodResize(containers={"c": status}))


@pytest.mark.parametrize(
    ("release", "victims"),
    [("1.32", ["upsized"]), ("1.33", ["downsized"]), ("1.37", ["downsized"])],
)
def test_victims_are_chosen_by_what_the_kubelet_allocated(release, victims):
    """getPodsToPreempt (pkg/kubelet/preemption, v1.35) reads ``GetResourceRequest`` of the
    admit attributes' other pods, which from v1.33 are the allocation manager's
    (``getAllocatedPods`` / ``UpdatePodFromAllocation``, KEP-1287): a pod upsized to 2 cpu
    in its spec but still allocated 500m frees 500m, a pod downsized to 500m but still
    allocated 2 cpu frees 2 cpu. 1.5 cpu to free: from v1.33 the downsized pod alone
    suffices (distance 0); v1.32 reads the specs, where the upsized one does."""
    pods = [_resized("upsized", 2000, 500), _resized("downsized", 500, 2000)]
    outcome = handle_admission_failure(
        CRITICAL,
        [InsufficientResource("cpu", 1500, 4000, 4000)],
        pods,
        settings=settings_for(release),
    )
    assert [p.name for p in outcome.victims] == victims
