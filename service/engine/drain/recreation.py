"""What the workload controllers do after an eviction: which evicted pods come back, and as
what.

A ReplicaSet, ReplicationController or Job sees one active pod fewer and creates a new one
from its template (``generateName``: the controller's name and a dash, so a new name and
uid); a StatefulSet recreates the pod under the same name (its identity); a bare pod is
gone; a DaemonSet pod is never evicted by a drain (kubectl's filters keep it) and its
controller would only run it on its own node. Mirrors the controllers' reactions to a
deleted pod (kubernetes/kubernetes v1.35 ``pkg/controller/replicaset`` ``manageReplicas``,
``pkg/controller/statefulset`` ``StatefulSetControl``, ``pkg/controller/job``
``manageJob``).

The copy is the evicted pod's spec, unbound and pending: Verdict does not hold the
controller's template, so a controller whose template changed since the pod was made would
create a different pod. The pod was already being deleted (``deletionTimestamp``): a
ReplicaSet, ReplicationController or Job replaced it when the deletion began, so the drain
adds no copy; a StatefulSet recreates its pod only once it is gone, so it does.
A terminal pod (Succeeded, Failed) is no longer counted by its controller, so its deletion
creates nothing.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import datetime

import msgspec

from service.engine.objects import Pod

__all__ = ["RECREATING_KINDS", "recreated_copy", "recreation_of"]

RECREATING_KINDS = ("ReplicaSet", "StatefulSet", "Job", "ReplicationController")

_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.String alphabet


def recreation_of(pod: Pod) -> tuple[bool, str]:
    """Whether a controller recreates ``pod`` once deleted, and why (or why not)."""
    ref = pod.controller
    if pod.phase in ("Succeeded", "Failed"):
        return False, "the pod had finished; its controller no longer counts it"
    if ref is None:
        return False, "no controller owns the pod: it is gone"
    if ref.kind not in RECREATING_KINDS:
        return False, (
            f"owned by {ref.kind} {ref.name!r}: Verdict does not know whether that controller "
            "recreates it"
        )
    if pod.deletion_timestamp is not None and ref.kind != "StatefulSet":
        return False, (
            f"the pod was already being deleted: {ref.kind} {ref.name!r} replaced it then"
        )
    return True, f"{ref.kind} {ref.name!r} recreates it"


def _suffix(seed: str) -> str:
    """Five characters of rand.String's alphabet, derived from ``seed`` (upstream draws
    them at random; Verdict's are stable, so that a replay names the same pods)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def recreated_copy(pod: Pod, created_at: datetime | None) -> Pod:
    """The pending pod the controller creates for ``pod`` (``recreation_of`` said yes),
    created at ``created_at`` (the drain's time: after every pod of the snapshot)."""
    ref = pod.controller
    assert ref is not None
    name = pod.name
    if ref.kind != "StatefulSet":
        name = f"{ref.name}-{_suffix(pod.namespace + '/' + pod.name + '/' + pod.uid)}"
    uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"verdict-drain/{pod.namespace}/{pod.uid}/{name}"))
    return msgspec.structs.replace(
        pod,
        name=name,
        uid=uid,
        node_name="",
        nominated_node_name="",
        phase="Pending",
        start_time=None,
        creation_timestamp=created_at,
        deletion_timestamp=None,
        conditions=(),
        qos_class=pod.qos_class,
        resource_claim_statuses={},
    )
