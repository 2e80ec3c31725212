"""A KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1), as an operator keeps it,
read into one engine Profile per schedulerName.

Mirrors kube-scheduler v1.35: strict decoding (an unknown field is an error), the v1
defaults (``SetDefaults_KubeSchedulerConfiguration``: one ``default-scheduler`` profile when
none is given, the default plugins merged in, every plugin's args defaulted), the
configuration's validation (``ValidateKubeSchedulerConfiguration`` and the plugin args'
``Validate*Args``, worded as upstream words them, with the field path) and the framework's
own refusals when it builds a profile (an unknown plugin, one enabled twice or at an
extension point it does not implement; see ``profile.build_profile``).

Extenders are refused: Verdict does not call out to them, so it could not answer as a
scheduler that does.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import msgspec
import orjson

from service.engine.objects import NodeSelectorTerm
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    STRATEGIES,
    validate_balanced_resources,
    validate_function_shape,
    validate_scoring_strategy,
)
from service.engine.scheduler.profile import (
    DEFAULT_PLUGIN_ARGS,
    DEFAULT_RESOURCES,
    DEFAULT_SCHEDULER_NAME,
    EXTENSION_POINTS,
    IN_TREE,
    REQUESTED_TO_CAPACITY_RATIO,
    AddedAffinity,
    DefaultPreemptionArgs,
    DefaultSpreadConstraint,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PluginRef,
    PluginSet,
    PodTopologySpreadArgs,
    Profile,
    ProfileError,
    ResourceSpec,
    ScoringStrategy,
    VolumeBindingArgs,
    build_profile,
    default_plugins,
    merge_plugins,
)
from service.engine.version import EngineSettings
from service.ingest import wire
from service.ingest.errors import IngestError
from service.ingest.kube import node_selector_term, preferred_terms
from service.ingest.yaml_json import yaml_to_json

__all__ = ["API_VERSION", "SchedulerConfigError", "scheduler_profiles"]

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"
# The JSON form of a YAML text is at most a few times its size (quotes, braces, "null").
_YAML_JSON_FACTOR = 8
_INT32 = (-(2**31), 2**31 - 1)
_TOP_FIELDS = {
    "apiVersion",
    "kind",
    "parallelism",
    "leaderElection",
    "clientConnection",
    "enableProfiling",
    "enableContentionProfiling",
    "percentageOfNodesToScore",
    "podInitialBackoffSeconds",
    "podMaxBackoffSeconds",
    "profiles",
    "extenders",
    "delayCacheUntilActive",
}
_DNS1123_SUBDOMAIN = re.compile(
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z"
)


class SchedulerConfigError(Exception):
    """Every problem found, as (field path, message) pairs."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in errors))
        self.errors = errors


