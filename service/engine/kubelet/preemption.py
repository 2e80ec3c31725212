"""The kubelet's critical pod admission handler: which pods it kills so that a critical pod
that failed admission only for lack of resources can run (spec/kubelet.md D.3).

Mirrors pkg/kubelet/preemption/preemption.go as merged up to k8s 1.35 (the open PR #135866,
which regroups victims by priority, is not modelled).

Requirements are ``(resource name, int amount)`` pairs in base units (millicores for cpu,
``pods`` as a count), in the order of the admission failure reasons. A pod's request for a
resource is the kubelet getter ``resource_request`` (pkg/api/v1/resource GetResourceRequest):
``pods`` is 1, overhead counts only when the request is non-zero. Those values are
computed once per pod per call, not once per comparison.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence

from service.engine.objects import Pod
from service.engine.qos import (
    BEST_EFFORT,
    BURSTABLE,
    GUARANTEED,
    get_pod_qos,
    is_critical_pod,
    preemptable,
)
from service.engine.resources import kubelet_resource_requests, resource_request
from service.engine.version import DEFAULT_SETTINGS, EngineSettings

__all__ = [
    "PREEMPTION_MESSAGE",
    "PREEMPTION_REASON",
    "AdmissionFailureOutcome",
    "PreemptionError",
    "Requirement",
    "distance",
    "get_pods_to_preempt",
    "handle_admission_failure",
    "requirements_to_string",
    "smaller_resource_request",
    "subtract",
]

Requirement = tuple[str, int]

# What a preempted pod's status says (events.PreemptContainer, preemption.message).
PREEMPTION_REASON = "Preempting"
PREEMPTION_MESSAGE = "Preempted in order to admit critical pod"

RequestOf = Callable[[Pod, str], int]


class PreemptionError(Exception):
    """No set of pods frees the requirements. ``remaining`` are the requirements left over,
    ``str(error)`` the kubelet's text ("no set of running pods found to reclaim resources:
    [(res: memory, q: 1048576), ]")."""

    def __init__(self, remaining: Sequence[Requirement]) -> None:
        self.remaining = list(remaining)
        super().__init__(
            "no set of running pods found to reclaim resources: "
            + requirements_to_string(self.remaining)
        )


def requirements_to_string(requirements: Sequence[Requirement]) -> str:
    """admissionRequirementList.toString (k8s 1.35): "[(res: cpu, q: 100), ]"."""
    return "[" + "".join(f"(res: {name}, q: {q}), " for name, q in requirements) + "]"


def _request_getter(settings: EngineSettings) -> RequestOf:
    """``resource_request`` with each pod's requests computed once per computation."""
    cache: dict[int, dict[str, int]] = {}

    def request_of(pod: Pod, name: str) -> int:
        requests = cache.get(id(pod))
        if requests is None:
            requests = cache[id(pod)] = kubelet_resource_requests(pod, settings=settings)
        return resource_request(pod, name, requests=requests)

    return request_of


def distance(
    requirements: Sequence[Requirement],
    pod: Pod,
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
    request_of: RequestOf | None = None,
) -> float:
    """admissionRequirementList.distance (k8s 1.35): the sum over requirements the pod does
    not cover alone of ((q - request) / q)^2, in float64 and requirement order; 0 when the
    pod alone covers everything."""
    get = request_of or (lambda p, n: resource_request(p, n, settings=settings))
    dist = 0.0
    for name, q in requirements:
        remaining = float(q - get(pod, name))
        if remaining > 0:
            ratio = remaining / float(q)
            dist += ratio * ratio  # math.Pow(x, 2) is exactly x*x in Go
    return dist


