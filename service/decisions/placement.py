"""Decision kind "placement": kube-scheduler filter and score on every node
(POST /v1/decisions/placement).

Request (the contract, openapi/openapi.yaml): ``{"pod": <v1 Pod>, "scoring": {...}, "holdStatefulSetUpgrades": bool,
"holds": [...]}``.

* ``scoring.strategy``: LeastAllocated (default), MostAllocated or RequestedToCapacityRatio;
  ``scoring.resources``: NodeResourcesFit's resources and weights (default cpu and memory,
  weight 1; each weight 1..100); ``scoring.shape``: RequestedToCapacityRatio's points
  ``{"utilization": 0..100, "score": 0..10}`` with strictly increasing utilization (required
  for that strategy); ``scoring.balancedAllocation`` (default true) and
  ``scoring.balancedResources`` (default cpu and memory, weight exactly 1) configure
  NodeResourcesBalancedAllocation.
* ``holds[]``: ``{"nodeName", "namespace" (default "default"), "name", "ownerUid",
  "requests" (quantities), "priority" (default 0)}``.
* The pod must not already be bound: ``pod.spec.nodeName`` is rejected.

Result: ``{"selectedNode", "nodes": [{"nodeName", "feasible", "reasons", "scores", "total"}],
"message", "notModelled", "allocation"}``. ``nodes`` is in snapshot order; ``scores`` holds the raw 0..100
score of each modelled score plugin (NodeResourcesBalancedAllocation is left out when its
PreScore skips the pod, or when disabled) and ``total`` their sum with the default profile's
plugin weights (1 each); both are null for infeasible nodes. ``notModelled`` names the
default-profile filters Verdict did not evaluate for this pod (inter-pod affinity, topology
spread, volume binding); ``message`` says so too. Ties between the highest totals go to the
first node in snapshot order (upstream picks one at random). ``cycleError`` is present when
the cycle fails (a filter's Error, or a normalized score outside 0..100 on one of two or
more feasible nodes; a lone one is never scored upstream): no node is selected, and the
scored nodes' ``total`` is null (the scheduler never adds them up). ``allocation`` (on the
result for the selected node, and on each feasible node) names the devices DynamicResources
would allocate to each of the pod's unallocated ResourceClaims there, by claim name, and
``allocationConfig`` beside it the class and claim configuration those allocations carry
(for the claims that carry some; docs/dynamic-resources.md).
"""

from __future__ import annotations

import orjson
from marshmallow import ValidationError, fields, validates_schema

from service.decisions.base import (
    DecisionKind,
    Subjects,
    cycle_error_json,
    not_modelled_sentence,
)
from service.decisions.schemas import (
    SchedulerRequestSchema,
    ScoringSchema,
    StrictSchema,
    check_resource_api_versions,
    holds_from_request,
    scheduler_profile,
    scoring_profile,
)
from service.engine.objects import AllocatedDevice, Cluster, DeviceAllocationConfiguration
from service.engine.scheduler.placement import PlacementOutcome, place

__all__ = ["DECISION", "PlacementRequestSchema", "decide", "scoring_profile", "subjects"]


