"""The normalized cluster model every engine function works on.

Kubernetes objects are parsed once, at the edge (``service.ingest``), into these frozen
structs. Resources are integers in base units: millicores for ``cpu`` (Quantity.MilliValue),
bytes or counts for everything else (Quantity.Value). The format of the first quantity seen
for a resource is kept in ``formats`` so results can print quantities the way
``resource.Quantity.String()`` would. Where a quantity cannot be rebuilt exactly from its
integer and that format (sub-milli cpu such as ``80u``, a value past int64 such as ``1E18``,
a spelling ``String()`` keeps, another format than the first), the ``*_given`` maps keep it
as written (``service.engine.summary`` reads them); a snapshot stored before they existed
has them empty.

msgspec Structs are used instead of dataclasses because the same types are the compact
stored form of a snapshot (msgpack) and decode about ten times faster than dataclasses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime
from functools import cached_property

import msgspec

ResourceList = dict[str, int]

# Annotation keys the engine consults; every other annotation is dropped at ingest.
CONFIG_SOURCE_ANNOTATION = "kubernetes.io/config.source"
CONFIG_MIRROR_ANNOTATION = "kubernetes.io/config.mirror"

# The scheduler plugins whose use by a pod ingest records in ``Pod.unmodelled`` (pod
# affinity terms, topology spread constraints, resource claims): where a profile enables one
# Verdict does not model, it matters to the pods that use it.
UNMODELLED_USES = ("InterPodAffinity", "PodTopologySpread", "DynamicResources")
KEPT_ANNOTATIONS = frozenset({CONFIG_SOURCE_ANNOTATION, CONFIG_MIRROR_ANNOTATION})


class _Frozen(
    msgspec.Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=False, gc=False
):
    """Base for model structs: immutable, compact when encoded.

    ``gc=False``: the collector does not track them. They are built bottom-up and frozen, so
    they can never be part of a reference cycle; a 150,000-pod snapshot is millions of them,
    and tracking made decoding one with the collector on take 4.3 s instead of 0.86 s."""


class Toleration(_Frozen):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class Taint(_Frozen):
    key: str
    effect: str
    value: str = ""
    time_added: datetime | None = None


class NodeSelectorRequirement(_Frozen):
    key: str
    operator: str
    values: tuple[str, ...] = ()


class NodeSelectorTerm(_Frozen):
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()


class PreferredSchedulingTerm(_Frozen):
    """A preferred node-affinity term (or NodeAffinityArgs.addedAffinity's): weight 1..100."""

    weight: int
    preference: NodeSelectorTerm


class LabelSelectorRequirement(_Frozen):
    key: str
    operator: str
    values: tuple[str, ...] = ()


class LabelSelector(_Frozen):
    match_labels: dict[str, str] = {}
    match_expressions: tuple[LabelSelectorRequirement, ...] = ()


class PodAffinityTerm(_Frozen):
    """A pod (anti-)affinity term as stored: selector (None: selects nothing), namespaces
    (empty with no namespaceSelector: the pod's own), namespaceSelector, topology key, and
    the label keys whose values the API server merged into the selector."""

    topology_key: str
    label_selector: LabelSelector | None = None
    namespaces: tuple[str, ...] = ()
    namespace_selector: LabelSelector | None = None
    match_label_keys: tuple[str, ...] = ()
    mismatch_label_keys: tuple[str, ...] = ()


class WeightedPodAffinityTerm(_Frozen):
    weight: int
    term: PodAffinityTerm


class TopologySpreadConstraint(_Frozen):
    max_skew: int
    topology_key: str
    when_unsatisfiable: str
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None  # Honor (default) or Ignore
    node_taints_policy: str | None = None  # Ignore (default) or Honor
    match_label_keys: tuple[str, ...] = ()


class ContainerPort(_Frozen):
    container_port: int
    host_port: int = 0
    protocol: str = "TCP"
    host_ip: str = ""


class Container(_Frozen):
    """One container's resources; key presence matters (scheduler non-zero defaults)."""

    name: str
    requests: ResourceList = {}
    limits: ResourceList = {}
    ports: tuple[ContainerPort, ...] = ()
    requests_given: dict[str, str] = {}  # quantities the integers cannot rebuild, as written
    limits_given: dict[str, str] = {}
    restart_policy: str | None = None  # "Always" on an init container makes it a sidecar
    image: str = ""  # spec image, as written (ImageLocality normalizes it)

    @property
    def is_sidecar(self) -> bool:
        return self.restart_policy == "Always"


class PodCondition(_Frozen):
    type: str
    status: str
    reason: str = ""


class ContainerResize(_Frozen):
    """What a container's status says of its resources (InPlacePodVerticalScaling): the
    requests the runtime actuated (``status.containerStatuses[].resources.requests``) and
    the ones the kubelet allocated (``allocatedResources``)."""

    actuated: ResourceList = {}
    allocated: ResourceList = {}


class PodResize(_Frozen):
    """A resized pod's status resources (k8s component-helpers ``determineEffectiveRequests``
    reads them): per container name (containerStatuses, then initContainerStatuses) those
    of the statuses that carry ``resources``; the pod-level ``status.resources.requests`` and
    ``status.allocatedResources`` (None when the status has no ``resources``); whether the
    PodResizePending condition says Infeasible."""

    containers: dict[str, ContainerResize] = {}
    pod_actuated: ResourceList | None = None
    pod_allocated: ResourceList = {}
    infeasible: bool = False


class EmptyDirLimit(_Frozen):
    """An emptyDir volume's sizeLimit: bytes, and the quantity as the pod spec wrote it."""

    volume: str
    limit: int
    text: str


class PodVolume(_Frozen):
    """A pod volume as the scheduler's volume plugins read it. ``source`` is the volume
    source's field name: persistentVolumeClaim (``claim_name``), ephemeral (the claim is
    ``<pod>-<volume>``), or an inline disk: gcePersistentDisk, awsElasticBlockStore, iscsi,
    rbd (VolumeRestrictions' conflicts), azureDisk, cinder (counted by NodeVolumeLimits once
    migrated to CSI). ``disk`` names the disk (pdName, volumeID, IQN, RBD image, diskURI)."""

    name: str
    source: str
    claim_name: str = ""
    disk: str = ""
    read_only: bool = False
    pool: str = ""  # rbd pool
    monitors: tuple[str, ...] = ()  # rbd monitors


class PodResources(_Frozen):
    """spec.resources (pod-level resources); present even when empty."""

    requests: ResourceList = {}
    limits: ResourceList = {}
    requests_given: dict[str, str] = {}
    limits_given: dict[str, str] = {}


class OwnerReference(_Frozen):
    kind: str
    name: str
    uid: str = ""
    controller: bool = False
    api_version: str = ""


class PodResourceClaim(_Frozen):
    """One of spec.resourceClaims: a claim by name, or a template the claim is made from."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class Pod(_Frozen):
    namespace: str
    name: str
    uid: str = ""
    node_name: str = ""
    labels: dict[str, str] = {}
    annotations: dict[str, str] = {}
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    qos_class: str = ""  # status.qosClass as stored; empty when the API server has not set it
    phase: str = ""
    start_time: datetime | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    nominated_node_name: str = ""
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    overhead: ResourceList = {}
    resources: PodResources | None = None
    node_selector: dict[str, str] = {}
    required_node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    # None: no preferredDuringScheduling list at all (NodeAffinity's PreScore then skips)
    preferred_node_affinity: tuple[PreferredSchedulingTerm, ...] | None = None
    pod_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    pod_anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    pod_anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    topology_spread_constraints: tuple[TopologySpreadConstraint, ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    os_name: str = ""
    owner_references: tuple[OwnerReference, ...] = ()
    host_network: bool = False
    scheduler_name: str = ""
    termination_grace_period_seconds: int | None = None
    # Volumes the kubelet counts as local ephemeral storage (emptyDir on disk, hostPath,
    # gitRepo, configMap): eviction's disk ranking sums their usage.
    local_volume_names: tuple[str, ...] = ()
    empty_dir_limits: tuple[EmptyDirLimit, ...] = ()  # positive sizeLimits, in volume order
    conditions: tuple[PodCondition, ...] = ()  # status.conditions: DisruptionTarget, Ready
    # Volumes with an emptyDir source of any medium: kubectl drain's hasLocalStorage.
    empty_dir_names: tuple[str, ...] = ()
    # The volumes the scheduler's volume plugins read (claims, generic ephemeral volumes,
    # inline disks), in spec order; every other volume is left out.
    volumes: tuple[PodVolume, ...] = ()
    # The scheduler plugins of UNMODELLED_USES whose features this pod uses.
    unmodelled: tuple[str, ...] = ()
    # spec.resourceClaims and status.resourceClaimStatuses (DynamicResources): the claim
    # generated for each template entry, "" when the status names none.
    resource_claims: tuple[PodResourceClaim, ...] = ()
    resource_claim_statuses: dict[str, str] = {}
    # The status resources of a resized pod (None: its status holds none).
    resize: PodResize | None = None
    # Format of the first quantity seen per resource, for printing sums.
    formats: dict[str, str] = {}
    overhead_given: dict[str, str] = {}

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def controller(self) -> OwnerReference | None:
        for ref in self.owner_references:
            if ref.controller:
                return ref
        return None


class NodeCondition(_Frozen):
    type: str
    status: str
    last_heartbeat_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str = ""


class ContainerImage(_Frozen):
    """A node.status.images entry: the image's names and its size in bytes."""

    names: tuple[str, ...] = ()
    size_bytes: int = 0


class Node(_Frozen):
    name: str
    uid: str = ""
    labels: dict[str, str] = {}
    unschedulable: bool = False
    taints: tuple[Taint, ...] = ()
    capacity: ResourceList = {}
    allocatable: ResourceList = {}
    conditions: tuple[NodeCondition, ...] = ()
    creation_timestamp: datetime | None = None
    formats: dict[str, str] = {}
    images: tuple[ContainerImage, ...] = ()  # status.images (ImageLocality)
    capacity_given: dict[str, str] = {}
    allocatable_given: dict[str, str] = {}

    def condition(self, type_: str) -> NodeCondition | None:
        for cond in self.conditions:
            if cond.type == type_:
                return cond
        return None


class PodDisruptionBudget(_Frozen):
    namespace: str
    name: str
    selector: LabelSelector | None = None
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, datetime] = {}
    # What the Eviction API reads besides disruptionsAllowed (engine/drain/eviction_api.py).
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    generation: int = 0  # metadata.generation
    observed_generation: int = 0
    unhealthy_pod_eviction_policy: str = ""  # "" (unset) behaves as IfHealthyBudget


