"""Which Kubernetes release the engine mirrors, in one place.

Where Kubernetes changed a decision between releases, the engine reads a switch from
``EngineSettings`` instead of comparing versions. Each release's settings object is built
from the oldest release Verdict knows (1.32) by applying, release by release, the named
``Difference``s below: the same table that ``GET /v1/versions`` serves and docs/releases.md
lists. Every release runs with its default feature gates.
Every engine entry point takes the settings as a required argument: a caller that forgets
the release fails instead of answering as the newest one. ``DEFAULT_SETTINGS`` is the newest
release, named explicitly where Verdict answers as it (the snapshot views, the stored
scheduler view).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

ENGINE_VERSION = "0.1.0+k8s-1.37"
KNOWN_VERSIONS = ("1.32", "1.33", "1.34", "1.35", "1.36", "1.37")
DEFAULT_KUBERNETES_VERSION = KNOWN_VERSIONS[-1]

COMPONENTS = ("scheduler", "kubelet", "nodelifecycle")


@dataclass(frozen=True, slots=True)
class EngineSettings:
    """One release's behaviour. The field defaults are the newest release's (1.37)."""

    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    # PodLevelResources feature gate (alpha off in 1.32/1.33, beta on since 1.34): the pod's
    # spec.resources counts in the scheduler, kubelet admission, QoS and eviction.
    pod_level_resources: bool = True
    # ComputePodQOS: "shape" (per-container, 1.37) or "aggregate" (up to 1.36).
    qos_algorithm: str = "shape"
    # NodeResourcesFit's Score reads the incoming pod's pod-level resources (1.34 and 1.35
    # build its resourceAllocationScorer without them; its Filter and BalancedAllocation
    # read them).
    fit_score_pod_level_resources: bool = True
    # NodeResourcesBalancedAllocation's PreScore skips a best-effort pod (none of the
    # balanced resources requested) since 1.33; 1.32 scores it.
    balanced_allocation_skips_best_effort: bool = True
    # NodeResourcesBalancedAllocation scores the change the pod makes to the node's balance
    # (the balance with the pod against the balance without it) since 1.36
    # (kubernetes#135573); up to 1.35 it scores the balance with the pod.
    balanced_allocation_scores_change: bool = True
    # VolumeBinding's reason for a bound volume whose node affinity the node fails: "node(s)
    # didn't match PersistentVolume's node affinity" since 1.33, "node(s) had volume node
    # affinity conflict" in 1.32.
    volume_conflict_names_pv_affinity: bool = True
    # VolumeRestrictions' reason for a ReadWriteOncePod claim in use: "node(s) unavailable due
    # to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another
    # pod" since 1.34, "node has pod using PersistentVolumeClaim with the same name and
    # ReadWriteOncePod access mode" before.
    rwop_reason_says_in_use: bool = True
    # The scheduler and kubelet admission count the host ports of sidecars (restartable init
    # containers) since 1.34; before, only the regular containers' (NodePorts and the node's
    # used ports; the kubelet calls the scheduler's AdmissionCheck).
    host_ports_of_sidecars: bool = True
    # NodeResourcesFit marks a node whose allocatable is below the pod's request
    # UnschedulableAndUnresolvable (preemption cannot help there) since 1.34; before, every
    # shortfall is Unschedulable.
    fit_unresolvable_beyond_allocatable: bool = True
    # InPlacePodVerticalScaling (alpha off in 1.32, beta on in 1.33, GA in 1.35): a resized
    # pod's containers count the largest of their spec, actuated and allocated requests
    # (engine/resize.py) in the scheduler; the kubelet's admit handlers see the pods as it
    # allocated them (resize.as_allocated: admission and critical-pod preemption).
    requests_from_resize_status: bool = True
    # InPlacePodLevelResourcesVerticalScaling (alpha off in 1.35, beta on in 1.36): the same
    # for the pod-level requests, from status.resources and status.allocatedResources.
    pod_level_requests_from_resize_status: bool = True
    # TaintToleration's filter reason names the untolerated taint up to 1.34
    # ("node(s) had untolerated taint {key: value}"); since 1.35 it does not.
    taint_reason_names_taint: bool = False
    # DynamicResourceAllocation gate (beta off in 1.32/1.33, GA since 1.34): the
    # DynamicResources plugin is in the default profile.
    dynamic_resources: bool = True
    # DynamicResources has a Score step (default weight 2) since 1.35.
    dynamic_resources_score: bool = True
    # StorageCapacityScoring (alpha off in 1.33 to 1.36, beta on in 1.37): VolumeBinding's
    # PreScore no longer skips and its Score rates each node by the storage the pod's new
    # volumes would use there (static bindings: the chosen volumes' capacity; dynamic
    # provisioning: the node's CSIStorageCapacity), with VolumeBindingArgs' shape.
    storage_capacity_scoring: bool = True
    # The feature gate, off by default, without which kube-scheduler's validation refuses a
    # VolumeBindingArgs.shape (ValidateVolumeBindingArgs: "unexpected field `shape`, remove
    # it or turn on the feature gate ..."): VolumeCapacityPriority in 1.32, its replacement
    # StorageCapacityScoring in 1.33 to 1.36; None from 1.37, where that gate is on and a
    # shape is accepted.
    volume_binding_shape_needs_gate: str | None = None
    # The resource.k8s.io versions the API server serves by default: none in 1.32/1.33
    # (v1beta1, and v1beta2 from 1.33, are beta APIs, off unless --runtime-config enables
    # them), v1 since 1.34 (the beta versions stay off by default).
    resource_api_versions: tuple[str, ...] = ("v1",)


DEFAULT_SETTINGS = EngineSettings()


@dataclass(frozen=True, slots=True)
class Difference:
    """One behaviour a release changed from the release before it: the engine setting it
    switches and its value from ``release`` on, which component decides differently, in
    words, and the upstream change."""

    release: str
    component: str
    setting: str
    value: object
    summary: str
    upstream: str

    def as_json(self) -> dict:
        return {"component": self.component, "summary": self.summary, "upstream": self.upstream}


# The oldest release Verdict knows, as it behaves with its default feature gates.
BASELINE = EngineSettings(
    kubernetes_version=KNOWN_VERSIONS[0],
    pod_level_resources=False,
    qos_algorithm="aggregate",
    fit_score_pod_level_resources=False,
    balanced_allocation_skips_best_effort=False,
    balanced_allocation_scores_change=False,
    requests_from_resize_status=False,
    pod_level_requests_from_resize_status=False,
    volume_conflict_names_pv_affinity=False,
    host_ports_of_sidecars=False,
    rwop_reason_says_in_use=False,
    fit_unresolvable_beyond_allocatable=False,
    taint_reason_names_taint=True,
    dynamic_resources=False,
    dynamic_resources_score=False,
    storage_capacity_scoring=False,
    volume_binding_shape_needs_gate="VolumeCapacityPriority",
    resource_api_versions=(),
)

DIFFERENCES: tuple[Difference, ...] = (
    Difference(
        "1.33",
        "scheduler",
        "balanced_allocation_skips_best_effort",
        True,
        "NodeResourcesBalancedAllocation no longer scores a best-effort pod (PreScore skips "
        "it), so such a pod's node totals lose that score",
        "kubernetes#129138",
    ),
    Difference(
        "1.33",
        "scheduler",
        "volume_conflict_names_pv_affinity",
        True,
        "VolumeBinding's reason for a node outside a bound volume's node affinity reads "
        '"node(s) didn\'t match PersistentVolume\'s node affinity" instead of "node(s) had '
        'volume node affinity conflict"',
        "kubernetes#129887",
    ),
    Difference(
        "1.33",
        "scheduler",
        "requests_from_resize_status",
        True,
        "InPlacePodVerticalScaling is on by default: a resized pod's containers and sidecars "
        "count the largest of their spec, actuated (status.containerStatuses[].resources) "
        "and allocated requests on its node (only the actuated and allocated ones when the "
        "PodResizePending condition says Infeasible)",
        "KEP-1287 (kubernetes/enhancements#1287)",
    ),
    Difference(
        "1.33",
        "kubelet",
        "requests_from_resize_status",
        True,
        "InPlacePodVerticalScaling is on by default: kubelet admission and critical-pod "
        "preemption see the node's pods as the kubelet allocated them (allocatedResources "
        "as their requests; admission counts the larger of that and what runs, preemption "
        "the allocation); the eviction ranking keeps reading the spec",
        "KEP-1287 (kubernetes/enhancements#1287)",
    ),
    Difference(
        "1.33",
        "scheduler",
        "volume_binding_shape_needs_gate",
        "StorageCapacityScoring",
        "A VolumeBindingArgs.shape in the scheduler configuration is still refused (its "
        "gate is off by default), and the refusal names the feature gate "
        "StorageCapacityScoring, which replaced VolumeCapacityPriority",
        "kubernetes#128184 (KEP-4049)",
    ),
    Difference(
        "1.34",
        "scheduler",
        "pod_level_resources",
        True,
        "PodLevelResources is on by default: a pod's spec.resources is its request in the "
        "scheduler's filters and BalancedAllocation",
        "kubernetes#132999",
    ),
    Difference(
        "1.34",
        "kubelet",
        "pod_level_resources",
        True,
        "PodLevelResources is on by default: a pod's spec.resources counts in kubelet "
        "admission, its QoS class, OOM score adjust and eviction ranking",
        "kubernetes#132999",
    ),
    Difference(
        "1.34",
        "scheduler",
        "host_ports_of_sidecars",
        True,
        "NodePorts counts the host ports of sidecars (restartable init containers), on the "
        "pod and on the node's pods (v1.33.3 and earlier count regular containers only)",
        "kubernetes#132040",
    ),
    Difference(
        "1.34",
        "kubelet",
        "host_ports_of_sidecars",
        True,
        "Kubelet admission counts the host ports of sidecars (restartable init containers), "
        "on the pod and on the node's pods: its generalFilter calls the scheduler's "
        "AdmissionCheck, whose NodePorts check read regular containers only before",
        "kubernetes#132040",
    ),
    Difference(
        "1.34",
        "scheduler",
        "rwop_reason_says_in_use",
        True,
        "VolumeRestrictions' reason for a ReadWriteOncePod claim another pod uses reads "
        '"node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode '
        'already in-use by another pod" instead of "node has pod using '
        'PersistentVolumeClaim with the same name and ReadWriteOncePod access mode"',
        "pkg/scheduler/framework/plugins/volumerestrictions (v1.34.1)",
    ),
    Difference(
        "1.34",
        "scheduler",
        "fit_unresolvable_beyond_allocatable",
        True,
        "NodeResourcesFit marks a node whose allocatable is below the pod's request "
        "UnschedulableAndUnresolvable, so preemption no longer considers it (potential "
        "nodes, candidates and the preemption message change)",
        "kubernetes#131345",
    ),
    Difference(
        "1.34",
        "scheduler",
        "dynamic_resources",
        True,
        "DynamicResourceAllocation is GA: the DynamicResources plugin is in the default "
        "profile (before DefaultPreemption), so pods' resource claims are allocated",
        "kubernetes/enhancements#4381",
    ),
    Difference(
        "1.34",
        "scheduler",
        "resource_api_versions",
        ("v1",),
        "resource.k8s.io/v1 is served by default, so a snapshot's ResourceClaims, "
        "DeviceClasses and ResourceSlices are read in v1; the beta versions (v1beta1, "
        "v1beta2) are off by default in every release, and 1.32 and 1.33 serve none",
        "kubernetes/enhancements#4381 (v1 in 1.34), #3136 (beta APIs off by default)",
    ),
    Difference(
        "1.35",
        "scheduler",
        "taint_reason_names_taint",
        False,
        "TaintToleration's reason no longer names the taint: \"node(s) had untolerated "
        'taint(s)" instead of "node(s) had untolerated taint {key: value}"',
        "kubernetes#134740",
    ),
    Difference(
        "1.35",
        "scheduler",
        "dynamic_resources_score",
        True,
        "DynamicResources gains a Score step, weight 2 in the default profile",
        "kubernetes#134711",
    ),
    Difference(
        "1.36",
        "scheduler",
        "pod_level_requests_from_resize_status",
        True,
        "InPlacePodLevelResourcesVerticalScaling is on by default: a resized pod's pod-level "
        "requests count the largest of spec.resources, status.resources and "
        "status.allocatedResources, in the scheduler and in kubelet admission",
        "kubernetes#137684",
    ),
    Difference(
        "1.36",
        "scheduler",
        "balanced_allocation_scores_change",
        True,
        "NodeResourcesBalancedAllocation scores the change the pod makes to the node's "
        "balance: 50 + (50 + balance with the pod - balance without it) / 2, so a pod that "
        "leaves a node's balance as it was scores 75 there (up to 1.35: the balance with the "
        "pod, 50 to 100)",
        "kubernetes#135573",
    ),
    Difference(
        "1.37",
        "scheduler",
        "fit_score_pod_level_resources",
        True,
        "NodeResourcesFit's score reads the pod's pod-level resources, as its filter does "
        "(1.34 to 1.36 score the containers' requests)",
        "pkg/scheduler/framework/plugins/noderesources/fit.go (v1.37)",
    ),
    Difference(
        "1.37",
        "scheduler",
        "storage_capacity_scoring",
        True,
        "StorageCapacityScoring is beta and on by default: VolumeBinding scores every "
        "feasible node (weight 1), by how full the pod's new volumes would make the "
        "node's storage of their class (100 at 0 %, 0 at 100 %: the default shape)",
        "KEP-4049 (kubernetes/enhancements#4049), v1.37 feature gate defaults",
    ),
    Difference(
        "1.37",
        "scheduler",
        "volume_binding_shape_needs_gate",
        None,
        "A VolumeBindingArgs.shape in the scheduler configuration is accepted (and "
        "validated) now that StorageCapacityScoring is on; up to 1.36 kube-scheduler "
        "refuses one",
        "ValidateVolumeBindingArgs; KEP-4049 (kubernetes/enhancements#4049)",
    ),
    Difference(
        "1.37",
        "kubelet",
        "qos_algorithm",
        "shape",
        "The QoS class is computed per container (each container's requests against its "
        "limits) instead of from the pod's summed requests and limits; an empty "
        "spec.resources no longer makes a pod BestEffort",
        "pkg/apis/core/v1/helper/qos ComputePodQOS (v1.37)",
    ),
)


def _build_releases() -> dict[str, EngineSettings]:
    """Each release's settings: the baseline with every difference up to it applied."""
    releases: dict[str, EngineSettings] = {}
    current = BASELINE
    for version in KNOWN_VERSIONS:
        changes = {d.setting: d.value for d in DIFFERENCES if d.release == version}
        current = replace(current, kubernetes_version=version, **changes)
        releases[version] = current
    # The newest is DEFAULT_SETTINGS itself: callers keep fast paths for it by identity.
    newest = KNOWN_VERSIONS[-1]
    if releases[newest] != DEFAULT_SETTINGS:
        raise AssertionError("the newest release's differences do not give DEFAULT_SETTINGS")
    releases[newest] = DEFAULT_SETTINGS
    return releases


_RELEASES = _build_releases()


def settings_for(version: str) -> EngineSettings:
    """The engine settings of a Kubernetes release Verdict knows (KeyError otherwise)."""
    return _RELEASES[version]


def differences_in(version: str) -> tuple[Difference, ...]:
    """What ``version`` changed from the release before it (KeyError for an unknown one)."""
    settings_for(version)
    return tuple(d for d in DIFFERENCES if d.release == version)