class _Reader:
    """Strict, typed access to a decoded JSON document, collecting errors with paths; it
    reads the document as the release ``settings`` mirrors validates it."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self.errors: list[tuple[str, str]] = []

    def fail(self, path: str, message: str) -> None:
        self.errors.append((path, message))

    def obj(self, value: Any, path: str, fields: set[str] | None = None) -> dict:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(path, "must be an object")
            return {}
        if fields is not None:
            for key in value:
                if key not in fields:
                    self.fail(f"{path}.{key}" if path else key, f'unknown field "{key}"')
        return value

    def array(self, value: Any, path: str) -> list:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(path, "must be an array")
            return []
        return value

    def int32(self, value: Any, path: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, "must be an integer")
            return None
        if not _INT32[0] <= value <= _INT32[1]:
            self.fail(path, f"{value} does not fit in an int32")
            return None
        return value

    def _typed(self, value: Any, path: str, kind: type, what: str) -> Any:
        """``value`` when it is absent (None) or a ``kind``; else None, failing ``path`` with
        "must be ``what``"."""
        if value is None or isinstance(value, kind):
            return value
        self.fail(path, f"must be {what}")
        return None

    def string(self, value: Any, path: str) -> str | None:
        return self._typed(value, path, str, "a string")

    def boolean(self, value: Any, path: str) -> bool | None:
        return self._typed(value, path, bool, "a boolean")


def _document(raw: Any, path: str) -> dict:
    """The configuration as an object: given as one, or as its YAML / JSON text."""
    if isinstance(raw, str):
        try:
            text = raw.encode()
            raw = orjson.loads(yaml_to_json(text, limit=_YAML_JSON_FACTOR * len(text) + 2))
        except IngestError as exc:
            raise SchedulerConfigError([(path, exc.errors[0].message)]) from None
    if not isinstance(raw, dict):
        raise SchedulerConfigError([(path, f"must be a {KIND} object or its YAML text")])
    return raw


def scheduler_profiles(
    raw: Any, settings: EngineSettings, path: str = "schedulerConfiguration"
) -> dict[str, Profile]:
    """The configuration's profiles by schedulerName, merged with the default plugins of
    the release ``settings`` mirrors. Raises SchedulerConfigError.

    A document read before for the same release comes from a small cache: an impact or a
    simulation reads one configuration for every decision, and reading it costs as much as
    a placement on twenty nodes. The profiles are frozen; each caller gets its own dict."""
    key = _cache_key(raw, settings, path)
    with _READ_LOCK:
        profiles = _READ.get(key) if key is not None else None
        if profiles is not None:
            _READ.move_to_end(key)
            return dict(profiles)
    profiles = _read_profiles(raw, settings, path)
    if key is not None:
        with _READ_LOCK:
            _READ[key] = profiles
            while len(_READ) > _READ_SIZE:
                _READ.popitem(last=False)
    return dict(profiles)


_READ_SIZE = 64
_READ: OrderedDict[tuple, dict[str, Profile]] = OrderedDict()
_READ_LOCK = threading.Lock()


def _cache_key(raw: Any, settings: EngineSettings, path: str) -> tuple | None:
    """The document's JSON text, with the release and the path; None when the text does not
    hold the document's values (a tuple for an array, NaN), which are then read each time."""
    if isinstance(raw, str):
        return (raw, settings, path)
    try:
        text = orjson.dumps(raw)
    except (orjson.JSONEncodeError, TypeError):
        return None
    if orjson.loads(text) != raw:
        return None
    return (text, settings, path)


def _read_profiles(raw: Any, settings: EngineSettings, path: str) -> dict[str, Profile]:
    """scheduler_profiles' reading of the document, every time."""
    doc = _document(raw, path)
    r = _Reader(settings)
    r.obj(doc, "", _TOP_FIELDS)
    if doc.get("apiVersion") != API_VERSION:
        r.fail("apiVersion", f'must be "{API_VERSION}", got {doc.get("apiVersion")!r}')
    if doc.get("kind") != KIND:
        r.fail("kind", f'must be "{KIND}", got {doc.get("kind")!r}')
    _check_top(r, doc)
    percentage = r.int32(doc.get("percentageOfNodesToScore"), "percentageOfNodesToScore")
    _check_percentage(r, percentage, "percentageOfNodesToScore")
    profiles_raw = r.array(doc.get("profiles"), "profiles") or [{}]
    if len(profiles_raw) == 1 and isinstance(profiles_raw[0], dict):
        profiles_raw = [{"schedulerName": DEFAULT_SCHEDULER_NAME, **profiles_raw[0]}]
    profiles: dict[str, Profile] = {}
    first_by_name: dict[str, int] = {}
    for i, item in enumerate(profiles_raw):
        where = f"profiles[{i}]"
        profile = _profile(r, item, where, percentage, settings)
        if profile is None:
            continue
        name = profile.scheduler_name
        if name in first_by_name:
            r.fail(
                f"{where}.schedulerName",
                f'Duplicate value: "profiles[{first_by_name[name]}].schedulerName"',
            )
            continue
        first_by_name[name] = i
        profiles[name] = profile
    if r.errors:
        raise SchedulerConfigError([(f"{path}.{p}" if p else path, m) for p, m in r.errors])
    return profiles