class PriorityClass(_Frozen):
    name: str
    value: int
    global_default: bool = False
    preemption_policy: str | None = None


class Lease(_Frozen):
    namespace: str
    name: str
    holder_identity: str = ""
    renew_time: datetime | None = None
    lease_duration_seconds: int | None = None


# --- kubelet Summary API (/stats/summary), only the fields the eviction manager reads ---


class FsStats(_Frozen):
    time: datetime | None = None
    available_bytes: int | None = None
    capacity_bytes: int | None = None
    used_bytes: int | None = None
    inodes_free: int | None = None
    inodes: int | None = None
    inodes_used: int | None = None


class MemoryStats(_Frozen):
    time: datetime | None = None
    available_bytes: int | None = None
    usage_bytes: int | None = None
    working_set_bytes: int | None = None
    rss_bytes: int | None = None


class RlimitStats(_Frozen):
    time: datetime | None = None
    max_pid: int | None = None
    num_of_running_processes: int | None = None


class ContainerStats(_Frozen):
    name: str
    memory: MemoryStats | None = None
    rootfs: FsStats | None = None
    logs: FsStats | None = None


class VolumeStats(_Frozen):
    name: str
    used_bytes: int | None = None
    inodes_used: int | None = None
    pvc: bool = False  # backed by a PersistentVolumeClaim (not local ephemeral storage)


