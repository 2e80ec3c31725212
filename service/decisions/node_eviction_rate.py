"""Decision kind "node-eviction-rate": the node lifecycle controller's zone states and rates,
the NoExecute taints it adds and when, and when taint-based eviction removes each pod.

Request (the contract, openapi/openapi.yaml): ``{"now": time, "config": {...}}``. ``now`` defaults to the snapshot's
``capturedAt`` (422 naming ``now`` when both are absent). ``config`` takes the
kube-controller-manager flags in camelCase (rates in nodes per second, durations as Go
duration strings): nodeEvictionRate, secondaryNodeEvictionRate, largeClusterSizeThreshold,
unhealthyZoneThreshold, nodeMonitorGracePeriod, nodeStartupGracePeriod, mode ("taint" |
"legacy"), podEvictionTimeout, applyDefaultTolerations, and ``nodeMonitorPeriod`` (default
"5s", an addition: the controller's pass period, which spaces its two passes). The checks
are the engine's (service/engine/nodelifecycle/config.py): a negative rate,
unhealthyZoneThreshold outside (0, 1], a malformed duration, an unknown mode or a negative
largeClusterSizeThreshold is a 4xx naming ``config.<field>``.

The result adds ``now`` (the time decided at), ``nowSource``, ``warnings`` (sentences about a
``now`` that makes the answer misleading: before the capture, or the storage time standing in
for a missing capture time) and, on each node and pod, ``projected``: its time is later than
``now``, so it is what the controller would do, not what it has done.
"""

from __future__ import annotations

from datetime import datetime

from marshmallow import RAISE, Schema, ValidationError, fields, validates_schema

from service.decisions.base import (
    DecisionInputError,
    DecisionKind,
    Subjects,
    resolve_now,
)
from service.decisions.schemas import time_field
from service.engine.nodelifecycle.clock import SECOND, format_time, to_ns
from service.engine.nodelifecycle.config import ConfigError, config_from_dict
from service.engine.nodelifecycle.decision import node_eviction_rate
from service.engine.objects import Cluster

KIND = "node-eviction-rate"


class NodeEvictionRateRequestSchema(Schema):
    class Meta:
        unknown = RAISE

    now = time_field(allow_none=True)
    config = fields.Dict(keys=fields.String(), allow_none=True)

    @validates_schema
    def _config(self, data, **kwargs):
        try:
            config_from_dict(data.get("config") or {})
        except ConfigError as exc:
            raise ValidationError({"config": {exc.path: [exc.message]}}) from None


def decide(cluster: Cluster, request: dict) -> dict:
    try:
        config = config_from_dict(request.get("config") or {})
    except ConfigError as exc:
        raise DecisionInputError(f"config.{exc.path}", exc.message) from None
    now, source = resolve_now(cluster, request)
    result = node_eviction_rate(cluster, now, config, settings=request["settings"])
    now_ns = to_ns(now)
    for node in result["nodes"]:
        node["projected"] = _later(node["taintedAt"], now_ns)
    for pod in result["pods"]:
        pod["projected"] = _later(pod["evictAt"], now_ns)
    return {
        **result,
        "now": format_time(now_ns),
        "nowSource": source,
        "warnings": now_warnings(cluster.snapshot.captured_at, now_ns, source),
    }


def _time_ns(text: str) -> int:
    """An RFC 3339 UTC time as the engine formats it (format_time), nanoseconds kept."""
    whole, _, fraction = text.removesuffix("Z").partition(".")
    return to_ns(datetime.fromisoformat(whole + "+00:00")) + int(fraction.ljust(9, "0") or 0)


def _later(text: str | None, now_ns: int) -> bool:
    return text is not None and _time_ns(text) > now_ns


def _span(ns: int) -> str:
    seconds = ns // SECOND
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds >= size:
            count = seconds // size
            return f"{count} {unit}{'s' if count != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def now_warnings(captured_at: datetime | None, now_ns: int, source: str) -> list[str]:
    """Why this ``now`` may mislead: the controller judges heartbeats against it."""
    now = format_time(now_ns)
    if source == "createdAt":
        return [
            f"The snapshot has no capture time, so now is when it was stored ({now}). "
            "Heartbeats older than the grace period make nodes Unknown and zones disrupted: "
            "give now (when the dump was taken), or capture with `verdict capture`, which "
            "records it."
        ]
    if captured_at is not None and now_ns < to_ns(captured_at):
        captured = to_ns(captured_at)
        return [
            f"now ({now}) is {_span(captured - now_ns)} before the snapshot was captured "
            f"({format_time(captured)}): heartbeats and leases recorded after now count as "
            "fresh, so nodes look healthier than they were at now."
        ]
    return []


def subjects(request: dict, result: dict) -> Subjects:
    """The nodes that are not Ready or carry (or will carry) a lifecycle taint, and the pods
    the controller evicts."""
    nodes = [
        n["nodeName"] for n in result["nodes"] if n["ready"] != "True" or n["taint"] is not None
    ]
    pods = [
        f"{p['pod']['namespace']}/{p['pod']['name']}"
        for p in result["pods"]
        if p["evictAt"] is not None
    ]
    return Subjects(node_names=nodes, pods=pods)


DECISION = DecisionKind(KIND, NodeEvictionRateRequestSchema, decide, subjects, clock=True)
