"""Request schemas the decision kinds share: what marshmallow loads a request body into.

Each kind's module declares its own request schema; what several kinds read the same way is
here, once: a v1 Pod in a request (``PodField``), strict schemas (unknown fields are
errors), times, and what placement and preemption share (``SchedulerRequestSchema``: the
pod, the cluster's KubeSchedulerConfiguration or the legacy ``scoring`` object, holds).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC

from marshmallow import RAISE, Schema, ValidationError, fields, validates_schema

from service.decisions.base import DecisionInputError
from service.engine.objects import Cluster, Pod
from service.engine.quantity import QuantityError, parse_quantity, to_base_units
from service.engine.scheduler.holds import Hold
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    STRATEGIES,
    validate_balanced_resources,
    validate_scoring_strategy,
)
from service.engine.scheduler.profile import (
    DEFAULT_RESOURCES,
    DEFAULT_SCHEDULER_NAME,
    LEAST_ALLOCATED,
    REQUESTED_TO_CAPACITY_RATIO,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    Profile,
    ResourceSpec,
    ScoringStrategy,
    default_profile,
)
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import EngineSettings
from service.ingest.errors import IngestError
from service.ingest.kube import request_pod
from service.ingest.kubescheduler_config import SchedulerConfigError, scheduler_profiles


class PodField(fields.Field):
    """A v1 Pod object, decoded into the engine model (API defaulting applied), its metadata
    checked as the API server would (``ingest.kube.request_pod``)."""

    default_error_messages = {"invalid": "Not a v1 Pod object."}

    def _deserialize(self, value, attr, data, **kwargs) -> Pod:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        try:
            return request_pod(value)
        except IngestError as exc:
            # Field paths relative to the pod; marshmallow prefixes the field name.
            raise ValidationError({err.path: [err.message] for err in exc.errors}) from exc

    def _serialize(self, value, attr, obj, **kwargs):  # requests are stored as sent
        raise NotImplementedError


class StrictBoolean(fields.Boolean):
    """A JSON boolean only: marshmallow's Boolean also takes "yes", 1 or "on", which the
    contract (a JSON Schema boolean) refuses, so the stored request would not match it."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise self.make_error("invalid", input=value)
        return value


def time_field(**kwargs) -> fields.AwareDateTime:
    """An RFC 3339 time; one without a zone is UTC."""
    return fields.AwareDateTime(format="iso", default_timezone=UTC, **kwargs)


class StrictSchema(Schema):
    class Meta:
        unknown = RAISE


class ResourceSpecSchema(StrictSchema):
    name = fields.String(required=True)
    weight = fields.Integer(load_default=1, strict=True)


class ShapePointSchema(StrictSchema):
    utilization = fields.Integer(required=True, strict=True)
    score = fields.Integer(required=True, strict=True)


class ScoringSchema(StrictSchema):
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


class HoldSchema(StrictSchema):
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


class SchedulerRequestSchema(StrictSchema):
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


def check_resource_api_versions(cluster: Cluster, settings: EngineSettings) -> None:
    """A 422 naming the snapshot's first resource.k8s.io object the release cannot read: the
    scheduler lists claims, classes and slices in the versions its API server serves by
    default (``EngineSettings.resource_api_versions``: v1 since 1.34, none before)."""
    unserved = scheduler_view(cluster, settings).dra.unserved(settings.resource_api_versions)
    if unserved is not None:
        served = ", ".join(f"resource.k8s.io/{v}" for v in settings.resource_api_versions)
        raise DecisionInputError(
            "snapshot",
            f"{unserved} is not served by Kubernetes {settings.kubernetes_version} by default "
            f"(it serves {served or 'no resource.k8s.io version'})",
        )


def scheduler_profile(data: dict, settings: EngineSettings) -> Profile:
    """The profile a request's pod is scheduled with, as the release ``settings`` mirrors
    builds it: the configuration's profile named by the pod's schedulerName, else the
    release's default profile with the ``scoring`` object applied."""
    config = data.get("schedulerConfiguration")
    if config is None:
        return scoring_profile(data.get("scoring"), settings)
    try:
        profiles = scheduler_profiles(config, settings)
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


def scoring_profile(raw: dict | None, settings: EngineSettings) -> Profile:
    """The release's default profile with the legacy ``scoring`` object applied:
    NodeResourcesFit's scoringStrategy, BalancedAllocation's resources, or BalancedAllocation
    disabled."""
    default = default_profile(settings)
    if not raw:
        return default
    resources = raw.get("resources")
    shape = raw.get("shape")
    balanced = raw.get("balancedResources")
    args = dict(default.args)
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
    profile = replace(default, args=args)
    if not raw.get("balancedAllocation", True):
        off = "NodeResourcesBalancedAllocation"
        profile = replace(
            profile,
            pre_score=tuple(n for n in profile.pre_score if n != off),
            score=tuple((n, w) for n, w in profile.score if n != off),
        )
    return profile
