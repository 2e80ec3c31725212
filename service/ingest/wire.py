"""The Kubernetes JSON shapes Verdict reads, as sparse msgspec structs.

Only the fields a decision uses are declared; msgspec skips everything else (managedFields,
container statuses, env...) while scanning, without building Python objects for it. That is
what keeps ingest of a 350 MB kubectl dump fast and small in memory.
"""

from __future__ import annotations

import sys
from datetime import datetime

import msgspec

from service.engine import objects as m

QuantityValue = str | int | float
WireResourceList = dict[str, QuantityValue]


class _Wire(msgspec.Struct, rename="camel", forbid_unknown_fields=False):
    pass


class OwnerRef(_Wire):
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None


class Metadata(_Wire):
    name: str = ""
    generate_name: str = ""
    namespace: str = ""
    uid: str = ""
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    creation_timestamp: datetime | None = None
    deletion_timestamp: datetime | None = None
    owner_references: list[OwnerRef] | None = None
    generation: int = 0


class Resources(_Wire):
    requests: WireResourceList | None = None
    limits: WireResourceList | None = None


class Port(_Wire):
    container_port: int = 0
    host_port: int = 0
    protocol: str = ""
    host_ip: str = msgspec.field(default="", name="hostIP")


class Container(_Wire):
    name: str = ""
    image: str = ""
    resources: Resources | None = None
    ports: list[Port] | None = None
    restart_policy: str | None = None


class Requirement(_Wire):
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


class LabelSelector(_Wire):
    match_labels: dict[str, str] | None = None
    match_expressions: list[Requirement] | None = None


class NodeSelectorTerm(_Wire):
    match_expressions: list[Requirement] | None = None
    match_fields: list[Requirement] | None = None


class NodeSelector(_Wire):
    node_selector_terms: list[NodeSelectorTerm] | None = None


class PreferredSchedulingTerm(_Wire):
    weight: int = 0
    preference: NodeSelectorTerm | None = None


class NodeAffinity(_Wire):
    required_during_scheduling_ignored_during_execution: NodeSelector | None = None
    preferred_during_scheduling_ignored_during_execution: list[PreferredSchedulingTerm] | None = (
        None
    )


class PodAffinityTerm(_Wire):
    label_selector: LabelSelector | None = None
    namespaces: list[str] | None = None
    topology_key: str = ""
    namespace_selector: LabelSelector | None = None
    match_label_keys: list[str] | None = None
    mismatch_label_keys: list[str] | None = None


class WeightedPodAffinityTerm(_Wire):
    weight: int = 0
    pod_affinity_term: PodAffinityTerm | None = None


class PodAffinity(_Wire):
    required_during_scheduling_ignored_during_execution: list[PodAffinityTerm] | None = None
    preferred_during_scheduling_ignored_during_execution: list[WeightedPodAffinityTerm] | None = (
        None
    )


class Affinity(_Wire):
    node_affinity: NodeAffinity | None = None
    pod_affinity: PodAffinity | None = None
    pod_anti_affinity: PodAffinity | None = None


class TopologySpreadConstraint(_Wire):
    max_skew: int = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    label_selector: LabelSelector | None = None
    min_domains: int | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: list[str] | None = None


class Toleration(_Wire):
    key: str = ""
    operator: str = ""
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None


class EmptyDir(_Wire):
    medium: str = ""
    size_limit: QuantityValue | None = None


class ClaimSource(_Wire):
    claim_name: str = ""
    read_only: bool = False


class DiskSource(_Wire):
    """The inline disk sources the scheduler's volume plugins read (one struct: each kind
    fills in its own identifying field)."""

    pd_name: str = ""  # gcePersistentDisk
    volume_id: str = msgspec.field(default="", name="volumeID")  # awsElasticBlockStore, cinder
    iqn: str = ""  # iscsi
    image: str = ""  # rbd
    pool: str = ""  # rbd
    monitors: list[str] | None = None  # rbd
    disk_uri: str = msgspec.field(default="", name="diskURI")  # azureDisk
    read_only: bool = False


