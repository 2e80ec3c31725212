"""Shared helpers for the kubelet tests (and the other tests that read the kubelet's
conformance cases): conformance data, Kubernetes JSON turned into model objects through the
real ingest code (service.ingest.kube), thresholds and stats; and the oracle of the critical
pod admission handler's victim search (``oracle_pods_to_preempt``).

The conformance pods come from Kubernetes' own unit tests, which build pods WITHOUT API
defaulting; ``k8s_pod`` therefore undoes the ingest's "limit without a request gets the
request" defaulting unless ``defaulted=True``.
"""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import msgspec
import pytest

from service.engine.duration import parse_go_duration
from service.engine.kubelet.eviction_config import (
    Threshold,
    ThresholdValue,
    _f32,
)
from service.engine.objects import Container, Node, NodeStats, Pod
from service.engine.qos import BEST_EFFORT, BURSTABLE, GUARANTEED, get_pod_qos, preemptable
from service.engine.quantity import parse_quantity, to_base_units
from service.engine.resources import resource_request
from service.engine.version import DEFAULT_SETTINGS
from service.ingest import wire
from service.ingest.kube import convert_object, node_from_object, node_stats, pod_from_object

CONFORMANCE_DIR = Path(__file__).resolve().parents[2] / "conformance"
NOW = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)


@cache
def _groups(file: str) -> dict[str, list]:
    data = json.loads((CONFORMANCE_DIR / file).read_text())
    return {g["function"]: g["cases"] for g in data["groups"]}


def conformance_cases(function: str, file: str = "kubelet.json") -> list:
    """Every case of one conformance group as pytest params (input, expected), id = name."""
    group = _groups(file)[function]
    assert group, function
    return [pytest.param(c["input"], c["expected"], id=c["name"]) for c in group]


def group_names() -> list[str]:
    return list(_groups("kubelet.json"))


def base_units(resources: dict) -> dict[str, int]:
    return {name: to_base_units(name, parse_quantity(q)) for name, q in resources.items()}


def value_from_case(value: dict | None) -> ThresholdValue:
    """{quantity: "1Gi"} | {percentage: 0.1} | {quantity: null, percentage: 0} | null."""
    if value is None:
        return ThresholdValue()
    if value.get("quantity") is not None:
        return ThresholdValue(quantity=parse_quantity(value["quantity"]))
    return ThresholdValue(percentage=_f32(float(value.get("percentage") or 0)))


def threshold_from_case(case: dict) -> Threshold:
    min_reclaim = case.get("minReclaim")
    return Threshold(
        signal=case["signal"],
        operator=case.get("operator") or "LessThan",
        value=value_from_case(case.get("value")),
        grace_period=parse_go_duration(case.get("gracePeriod") or "0s"),
        min_reclaim=value_from_case(min_reclaim) if min_reclaim is not None else None,
    )


def threshold_view(t: Threshold) -> tuple:
    """A hashable, comparable description of a threshold (for set comparisons)."""

    def value(v: ThresholdValue | None):
        if v is None:
            return None
        if v.quantity is not None:
            return ("q", v.quantity.value)
        return ("p", v.percentage)

    return (t.signal, t.operator, value(t.value), t.grace_period, value(t.min_reclaim))


def summary_to_stats(summary: dict, node_name: str = "node-1") -> NodeStats:
    """A kubelet Summary API object → the model NodeStats (through the ingest edge)."""
    return node_stats(node_name, convert_object(summary, wire.Summary, "summary"))


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)


def _named(obj: dict) -> dict:
    obj = copy.deepcopy(obj)
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        meta["name"] = meta.get("generateName") or "pod"
    spec = obj.setdefault("spec", {})
    for key in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(key) or ()):
            c.setdefault("name", f"{key}-{i}")
    return obj


def _raw_keys(resources: dict | None, part: str) -> set[str]:
    return set(((resources or {}).get(part)) or {})


def k8s_pod(obj: dict, *, defaulted: bool = False) -> Pod:
    """A Pod from Kubernetes JSON (missing names filled in)."""
    obj = _named(obj)
    pod = pod_from_object(obj)
    if defaulted:
        return pod
    spec = obj["spec"]

    def undo(containers, raws):
        out = []
        for c, raw in zip(containers, raws or (), strict=True):
            keep = _raw_keys(raw.get("resources"), "requests")
            out.append(
                msgspec.structs.replace(
                    c, requests={k: v for k, v in c.requests.items() if k in keep}
                )
            )
        return tuple(out)

    changes = {
        "containers": undo(pod.containers, spec.get("containers")),
        "init_containers": undo(pod.init_containers, spec.get("initContainers")),
    }
    if pod.resources is not None:
        keep = _raw_keys(spec.get("resources"), "requests")
        changes["resources"] = msgspec.structs.replace(
            pod.resources,
            requests={k: v for k, v in pod.resources.requests.items() if k in keep},
        )
    return msgspec.structs.replace(pod, **changes)