class PodStats(_Frozen):
    namespace: str
    name: str
    uid: str = ""
    containers: tuple[ContainerStats, ...] = ()
    memory: MemoryStats | None = None
    volumes: tuple[VolumeStats, ...] = ()
    ephemeral_storage: FsStats | None = None
    process_count: int | None = None


class NodeStats(_Frozen):
    node_name: str
    memory: MemoryStats | None = None
    fs: FsStats | None = None
    image_fs: FsStats | None = None
    container_fs: FsStats | None = None
    rlimit: RlimitStats | None = None
    allocatable_memory: MemoryStats | None = None  # systemContainers[name="pods"].memory
    pods: tuple[PodStats, ...] = ()


class Namespace(_Frozen):
    """A Namespace: its labels are what pod affinity's namespaceSelector reads."""

    name: str
    labels: dict[str, str] = {}


class Service(_Frozen):
    """A Service's pod selector (the scheduler's default topology spreading reads it)."""

    namespace: str
    name: str
    selector: dict[str, str] | None = None  # None: no selector (selects no pod)


class WorkloadController(_Frozen):
    """A ReplicaSet, StatefulSet or ReplicationController: its kind and pod selector (a
    ReplicationController's map selector becomes matchLabels)."""

    kind: str
    namespace: str
    name: str
    selector: LabelSelector | None = None