class Volume(_Wire):
    name: str = ""
    empty_dir: EmptyDir | None = None
    host_path: msgspec.Raw = msgspec.Raw()
    git_repo: msgspec.Raw = msgspec.Raw()
    config_map: msgspec.Raw = msgspec.Raw()
    persistent_volume_claim: ClaimSource | None = None
    ephemeral: msgspec.Raw = msgspec.Raw()
    gce_persistent_disk: DiskSource | None = None
    aws_elastic_block_store: DiskSource | None = None
    iscsi: DiskSource | None = None
    rbd: DiskSource | None = None
    azure_disk: DiskSource | None = None
    cinder: DiskSource | None = None


class PodOS(_Wire):
    name: str = ""


class PodSpec(_Wire):
    node_name: str = ""
    containers: list[Container] | None = None
    init_containers: list[Container] | None = None
    overhead: WireResourceList | None = None
    resources: Resources | None = None
    node_selector: dict[str, str] | None = None
    affinity: Affinity | None = None
    tolerations: list[Toleration] | None = None
    priority: int | None = None
    priority_class_name: str = ""
    preemption_policy: str | None = None
    os: PodOS | None = None
    host_network: bool = False
    scheduler_name: str = ""
    termination_grace_period_seconds: int | None = None
    topology_spread_constraints: list[TopologySpreadConstraint] | None = None
    volumes: list[Volume] | None = None
    resource_claims: list[PodResourceClaim] | None = None


class PodResourceClaim(_Wire):
    name: str = ""
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


class PodResourceClaimStatus(_Wire):
    name: str = ""
    resource_claim_name: str | None = None


class PodCondition(_Wire):
    type: str = ""
    status: str = ""
    reason: str = ""


class ContainerStatus(_Wire):
    name: str = ""
    resources: Resources | None = None
    allocated_resources: WireResourceList | None = None


class PodStatus(_Wire):
    phase: str = ""
    container_statuses: list[ContainerStatus] | None = None
    init_container_statuses: list[ContainerStatus] | None = None
    resources: Resources | None = None
    allocated_resources: WireResourceList | None = None
    conditions: list[PodCondition] | None = None
    qos_class: str = msgspec.field(default="", name="qosClass")
    start_time: datetime | None = None
    nominated_node_name: str = ""
    resource_claim_statuses: list[PodResourceClaimStatus] | None = None


class Pod(_Wire):
    kind: str = ""
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: PodSpec = msgspec.field(default_factory=PodSpec)
    status: PodStatus = msgspec.field(default_factory=PodStatus)


class Taint(_Wire):
    key: str = ""
    value: str = ""
    effect: str = ""
    time_added: datetime | None = None


class NodeSpec(_Wire):
    unschedulable: bool = False
    taints: list[Taint] | None = None


class NodeCondition(_Wire):
    type: str = ""
    status: str = ""
    last_heartbeat_time: datetime | None = None
    last_transition_time: datetime | None = None
    reason: str = ""


class ContainerImage(_Wire):
    names: list[str] | None = None
    size_bytes: int = 0


class NodeStatus(_Wire):
    capacity: WireResourceList | None = None
    allocatable: WireResourceList | None = None
    conditions: list[NodeCondition] | None = None
    images: list[ContainerImage] | None = None