class PlacementOptionsSchema(StrictSchema):
    startIndex = fields.Integer(load_default=None, strict=True, allow_none=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        start = data.get("startIndex")
        if start is not None and start < 0:
            raise ValidationError({"startIndex": ["must not be negative"]})


class PlacementRequestSchema(SchedulerRequestSchema):
    scoring = fields.Nested(ScoringSchema, load_default=None)
    options = fields.Nested(PlacementOptionsSchema, load_default=None)


def allocation_json(allocation: dict[str, list[AllocatedDevice]]) -> dict:
    """The devices DynamicResources allocated, by claim name."""
    out = {}
    for claim, devices in allocation.items():
        rows = []
        for d in devices:
            row = {"request": d.request, "driver": d.driver, "pool": d.pool, "device": d.device}
            if d.admin_access:
                row["adminAccess"] = True
            rows.append(row)
        out[claim] = rows
    return out


def allocation_config_json(config: dict[str, list[DeviceAllocationConfiguration]]) -> dict:
    """The configuration each claim's allocation carries, as AllocationResult.devices.config
    writes it: ``{"source", "requests", "opaque": {"driver", "parameters"}}``."""
    return {
        claim: [
            {
                "source": c.source,
                "requests": list(c.requests),
                "opaque": {"driver": c.driver, "parameters": orjson.loads(c.parameters)},
            }
            for c in entries
        ]
        for claim, entries in config.items()
    }


def _node_json(n, feasible: bool) -> dict:
    """One node's entry; ``feasible`` is ``n.feasible``, read once by the caller."""
    entry = {
        "nodeName": n.node_name,
        "feasible": feasible,
        "reasons": n.reasons,
        "scores": n.scores,
        "total": n.total,
    }
    if n.raw_scores:
        entry["rawScores"] = n.raw_scores
    if not n.examined:
        entry["examined"] = False
    if n.allocation is not None and feasible:
        entry["allocation"] = allocation_json(n.allocation)
        if n.allocation_config:
            entry["allocationConfig"] = allocation_config_json(n.allocation_config)
    return entry


def result_json(outcome: PlacementOutcome) -> dict:
    feasibility = [n.feasible for n in outcome.nodes]
    nodes = [_node_json(n, f) for n, f in zip(outcome.nodes, feasibility, strict=True)]
    message = outcome.message if outcome.message.endswith(".") else outcome.message + "."
    if outcome.skipped_plugins:
        message += (
            f" Skipped at PreScore (nothing to score for this pod): "
            f"{', '.join(outcome.skipped_plugins)}."
        )
    for node_name, keys in sorted(outcome.holds_freed.items()):
        message += (
            f" Resources held by {', '.join(keys)} on {node_name} are free for this pod, "
            "its replacement."
        )
    message += not_modelled_sentence(outcome.not_modelled)
    message += _tie_sentence(outcome, feasibility)
    result = {
        "selectedNode": outcome.selected_node,
        "nodes": nodes,
        "weights": outcome.weights,
        "message": message,
        "notModelled": list(outcome.not_modelled),
    }
    if outcome.cycle_error is not None:
        result["cycleError"] = cycle_error_json(outcome.cycle_error)
    chosen = next((n for n in outcome.nodes if n.node_name == outcome.selected_node), None)
    if chosen is not None and chosen.allocation is not None:
        result["allocation"] = allocation_json(chosen.allocation)
        if chosen.allocation_config:
            result["allocationConfig"] = allocation_config_json(chosen.allocation_config)
    if outcome.num_nodes_to_find is not None:
        result["numNodesToFind"] = outcome.num_nodes_to_find
        result["nextStartIndex"] = outcome.next_start_index
    return result


def _tie_sentence(outcome: PlacementOutcome, feasibility: list[bool]) -> str:
    """Said only when it applies: several nodes share the top total, where kube-scheduler's
    selectHost picks at random and Verdict takes the first in snapshot order.
    ``feasibility``: each node's ``feasible``, parallel to ``outcome.nodes``."""
    if outcome.selected_node is None:
        return ""
    scored = [
        n for n, f in zip(outcome.nodes, feasibility, strict=True) if f and n.total is not None
    ]
    if not scored:
        return ""
    top = max(n.total for n in scored)
    tied = [n.node_name for n in scored if n.total == top]
    if len(tied) < 2:
        return ""
    names = ", ".join(f'"{name}"' for name in tied)
    return (
        f" {len(tied)} nodes tie at the top total ({names}): kube-scheduler picks one of them "
        "at random; Verdict takes the first in snapshot order."
    )


def decide(cluster: Cluster, request: dict) -> dict:
    settings = request["settings"]
    check_resource_api_versions(cluster, settings)
    outcome = place(
        cluster,
        request["pod"],
        profile=request.get("profile") or scheduler_profile(request, settings),
        settings=settings,
        start_index=(request.get("options") or {}).get("startIndex"),
        hold_statefulset_upgrades=request.get("holdStatefulSetUpgrades", False),
        holds=holds_from_request(cluster, request),
    )
    return result_json(outcome)


def subjects(request: dict, result: dict) -> Subjects:
    pod = request["pod"]
    nodes = [result["selectedNode"]] if result.get("selectedNode") else []
    return Subjects(node_names=nodes, pods=[pod.key])


DECISION = DecisionKind("placement", PlacementRequestSchema, decide, subjects, scheduler=True)
