"""A scheduling profile: which plugins run at each extension point, their weights and args.

Mirrors kube-scheduler's internal configuration types (``pkg/scheduler/apis/config``
types.go and types_pluginargs.go) after defaulting, and the default profile of
``pkg/scheduler/apis/config/v1`` ``default_plugins.go`` / ``defaults.go``. A
KubeSchedulerConfiguration read from a request (``service/ingest/kubescheduler_config.py``)
becomes one ``Profile`` per ``schedulerName``; the engine only ever sees a ``Profile``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from service.engine.objects import NodeSelectorTerm, PreferredSchedulingTerm

__all__ = [
    "DEFAULT_PLUGINS",
    "DEFAULT_PLUGIN_ARGS",
    "DEFAULT_PROFILE",
    "DEFAULT_RESOURCES",
    "DEFAULT_SCHEDULER_NAME",
    "EXTENSION_POINTS",
    "IN_TREE",
    "AddedAffinity",
    "DefaultPreemptionArgs",
    "DefaultSpreadConstraint",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PluginRef",
    "PluginSet",
    "PodTopologySpreadArgs",
    "Profile",
    "ProfileError",
    "ResourceSpec",
    "ScoringStrategy",
    "VolumeBindingArgs",
    "build_profile",
    "merge_plugins",
]

DEFAULT_SCHEDULER_NAME = "default-scheduler"

LEAST_ALLOCATED = "LeastAllocated"
MOST_ALLOCATED = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO = "RequestedToCapacityRatio"


@dataclass(frozen=True, slots=True)
class ResourceSpec:
    """config.ResourceSpec: a resource name and its weight."""

    name: str
    weight: int = 1


DEFAULT_RESOURCES = (ResourceSpec("cpu", 1), ResourceSpec("memory", 1))


@dataclass(frozen=True, slots=True)
class ScoringStrategy:
    """config.ScoringStrategy. ``shape`` holds RequestedToCapacityRatio's (utilization,
    score) points on the configuration's 0..10 score scale."""

    type: str = LEAST_ALLOCATED
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    shape: tuple[tuple[int, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class NodeResourcesFitArgs:
    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()
    scoring_strategy: ScoringStrategy = ScoringStrategy()


@dataclass(frozen=True, slots=True)
class NodeResourcesBalancedAllocationArgs:
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


@dataclass(frozen=True, slots=True)
class AddedAffinity:
    """NodeAffinityArgs.addedAffinity (a v1.NodeAffinity): required terms (None: no
    requiredDuringScheduling part) and preferred terms."""

    required: tuple[NodeSelectorTerm, ...] | None = None
    preferred: tuple[PreferredSchedulingTerm, ...] = ()


@dataclass(frozen=True, slots=True)
class NodeAffinityArgs:
    added_affinity: AddedAffinity | None = None


@dataclass(frozen=True, slots=True)
class DefaultPreemptionArgs:
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 100


@dataclass(frozen=True, slots=True)
class InterPodAffinityArgs:
    hard_pod_affinity_weight: int = 1
    ignore_preferred_terms_of_existing_pods: bool = False


@dataclass(frozen=True, slots=True)
class DefaultSpreadConstraint:
    """A PodTopologySpreadArgs.defaultConstraints entry (no labelSelector: the scheduler
    derives it from the pod's Services and controllers)."""

    max_skew: int
    topology_key: str
    when_unsatisfiable: str


# The "System" defaulting type's constraints (podtopologyspread/plugin.go systemDefaultConstraints).
SYSTEM_DEFAULT_CONSTRAINTS = (
    DefaultSpreadConstraint(3, "kubernetes.io/hostname", "ScheduleAnyway"),
    DefaultSpreadConstraint(5, "topology.kubernetes.io/zone", "ScheduleAnyway"),
)


@dataclass(frozen=True, slots=True)
class PodTopologySpreadArgs:
    default_constraints: tuple[DefaultSpreadConstraint, ...] = ()
    defaulting_type: str = "System"


@dataclass(frozen=True, slots=True)
class VolumeBindingArgs:
    bind_timeout_seconds: int = 600
    shape: tuple[tuple[int, int], ...] | None = None


@dataclass(frozen=True, slots=True)
class DynamicResourcesArgs:
    filter_timeout_seconds: float = 10.0


DEFAULT_PLUGIN_ARGS: Mapping[str, object] = MappingProxyType(
    {
        "DefaultPreemption": DefaultPreemptionArgs(),
        "DynamicResources": DynamicResourcesArgs(),
        "InterPodAffinity": InterPodAffinityArgs(),
        "NodeAffinity": NodeAffinityArgs(),
        "NodeResourcesBalancedAllocation": NodeResourcesBalancedAllocationArgs(),
        "NodeResourcesFit": NodeResourcesFitArgs(),
        "PodTopologySpread": PodTopologySpreadArgs(),
        "VolumeBinding": VolumeBindingArgs(),
    }
)


@dataclass(frozen=True, slots=True)
class Profile:
    """A KubeSchedulerProfile after defaulting and multiPoint expansion: the enabled plugins
    of each extension point in the order they run, the score weights, every plugin's args
    and the profile's percentageOfNodesToScore (None: the adaptive default)."""

    scheduler_name: str = DEFAULT_SCHEDULER_NAME
    pre_filter: tuple[str, ...] = ()
    filter: tuple[str, ...] = ()
    post_filter: tuple[str, ...] = ()
    pre_score: tuple[str, ...] = ()
    score: tuple[tuple[str, int], ...] = ()
    args: Mapping[str, object] = field(default_factory=lambda: DEFAULT_PLUGIN_ARGS)
    percentage_of_nodes_to_score: int | None = None

    def args_of(self, name: str) -> object | None:
        """The plugin's args (its defaults when the configuration gives none)."""
        found = self.args.get(name)
        return found if found is not None else DEFAULT_PLUGIN_ARGS.get(name)

    def weight_of(self, name: str) -> int:
        for plugin, weight in self.score:
            if plugin == name:
                return weight
        return 0


# --- which in-tree plugin implements which extension point (v1.35 plugins/registry.go) ---

EXTENSION_POINTS = (
    "preEnqueue",
    "queueSort",
    "preFilter",
    "filter",
    "postFilter",
    "preScore",
    "score",
    "reserve",
    "permit",
    "preBind",
    "bind",
    "postBind",
)
_FILTERING = ("preFilter", "filter")
_SCORING = ("preScore", "score")

IN_TREE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "SchedulingGates": ("preEnqueue",),
        "PrioritySort": ("queueSort",),
        "NodeUnschedulable": ("filter",),
        "NodeName": ("filter",),
        "TaintToleration": ("filter", *_SCORING),
        "NodeAffinity": (*_FILTERING, *_SCORING),
        "NodePorts": _FILTERING,
        "NodeResourcesFit": (*_FILTERING, *_SCORING),
        "VolumeRestrictions": _FILTERING,
        "NodeVolumeLimits": _FILTERING,
        "VolumeBinding": (*_FILTERING, "reserve", "preBind", *_SCORING),
        "VolumeZone": _FILTERING,
        "PodTopologySpread": (*_FILTERING, *_SCORING),
        "InterPodAffinity": (*_FILTERING, *_SCORING),
        "DynamicResources": (
            "preEnqueue",
            *_FILTERING,
            "postFilter",
            *_SCORING,
            "reserve",
            "preBind",
        ),
        "DefaultPreemption": ("postFilter",),
        "NodeResourcesBalancedAllocation": _SCORING,
        "ImageLocality": ("score",),
        "DefaultBinder": ("bind",),
    }
)