# --- storage: what the scheduler's volume plugins read (VolumeBinding, VolumeZone,
# NodeVolumeLimits, VolumeRestrictions) ---


class PersistentVolume(_Frozen):
    """A PersistentVolume. ``storage_class`` is the beta annotation, else spec's; ``capacity``
    is capacity.storage in bytes (None: absent); ``node_affinity`` the required terms (None:
    no nodeAffinity.required); ``claim_*`` the claimRef; ``csi_driver``/``csi_handle`` the
    CSI source, or the in-tree source ``in_tree`` (plugin name) with its disk ``in_tree_disk``."""

    name: str
    labels: dict[str, str] = {}
    storage_class: str = ""
    capacity: int | None = None
    access_modes: tuple[str, ...] = ()
    volume_mode: str = ""
    node_affinity: tuple[NodeSelectorTerm, ...] | None = None
    claim_namespace: str = ""
    claim_name: str = ""
    claim_uid: str = ""
    has_claim_ref: bool = False
    phase: str = ""
    deleting: bool = False
    csi_driver: str = ""
    csi_handle: str = ""
    in_tree: str = ""
    in_tree_disk: str = ""
    volume_attributes_class: str = ""  # spec.volumeAttributesClassName ("": none)


class PersistentVolumeClaim(_Frozen):
    """A PersistentVolumeClaim. ``storage_class`` is the beta annotation, else spec's (None:
    neither); ``bind_completed`` the PV controller's pv.kubernetes.io/bind-completed;
    ``selected_node`` volume.kubernetes.io/selected-node; ``request`` requests.storage in
    bytes (None: absent); ``controller_uid`` the UID of its controller owner reference."""

    namespace: str
    name: str
    uid: str = ""
    storage_class: str = ""
    volume_name: str = ""
    bind_completed: bool = False
    selected_node: str | None = None
    access_modes: tuple[str, ...] = ()
    volume_mode: str = ""
    request: int | None = None
    selector: LabelSelector | None = None
    phase: str = ""
    deleting: bool = False
    controller_uid: str = ""
    volume_attributes_class: str = ""  # spec.volumeAttributesClassName ("": none)