def _check_top(r: _Reader, doc: dict) -> None:
    """The configuration's own fields that bound no decision still have to be valid."""
    parallelism = r.int32(doc.get("parallelism"), "parallelism")
    if parallelism is not None and parallelism <= 0:
        r.fail("parallelism", "should be an integer value greater than zero")
    initial = r.int32(doc.get("podInitialBackoffSeconds"), "podInitialBackoffSeconds")
    maximum = r.int32(doc.get("podMaxBackoffSeconds"), "podMaxBackoffSeconds")
    initial = 1 if initial is None else initial
    maximum = 10 if maximum is None else maximum
    if initial <= 0:
        r.fail("podInitialBackoffSeconds", "must be greater than 0")
    if maximum < initial:
        r.fail("podMaxBackoffSeconds", "must be greater than or equal to PodInitialBackoffSeconds")
    for key in ("leaderElection", "clientConnection"):
        r.obj(doc.get(key), key)
    for key in ("enableProfiling", "enableContentionProfiling", "delayCacheUntilActive"):
        r.boolean(doc.get(key), key)
    if r.array(doc.get("extenders"), "extenders"):
        r.fail("extenders", "scheduler extenders are not modelled: Verdict cannot call them")


def _check_percentage(r: _Reader, value: int | None, path: str) -> None:
    if value is not None and not 0 <= value <= 100:
        r.fail(path, f"Invalid value: {value}: not in valid range [0-100]")


def _profile(
    r: _Reader, raw: Any, path: str, global_percentage: int | None, settings: EngineSettings
) -> Profile | None:
    item = r.obj(
        raw, path, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"}
    )
    name = r.string(item.get("schedulerName"), f"{path}.schedulerName")
    if not name:
        r.fail(f"{path}.schedulerName", "Required value")
    percentage = r.int32(item.get("percentageOfNodesToScore"), f"{path}.percentageOfNodesToScore")
    _check_percentage(r, percentage, f"{path}.percentageOfNodesToScore")
    plugins = _plugins(r, item.get("plugins"), f"{path}.plugins")
    args = _plugin_config(r, item.get("pluginConfig"), f"{path}.pluginConfig")
    if not name:
        return None
    try:
        return build_profile(
            name,
            merge_plugins(plugins, default_plugins(settings)),
            args,
            percentage if percentage is not None else global_percentage,
            settings=settings,
        )
    except ProfileError as exc:
        for where, message in exc.errors:
            r.fail(f"{path}.{where}", message)
        return None


def _plugins(r: _Reader, raw: Any, path: str) -> dict[str, PluginSet]:
    points = ("multiPoint", *EXTENSION_POINTS)
    item = r.obj(raw, path, set(points))
    out: dict[str, PluginSet] = {}
    for point in points:
        if point not in item:
            continue
        where = f"{path}.{point}"
        sets = r.obj(item[point], where, {"enabled", "disabled"})
        enabled = []
        for i, ref in enumerate(r.array(sets.get("enabled"), f"{where}.enabled")):
            ref = r.obj(ref, f"{where}.enabled[{i}]", {"name", "weight"})
            name = r.string(ref.get("name"), f"{where}.enabled[{i}].name") or ""
            weight = r.int32(ref.get("weight"), f"{where}.enabled[{i}].weight") or 0
            enabled.append(PluginRef(name, weight))
        disabled = []
        for i, ref in enumerate(r.array(sets.get("disabled"), f"{where}.disabled")):
            ref = r.obj(ref, f"{where}.disabled[{i}]", {"name"})
            disabled.append(r.string(ref.get("name"), f"{where}.disabled[{i}].name") or "")
        out[point] = PluginSet(tuple(enabled), tuple(disabled))
    return out


def _plugin_config(r: _Reader, raw: Any, path: str) -> dict[str, object]:
    """validatePluginConfig: one entry per plugin, each plugin's args decoded, defaulted
    and validated."""
    out: dict[str, object] = {}
    for i, entry in enumerate(r.array(raw, path)):
        where = f"{path}[{i}]"
        entry = r.obj(entry, where, {"name", "args"})
        name = r.string(entry.get("name"), f"{where}.name") or ""
        if name in out:
            r.fail(where, f'Duplicate value: "{name}"')
            continue
        if name not in IN_TREE:
            r.fail(f"{where}.name", f'plugin "{name}" does not exist')
            continue
        decode = _ARGS.get(name)
        args = entry.get("args")
        if decode is None:
            if args:
                r.fail(f"{where}.args", f'plugin "{name}" takes no args')
            continue
        body = r.obj(args, f"{where}.args")
        kind = body.get("kind")
        if kind is not None and kind != f"{name}Args":
            r.fail(f"{where}.args", "has to match plugin args")
            continue
        out[name] = decode(
            r, {k: v for k, v in body.items() if k not in ("kind", "apiVersion")}, f"{where}.args"
        )
    return out