class Node(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: NodeSpec = msgspec.field(default_factory=NodeSpec)
    status: NodeStatus = msgspec.field(default_factory=NodeStatus)


class PDBSpec(_Wire):
    selector: LabelSelector | None = None
    unhealthy_pod_eviction_policy: str | None = None


class PDBStatus(_Wire):
    disruptions_allowed: int = 0
    disrupted_pods: dict[str, datetime] | None = None
    current_healthy: int = 0
    desired_healthy: int = 0
    expected_pods: int = 0
    observed_generation: int = 0


class PodDisruptionBudget(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: PDBSpec = msgspec.field(default_factory=PDBSpec)
    status: PDBStatus = msgspec.field(default_factory=PDBStatus)


class PriorityClass(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    value: int = 0
    global_default: bool = False
    preemption_policy: str | None = None


class LeaseSpec(_Wire):
    holder_identity: str | None = None
    renew_time: datetime | None = None
    lease_duration_seconds: int | None = None


class Lease(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: LeaseSpec = msgspec.field(default_factory=LeaseSpec)


class Namespace(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)


class ServiceSpec(_Wire):
    selector: dict[str, str] | None = None


class Service(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)


class WorkloadSpec(_Wire):
    selector: LabelSelector | None = None


class Workload(_Wire):
    """A ReplicaSet or StatefulSet: only its pod selector is read."""

    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: WorkloadSpec = msgspec.field(default_factory=WorkloadSpec)


class ReplicationController(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: ServiceSpec = msgspec.field(default_factory=ServiceSpec)  # a map selector too


# --- storage kinds (the scheduler's volume plugins) ---


class ClaimRef(_Wire):
    namespace: str = ""
    name: str = ""
    uid: str = ""


class VolumeNodeAffinity(_Wire):
    required: NodeSelector | None = None


class CSISource(_Wire):
    driver: str = ""
    volume_handle: str = ""


class PVSpec(_Wire):
    capacity: WireResourceList | None = None
    access_modes: list[str] | None = None
    volume_mode: str | None = None
    storage_class_name: str = ""
    node_affinity: VolumeNodeAffinity | None = None
    claim_ref: ClaimRef | None = None
    volume_attributes_class_name: str | None = None
    csi: CSISource | None = None
    gce_persistent_disk: DiskSource | None = None
    aws_elastic_block_store: DiskSource | None = None
    azure_disk: DiskSource | None = None
    cinder: DiskSource | None = None


class PhaseStatus(_Wire):
    phase: str = ""


class PersistentVolume(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: PVSpec = msgspec.field(default_factory=PVSpec)
    status: PhaseStatus = msgspec.field(default_factory=PhaseStatus)


class PVCSpec(_Wire):
    access_modes: list[str] | None = None
    volume_mode: str | None = None
    storage_class_name: str | None = None
    volume_name: str = ""
    resources: Resources | None = None
    selector: LabelSelector | None = None
    volume_attributes_class_name: str | None = None


class PersistentVolumeClaim(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: PVCSpec = msgspec.field(default_factory=PVCSpec)
    status: PhaseStatus = msgspec.field(default_factory=PhaseStatus)


class TopologySelectorRequirement(_Wire):
    key: str = ""
    values: list[str] | None = None


class TopologySelectorTerm(_Wire):
    match_label_expressions: list[TopologySelectorRequirement] | None = None


class StorageClass(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    provisioner: str = ""
    volume_binding_mode: str | None = None
    allowed_topologies: list[TopologySelectorTerm] | None = None


class VolumeNodeResources(_Wire):
    count: int | None = None


class CSINodeDriver(_Wire):
    name: str = ""
    allocatable: VolumeNodeResources | None = None


class CSINodeSpec(_Wire):
    drivers: list[CSINodeDriver] | None = None


class CSINode(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: CSINodeSpec = msgspec.field(default_factory=CSINodeSpec)


class CSIDriverSpec(_Wire):
    storage_capacity: bool | None = None


class CSIDriver(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: CSIDriverSpec = msgspec.field(default_factory=CSIDriverSpec)


class CSIStorageCapacity(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    storage_class_name: str = ""
    capacity: QuantityValue | None = None
    maximum_volume_size: QuantityValue | None = None
    node_topology: LabelSelector | None = None


class VolumeAttachmentSource(_Wire):
    persistent_volume_name: str | None = None


class VolumeAttachmentSpec(_Wire):
    attacher: str = ""
    node_name: str = ""
    source: VolumeAttachmentSource = msgspec.field(default_factory=VolumeAttachmentSource)


class VolumeAttachment(_Wire):
    metadata: Metadata = msgspec.field(default_factory=Metadata)
    spec: VolumeAttachmentSpec = msgspec.field(default_factory=VolumeAttachmentSpec)


class TypeOnly(_Wire):
    """First look at a list item: which kind it is, the rest left unparsed (its metadata
    too, only looked at to be an object, whatever the kind)."""

    kind: str = ""
    api_version: str = ""
    metadata: msgspec.Raw = msgspec.Raw()


class KubeList(_Wire):
    kind: str = ""
    items: list[msgspec.Raw] | None = None


class Envelope(_Wire):
    """Either Verdict's envelope or a bare Kubernetes List (then ``items`` is set)."""

    kind: str = ""
    api_version: str = ""
    items: list[msgspec.Raw] | None = None
    name: str | None = None
    cluster: str | None = None
    labels: dict[str, str] | None = None
    objects: msgspec.Raw = msgspec.Raw()
    stats: dict[str, msgspec.Raw] | None = None
    # Per node, its kubelet's configuration (configz): a KubeletConfiguration, bare or as
    # configz wraps it ({"kubeletconfig": ...}).
    kubelet_configs: dict[str, msgspec.Raw] | None = None
    captured_at: datetime | None = None


# --- kubelet Summary API (stats/v1alpha1) ---
#
# The stats the eviction manager reads are the model's own structs (service.engine.objects).
# The wire reads them through twins: the same fields, made from the model's, under the
# wire's names. ``kube.node_stats`` converts the twins back to the model's types, so a
# stored snapshot keeps the model's field names (its msgpack, and so its digest, unchanged).


def _twin(model: type, rename: object = "camel", **nested: object) -> type:
    """A struct with ``model``'s fields read under the wire's names (``rename``: camelCase,
    or a mapping for names the kubelet spells otherwise); ``nested`` gives the twin types
    of nested stats. A required field gets the empty default the wire always had."""
    fields = []
    for field in msgspec.structs.fields(model):
        kind = nested.get(field.name, field.type)
        default = "" if field.required else field.default
        fields.append((field.name, kind, default))
    return msgspec.defstruct(
        model.__name__, fields, rename=rename, forbid_unknown_fields=False, module=__name__
    )


FsStats = _twin(m.FsStats)
MemoryStats = _twin(m.MemoryStats)
RlimitStats = _twin(m.RlimitStats, {"max_pid": "maxpid", "num_of_running_processes": "curproc"})
ContainerStats = _twin(
    m.ContainerStats,
    memory=MemoryStats | None,
    rootfs=FsStats | None,
    logs=FsStats | None,
)


class RuntimeStats(_Wire):
    image_fs: FsStats | None = None
    container_fs: FsStats | None = None


class SystemContainer(_Wire):
    name: str = ""
    memory: MemoryStats | None = None


class NodeSummary(_Wire):
    node_name: str = ""
    memory: MemoryStats | None = None
    fs: FsStats | None = None
    runtime: RuntimeStats | None = None
    rlimit: RlimitStats | None = None
    system_containers: list[SystemContainer] | None = None


class PodReference(_Wire):
    name: str = ""
    namespace: str = ""
    uid: str = ""


class VolumeStats(_Wire):
    name: str = ""
    used_bytes: int | None = None
    inodes_used: int | None = None
    pvc_ref: msgspec.Raw = msgspec.Raw()


class ProcessStats(_Wire):
    process_count: int | None = msgspec.field(default=None, name="process_count")


class PodSummary(_Wire):
    pod_ref: PodReference = msgspec.field(default_factory=PodReference)
    containers: list[ContainerStats] | None = None
    memory: MemoryStats | None = None
    volume: list[VolumeStats] | None = None
    ephemeral_storage: FsStats | None = msgspec.field(default=None, name="ephemeral-storage")
    process_stats: ProcessStats | None = msgspec.field(default=None, name="process_stats")


class Summary(_Wire):
    node: NodeSummary = msgspec.field(default_factory=NodeSummary)
    pods: list[PodSummary] | None = None


def prepare_type_info(*modules) -> None:
    """Build msgspec's type information for every Struct class of ``modules`` now, in one
    thread. msgspec 0.22 builds it lazily, at a type's first Decoder or convert, and two
    threads doing that at once for one type can crash the process with SIGSEGV (8 threads
    building ``Decoder(Pod)`` crash 1 run in 8): a worker's request threads did, on its
    first decisions. Once built, it is shared and only read."""
    for module in modules:
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, msgspec.Struct)
                and value.__module__ == module.__name__
            ):
                msgspec.json.Decoder(value)


prepare_type_info(sys.modules[__name__], m)
