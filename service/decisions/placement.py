"""Decision kind "placement": kube-scheduler filter and score on every node
(POST /v1/decisions/placement).

Request (API.md): ``{"pod": <v1 Pod>, "scoring": {...}, "holdStatefulSetUpgrades": bool,
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
"message", "notModelled"}``. ``nodes`` is in snapshot order; ``scores`` holds the raw 0..100
score of each modelled score plugin (NodeResourcesBalancedAllocation is left out when its
PreScore skips the pod, or when disabled) and ``total`` their sum with the default profile's
plugin weights (1 each); both are null for infeasible nodes. ``notModelled`` names the
default-profile filters Verdict did not evaluate for this pod (inter-pod affinity, topology
spread, volume binding); ``message`` says so too. Ties between the highest totals go to the
first node in snapshot order (upstream picks one at random).
"""

from __future__ import annotations

from dataclasses import replace

from marshmallow import RAISE, Schema, ValidationError, fields, post_load, validates_schema

from service.decisions.base import (
    DecisionInputError,
    DecisionKind,
    PodField,
    Subjects,
    register,
)
from service.engine.objects import Cluster
from service.engine.quantity import QuantityError, parse_quantity, to_base_units
from service.engine.scheduler.holds import Hold
from service.engine.scheduler.placement import PlacementOutcome, place
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    STRATEGIES,
    validate_balanced_resources,
    validate_scoring_strategy,
)
from service.engine.scheduler.profile import (
    DEFAULT_PROFILE,
    DEFAULT_RESOURCES,
    DEFAULT_SCHEDULER_NAME,
    LEAST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    Profile,
    ResourceSpec,
    ScoringStrategy,
)
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kubescheduler_config import SchedulerConfigError, scheduler_profiles

__all__ = [
    "HoldSchema",
    "PlacementRequestSchema",
    "ScoringSchema",
    "decide",
    "holds_from_request",
    "not_modelled_sentence",
    "reject_bound_pod",
    "subjects",
]


class _Strict(Schema):
    class Meta:
        unknown = RAISE


class ResourceSpecSchema(_Strict):
    name = fields.String(required=True)
    weight = fields.Integer(load_default=1, strict=True)


class ShapePointSchema(_Strict):
    utilization = fields.Integer(required=True, strict=True)
    score = fields.Integer(required=True, strict=True)


class ScoringSchema(_Strict):
    strategy = fields.String(load_default=LEAST_ALLOCATED)
    resources = fields.List(fields.Nested(ResourceSpecSchema), load_default=None)
    shape = fields.List(fields.Nested(ShapePointSchema), load_default=None)
    balancedAllocation = fields.Boolean(load_default=True)
    balancedResources = fields.List(fields.Nested(ResourceSpecSchema), load_default=None)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        errors: dict = {}
        strategy = data.get("strategy", LEAST_ALLOCATED)
        if strategy not in STRATEGIES:
            errors["strategy"] = [
                f"unknown scoring strategy {strategy!r}; expected one of " + ", ".join(STRATEGIES)
            ]
        resources = data.get("resources")
        if resources is not None and not resources:
            errors["resources"] = ["at least one resource is required (resources not found)"]
        specs = _specs(resources) if resources else list(DEFAULT_RESOURCES)
        shape = data.get("shape")
        if strategy == REQUESTED_TO_CAPACITY_RATIO and shape is None:
            errors["shape"] = ["required for the RequestedToCapacityRatio strategy"]
        points = [(p["utilization"], p["score"]) for p in shape] if shape is not None else None
        for path, message in validate_scoring_strategy(
            strategy if strategy in STRATEGIES else LEAST_ALLOCATED, specs, points, path=""
        ):
            _put(errors, path, message)
        balanced = data.get("balancedResources")
        if balanced is not None:
            if not balanced:
                errors["balancedResources"] = ["at least one resource is required"]
            for path, message in validate_balanced_resources(
                _specs(balanced), path="balancedResources"
            ):
                _put(errors, path, message)
        if errors:
            raise ValidationError(errors)


def _specs(items: list[dict]) -> list[ResourceSpec]:
    return [ResourceSpec(r["name"], r.get("weight", 1)) for r in items]