def k8s_node(obj: dict) -> Node:
    return node_from_object(_named(obj))


def request_pod(name, cpu=0, memory=0, *, priority=None, guaranteed=False, annotations=None) -> Pod:
    """A one-container pod requesting ``cpu`` (millicores) and ``memory`` (bytes); zero
    amounts are left out; ``guaranteed`` sets the limits to the requests."""
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v}
    return Pod(
        namespace="ns",
        name=name,
        priority=priority,
        annotations=annotations or {},
        containers=(Container(name="c", requests=requests, limits=requests if guaranteed else {}),),
    )


# --- the kubelet's victim search as upstream writes it (the differential oracle) -----------


class OracleError(Exception):
    def __init__(self, remaining: list[tuple[str, int]]) -> None:
        self.remaining = remaining
        super().__init__(
            "no set of running pods found to reclaim resources: ["
            + "".join(f"(res: {name}, q: {q}), " for name, q in remaining)
            + "]"
        )


def newest_request(pod, name):
    """resource_request under the newest release, the oracles' default reading."""
    return resource_request(pod, name, settings=DEFAULT_SETTINGS)


def oracle_distance(requirements, pod, request=newest_request):
    """admissionRequirementList.distance; math.Pow(x, 2) rounds once, like x * x."""
    total = 0.0
    for name, q in requirements:
        remaining = float(q - request(pod, name))
        if remaining > 0:
            fraction = remaining / float(q)
            total += fraction * fraction
    return total


def oracle_subtract(requirements, victims, request=newest_request):
    """admissionRequirementList.subtract."""
    left_over = []
    for name, q in requirements:
        amount = q
        for pod in victims:
            amount -= request(pod, name)
            if amount <= 0:
                break
        if amount > 0:
            left_over.append((name, amount))
    return left_over


def oracle_smaller_resource_request(pod1, pod2, request=newest_request):
    """smallerResourceRequest."""
    for name in ("memory", "cpu"):
        if request(pod1, name) < request(pod2, name):
            return True
        if request(pod1, name) > request(pod2, name):
            return False
    return True


def oracle_pods_to_preempt(preemptor, pods, requirements, settings=DEFAULT_SETTINGS):
    """getPodsToPreempt with its helpers, as plainly as possible. The only liberty: a pod's
    request for a resource (GetResourceRequest) is remembered once asked, which changes
    nothing since pods do not change."""
    remembered: dict[tuple[int, str], int] = {}

    def request(pod, name):
        key = (id(pod), name)
        if key not in remembered:
            remembered[key] = resource_request(pod, name, settings=settings)
        return remembered[key]

    def subtract(reqs, victims):
        return oracle_subtract(reqs, victims, request)

    def by_distance(candidates, reqs):
        # getPodsToPreemptByDistance
        candidates = list(candidates)
        chosen = []
        while reqs:
            if not candidates:
                raise OracleError(reqs)
            best_distance = float(len(reqs) + 1)
            best_index = 0
            for i, pod in enumerate(candidates):
                dist = oracle_distance(reqs, pod, request)
                if dist < best_distance or (
                    dist == best_distance
                    and oracle_smaller_resource_request(pod, candidates[best_index], request)
                ):
                    best_distance = dist
                    best_index = i
            reqs = subtract(reqs, [candidates[best_index]])
            chosen.append(candidates[best_index])
            candidates[best_index] = candidates[-1]
            candidates.pop()
        return chosen

    # sortPodsByQOS
    best_effort, burstable, guaranteed = [], [], []
    for pod in pods:
        if preemptable(preemptor, pod):
            qos = get_pod_qos(pod, settings=settings)
            if qos == BEST_EFFORT:
                best_effort.append(pod)
            elif qos == BURSTABLE:
                burstable.append(pod)
            elif qos == GUARANTEED:
                guaranteed.append(pod)

    requirements = list(requirements)
    unmet = subtract(requirements, best_effort + burstable + guaranteed)
    if unmet:
        raise OracleError(unmet)
    guaranteed_out = by_distance(guaranteed, subtract(requirements, best_effort + burstable))
    burstable_out = by_distance(burstable, subtract(requirements, best_effort + guaranteed_out))
    best_effort_out = by_distance(
        best_effort, subtract(requirements, burstable_out + guaranteed_out)
    )
    return best_effort_out + burstable_out + guaranteed_out