class TopologySelectorRequirement(_Frozen):
    key: str
    values: tuple[str, ...] = ()


class TopologySelectorTerm(_Frozen):
    match_label_expressions: tuple[TopologySelectorRequirement, ...] = ()


class StorageClass(_Frozen):
    name: str
    provisioner: str = ""
    volume_binding_mode: str = "Immediate"
    allowed_topologies: tuple[TopologySelectorTerm, ...] = ()


class CSINodeDriver(_Frozen):
    name: str
    allocatable_count: int | None = None


class CSINode(_Frozen):
    """A CSINode: its drivers' attach limits and the in-tree plugins migrated to CSI on the
    node (the storage.alpha.kubernetes.io/migrated-plugins annotation)."""

    name: str
    drivers: tuple[CSINodeDriver, ...] = ()
    migrated_plugins: tuple[str, ...] = ()


class CSIDriver(_Frozen):
    name: str
    storage_capacity: bool = False


class CSIStorageCapacity(_Frozen):
    namespace: str
    name: str
    storage_class: str = ""
    capacity: int | None = None
    maximum_volume_size: int | None = None
    node_topology: LabelSelector | None = None


class VolumeAttachment(_Frozen):
    name: str
    attacher: str = ""
    node_name: str = ""
    persistent_volume_name: str = ""


# --- dynamic resources: resource.k8s.io (v1 shapes; v1beta1/v1beta2 converted at ingest) ---


class DeviceAttribute(_Frozen, array_like=True):
    """A device attribute's one value: ``kind`` is "int", "bool", "string" or "version"."""

    kind: str
    value: int | bool | str


class DeviceSubRequest(_Frozen):
    """ExactDeviceRequest or one of firstAvailable's DeviceSubRequests (``name`` is the
    subrequest's). ``selectors`` are CEL expressions; ``count`` is None for mode All."""

    name: str
    device_class_name: str
    selectors: tuple[str, ...] = ()
    allocation_mode: str = "ExactCount"
    count: int | None = 1
    admin_access: bool | None = None


class DeviceRequest(_Frozen):
    """A claim's request: exactly one device spec, or firstAvailable's ordered choices."""

    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


class DeviceConstraint(_Frozen):
    requests: tuple[str, ...] = ()
    match_attribute: str = ""


class AllocatedDevice(_Frozen, array_like=True):
    """status.allocation.devices.results[]: request (``req/sub`` for a subrequest)."""

    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None


class DeviceConfiguration(_Frozen):
    """A class's or claim's ``config`` entry: opaque parameters for ``driver`` (their JSON
    text, kept as written), for the named requests (a claim's; none: every request)."""

    driver: str
    parameters: str
    requests: tuple[str, ...] = ()


class DeviceAllocationConfiguration(_Frozen):
    """AllocationResult.devices.config[]: a configuration the allocation carries, from the
    class (``FromClass``) or the claim (``FromClaim``), for the requests named."""

    source: str
    requests: tuple[str, ...]
    driver: str
    parameters: str


class ResourceClaimSpec(_Frozen):
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()


class ResourceClaim(_Frozen):
    """A ResourceClaim. ``allocation`` is None while unallocated; ``reserved_for`` the pod
    UIDs in status.reservedFor; ``controller_uid`` the controlling owner's uid."""

    namespace: str
    name: str
    uid: str = ""
    spec: ResourceClaimSpec = ResourceClaimSpec()
    allocation: tuple[AllocatedDevice, ...] | None = None
    allocation_node_selector: tuple[NodeSelectorTerm, ...] | None = None
    reserved_for: tuple[str, ...] = ()
    controller_uid: str = ""
    deletion_timestamp: datetime | None = None
    api_version: str = "v1"  # of resource.k8s.io, as the snapshot wrote it


class ResourceClaimTemplate(_Frozen):
    namespace: str
    name: str
    spec: ResourceClaimSpec = ResourceClaimSpec()
    api_version: str = "v1"


