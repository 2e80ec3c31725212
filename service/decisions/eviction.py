"""Decision kind "eviction": one pass of the kubelet eviction manager on one node.

Request (the contract, openapi/openapi.yaml): ``{"nodeName", "config": {...}, "now", "firstObserved": {signal: time}}``,
plus ``nodeConditionsLastObserved`` ({condition: time}, optional): when the kubelet last
observed each pressure condition, for the pressure transition period (see
service/engine/kubelet/eviction.py for how one pass stands in for the kubelet's memory).

Result: the contract's eviction result, plus ``evictions`` (every pod the pass evicts: one for a
threshold, possibly several for local ephemeral-storage limits; ``victim``,
``gracePeriodSeconds`` and ``message`` describe the first), ``nodeLevelReclaim`` (the garbage
collections the kubelet runs first for a disk signal, assumed to free nothing) and ``now``.
Each threshold entry also carries ``firstObserved`` (the request's time, or null when taken as
``now``) and ``gracePeriodPassed``. API 1.1 adds ``nowSource`` (where ``now`` came from),
``configSource`` (the request's ``config``, the node's configuration captured in the
snapshot, or the kubelet's defaults) and ``ignoredConfigFields`` (the fields of a whole
KubeletConfiguration an eviction pass does not read). API 1.2 adds ``tieGroups`` (runs of
``ranking`` the kubelet's comparison cannot order, by index, with their pods) and
``victimCandidates`` (every pod the kubelet might evict: the victim and the non-critical
pods it ties with).
"""

from __future__ import annotations

from datetime import UTC, datetime

from marshmallow import (
    EXCLUDE,
    RAISE,
    Schema,
    ValidationError,
    fields,
    post_load,
    validate,
    validates_schema,
)

from service.decisions.base import (
    DecisionInputError,
    DecisionKind,
    Subjects,
    resolve_now,
)
from service.decisions.schemas import time_field
from service.engine.duration import format_go_duration
from service.engine.kubelet.allocatable import (
    get_node_allocatable_reservation,
    node_allocatable,
    reserved_amounts,
    validate_node_allocatable,
)
from service.engine.kubelet.eviction import (
    NODE_CONDITIONS,
    EvictionPass,
    RankedPod,
    SignalObservation,
    signal_quantity_format,
    synchronize,
    tie_groups,
)
from service.engine.kubelet.eviction_config import (
    FILESYSTEM_LAYOUTS,
    RESOURCE_EPHEMERAL_STORAGE,
    RESOURCE_MEMORY,
    SIGNAL_TO_RESOURCE,
    EvictionConfigError,
    Threshold,
    build_eviction_config,
    threshold_quantity_string,
)
from service.engine.objects import Cluster
from service.engine.quantity import BINARY_SI, DECIMAL_SI, base_units_to_string, format_quantity
from service.engine.refs import pod_ref
from service.engine.version import EngineSettings

KIND = "eviction"


