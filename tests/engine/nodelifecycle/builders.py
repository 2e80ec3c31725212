"""Small builders of v1 Node / Pod / Lease objects for the node lifecycle tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from service.engine.objects import Cluster
from service.ingest.kube import snapshot_from_objects

T0 = datetime(2024, 1, 1, 0, 0, 0, tzinfo=UTC)

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"


def at(seconds: float) -> str:
    """T0 + seconds as RFC 3339 (what results print)."""
    moment = T0 + timedelta(seconds=seconds)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if moment.microsecond:
        text += f".{moment.microsecond:06d}".rstrip("0")
    return text + "Z"


def node(
    name: str,
    zone: str | None = "a",
    *,
    ready: str | None = "True",
    heartbeat: float = 0.0,
    transition: float = -3600.0,
    taints: list[dict] | None = None,
    labels: dict | None = None,
    created: float = -86400.0,
    region: str = "r1",
) -> dict:
    all_labels = dict(labels or {})
    if zone is not None:
        all_labels["topology.kubernetes.io/region"] = region
        all_labels["topology.kubernetes.io/zone"] = zone
    conditions = []
    if ready is not None:
        conditions.append(
            {
                "type": "Ready",
                "status": ready,
                "lastHeartbeatTime": at(heartbeat),
                "lastTransitionTime": at(transition),
            }
        )
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "creationTimestamp": at(created), "labels": all_labels},
        "spec": {"taints": taints or []},
        "status": {"conditions": conditions},
    }


def taint(key: str, added: float | None, value: str = "", effect: str = "NoExecute") -> dict:
    out = {"key": key, "effect": effect}
    if value:
        out["value"] = value
    if added is not None:
        out["timeAdded"] = at(added)
    return out


def pod(
    name: str,
    node_name: str,
    tolerations: list[dict] | None = None,
    *,
    created: float | None = None,
    owner: str | None = None,
    deleting: bool = False,
) -> dict:
    meta: dict = {"namespace": "default", "name": name, "uid": f"uid-{name}"}
    if created is not None:
        meta["creationTimestamp"] = at(created)
    if owner is not None:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": owner, "name": "owner", "controller": True}
        ]
    if deleting:
        meta["deletionTimestamp"] = at(0)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"nodeName": node_name, "tolerations": tolerations or [], "containers": []},
        "status": {"phase": "Running"},
    }


def lease(name: str, renewed: float) -> dict:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"namespace": "kube-node-lease", "name": name},
        "spec": {"holderIdentity": name, "renewTime": at(renewed).replace("Z", ".000000Z")},
    }


def toleration(key: str, seconds: int | None = None, operator: str = "Exists") -> dict:
    out = {"key": key, "operator": operator, "effect": "NoExecute"}
    if seconds is not None:
        out["tolerationSeconds"] = seconds
    return out


DEFAULTS = [toleration(NOT_READY, 300), toleration(UNREACHABLE, 300)]
DAEMONSET = [toleration(NOT_READY), toleration(UNREACHABLE)]


def cluster(*objects: dict, captured: float | None = None) -> Cluster:
    captured_at = T0 + timedelta(seconds=captured) if captured is not None else None
    return Cluster(snapshot_from_objects(list(objects), captured_at=captured_at))


def healthy(prefix: str, count: int, zone: str = "a", **kwargs) -> list[dict]:
    return [node(f"{prefix}-{i}", zone, **kwargs) for i in range(count)]