def _put(errors: dict, path: str, message: str) -> None:
    """Place ``message`` at a dotted/indexed ``path`` ("resources[0].weight") in marshmallow's
    nested error dict ({"resources": {0: {"weight": [...]}}})."""
    node = errors
    parts: list[str | int] = []
    for part in path.strip(".").split("."):
        name, _, rest = part.partition("[")
        if name:
            parts.append(name)
        while rest:
            index, _, rest = rest.partition("]")
            parts.append(int(index))
            rest = rest.lstrip("[")
    for key in parts[:-1]:
        node = node.setdefault(key, {})
    node.setdefault(parts[-1], []).append(message)


class HoldSchema(_Strict):
    nodeName = fields.String(required=True)
    namespace = fields.String(load_default="default")
    name = fields.String(required=True)
    ownerUid = fields.String(load_default="")
    requests = fields.Dict(keys=fields.String(), values=fields.Raw(), load_default=dict)
    priority = fields.Integer(load_default=0, strict=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        errors: dict = {}
        for name, value in (data.get("requests") or {}).items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                errors[name] = ["not a quantity"]
                continue
            try:
                q = parse_quantity(value)
            except QuantityError as exc:
                errors[name] = [str(exc)]
                continue
            if q.sign() < 0:
                errors[name] = ["must not be negative"]
        if errors:
            raise ValidationError({"requests": errors})


def reject_bound_pod(data: dict) -> None:
    """The scheduler only places unbound pods: a pod with spec.nodeName is an input error."""
    pod = data.get("pod")
    if pod is not None and pod.node_name:
        raise ValidationError(
            {
                "pod": {
                    "spec.nodeName": [
                        "the pod is already bound to a node; the scheduler only places pods "
                        "without spec.nodeName"
                    ]
                }
            }
        )


class SchedulerRequestSchema(_Strict):
    """What placement and preemption requests share: the pod, the cluster's own
    KubeSchedulerConfiguration (the pod's schedulerName picks the profile), holds."""

    pod = PodField(required=True)
    schedulerConfiguration = fields.Raw(load_default=None, allow_none=True)
    holdStatefulSetUpgrades = fields.Boolean(load_default=False)
    holds = fields.List(fields.Nested(HoldSchema), load_default=list)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        reject_bound_pod(data)
        if data.get("schedulerConfiguration") is not None and data.get("scoring") is not None:
            raise ValidationError(
                {"schedulerConfiguration": ["give scoring or schedulerConfiguration, not both"]}
            )

    @post_load
    def _profile(self, data: dict, **kwargs) -> dict:
        data["profile"] = scheduler_profile(data)
        return data


class PlacementOptionsSchema(_Strict):
    startIndex = fields.Integer(load_default=None, strict=True, allow_none=True)

    @validates_schema
    def _check(self, data: dict, **kwargs) -> None:
        start = data.get("startIndex")
        if start is not None and start < 0:
            raise ValidationError({"startIndex": ["must not be negative"]})


class PlacementRequestSchema(SchedulerRequestSchema):
    scoring = fields.Nested(ScoringSchema, load_default=None)
    options = fields.Nested(PlacementOptionsSchema, load_default=None)


def scheduler_profile(data: dict) -> Profile:
    """The profile a request's pod is scheduled with: the configuration's profile named by
    the pod's schedulerName, else the default profile with the ``scoring`` object applied."""
    config = data.get("schedulerConfiguration")
    if config is None:
        return scoring_profile(data.get("scoring"))
    try:
        profiles = scheduler_profiles(config)
    except SchedulerConfigError as exc:
        raise ValidationError({path: [message] for path, message in exc.errors}) from None
    name = data["pod"].scheduler_name or DEFAULT_SCHEDULER_NAME
    profile = profiles.get(name)
    if profile is None:
        raise ValidationError(
            {
                "pod.spec.schedulerName": [
                    f"no profile of schedulerConfiguration has schedulerName {name!r} "
                    f"(it has {', '.join(repr(n) for n in profiles)}): that scheduler would "
                    "not schedule this pod"
                ]
            }
        )
    return profile


def holds_from_request(cluster: Cluster, request: dict) -> list[Hold]:
    """The request's ``holds`` as engine Holds; a node missing from the snapshot is an input
    error naming ``holds[i].nodeName``."""
    out: list[Hold] = []
    for i, h in enumerate(request.get("holds") or ()):
        if cluster.node(h["nodeName"]) is None:
            raise DecisionInputError(
                f"holds[{i}].nodeName", f"node {h['nodeName']!r} is not in the snapshot"
            )
        requests = {
            name: to_base_units(name, parse_quantity(value))
            for name, value in (h.get("requests") or {}).items()
        }
        out.append(
            Hold(
                node_name=h["nodeName"],
                namespace=h.get("namespace", "default"),
                name=h["name"],
                owner_uid=h.get("ownerUid", ""),
                requests=requests,
                priority=h.get("priority", 0),
            )
        )
    return out


def scoring_profile(raw: dict | None) -> Profile:
    """The default profile with the legacy ``scoring`` object applied: NodeResourcesFit's
    scoringStrategy, BalancedAllocation's resources, or BalancedAllocation disabled."""
    if not raw:
        return DEFAULT_PROFILE
    resources = raw.get("resources")
    shape = raw.get("shape")
    balanced = raw.get("balancedResources")
    args = dict(DEFAULT_PROFILE.args)
    args["NodeResourcesFit"] = NodeResourcesFitArgs(
        scoring_strategy=ScoringStrategy(
            type=raw.get("strategy", LEAST_ALLOCATED),
            resources=tuple(_specs(resources)) if resources else DEFAULT_RESOURCES,
            shape=tuple((p["utilization"], p["score"]) for p in shape) if shape else None,
        )
    )
    args["NodeResourcesBalancedAllocation"] = NodeResourcesBalancedAllocationArgs(
        tuple(_specs(balanced)) if balanced else DEFAULT_RESOURCES
    )
    profile = replace(DEFAULT_PROFILE, args=args)
    if not raw.get("balancedAllocation", True):
        off = "NodeResourcesBalancedAllocation"
        profile = replace(
            profile,
            pre_score=tuple(n for n in profile.pre_score if n != off),
            score=tuple((n, w) for n, w in profile.score if n != off),
        )
    return profile


def not_modelled_sentence(not_modelled: tuple[str, ...] | list[str]) -> str:
    if not not_modelled:
        return ""
    return (
        f" Not evaluated: {', '.join(not_modelled)} (filters Verdict does not model); "
        "the result assumes they pass."
    )


def result_json(outcome: PlacementOutcome) -> dict:
    nodes = []
    for n in outcome.nodes:
        entry = {
            "nodeName": n.node_name,
            "feasible": n.feasible,
            "reasons": n.reasons,
            "scores": n.scores,
            "total": n.total,
        }
        if n.raw_scores:
            entry["rawScores"] = n.raw_scores
        if not n.examined:
            entry["examined"] = False
        nodes.append(entry)
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
    message += " Ties go to the first node in snapshot order."
    result = {
        "selectedNode": outcome.selected_node,
        "nodes": nodes,
        "weights": outcome.weights,
        "message": message,
        "notModelled": list(outcome.not_modelled),
    }
    if outcome.num_nodes_to_find is not None:
        result["numNodesToFind"] = outcome.num_nodes_to_find
        result["nextStartIndex"] = outcome.next_start_index
    return result


def decide(cluster: Cluster, request: dict) -> dict:
    outcome = place(
        cluster,
        request["pod"],
        profile=request.get("profile") or scoring_profile(request.get("scoring")),
        settings=request.get("settings", DEFAULT_SETTINGS),
        start_index=(request.get("options") or {}).get("startIndex"),
        hold_statefulset_upgrades=request.get("holdStatefulSetUpgrades", False),
        holds=holds_from_request(cluster, request),
    )
    return result_json(outcome)


def subjects(request: dict, result: dict) -> Subjects:
    pod = request["pod"]
    nodes = [result["selectedNode"]] if result.get("selectedNode") else []
    return Subjects(node_names=nodes, pods=[pod.key])


register(
    DecisionKind(
        name="placement",
        schema=PlacementRequestSchema,
        decide=decide,
        subjects=subjects,
        scheduler=True,
    )
)