class _MapOrFlag(fields.Field):
    """A KubeletConfiguration map of strings, or the kubelet flag string (``k<v,...``)."""

    default_error_messages = {"invalid": "Expected a map of strings to strings or a flag string."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            return value
        if isinstance(value, dict) and all(
            isinstance(k, str) and isinstance(v, str) for k, v in value.items()
        ):
            return dict(value)
        raise self.make_error("invalid")


class _ListOrFlag(fields.Field):
    """A list of strings, or the comma-separated flag string."""

    default_error_messages = {"invalid": "Expected a list of strings or a comma-separated string."}

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            return value
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            return list(value)
        raise self.make_error("invalid")


KUBELET_CONFIG_KIND = "KubeletConfiguration"
KUBELET_CONFIG_API_VERSION = "kubelet.config.k8s.io/v1beta1"


class ConfigSchema(Schema):
    """The kubelet settings one eviction pass depends on, with the kubelet's spellings.

    A whole KubeletConfiguration (``kind``/``apiVersion`` kubelet.config.k8s.io/v1beta1, as
    the node runs it) is accepted: the fields an eviction pass does not read are dropped and
    named in ``ignored`` (the result's ``ignoredConfigFields``). Without ``kind`` and
    ``apiVersion`` the object holds eviction settings only, and an unknown field (a typo) is
    refused."""

    class Meta:
        unknown = EXCLUDE

    # Whether fields an eviction pass does not read are ignored without kind/apiVersion.
    lenient = False

    kind = fields.String(validate=validate.Equal(KUBELET_CONFIG_KIND))
    apiVersion = fields.String(validate=validate.Equal(KUBELET_CONFIG_API_VERSION))
    evictionHard = _MapOrFlag(allow_none=True)
    evictionSoft = _MapOrFlag(allow_none=True)
    evictionSoftGracePeriod = _MapOrFlag(allow_none=True)
    evictionMinimumReclaim = _MapOrFlag(allow_none=True)
    # The kubelet takes any int32; a negative kill grace period means nothing (the pod workers
    # raise it to 1s), so Verdict refuses it.
    evictionMaxPodGracePeriod = fields.Integer(
        strict=True, allow_none=True, validate=validate.Range(min=0, max=2**31 - 1)
    )
    evictionPressureTransitionPeriod = fields.String(allow_none=True)
    mergeDefaultEvictionSettings = fields.Boolean(allow_none=True)
    kubeReserved = _MapOrFlag(allow_none=True)
    systemReserved = _MapOrFlag(allow_none=True)
    enforceNodeAllocatable = _ListOrFlag(allow_none=True)
    filesystemLayout = fields.String(
        allow_none=True, validate=validate.OneOf(list(FILESYSTEM_LAYOUTS))
    )
    localStorageCapacityIsolation = fields.Boolean(allow_none=True)

    @validates_schema(pass_original=True)
    def _unknown(self, data, original, **kwargs):
        whole = "kind" in original or "apiVersion" in original
        if not (self.lenient or whole):
            unknown = sorted(set(original) - set(self.fields))
            if unknown:
                raise ValidationError({name: ["Unknown field."] for name in unknown})

    @post_load(pass_original=True)
    def _ignored(self, data, original, **kwargs):
        data.pop("kind", None)
        data.pop("apiVersion", None)
        data["ignored"] = sorted(set(original) - set(self.fields))
        return data

    @validates_schema
    def _kubelet_validation(self, data, **kwargs):
        try:
            build_eviction_config(_settings_only(data), path="config")
        except EvictionConfigError as exc:
            raise ValidationError(
                exc.message, field_name=exc.path.removeprefix("config.")
            ) from None


def _settings_only(config: dict) -> dict:
    return {k: v for k, v in config.items() if k not in ("kind", "apiVersion", "ignored")}


def _signal_key(value: str) -> None:
    if value not in SIGNAL_TO_RESOURCE:
        raise ValidationError(f"unsupported eviction signal {value}")


class EvictionRequestSchema(Schema):
    class Meta:
        unknown = RAISE

    nodeName = fields.String(required=True, validate=validate.Length(min=1))
    config = fields.Nested(ConfigSchema, allow_none=True)
    now = time_field(allow_none=True)
    firstObserved = fields.Dict(
        keys=fields.String(validate=_signal_key), values=time_field(), allow_none=True
    )
    nodeConditionsLastObserved = fields.Dict(
        keys=fields.String(validate=validate.OneOf(NODE_CONDITIONS)),
        values=time_field(),
        allow_none=True,
    )


# --- rendering -------------------------------------------------------------------------------


def _rfc3339(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def _signal(signal: str, observed: SignalObservation) -> dict:
    fmt = signal_quantity_format(signal)
    return {
        "available": format_quantity(observed.available, fmt),
        "capacity": format_quantity(observed.capacity, fmt),
    }


def _threshold(
    threshold: Threshold,
    evaluation: EvictionPass,
    given: dict[str, datetime],
    now: datetime,
) -> dict:
    capacity = evaluation.observations[threshold.signal].capacity
    at = evaluation.first_observed_at.get(threshold, now)
    elapsed = now - at
    elapsed_ns = (elapsed.days * 86_400 + elapsed.seconds) * 10**9 + elapsed.microseconds * 1000
    return {
        "signal": threshold.signal,
        "operator": threshold.operator,
        "value": threshold_quantity_string(threshold.value, capacity),
        "gracePeriod": format_go_duration(threshold.grace_period),
        "minReclaim": (
            threshold_quantity_string(threshold.min_reclaim, capacity)
            if threshold.min_reclaim is not None
            else None
        ),
        "firstObserved": _rfc3339(given[threshold.signal]) if threshold.signal in given else None,
        "gracePeriodPassed": elapsed_ns >= threshold.grace_period,
    }


def _amount(entry: RankedPod, amount: int) -> str:
    if entry.resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE):
        return format_quantity(amount, BINARY_SI)
    return format_quantity(amount, DECIMAL_SI)


def _request(entry: RankedPod) -> str:
    if entry.resource in (RESOURCE_MEMORY, RESOURCE_EPHEMERAL_STORAGE):
        fmt = entry.pod.formats.get(entry.resource, BINARY_SI)
        return base_units_to_string(entry.resource, entry.request, fmt)
    return format_quantity(entry.request, DECIMAL_SI)


def _ranked(entry: RankedPod, settings: EngineSettings) -> dict:
    return {
        "pod": pod_ref(entry.pod, settings=settings),
        "exceedsRequests": entry.exceeds_requests,
        "priority": entry.priority,
        "usage": _amount(entry, entry.usage) if entry.usage is not None else None,
        "request": _request(entry),
        "hasStats": entry.has_stats,
        "reason": _rank_reason(entry),
    }


def _rank_reason(entry: RankedPod) -> str:
    """Why the pod stands where it does, in the terms of the kubelet's rank functions
    (exceeds requests, then priority, then usage above request)."""
    resource = entry.resource
    if not entry.has_stats:
        return f"no {resource} stats for the pod: the kubelet ranks pods without stats first"
    usage = _amount(entry, entry.usage) if entry.usage is not None else "unknown"
    request = _request(entry)
    if entry.exceeds_requests:
        where = f"{resource} usage {usage} exceeds its request {request}"
    elif resource in ("memory", "ephemeral-storage"):
        where = f"{resource} usage {usage} is within its request {request}"
    else:
        where = f"{resource} usage {usage}"
    return f"{where}; priority {entry.priority}"


def _default_format(name: str) -> str:
    return DECIMAL_SI if name in ("cpu", "pods") else BINARY_SI


class CapturedConfigSchema(ConfigSchema):
    """A node's configz answer (a KubeletConfiguration, printed without kind/apiVersion)."""

    lenient = True


_CAPTURED_CONFIG = CapturedConfigSchema()


def _config_for(cluster: Cluster, node_name: str, given: dict | None) -> tuple[dict, str]:
    """The kubelet configuration to decide with and where it came from (``configSource``):
    the request's ``config``; else the node's own, captured in the snapshot (configz); else
    the kubelet's defaults."""
    if given is not None:
        return given, "request"
    captured = cluster.snapshot.kubelet_configs.get(node_name)
    if captured is None:
        return {"ignored": []}, "default"
    try:
        return _CAPTURED_CONFIG.load(captured), "snapshot"
    except ValidationError as exc:
        field_name, messages = next(iter(exc.normalized_messages().items()))
        raise DecisionInputError(
            f"kubeletConfigs.{node_name}.{field_name}", "; ".join(map(str, messages))
        ) from None


def decide(cluster: Cluster, request: dict) -> dict:
    settings = request["settings"]
    node_name = request["nodeName"]
    node = cluster.node(node_name)
    if node is None:
        raise DecisionInputError("nodeName", f"no node named {node_name!r} in the snapshot")
    stats = cluster.snapshot.stats.get(node_name)
    if stats is None:
        raise DecisionInputError(
            "nodeName", f"snapshot has no kubelet stats for node {node_name!r}"
        )
    loaded_config, config_source = _config_for(cluster, node_name, request.get("config"))
    try:
        config = build_eviction_config(_settings_only(loaded_config), path="config")
    except EvictionConfigError as exc:
        raise DecisionInputError(exc.path, exc.message) from None
    now, now_source = resolve_now(cluster, request)
    first_observed = dict(request.get("firstObserved") or {})
    conditions_seen = dict(request.get("nodeConditionsLastObserved") or {})
    for field_name, times in (
        ("firstObserved", first_observed),
        ("nodeConditionsLastObserved", conditions_seen),
    ):
        for key, at in times.items():
            if at > now:
                raise DecisionInputError(
                    f"{field_name}.{key}", f"{_rfc3339(at)} is after now ({_rfc3339(now)})"
                )

    capacity = node.capacity
    reservation = get_node_allocatable_reservation(
        capacity,
        reserved_amounts(config.kube_reserved),
        reserved_amounts(config.system_reserved),
        config.hard_eviction_thresholds,
    )
    invalid = validate_node_allocatable(capacity, reservation, node.formats)
    if invalid is not None:
        raise DecisionInputError("config", invalid)
    allocatable = node_allocatable(capacity, reservation)

    evaluation = synchronize(
        cluster.pods_on(node_name),
        stats,
        config,
        now,
        first_observed,
        conditions_seen,
        settings=settings,
    )
    victim = evaluation.victim
    return {
        "signals": {s: _signal(s, o) for s, o in evaluation.observations.items()},
        "thresholdsObserved": [
            _threshold(t, evaluation, first_observed, now) for t in evaluation.thresholds_observed
        ],
        "thresholdsMet": [
            _threshold(t, evaluation, first_observed, now) for t in evaluation.thresholds_met
        ],
        "nodeConditions": list(evaluation.node_conditions),
        "starvedResource": evaluation.starved_resource,
        "ranking": [_ranked(e, settings) for e in evaluation.ranking],
        "tieGroups": [
            {
                "first": first,
                "last": last,
                "pods": [
                    pod_ref(e.pod, settings=settings) for e in evaluation.ranking[first : last + 1]
                ],
            }
            for first, last in tie_groups(evaluation.ranking)
        ],
        "victim": pod_ref(victim.pod, settings=settings) if victim is not None else None,
        "victimCandidates": [
            pod_ref(pod, settings=settings) for pod in evaluation.victim_candidates
        ],
        "gracePeriodSeconds": victim.grace_period_seconds if victim is not None else 0,
        "message": evaluation.message,
        "nodeAllocatable": {
            name: base_units_to_string(
                name, allocatable[name], node.formats.get(name, _default_format(name))
            )
            for name in sorted(allocatable)
        },
        "evictions": [
            {
                "pod": pod_ref(e.pod, settings=settings),
                "signal": e.signal,
                "gracePeriodSeconds": e.grace_period_seconds,
                "message": e.message,
            }
            for e in evaluation.evictions
        ],
        "nodeLevelReclaim": list(evaluation.node_level_reclaim),
        "now": _rfc3339(now),
        "nowSource": now_source,
        "configSource": config_source,
        "ignoredConfigFields": loaded_config["ignored"],
    }


def subjects(request: dict, result: dict) -> Subjects:
    pods = [f"{e['pod']['namespace']}/{e['pod']['name']}" for e in result.get("evictions", ())]
    return Subjects(node_names=[request["nodeName"]], pods=pods)


DECISION = DecisionKind(KIND, EvictionRequestSchema, decide, subjects, clock=True)
