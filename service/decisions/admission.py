"""Decision kind "admission": would this node's kubelet admit this pod, and whom would it
preempt for it (POST /v1/decisions/admission).

Request: ``{"nodeName": str, "pod": <v1 Pod>}``. Result (the contract, openapi/openapi.yaml):
``{"admitted", "reasons", "critical", "preemption", "message"}`` plus ``kubeletReason``
(the pod status reason the kubelet would set on rejection; null when admitted).

Reason tokens (``reasons[].reason``), each with the kubelet's own reason in
``kubeletReason`` and its description in ``message``:

* ``InsufficientResource`` — a NodeResourcesFit failure, with ``resource``, ``requested``,
  ``used`` and ``capacity`` (base-unit integers: millicores, bytes, counts) and the message
  "Insufficient <resource>"; kubeletReason ``OutOfcpu``, ``OutOfmemory``,
  ``OutOfephemeral-storage``, ``OutOfpods`` or ``OutOf<resource>``.
* ``NodeAffinity`` — nodeSelector or required node affinity does not match; the kubelet
  checks both as one predicate, so ``NodeSelector`` is never returned.
* ``NodeName`` — spec.nodeName names another node.
* ``HostPort`` — a host port is already used on the node (kubeletReason ``NodePorts``).
* ``Taint`` — an untolerated NoExecute taint (kubeletReason ``TaintToleration``).
* ``OS`` — kubeletReason ``PodOSSelectorNodeLabelDoesNotMatch`` (the pod's
  kubernetes.io/os label is not linux) or ``PodOSNotSupported`` (spec.os.name is not linux).
* ``Evicted`` — the eviction manager rejects under node pressure (kubeletReason ``Evicted``,
  message "The node had condition: [DiskPressure]. ").

Non-resource reasons carry no ``resource``/``requested``/``used``/``capacity`` keys.
``reasons`` lists what the rejecting admit handler found (all general-filter failures, in
kubelet order); ``message`` is the kubelet's rejection message for the first reason that
still stands, or for a critical pod that no set of pods can make room for, the kubelet's
UnexpectedAdmissionError message (the rejected pod's status message would be "Pod was
rejected: " followed by it). A critical pod admitted after preemption keeps the
resource reasons preemption cleared, and ``preemption`` names the victims in kill order.

The node's other pods are its pods in the snapshot that are not terminal (phase Succeeded
or Failed), in snapshot order. The pod being admitted is left out of them when the snapshot
already has a pod with its namespace and name on that node: asking about a pod copied from
the snapshot (e.g. "would it be re-admitted?") must not count its own requests twice,
collide with its own host ports, or offer it as its own preemption victim; the kubelet
never counts a pod against itself.
"""

from __future__ import annotations

import threading
import weakref

from marshmallow import RAISE, Schema, ValidationError, fields, post_load

from service.decisions.base import DecisionInputError, DecisionKind, Subjects
from service.decisions.schemas import PodField
from service.engine.kubelet.admission import (
    AdmissionResult,
    AdmitRejection,
    InsufficientResource,
    PodAdmitAttributes,
    PodRequestsMemo,
    PredicateFailure,
    active_pods,
    admit,
)
from service.engine.kubelet.preemption import PREEMPTION_MESSAGE, requirements_to_string
from service.engine.objects import Cluster, Pod
from service.engine.refs import pod_ref
from service.engine.version import EngineSettings

__all__ = ["DECISION", "AdmissionRequestSchema", "decide", "subjects"]

_API_REASON = {
    "NodeAffinity": "NodeAffinity",
    "NodeName": "NodeName",
    "NodePorts": "HostPort",
    "TaintToleration": "Taint",
    "PodOSSelectorNodeLabelDoesNotMatch": "OS",
    "PodOSNotSupported": "OS",
    "Evicted": "Evicted",
}