class DeviceClass(_Frozen):
    name: str
    selectors: tuple[str, ...] = ()
    config: tuple[DeviceConfiguration, ...] = ()
    api_version: str = "v1"


class Device(_Frozen):
    """A device in a slice: attributes and capacities by their (possibly qualified) name;
    capacities as written (quantity strings)."""

    name: str
    attributes: dict[str, DeviceAttribute] = {}
    capacity: dict[str, str] = {}
    # consumesCounters / bindingConditions set: never allocated with 1.35's default gates
    consumes_counters: bool = False
    binding_conditions: bool = False


class ResourceSlice(_Frozen):
    """A ResourceSlice: the pool it belongs to and which nodes it serves (``node_name``,
    ``all_nodes`` or ``node_selector``)."""

    name: str
    driver: str
    pool: str
    generation: int = 0
    resource_slice_count: int = 1
    node_name: str = ""
    all_nodes: bool = False
    node_selector: tuple[NodeSelectorTerm, ...] | None = None
    devices: tuple[Device, ...] = ()
    # sharedCounters or perDeviceNodeSelection (partitionable devices, off in 1.35)
    partitionable: bool = False
    api_version: str = "v1"


class Snapshot(_Frozen):
    """A cluster's state at one moment: what the engine decides on. Immutable."""

    nodes: tuple[Node, ...] = ()
    pods: tuple[Pod, ...] = ()
    pdbs: tuple[PodDisruptionBudget, ...] = ()
    priority_classes: tuple[PriorityClass, ...] = ()
    leases: tuple[Lease, ...] = ()
    stats: dict[str, NodeStats] = {}
    namespaces: tuple[Namespace, ...] = ()
    services: tuple[Service, ...] = ()
    controllers: tuple[WorkloadController, ...] = ()  # ReplicaSets, StatefulSets, RCs
    persistent_volumes: tuple[PersistentVolume, ...] = ()
    persistent_volume_claims: tuple[PersistentVolumeClaim, ...] = ()
    storage_classes: tuple[StorageClass, ...] = ()
    csi_nodes: tuple[CSINode, ...] = ()
    csi_drivers: tuple[CSIDriver, ...] = ()
    csi_storage_capacities: tuple[CSIStorageCapacity, ...] = ()
    volume_attachments: tuple[VolumeAttachment, ...] = ()
    # resource.k8s.io (DynamicResources), stored as read
    resource_claims: tuple[ResourceClaim, ...] = ()
    resource_claim_templates: tuple[ResourceClaimTemplate, ...] = ()
    device_classes: tuple[DeviceClass, ...] = ()
    resource_slices: tuple[ResourceSlice, ...] = ()
    captured_at: datetime | None = None
    ignored: dict[str, int] = {}  # kinds Verdict does not use, counted
    # Per node, the KubeletConfiguration its kubelet runs (from configz), as captured.
    kubelet_configs: dict[str, dict] = {}