# --- each plugin's args: decoded, defaulted (v1 defaults.go), validated (validation_pluginargs.go)


def _resource_specs(r: _Reader, raw: Any, path: str) -> tuple[ResourceSpec, ...]:
    specs = []
    for i, item in enumerate(r.array(raw, path)):
        item = r.obj(item, f"{path}[{i}]", {"name", "weight"})
        name = r.string(item.get("name"), f"{path}[{i}].name") or ""
        weight = r.int32(item.get("weight"), f"{path}[{i}].weight") or 0
        specs.append(ResourceSpec(name, weight or 1))  # a weight of 0 defaults to 1
    return tuple(specs)


def _shape(r: _Reader, raw: Any, path: str) -> tuple[tuple[int, int], ...]:
    points = []
    for i, item in enumerate(r.array(raw, path)):
        item = r.obj(item, f"{path}[{i}]", {"utilization", "score"})
        points.append(
            (
                r.int32(item.get("utilization"), f"{path}[{i}].utilization") or 0,
                r.int32(item.get("score"), f"{path}[{i}].score") or 0,
            )
        )
    return tuple(points)


def _fit_args(r: _Reader, body: dict, path: str) -> NodeResourcesFitArgs:
    body = r.obj(body, path, {"ignoredResources", "ignoredResourceGroups", "scoringStrategy"})
    ignored = [
        r.string(v, f"{path}.ignoredResources[{i}]") or ""
        for i, v in enumerate(r.array(body.get("ignoredResources"), f"{path}.ignoredResources"))
    ]
    groups = [
        r.string(v, f"{path}.ignoredResourceGroups[{i}]") or ""
        for i, v in enumerate(
            r.array(body.get("ignoredResourceGroups"), f"{path}.ignoredResourceGroups")
        )
    ]
    for i, group in enumerate(groups):
        if "/" in group:
            r.fail(
                f"{path}.ignoredResourceGroups[{i}]",
                f'Invalid value: "{group}": resource group name can\'t contain "/"',
            )
        elif not _DNS1123_SUBDOMAIN.match(group):
            r.fail(
                f"{path}.ignoredResourceGroups[{i}]",
                f'Invalid value: "{group}": must be a DNS-1123 subdomain',
            )
    strategy = ScoringStrategy()
    if "scoringStrategy" in body:
        where = f"{path}.scoringStrategy"
        raw = r.obj(
            body["scoringStrategy"], where, {"type", "resources", "requestedToCapacityRatio"}
        )
        kind = r.string(raw.get("type"), f"{where}.type") or ""
        resources = (
            _resource_specs(r, raw.get("resources"), f"{where}.resources") or DEFAULT_RESOURCES
        )
        shape = None
        if kind == REQUESTED_TO_CAPACITY_RATIO:
            ratio = r.obj(
                raw.get("requestedToCapacityRatio"), f"{where}.requestedToCapacityRatio", {"shape"}
            )
            shape = _shape(r, ratio.get("shape"), f"{where}.requestedToCapacityRatio.shape")
            if "requestedToCapacityRatio" not in raw:
                shape = ((0, 10), (100, 0))  # v1 default when the parameters are absent
        for sub, message in validate_scoring_strategy(kind, resources, shape, path=where):
            r.fail(
                sub.replace(f"{where}.shape", f"{where}.requestedToCapacityRatio.shape"), message
            )
        strategy = ScoringStrategy(
            kind if kind in STRATEGIES else "LeastAllocated", resources, shape
        )
    return NodeResourcesFitArgs(frozenset(ignored), frozenset(groups), strategy)


def _balanced_args(r: _Reader, body: dict, path: str) -> NodeResourcesBalancedAllocationArgs:
    body = r.obj(body, path, {"resources"})
    resources = _resource_specs(r, body.get("resources"), f"{path}.resources") or DEFAULT_RESOURCES
    for sub, message in validate_balanced_resources(resources, path=f"{path}.resources"):
        r.fail(sub, message)
    return NodeResourcesBalancedAllocationArgs(resources)


