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
"""

from __future__ import annotations

from marshmallow import RAISE, Schema, ValidationError, fields, validates_schema

from service.decisions.base import (
    DecisionInputError,
    DecisionKind,
    Subjects,
    resolve_now,
)
from service.decisions.schemas import time_field
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
    return {**result, "nowSource": source}


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