@dataclass(frozen=True, slots=True)
class PluginRef:
    """config.Plugin: a name and, for score plugins, a weight (0: unset)."""

    name: str
    weight: int = 0


@dataclass(frozen=True, slots=True)
class PluginSet:
    """config.PluginSet: plugins enabled (in order) and disabled ("*": every default)."""

    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[str, ...] = ()


# default_plugins.go getDefaultPlugins (v1.35), with DynamicResources (its feature gate on
# since 1.34) inserted before DefaultPreemption, weight 2, by applyFeatureGates.
DEFAULT_PLUGINS: Mapping[str, PluginSet] = MappingProxyType(
    {
        "multiPoint": PluginSet(
            tuple(
                PluginRef(name, weight)
                for name, weight in (
                    ("SchedulingGates", 0),
                    ("PrioritySort", 0),
                    ("NodeUnschedulable", 0),
                    ("NodeName", 0),
                    ("TaintToleration", 3),
                    ("NodeAffinity", 2),
                    ("NodePorts", 0),
                    ("NodeResourcesFit", 1),
                    ("VolumeRestrictions", 0),
                    ("NodeVolumeLimits", 0),
                    ("VolumeBinding", 0),
                    ("VolumeZone", 0),
                    ("PodTopologySpread", 2),
                    ("InterPodAffinity", 2),
                    ("DynamicResources", 2),
                    ("DefaultPreemption", 0),
                    ("NodeResourcesBalancedAllocation", 1),
                    ("ImageLocality", 1),
                    ("DefaultBinder", 0),
                )
            )
        )
    }
)


