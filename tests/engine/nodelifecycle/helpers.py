"""What the node lifecycle tests share: small builders of v1 Node / Pod / Lease objects, and the
loading of tests/conformance/nodelifecycle.json with its inputs turned into engine objects."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest

from service.engine.nodelifecycle.clock import SECOND, to_ns
from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.objects import Cluster, Toleration
from tests.conftest import snapshot_from_objects

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


# --- the conformance vectors ---

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "nodelifecycle.json"


@cache
def _groups() -> tuple[dict, ...]:
    return tuple(json.loads(VECTORS.read_text())["groups"])


def group(function: str) -> dict:
    matches = [g for g in _groups() if g["function"] == function]
    assert len(matches) == 1, function
    return matches[0]


def cases(function: str) -> list:
    """pytest params, one per case, id = case name."""
    return [pytest.param(c, id=c["name"]) for c in group(function)["cases"]]


def ns(text: str) -> int:
    return to_ns(datetime.fromisoformat(text.replace("Z", "+00:00")))


def config(raw: dict, **extra) -> NodeLifecycleConfig:
    """A case's ``config`` block as a NodeLifecycleConfig."""
    kwargs = dict(
        node_eviction_rate=raw["nodeEvictionRate"],
        secondary_node_eviction_rate=raw["secondaryNodeEvictionRate"],
        large_cluster_size_threshold=raw["largeClusterSizeThreshold"],
        unhealthy_zone_threshold=raw["unhealthyZoneThreshold"],
        node_monitor_grace_period_ns=raw["nodeMonitorGracePeriodSeconds"] * SECOND,
        node_startup_grace_period_ns=raw["nodeStartupGracePeriodSeconds"] * SECOND,
        node_monitor_period_ns=raw["nodeMonitorPeriodSeconds"] * SECOND,
        partial_disruption_qps_override=raw.get("partialDisruptionQPSOverride"),
        full_disruption_qps_override=raw.get("fullDisruptionQPSOverride"),
    )
    if "legacyPodEvictionTimeoutSeconds" in raw:
        kwargs["mode"] = "legacy"
        kwargs["pod_eviction_timeout_ns"] = raw["legacyPodEvictionTimeoutSeconds"] * SECOND
    kwargs.update(extra)
    return NodeLifecycleConfig(**kwargs)


def case_toleration(raw: dict) -> Toleration:
    """A case's toleration as a model Toleration (``toleration`` builds the API's dict)."""
    return Toleration(
        key=raw.get("key", ""),
        operator=raw.get("operator", ""),
        value=raw.get("value", ""),
        effect=raw.get("effect", ""),
        toleration_seconds=raw.get("tolerationSeconds"),
    )


def toleration_dict(t: Toleration) -> dict:
    """A model Toleration back in the API's form (empty fields left out)."""
    out = {}
    for name, value in (
        ("key", t.key),
        ("operator", t.operator),
        ("value", t.value),
        ("effect", t.effect),
    ):
        if value:
            out[name] = value
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out
