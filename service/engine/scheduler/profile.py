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
    "DEFAULT_PLUGIN_ARGS",
    "DEFAULT_PROFILE",
    "DEFAULT_RESOURCES",
    "DEFAULT_SCHEDULER_NAME",
    "DEFAULT_SCORE_WEIGHTS",
    "AddedAffinity",
    "DefaultPreemptionArgs",
    "DefaultSpreadConstraint",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PodTopologySpreadArgs",
    "Profile",
    "ResourceSpec",
    "ScoringStrategy",
    "VolumeBindingArgs",
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

# default_plugins.go getDefaultPlugins (multiPoint, in order) with each plugin's weight
# where it scores; expanded per extension point below by what each plugin implements.
DEFAULT_SCORE_WEIGHTS: Mapping[str, int] = MappingProxyType(
    {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
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


# The default profile (kube-scheduler v1.35 getDefaultPlugins expanded through multiPoint).
DEFAULT_PROFILE = Profile(
    pre_filter=(
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ),
    filter=(
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    ),
    post_filter=("DefaultPreemption",),
    pre_score=(
        "TaintToleration",
        "NodeAffinity",
        "NodeResourcesFit",
        "VolumeBinding",
        "PodTopologySpread",
        "InterPodAffinity",
        "NodeResourcesBalancedAllocation",
    ),
    score=(
        ("TaintToleration", 3),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("VolumeBinding", 1),
        ("PodTopologySpread", 2),
        ("InterPodAffinity", 2),
        ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1),
    ),
)