class Cluster:
    """A snapshot plus the indexes decisions need, built lazily and kept with it.

    Snapshots are immutable, so a Cluster is cached by snapshot id and shared between
    requests; its indexes are computed at most once.

    A Cluster can also be made before its snapshot is decoded (``Cluster.deferred``): the
    scheduler's decisions run on a view restored from a compact stored form and need only the
    nodes, so the whole snapshot (150,000 pods take about a second) is decoded the first time
    something reads ``snapshot``, once, whichever thread asks.
    """

    def __init__(self, snapshot: Snapshot) -> None:
        self._snapshot: Snapshot | None = snapshot
        self._load: Callable[[], Snapshot] | None = None
        self._nodes = snapshot.nodes
        self._priority_classes = snapshot.priority_classes
        self._pod_count = len(snapshot.pods)
        self._lock: threading.Lock | None = None

    @classmethod
    def deferred(
        cls,
        load: Callable[[], Snapshot],
        *,
        nodes: tuple[Node, ...],
        priority_classes: tuple[PriorityClass, ...],
        pod_count: int,
    ) -> Cluster:
        """A Cluster whose snapshot ``load()`` returns when first read; ``nodes``,
        ``priority_classes`` and ``pod_count`` must be the snapshot's."""
        cluster = cls.__new__(cls)
        cluster._snapshot = None
        cluster._load = load
        cluster._nodes = nodes
        cluster._priority_classes = priority_classes
        cluster._pod_count = pod_count
        cluster._lock = threading.Lock()
        return cluster

    @property
    def snapshot(self) -> Snapshot:
        snapshot = self._snapshot
        if snapshot is None:  # deferred: _lock and _load are set
            with self._lock:  # type: ignore[union-attr]
                snapshot = self._snapshot
                if snapshot is None:
                    snapshot = self._snapshot = self._load()  # type: ignore[misc]
                    self._load = None
        return snapshot

    @property
    def snapshot_loaded(self) -> bool:
        """Whether a deferred snapshot has been decoded: what the tests observe to hold the
        store to its promise that a restored scheduler view decodes no pod."""
        return self._snapshot is not None

    @property
    def nodes(self) -> tuple[Node, ...]:
        """The snapshot's nodes (available before a deferred snapshot is decoded)."""
        return self._nodes

    @property
    def priority_classes(self) -> tuple[PriorityClass, ...]:
        """The snapshot's PriorityClasses (available before a deferred snapshot is decoded)."""
        return self._priority_classes

    @property
    def pod_count(self) -> int:
        """How many pods the snapshot holds (available before it is decoded)."""
        return self._pod_count

    @cached_property
    def nodes_by_name(self) -> dict[str, Node]:
        return {node.name: node for node in self._nodes}

    @cached_property
    def pods_by_node(self) -> dict[str, tuple[Pod, ...]]:
        """Pods bound to each node, in snapshot order (terminal pods included)."""
        return self._group_pods_by_node(None)

    def build_pods_by_node(self, pause: Callable[[], None]) -> None:
        """Build ``pods_by_node`` now, calling ``pause`` every few thousand pods: a warming
        thread lets request threads of its process run (150,000 pods take about 30 ms)."""
        if "pods_by_node" not in self.__dict__:
            self.__dict__["pods_by_node"] = self._group_pods_by_node(pause)

    def _group_pods_by_node(
        self, pause: Callable[[], None] | None, step: int = 8192
    ) -> dict[str, tuple[Pod, ...]]:
        grouped: dict[str, list[Pod]] = {node.name: [] for node in self.snapshot.nodes}
        pods = self.snapshot.pods
        for start in range(0, len(pods), step):
            for pod in pods[start : start + step]:
                if pod.node_name:
                    grouped.setdefault(pod.node_name, []).append(pod)
            if pause is not None:
                pause()
        return {name: tuple(pods) for name, pods in grouped.items()}

    @cached_property
    def pod_keys(self) -> frozenset[str]:
        """Every pod's namespace/name: kept with the snapshot, so that a queue run on it
        (scheduler/queue.py, counting the pods it adds and removes) does not collect them
        again each time."""
        return frozenset(pod.key for pod in self.snapshot.pods)

    @cached_property
    def leases_by_node(self) -> dict[str, Lease]:
        """Node leases live in kube-node-lease and carry the node's name."""
        return {
            lease.name: lease
            for lease in self.snapshot.leases
            if lease.namespace == "kube-node-lease"
        }

    @cached_property
    def priority_classes_by_name(self) -> dict[str, PriorityClass]:
        return {pc.name: pc for pc in self._priority_classes}

    def node(self, name: str) -> Node | None:
        return self.nodes_by_name.get(name)

    def pods_on(self, node_name: str) -> tuple[Pod, ...]:
        return self.pods_by_node.get(node_name, ())