class ProfileError(Exception):
    """A profile the scheduler would refuse to build: (field path, message) pairs, the
    paths relative to the profile."""

    def __init__(self, errors: list[tuple[str, str]]) -> None:
        super().__init__("; ".join(f"{p}: {m}" for p, m in errors))
        self.errors = errors


def _merge_set(default: PluginSet, custom: PluginSet) -> PluginSet:
    """v1 mergePluginSet: defaults not disabled (none with "*"), each replaced in place by a
    custom entry of the same name, then the remaining custom entries in order."""
    disabled = set(custom.disabled) | set(default.disabled)
    by_name = {ref.name: i for i, ref in enumerate(custom.enabled)}
    replaced: set[int] = set()
    enabled: list[PluginRef] = []
    if "*" not in disabled:
        for ref in default.enabled:
            if ref.name in disabled:
                continue
            index = by_name.get(ref.name)
            if index is not None:
                ref = custom.enabled[index]
                replaced.add(index)
            enabled.append(ref)
    enabled.extend(ref for i, ref in enumerate(custom.enabled) if i not in replaced)
    return PluginSet(tuple(enabled), (*custom.disabled, *default.disabled))


def merge_plugins(
    custom: Mapping[str, PluginSet], defaults: Mapping[str, PluginSet] = DEFAULT_PLUGINS
) -> dict[str, PluginSet]:
    """v1 mergePlugins: the defaults with the profile's own plugin sets merged in."""
    return {
        point: _merge_set(defaults.get(point, PluginSet()), custom.get(point, PluginSet()))
        for point in ("multiPoint", *EXTENSION_POINTS)
    }


def _type_name(point: str) -> str:
    return point[0].upper() + point[1:] + "Plugin"