def subtract(
    requirements: Sequence[Requirement],
    pods: Sequence[Pod],
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
    request_of: RequestOf | None = None,
) -> list[Requirement]:
    """admissionRequirementList.subtract (k8s 1.35): what is still needed once ``pods`` are
    gone; entries that reach <= 0 are dropped, the rest keep their order."""
    get = request_of or (lambda p, n: resource_request(p, n, settings=settings))
    remaining: list[Requirement] = []
    for name, q in requirements:
        left = q
        for pod in pods:
            left -= get(pod, name)
            if left <= 0:
                break
        if left > 0:
            remaining.append((name, left))
    return remaining


def smaller_resource_request(
    pod1: Pod,
    pod2: Pod,
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
    request_of: RequestOf | None = None,
) -> bool:
    """smallerResourceRequest (k8s 1.35): compare memory, then cpu requests; the first strict
    difference decides; a complete tie is True."""
    get = request_of or (lambda p, n: resource_request(p, n, settings=settings))
    for name in ("memory", "cpu"):
        r1 = get(pod1, name)
        r2 = get(pod2, name)
        if r1 < r2:
            return True
        if r1 > r2:
            return False
    return True


def _vector_distance(vector: tuple[int, ...], remaining: list[tuple[int, int]]) -> float:
    """``distance`` on a precomputed request vector (same float64 arithmetic and order)."""
    dist = 0.0
    for i, q in remaining:
        shortfall = float(q - vector[i])
        if shortfall > 0:
            ratio = shortfall / float(q)
            dist += ratio * ratio
    return dist


def _by_distance(
    candidates: list[Pod], requirements: list[Requirement], request_of: RequestOf
) -> list[Pod]:
    """getPodsToPreemptByDistance (k8s 1.35): repeatedly take the candidate with the
    smallest ``distance`` to what is still required, subtract it, and swap-remove it (the
    last candidate moves into its slot, which changes the scan order of the next rounds).

    Upstream scans the candidates keeping a best one, replaced by a strictly smaller
    distance, or by an equal distance when ``smaller_resource_request`` (memory, then cpu;
    a full tie counts as smaller). The outcome of that scan is the LAST candidate, in scan
    order, with the smallest (distance, memory request, cpu request); it is computed that
    way here, on request vectors computed once per candidate and distances computed once
    per distinct vector (this loop is quadratic in the pods).
    """
    names = [name for name, _ in requirements]
    pods = list(candidates)
    vectors = [tuple(request_of(pod, name) for name in names) for pod in pods]
    keys = [(request_of(pod, "memory"), request_of(pod, "cpu")) for pod in pods]
    counts = Counter(vectors)
    remaining = [(i, q) for i, (_, q) in enumerate(requirements)]
    chosen: list[Pod] = []
    while remaining:
        if not pods:
            raise PreemptionError([(names[i], q) for i, q in remaining])
        by_vector = {v: _vector_distance(v, remaining) for v in counts}
        nearest = min(by_vector.values())
        at_nearest = {v for v, d in by_vector.items() if d == nearest}
        if len(at_nearest) == len(by_vector):
            smallest = min(keys)
            best = len(keys) - 1 - keys[::-1].index(smallest)
        else:
            tied = [i for i, v in enumerate(vectors) if v in at_nearest]
            smallest = min(keys[i] for i in tied)
            best = next(i for i in reversed(tied) if keys[i] == smallest)
        vector = vectors[best]
        remaining = [(i, q - vector[i]) for i, q in remaining if q - vector[i] > 0]
        chosen.append(pods[best])
        counts[vector] -= 1
        if not counts[vector]:
            del counts[vector]
        for column in (pods, vectors, keys):
            column[best] = column[-1]
            column.pop()
    return chosen