class AdmissionRequestSchema(Schema):
    class Meta:
        unknown = RAISE

    nodeName = fields.String()
    pod = PodField(required=True)

    @post_load
    def _node_of_the_pod(self, data, **kwargs):
        """``nodeName`` defaults to the pod's ``spec.nodeName`` (API 1.1)."""
        if not data.get("nodeName"):
            if not data["pod"].node_name:
                raise ValidationError(
                    {"nodeName": ["required: the pod has no spec.nodeName to default to"]}
                )
            data["nodeName"] = data["pod"].node_name
        return data


def _reason_json(reason: InsufficientResource | PredicateFailure | AdmitRejection) -> dict:
    if isinstance(reason, InsufficientResource):
        return {
            "reason": "InsufficientResource",
            "resource": reason.resource,
            "requested": reason.requested,
            "used": reason.used,
            "capacity": reason.capacity,
            "message": reason.reason,
            "kubeletReason": reason.kubelet_reason,
        }
    kubelet_reason = reason.kubelet_reason
    return {
        "reason": _API_REASON.get(kubelet_reason, kubelet_reason),
        "message": reason.reason,
        "kubeletReason": kubelet_reason,
    }


def _message(result: AdmissionResult) -> str:
    if not result.admitted:
        return result.message
    if result.victims:
        return (
            f"Admitted after preempting {len(result.victims)} pod(s) to reclaim "
            f"{requirements_to_string(result.requirements)}"
        )
    return "Admitted: the pod passes every kubelet admission check on this node"


def result_json(result: AdmissionResult, settings: EngineSettings) -> dict:
    """The API result for an engine AdmissionResult."""
    preemption = None
    if result.victims:
        preemption = {
            "victims": [pod_ref(p, settings=settings) for p in result.victims],
            "message": PREEMPTION_MESSAGE,
        }
    return {
        "admitted": result.admitted,
        "reasons": [_reason_json(r) for r in result.reasons],
        "critical": result.critical,
        "preemption": preemption,
        "message": _message(result),
        "kubeletReason": result.kubelet_reason,
    }


def other_pods_on(cluster: Cluster, node_name: str, pod: Pod) -> list[Pod]:
    """The node's active pods minus the pod being admitted (same namespace and name)."""
    return [
        p
        for p in active_pods(cluster.pods_on(node_name))
        if p.name != pod.name or p.namespace != pod.namespace
    ]


def decide(cluster: Cluster, request: dict) -> dict:
    node_name = request["nodeName"]
    node = cluster.node(node_name)
    if node is None:
        raise DecisionInputError("nodeName", f"node {node_name!r} is not in the snapshot")
    pod: Pod = request["pod"]
    settings = request["settings"]
    memo = _requests_memo(cluster, settings)
    others = other_pods_on(cluster, node_name, pod)
    result = admit(PodAdmitAttributes(pod, node, others, settings=settings, requests_of=memo))
    return result_json(result, settings)


_MEMOS: weakref.WeakKeyDictionary[Cluster, dict[str, PodRequestsMemo]] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def _requests_memo(cluster: Cluster, settings: EngineSettings) -> PodRequestsMemo:
    """One memo per cached snapshot and release, gone with the snapshot (a replay under
    another release, or an impact over the history, sums with that release's)."""
    release = settings.kubernetes_version
    memo = _MEMOS.get(cluster, {}).get(release)
    if memo is None or memo.settings is not settings:
        with _MEMOS_LOCK:
            memos = _MEMOS.setdefault(cluster, {})
            memo = memos.get(release)
            if memo is None or memo.settings is not settings:
                memo = memos[release] = PodRequestsMemo(settings)
    return memo


def subjects(request: dict, result: dict) -> Subjects:
    pod: Pod = request["pod"]
    pods = [pod.key]
    preemption = result.get("preemption")
    if preemption:
        pods.extend(f"{v['namespace']}/{v['name']}" for v in preemption["victims"])
    return Subjects(node_names=[request["nodeName"]], pods=pods)


DECISION = DecisionKind("admission", AdmissionRequestSchema, decide, subjects)