def _expand_point(
    point: str, plugins: Mapping[str, PluginSet], errors: list[tuple[str, str]]
) -> list[str]:
    """updatePluginList and expandMultiPointPlugins for one extension point: the explicit
    plugins re-configured from multiPoint first, then multiPoint's own, then the other
    explicit ones; a plugin disabled at the point is skipped, "*" skips the expansion."""
    own = plugins[point]
    explicit: list[str] = []
    for i, ref in enumerate(own.enabled):
        where = f"plugins.{point}.enabled[{i}]"
        if ref.name not in IN_TREE:
            errors.append((where, f'{_type_name(point)} "{ref.name}" does not exist'))
        elif point not in IN_TREE[ref.name]:
            errors.append(
                (where, f'plugin "{ref.name}" does not extend {_type_name(point)} plugin')
            )
        elif ref.name in explicit:
            errors.append(
                (where, f'plugin "{ref.name}" already registered as "{_type_name(point)}"')
            )
        else:
            explicit.append(ref.name)
    if "*" in own.disabled:
        return explicit
    overridden: list[str] = []
    from_multi: list[str] = []
    for i, ref in enumerate(plugins["multiPoint"].enabled):
        if ref.name not in IN_TREE:
            where = f"plugins.multiPoint.enabled[{i}]"
            message = f'plugin "{ref.name}" does not exist'
            if (where, message) not in errors:
                errors.append((where, message))
            continue
        if point not in IN_TREE[ref.name] or ref.name in own.disabled:
            continue
        if ref.name in explicit:
            overridden.append(ref.name)
        elif ref.name in from_multi:
            errors.append(
                (
                    f"plugins.multiPoint.enabled[{i}]",
                    f'plugin "{ref.name}" already registered as "{_type_name(point)}"',
                )
            )
        else:
            from_multi.append(ref.name)
    first = [n for n in explicit if n in overridden]
    rest = [n for n in explicit if n not in overridden]
    return [*first, *from_multi, *rest]


_MAX_TOTAL_SCORE = 2**63 - 1


def _score_weights(
    names: list[str], plugins: Mapping[str, PluginSet], errors: list[tuple[str, str]]
) -> tuple[tuple[str, int], ...]:
    """getScoreWeights: a score plugin's weight from its score entry, else its multiPoint
    entry; 0 means 1; the sum of weight × 100 must not overflow int64."""
    weights: dict[str, int] = {}
    for ref in (*plugins["score"].enabled, *plugins["multiPoint"].enabled):
        if ref.name in names and ref.name not in weights:
            weights[ref.name] = ref.weight or 1
    total = 0
    for name in names:
        weight = weights.get(name, 1)
        if weight * 100 > _MAX_TOTAL_SCORE - total:
            errors.append(("plugins.score", "total score of Score plugins could overflow"))
            break
        total += weight * 100
    return tuple((name, weights.get(name, 1)) for name in names)


def build_profile(
    scheduler_name: str,
    plugins: Mapping[str, PluginSet],
    args: Mapping[str, object],
    percentage_of_nodes_to_score: int | None = None,
) -> Profile:
    """frameworkImpl's construction (NewFramework) from merged plugin sets: each extension
    point's plugins in run order, the score weights, the one queue sort and the bind
    plugins checked. Raises ProfileError as the scheduler refuses to start."""
    errors: list[tuple[str, str]] = []
    points = {point: _expand_point(point, plugins, errors) for point in EXTENSION_POINTS}
    if len(points["queueSort"]) != 1:
        errors.append(
            (
                "plugins.queueSort",
                "only one queue sort plugin required for profile with scheduler name "
                f'"{scheduler_name}", but got {len(points["queueSort"])}',
            )
        )
    if not points["bind"]:
        errors.append(
            (
                "plugins.bind",
                "at least one bind plugin is needed for profile with scheduler name "
                f'"{scheduler_name}"',
            )
        )
    score = _score_weights(points["score"], plugins, errors)
    if errors:
        raise ProfileError(errors)
    return Profile(
        scheduler_name=scheduler_name,
        pre_filter=tuple(points["preFilter"]),
        filter=tuple(points["filter"]),
        post_filter=tuple(points["postFilter"]),
        pre_score=tuple(points["preScore"]),
        score=score,
        args={**DEFAULT_PLUGIN_ARGS, **args},
        percentage_of_nodes_to_score=percentage_of_nodes_to_score,
    )


# The default profile: v1.35's default plugins, expanded as the framework expands them.
DEFAULT_PROFILE = build_profile(DEFAULT_SCHEDULER_NAME, merge_plugins({}), DEFAULT_PLUGIN_ARGS)