def get_pods_to_preempt(
    preemptor: Pod,
    pods: Sequence[Pod],
    requirements: Sequence[Requirement],
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
) -> list[Pod]:
    """getPodsToPreempt (pkg/kubelet/preemption, k8s 1.35): the pods to kill, in kill order,
    so that ``requirements`` are freed; raises ``PreemptionError`` when impossible.

    Only pods ``preemptable`` by the preemptor count, split by QoS keeping input order. The
    guaranteed pods needed even if every best-effort and burstable pod went are chosen
    first, then the burstable pods needed besides best-effort and those guaranteed ones,
    then the best-effort pods needed besides the chosen burstable and guaranteed ones; each
    phase picks by ``distance`` (ties: ``smaller_resource_request``, the last of equals
    wins). Result: best-effort + burstable + guaranteed picks.
    """
    request_of = _request_getter(settings)
    best_effort: list[Pod] = []
    burstable: list[Pod] = []
    guaranteed: list[Pod] = []
    for pod in pods:
        if not preemptable(preemptor, pod):
            continue
        qos = get_pod_qos(pod, settings=settings)
        if qos == BEST_EFFORT:
            best_effort.append(pod)
        elif qos == BURSTABLE:
            burstable.append(pod)
        elif qos == GUARANTEED:
            guaranteed.append(pod)
    requirements = list(requirements)

    unmet = subtract(requirements, best_effort + burstable + guaranteed, request_of=request_of)
    if unmet:
        raise PreemptionError(unmet)
    guaranteed_picks = _by_distance(
        guaranteed,
        subtract(requirements, best_effort + burstable, request_of=request_of),
        request_of,
    )
    burstable_picks = _by_distance(
        burstable,
        subtract(requirements, best_effort + guaranteed_picks, request_of=request_of),
        request_of,
    )
    best_effort_picks = _by_distance(
        best_effort,
        subtract(requirements, burstable_picks + guaranteed_picks, request_of=request_of),
        request_of,
    )
    return best_effort_picks + burstable_picks + guaranteed_picks


class AdmissionFailureOutcome:
    """What the critical pod admission handler makes of a failed admission.

    ``reasons``: the failure reasons still standing (empty: the pod is admitted);
    ``victims``: the pods killed first, in kill order; ``requirements``: what had to be
    freed; ``error``: set when no set of pods frees enough (the pod is then rejected with
    UnexpectedAdmissionError and ``reasons`` is empty)."""

    __slots__ = ("error", "reasons", "requirements", "victims")

    def __init__(
        self,
        reasons: list,
        victims: list[Pod] | None = None,
        requirements: list[Requirement] | None = None,
        error: PreemptionError | None = None,
    ) -> None:
        self.reasons = reasons
        self.victims = victims or []
        self.requirements = requirements or []
        self.error = error

    @property
    def error_message(self) -> str | None:
        """evictPodsToFreeRequests' wrapped error text."""
        if self.error is None:
            return None
        return f"preemption: error finding a set of pods to preempt: {self.error}"


def handle_admission_failure(
    admit_pod: Pod,
    reasons: Sequence,
    active_pods: Sequence[Pod],
    *,
    settings: EngineSettings = DEFAULT_SETTINGS,
) -> AdmissionFailureOutcome:
    """CriticalPodAdmissionHandler.HandleAdmissionFailure (k8s 1.35).

    A non-critical pod keeps its reasons. A critical pod with any non-resource reason keeps
    only those (nothing is preempted). A critical pod failing only for resources gets the
    pods of ``get_pods_to_preempt`` killed, one requirement per reason (the insufficient
    amount: requested - (capacity - used)), and is admitted without a re-check of fit.
    ``reasons`` are kubelet.admission reasons (``InsufficientResource`` have
    ``insufficient_amount``).
    """
    if not is_critical_pod(admit_pod):
        return AdmissionFailureOutcome(list(reasons))
    resource_reasons = [r for r in reasons if r.is_resource]
    other_reasons = [r for r in reasons if not r.is_resource]
    if other_reasons:
        return AdmissionFailureOutcome(other_reasons)
    requirements = [(r.resource, r.insufficient_amount) for r in resource_reasons]
    try:
        victims = get_pods_to_preempt(admit_pod, active_pods, requirements, settings=settings)
    except PreemptionError as exc:
        return AdmissionFailureOutcome([], requirements=requirements, error=exc)
    return AdmissionFailureOutcome([], victims=victims, requirements=requirements)