def _preemption_args(r: _Reader, body: dict, path: str) -> DefaultPreemptionArgs:
    body = r.obj(body, path, {"minCandidateNodesPercentage", "minCandidateNodesAbsolute"})
    pct = r.int32(body.get("minCandidateNodesPercentage"), f"{path}.minCandidateNodesPercentage")
    absolute = r.int32(body.get("minCandidateNodesAbsolute"), f"{path}.minCandidateNodesAbsolute")
    pct = 10 if pct is None else pct
    absolute = 100 if absolute is None else absolute
    if not 0 <= pct <= 100:
        r.fail(
            f"{path}.minCandidateNodesPercentage",
            f"Invalid value: {pct}: not in valid range [0, 100]",
        )
    if absolute < 0:
        r.fail(
            f"{path}.minCandidateNodesAbsolute",
            f"Invalid value: {absolute}: not in valid range [0, inf)",
        )
    if pct == 0 and absolute == 0:
        r.fail(
            f"{path}.minCandidateNodesPercentage",
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute",
        )
        r.fail(
            f"{path}.minCandidateNodesAbsolute",
            "Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage",
        )
    return DefaultPreemptionArgs(pct, absolute)


def _interpod_args(r: _Reader, body: dict, path: str) -> InterPodAffinityArgs:
    body = r.obj(body, path, {"hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"})
    weight = r.int32(body.get("hardPodAffinityWeight"), f"{path}.hardPodAffinityWeight")
    weight = 1 if weight is None else weight
    if not 0 <= weight <= 100:
        r.fail(
            f"{path}.hardPodAffinityWeight", f"Invalid value: {weight}: not in valid range [0, 100]"
        )
    ignore = r.boolean(
        body.get("ignorePreferredTermsOfExistingPods"), f"{path}.ignorePreferredTermsOfExistingPods"
    )
    return InterPodAffinityArgs(weight, bool(ignore))


def _node_affinity_args(r: _Reader, body: dict, path: str) -> NodeAffinityArgs:
    body = r.obj(body, path, {"addedAffinity"})
    if body.get("addedAffinity") is None:
        return NodeAffinityArgs()
    where = f"{path}.addedAffinity"
    try:
        raw = msgspec.convert(
            body["addedAffinity"], wire.NodeAffinity, strict=True, forbid_unknown_fields=True
        )
    except msgspec.ValidationError as exc:
        r.fail(where, str(exc))
        return NodeAffinityArgs()
    required: tuple[NodeSelectorTerm, ...] | None = None
    selector = raw.required_during_scheduling_ignored_during_execution
    if selector is not None:
        required = tuple(node_selector_term(t) for t in selector.node_selector_terms or ())
        if not required:
            r.fail(
                f"{where}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                "Required value: must have at least one node selector term",
            )
    field_errors: list = []
    preferred = preferred_terms(
        raw.preferred_during_scheduling_ignored_during_execution,
        f"{where}.preferredDuringSchedulingIgnoredDuringExecution",
        field_errors,
    )
    for err in field_errors:
        r.fail(err.path, err.message)
    return NodeAffinityArgs(AddedAffinity(required, preferred or ()))


def _spread_args(r: _Reader, body: dict, path: str) -> PodTopologySpreadArgs:
    body = r.obj(body, path, {"defaultConstraints", "defaultingType"})
    kind = r.string(body.get("defaultingType"), f"{path}.defaultingType") or "System"
    if kind not in ("System", "List"):
        r.fail(
            f"{path}.defaultingType",
            f'Unsupported value: "{kind}": supported values: "List", "System"',
        )
    constraints = []
    seen: set[tuple[str, str]] = set()
    for i, item in enumerate(r.array(body.get("defaultConstraints"), f"{path}.defaultConstraints")):
        where = f"{path}.defaultConstraints[{i}]"
        item = r.obj(
            item,
            where,
            {
                "maxSkew",
                "topologyKey",
                "whenUnsatisfiable",
                "labelSelector",
                "minDomains",
                "nodeAffinityPolicy",
                "nodeTaintsPolicy",
                "matchLabelKeys",
            },
        )
        skew = r.int32(item.get("maxSkew"), f"{where}.maxSkew") or 0
        key = r.string(item.get("topologyKey"), f"{where}.topologyKey") or ""
        when = r.string(item.get("whenUnsatisfiable"), f"{where}.whenUnsatisfiable") or ""
        if skew <= 0:
            r.fail(f"{where}.maxSkew", f"Invalid value: {skew}: must be greater than zero")
        if not key:
            r.fail(f"{where}.topologyKey", "Required value: can not be empty")
        if when not in ("DoNotSchedule", "ScheduleAnyway"):
            r.fail(
                f"{where}.whenUnsatisfiable",
                f'Unsupported value: "{when}": supported values: "DoNotSchedule", "ScheduleAnyway"',
            )
        if item.get("labelSelector") is not None:
            r.fail(
                f"{where}.labelSelector",
                "Forbidden: constraint must not define a selector, as they deduced for each pod",
            )
        if (key, when) in seen:
            r.fail(f"{where}", f'Duplicate value: "{{{key}, {when}}}"')
        seen.add((key, when))
        constraints.append(DefaultSpreadConstraint(skew, key, when))
    if kind == "System" and constraints:
        r.fail(f"{path}.defaultConstraints", 'Invalid value: when .defaultingType is "System"')
    return PodTopologySpreadArgs(tuple(constraints), kind)


