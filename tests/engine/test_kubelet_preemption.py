"""Critical pod admission handler (service.engine.kubelet.preemption): every case of the
kubelet.getPodsToPreempt, admissionRequirementList.distance/.subtract,
smallerResourceRequest, CriticalPodAdmissionHandler.HandleAdmissionFailure and
InsufficientResourceError.GetInsufficientAmount conformance groups, plus the reasons a pod
is not preemptable and the tie-break / swap-remove order."""

from __future__ import annotations

import pytest

from service.engine.kubelet.admission import InsufficientResource, PredicateFailure
from service.engine.kubelet.preemption import (
    PreemptionError,
    distance,
    get_pods_to_preempt,
    handle_admission_failure,
    requirements_to_string,
    smaller_resource_request,
    subtract,
)
from service.engine.objects import Container, Pod
from tests.engine.kubelet_cases import conformance_cases, k8s_pod

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
            get_pods_to_preempt(preemptor, pods, requirements)
        assert expected["messageContains"] in str(err.value)
        return
    got = get_pods_to_preempt(preemptor, pods, requirements)
    assert [p.name for p in got] == expected["podsToPreempt"]


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("kubelet.admissionRequirementList.distance")
)
def test_conformance_distance(inp, expected):
    assert distance(_reqs(inp["requirements"]), k8s_pod(inp["pod"])) == expected["distance"]


@pytest.mark.parametrize(
    ("inp", "expected"), conformance_cases("kubelet.admissionRequirementList.subtract")
)
def test_conformance_subtract(inp, expected):
    got = subtract(_reqs(inp["requirements"]), [k8s_pod(inp["pod"])])
    assert sorted(got) == sorted(_reqs(expected["remaining"]))


@pytest.mark.parametrize(("inp", "expected"), conformance_cases("kubelet.smallerResourceRequest"))
def test_conformance_smaller_resource_request(inp, expected):
    got = smaller_resource_request(k8s_pod(inp["pod1"]), k8s_pod(inp["pod2"]))
    assert got is expected["result"]


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
    outcome = handle_admission_failure(admit_pod, reasons, running)
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


def _pod(name, cpu=0, memory=0, *, priority=None, guaranteed=False, annotations=None) -> Pod:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    return Pod(
        namespace="ns",
        name=name,
        priority=priority,
        annotations=annotations or {},
        containers=(Container(name="c", requests=requests, limits=requests if guaranteed else {}),),
    )


CRITICAL = _pod("critical", priority=2_000_000_000)


NOT_PREEMPTABLE = [
    pytest.param(_pod("pre", priority=10), _pod("v", 100, priority=10), id="equal priority"),
    pytest.param(
        _pod("pre", priority=10), _pod("v", 100, priority=None), id="victim priority null"
    ),
    pytest.param(
        _pod("pre", priority=None), _pod("v", 100, priority=1), id="preemptor priority null"
    ),
    pytest.param(
        CRITICAL, _pod("v", 100, priority=2_000_000_000), id="victim critical by priority"
    ),
    pytest.param(
        CRITICAL,
        _pod("v", 100, annotations={"kubernetes.io/config.mirror": "x"}),
        id="victim critical as a mirror pod",
    ),
    pytest.param(
        _pod("pre", priority=5), _pod("v", 100, priority=9), id="victim of higher priority"
    ),
]


@pytest.mark.parametrize(("preemptor", "victim"), NOT_PREEMPTABLE)
def test_not_preemptable_pods_are_never_chosen(preemptor, victim):
    with pytest.raises(PreemptionError) as err:
        get_pods_to_preempt(preemptor, [victim], [("cpu", 50)])
    assert str(err.value) == (
        "no set of running pods found to reclaim resources: [(res: cpu, q: 50), ]"
    )


def test_non_critical_preemptor_with_higher_priority_can_preempt():
    # getPodsToPreempt itself only asks Preemptable; HandleAdmissionFailure gates on critical.
    got = get_pods_to_preempt(_pod("pre", priority=10), [_pod("v", 100, priority=5)], [("cpu", 50)])
    assert [p.name for p in got] == ["v"]


def test_non_critical_admit_pod_keeps_its_reasons():
    reasons = [InsufficientResource("cpu", 100, 900, 950)]
    outcome = handle_admission_failure(
        _pod("pre", priority=10), reasons, [_pod("v", 500, priority=1)]
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
        [_pod("v", memory=MI // 2)],
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
        [_pod("v", memory=MI)],
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
    a, b, c = _pod("a", 100, MI), _pod("b", 100, MI), _pod("c", 100, MI)
    assert [p.name for p in get_pods_to_preempt(CRITICAL, [a, b, c], [("cpu", 100)])] == ["c"]


def test_swap_remove_changes_scan_order():
    # Round 1 picks "a" (memory covered best); the last candidate "d" moves into slot 0, so
    # among the equal "b", "c", "d" the last scanned in the new order [d, b, c] is "c".
    a = _pod("a", 1, 10 * MI)
    b, c, d = _pod("b", 100, 0), _pod("c", 100, 0), _pod("d", 100, 0)
    got = get_pods_to_preempt(CRITICAL, [a, b, c, d], [("memory", 10 * MI), ("cpu", 101)])
    assert [p.name for p in got] == ["a", "c"]


def test_smaller_request_breaks_distance_ties():
    big = _pod("big", 200, 2 * MI)
    small = _pod("small", 200, MI)
    assert [p.name for p in get_pods_to_preempt(CRITICAL, [small, big], [("cpu", 100)])] == [
        "small"
    ]


def test_kill_order_is_best_effort_then_burstable_then_guaranteed():
    g = _pod("g", 300, 300 * MI, guaranteed=True)
    bu = _pod("bu", 300, 300 * MI)
    be = _pod("be")
    got = get_pods_to_preempt(CRITICAL, [g, bu, be], [("cpu", 500), ("pods", 3)])
    assert [p.name for p in got] == ["be", "bu", "g"]


def test_guaranteed_spared_when_others_suffice():
    g = _pod("g", 300, 300 * MI, guaranteed=True)
    bu = _pod("bu", 300, 300 * MI)
    got = get_pods_to_preempt(CRITICAL, [g, bu], [("cpu", 200)])
    assert [p.name for p in got] == ["bu"]


def _reference_by_distance(candidates, requirements):
    """The upstream scan, written with the public helpers (slow, obviously faithful)."""
    candidates = list(candidates)
    chosen = []
    while requirements:
        if not candidates:
            raise PreemptionError(requirements)
        best_distance = float(len(requirements) + 1)
        best = 0
        for i, pod in enumerate(candidates):
            dist = distance(requirements, pod)
            if dist < best_distance or (
                dist == best_distance and smaller_resource_request(pod, candidates[best])
            ):
                best_distance, best = dist, i
        requirements = subtract(requirements, [candidates[best]])
        chosen.append(candidates[best])
        candidates[best] = candidates[-1]
        candidates.pop()
    return chosen


def _reference_get_pods_to_preempt(preemptor, pods, requirements):
    from service.engine.qos import get_pod_qos, preemptable

    groups = {"BestEffort": [], "Burstable": [], "Guaranteed": []}
    for pod in pods:
        if preemptable(preemptor, pod):
            groups[get_pod_qos(pod)].append(pod)
    be, bu, gu = groups["BestEffort"], groups["Burstable"], groups["Guaranteed"]
    if subtract(requirements, be + bu + gu):
        raise PreemptionError(subtract(requirements, be + bu + gu))
    g = _reference_by_distance(gu, subtract(requirements, be + bu))
    b = _reference_by_distance(bu, subtract(requirements, be + g))
    e = _reference_by_distance(be, subtract(requirements, b + g))
    return e + b + g


@pytest.mark.parametrize("seed", range(40))
def test_matches_the_upstream_scan_on_random_nodes(seed):
    import random

    rng = random.Random(seed)
    pods = []
    for i in range(rng.randint(0, 40)):
        cpu = rng.choice([0, 100, 100, 250, 500, 1000])
        memory = rng.choice([0, MI, MI, 64 * MI, 256 * MI])
        pods.append(
            _pod(
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
        expected = [p.name for p in _reference_get_pods_to_preempt(CRITICAL, pods, requirements)]
    except PreemptionError as exc:
        with pytest.raises(PreemptionError) as err:
            get_pods_to_preempt(CRITICAL, pods, requirements)
        assert str(err.value) == str(exc)
        return
    assert [p.name for p in get_pods_to_preempt(CRITICAL, pods, requirements)] == expected