def _volume_binding_args(r: _Reader, body: dict, path: str) -> VolumeBindingArgs:
    body = r.obj(body, path, {"bindTimeoutSeconds", "shape"})
    timeout = r.int32(body.get("bindTimeoutSeconds"), f"{path}.bindTimeoutSeconds")
    timeout = 600 if timeout is None else timeout
    if timeout < 0:
        r.fail(
            f"{path}.bindTimeoutSeconds",
            f"Invalid value: {timeout}: invalid BindTimeoutSeconds, should not be a negative value",
        )
    if body.get("shape") is None:  # null is no shape, as Go decodes it (a nil slice)
        return VolumeBindingArgs(timeout, None)
    shape = _shape(r, body["shape"], f"{path}.shape")
    gate = r.settings.volume_binding_shape_needs_gate
    if gate is not None:  # refused while the gate is off, even an empty list
        r.fail(f"{path}.shape", _shape_refused(shape, gate))
        return VolumeBindingArgs(timeout, None)
    if not shape:  # SetDefaults_VolumeBindingArgs gives an empty one the default shape
        return VolumeBindingArgs(timeout, None)
    for sub, message in validate_function_shape(shape, f"{path}.shape"):
        r.fail(sub, message)
    return VolumeBindingArgs(timeout, shape)


def _shape_refused(shape: tuple[tuple[int, int], ...], gate: str) -> str:
    """ValidateVolumeBindingArgs' refusal of a shape while ``gate`` is off, its value shown
    as Go's field.Invalid shows the internal points (JSON, no field tags)."""
    points = [{"Utilization": u, "Score": s} for u, s in shape]
    return (
        f"Invalid value: {orjson.dumps(points).decode()}: unexpected field `shape`, "
        f"remove it or turn on the feature gate {gate}"
    )


_DURATION = re.compile(r"((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))+\Z")


def _dra_args(r: _Reader, body: dict, path: str) -> DynamicResourcesArgs:
    body = r.obj(body, path, {"filterTimeout"})
    text = r.string(body.get("filterTimeout"), f"{path}.filterTimeout")
    if text is None:
        return DynamicResourcesArgs()
    if text != "0" and not _DURATION.match(text):
        r.fail(
            f"{path}.filterTimeout", f'Invalid value: "{text}": must be a duration such as "10s"'
        )
        return DynamicResourcesArgs()
    return DynamicResourcesArgs(_seconds(text))


def _seconds(text: str) -> float:
    units = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(
        float(n) * units[u]
        for n, _, u in re.findall(r"(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)", text)
    )


_ARGS: dict[str, Callable[[_Reader, dict, str], object]] = {
    "DefaultPreemption": _preemption_args,
    "DynamicResources": _dra_args,
    "InterPodAffinity": _interpod_args,
    "NodeAffinity": _node_affinity_args,
    "NodeResourcesBalancedAllocation": _balanced_args,
    "NodeResourcesFit": _fit_args,
    "PodTopologySpread": _spread_args,
    "VolumeBinding": _volume_binding_args,
}
assert set(_ARGS) == set(DEFAULT_PLUGIN_ARGS)
