"""Deterministic synthetic cluster generator.

    python -m bench.generate --nodes 5000 --pods 150000 --seed 1 > cluster.json

prints a Verdict snapshot envelope::

    {"name": "synthetic-<nodes>n-<pods>p-s<seed>", "cluster": "synthetic",
     "labels": {"generator": "bench.generate"}, "capturedAt": "2026-11-20T10:00:00Z",
     "objects": {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                 "items": [nodes..., pods..., pdbs..., services..., replicasets...,
                           statefulsets..., priorityclasses..., leases...]},
     "stats": {"<node>": <kubelet Summary API (stats/v1alpha1) of that node>, ...}}

``--list`` prints only the bare List, ``--no-stats`` leaves out the ``stats`` key.

The output is a pure function of the arguments: every random choice comes from
``random.Random`` instances seeded with strings derived from ``--seed`` and nothing reads the
wall clock. Items are written with sorted keys (as ``kubectl get -o json`` prints them), in the
order the API server lists them (by ``namespace/name``); Summary objects keep the kubelet's
(Go struct) field order.

How the cluster is built:

* Planning (``_Cluster.__init__``) decides everything that is shared between objects: nodes and
  their states, workloads, which pod runs on which node (respecting ``pods`` allocatable, cpu,
  memory, GPUs, host ports, static taints, nodeSelector, required node affinity, the
  workload's own required hostname anti-affinity and zone DoNotSchedule spreading), pending
  pods, preemption victims, PDB counts, pressure nodes.
* Rendering (``items()``) turns the plan into kubectl-shaped objects one at a time, so the CLI
  streams them without ever holding the whole dump.
* ``stats()`` renders the Summary API objects from the same plan.

What a consumer should know:

* Output is compact JSON ending in a newline; ``generate()`` equals ``json.loads`` of it.
  Pods are about 4 KB each (kubectl-faithful; managedFields are kept shallow).
* Nodes: AWS/kops style names, 2 regions x 3 zones; 1 % carry only the legacy
  ``failure-domain.beta.kubernetes.io`` labels; 1 or 3 control-plane nodes (NoSchedule taint);
  a GPU pool (2 %, ``dedicated=gpu:NoSchedule``, 4 ``nvidia.com/gpu``), an infra pool (1 %,
  ``dedicated=infra:NoExecute``, ingress pods with hostPort 80/443); 10 % of the general nodes
  run kata (``katacontainers.io/kata-runtime=true``). All have ``pods: 110``. Allocatable
  assumes kube-reserved memory 1465Mi, ``memory.available<100Mi`` and EKS cpu reservations.
* 2 % of nodes are not ready: half ``Ready=Unknown`` (unreachable taints, old lease, no stats
  entry at all: the kubelet does not answer), half ``Ready=False`` (not-ready taints, stats
  present). Both went not ready 20-240 s before capturedAt, so no default 300 s toleration
  has expired; pods tolerating less are never placed there; their pods have ``Ready=False``.
* Pressure: ``max(1, min(8, nodes // 800))`` Ready nodes have ``memory.available`` (and
  ``allocatableMemory.available``) of 15-90 MiB, the first half with ``MemoryPressure=True``
  and its taint, the rest not reported yet; from 50 nodes on, one node has nodefs at 3.5-8 %
  free with ``DiskPressure=True``. Extra usage sits in application containers.
* Summary: ``memory.availableBytes = capacity - workingSetBytes``; the ``pods`` system
  container's availableBytes is against allocatable + 100Mi; only running containers
  appear; ``containerFs`` only on v1.31 kubelets. For mirror pods ``podRef.uid`` is the static
  pod's UID (``kubernetes.io/config.mirror``), as the kubelet reports it, not metadata.uid.
* Scheduling constraints (drawn from their own random stream): about a third of application
  workloads declare required (8 %; half the StatefulSets) or preferred hostname / zone pod
  anti-affinity, topology spread constraints (zone maxSkew 1 DoNotSchedule with
  ``matchLabelKeys: [pod-template-hash]`` plus hostname maxSkew 2 ScheduleAnyway; hostname
  ScheduleAnyway; zone with ``minDomains: 3`` and ``nodeTaintsPolicy: Honor``) or a preferred
  node affinity, besides the 11 % with preferred hostname anti-affinity. ClusterIP Services
  select 70 % of web workloads, headless ones every StatefulSet; every ReplicaSet and
  StatefulSet is in the List (their selectors drive the default topology spreading). 5 % of
  general nodes carry ``spot=true:PreferNoSchedule``, 1 % ``maintenance=scheduled``.
* About 1 % of application pods are Pending: most ``Unschedulable`` (some with
  ``nominatedNodeName`` and a lower-priority victim being deleted with a DisruptionTarget
  condition), some not yet tried (no conditions); pods that did not fit anywhere as well.
"""

from __future__ import annotations

import argparse
import bisect
import hashlib
import math
import random
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime

import orjson

__all__ = [
    "DEFAULT_CAPTURED_AT",
    "MAX_NODES",
    "generate",
    "iter_chunks",
    "iter_items",
    "iter_stats",
    "main",
]

DEFAULT_CAPTURED_AT = "2026-11-20T10:00:00Z"
MAX_NODES = 50_000
MAX_PODS_PER_NODE = 110

KI = 1024
MI = 1024 * KI
GI = 1024 * MI
DAY = 86_400

K8S_VERSION = "v1.31.4"
K8S_OLD_VERSION = "v1.30.8"
ECR = "registry.example.com"

# --- small helpers -----------------------------------------------------------------------------


def _fmt(epoch: int) -> str:
    """metav1.Time: RFC 3339, second precision, UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def _fmt_micro(epoch: int, micros: int) -> str:
    """metav1.MicroTime."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{micros:06d}Z"


def _parse_ts(value: str) -> int:
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


def _cpu_q(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def _mem_q(value: int) -> str:
    for suffix, factor in (("Gi", GI), ("Mi", MI), ("Ki", KI)):
        if value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand alphabet


def _suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choices(_SUFFIX, k=n))


def _uid(rng: random.Random) -> str:
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def _hex(rng: random.Random, digits: int) -> str:
    return f"{rng.getrandbits(digits * 4):0{digits}x}"


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _image_id(image: str) -> str:
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:{_sha256(image)}"


def _image_size(image: str) -> int:
    """A stable compressed-image size for ``image`` (node.status.images, imageFs usage)."""
    return 8 * MI + int(_sha256("size:" + image)[:8], 16) % (900 * MI)


def _weighted(rng: random.Random, table: tuple) -> object:
    """``table`` is ((value, weight), ...)."""
    values = [v for v, _ in table]
    weights = [w for _, w in table]
    return rng.choices(values, weights)[0]


def _mf(manager: str, when: str, fields: dict, *, subresource: str = "", api: str = "v1") -> dict:
    entry = {
        "apiVersion": api,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": "Update",
        "time": when,
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def _f(*names: str) -> dict:
    return {f"f:{n}": {} for n in names}


# --- static tables -----------------------------------------------------------------------------

_REGIONS = (
    # region, zones, second octet of the VPC (172.X.0.0/16), weight
    ("eu-west-1", ("eu-west-1a", "eu-west-1b", "eu-west-1c"), 20, 3),
    ("eu-central-1", ("eu-central-1a", "eu-central-1b", "eu-central-1c"), 21, 2),
)
_GENERAL_TYPES = (
    # name, vCPU, memory GiB, weight
    ("m5.2xlarge", 8, 32, 20),
    ("m5.4xlarge", 16, 64, 35),
    ("m5.8xlarge", 32, 128, 15),
    ("r5.4xlarge", 16, 128, 12),
    ("c5.4xlarge", 16, 32, 10),
    ("c5.9xlarge", 36, 72, 8),
)
_GPU_TYPES = (
    ("g5.12xlarge", 48, 192, 4, "NVIDIA-A10G"),
    ("p3.8xlarge", 32, 244, 4, "Tesla-V100-SXM2-16GB"),
)
_INFRA_TYPE = ("c5.2xlarge", 8, 16)
_CP_TYPE = ("m5.xlarge", 4, 16)

_TEAMS = (
    "payments",
    "checkout",
    "catalog",
    "search",
    "identity",
    "notifications",
    "analytics",
    "recommendations",
    "inventory",
    "shipping",
    "billing",
    "media",
    "messaging",
    "reporting",
    "fraud",
    "pricing",
    "loyalty",
    "gateway",
    "ledger",
    "orders",
    "accounts",
    "reviews",
    "ads",
    "geo",
    "support",
    "content",
    "partners",
    "risk",
    "growth",
    "platform",
)
_COMPONENTS = (
    "api",
    "worker",
    "web",
    "consumer",
    "scheduler",
    "cache",
    "grpc",
    "indexer",
    "sync",
    "exporter",
    "processor",
    "frontend",
    "backend",
    "notifier",
    "reconciler",
    "aggregator",
    "router",
    "ingest",
    "admin",
    "events",
    "feed",
    "query",
    "writer",
    "reader",
    "auth",
    "cdc",
    "publisher",
    "resolver",
    "matcher",
    "planner",
)
_DATASTORES = (
    ("postgres", "docker.io/library/postgres:16.4", 5432),
    ("redis", "docker.io/library/redis:7.4.1", 6379),
    ("kafka", "docker.io/bitnami/kafka:3.8.1", 9092),
    ("zookeeper", "docker.io/bitnami/zookeeper:3.9.3", 2181),
    ("rabbitmq", "docker.io/library/rabbitmq:3.13.7", 5672),
    ("elasticsearch", "docker.elastic.co/elasticsearch/elasticsearch:8.15.3", 9200),
)
_CPU_CHOICES = ((50, 10), (100, 25), (200, 20), (250, 15), (500, 15), (1000, 10), (2000, 4))
_MEM_CHOICES = (
    (64 * MI, 8),
    (128 * MI, 15),
    (256 * MI, 22),
    (512 * MI, 22),
    (1 * GI, 18),
    (2 * GI, 10),
    (4 * GI, 4),
    (8 * GI, 1),
)

_PRIORITY_CLASSES = (
    # name, value, globalDefault, preemptionPolicy, description
    ("default", 0, True, "PreemptLowerPriority", "Default priority for workloads."),
    ("high", 100000, False, "PreemptLowerPriority", "Latency-sensitive production services."),
    ("low", -10, False, "Never", "Best-effort batch work; never preempts other pods."),
    (
        "system-cluster-critical",
        2000000000,
        False,
        "PreemptLowerPriority",
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
    (
        "system-node-critical",
        2000001000,
        False,
        "PreemptLowerPriority",
        "Used for system critical pods that must not be moved from their current node.",
    ),
)
_PRIORITY = {name: (value, policy) for name, value, _, policy, _ in _PRIORITY_CLASSES}

_NOT_READY = "node.kubernetes.io/not-ready"
_UNREACHABLE = "node.kubernetes.io/unreachable"
# Added by the DefaultTolerationSeconds admission plugin to pods that do not tolerate them.
_DEFAULT_TOLERATIONS = (
    {"effect": "NoExecute", "key": _NOT_READY, "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": _UNREACHABLE, "operator": "Exists", "tolerationSeconds": 300},
)
# Added by the DaemonSet controller.
_DS_TOLERATIONS = (
    {"effect": "NoExecute", "key": _NOT_READY, "operator": "Exists"},
    {"effect": "NoExecute", "key": _UNREACHABLE, "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
)
_DS_HOSTNET_TOLERATION = {
    "effect": "NoSchedule",
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
}

_SA_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
_SA_PROJECTION = {
    "defaultMode": 420,
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        {
            "downwardAPI": {
                "items": [
                    {
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        "path": "namespace",
                    }
                ]
            }
        },
    ],
}
_POD_NAME_ENV = {
    "name": "POD_NAME",
    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
}
_NODE_NAME_ENV = {
    "name": "NODE_NAME",
    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
}
_RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "runAsUser": 10001,
}
_POD_SECURITY = {"fsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}}
_KATA_OVERHEAD = (250, 160 * MI)

# managedFields are kept shallow (a field set at the granularity of top-level fields, still a
# valid FieldsV1) so that a pod stays near the 2-3 KB the benchmark is sized for.
_STATUS_FIELDS = {
    "f:status": _f("conditions", "containerStatuses", "hostIP", "phase", "podIP", "startTime")
}
_SCHEDULER_FIELDS = {"f:status": _f("conditions")}

# --- plan records ------------------------------------------------------------------------------


@dataclass(eq=False, slots=True)
class _Ctr:
    """A container of a pod template."""

    name: str
    image: str
    image_id: str
    spec: dict  # the container JSON without volumeMounts
    mounts: list  # template volumeMounts (the service-account mount is added per pod)
    cpu_req: int = 0  # millicores, 0 = unset
    cpu_lim: int = 0
    mem_req: int = 0  # bytes, 0 = unset
    mem_lim: int = 0
    gpu: int = 0
    sidecar: bool = False  # an init container with restartPolicy: Always
    host_ports: tuple = ()


@dataclass(eq=False, slots=True)
class _Node:
    idx: int
    name: str
    uid: str
    ip: str
    pod_cidr: str  # "10.x.y" (a /24)
    role: str  # control-plane | general | gpu | infra
    region: str
    zone: str
    itype: str
    cores: int
    mem_gib: int
    gpus: int = 0
    gpu_product: str = ""
    instance_id: str = ""
    legacy_topology: bool = False
    kata: bool = False
    new: bool = False
    created: int = 0
    kubelet: str = K8S_VERSION
    state: str = "Ready"  # Ready | NotReady (Ready=False) | Unknown (kubelet silent)
    transition: int = 0  # when it stopped being Ready
    heartbeat: int = 0  # last kubelet status update
    cordoned: bool = False
    pressure: str = ""  # "" | memory | memory-unreported | disk
    weight: float = 1.0
    cpu_alloc: int = 0  # millicores
    mem_cap_ki: int = 0
    mem_alloc_ki: int = 0
    eph_cap_ki: int = 0
    eph_alloc: int = 0
    labels: dict = field(default_factory=dict)
    static_taints: list = field(default_factory=list)
    pods: list = field(default_factory=list)
    cpu_used: int = 0
    mem_used: int = 0
    gpu_used: int = 0
    ports: set = field(default_factory=set)
    ip_next: int = 2


@dataclass(eq=False, slots=True)
class _Workload:
    kind: str  # ReplicaSet | StatefulSet | DaemonSet | Job | Node (static/mirror pods)
    ns: str
    app: str  # deployment / statefulset / daemonset / job / static pod name
    prefix: str  # generateName (RS/DS/Job), pod name prefix otherwise
    labels: dict
    containers: list
    inits: list = field(default_factory=list)
    owner: dict | None = None
    annotations: dict | None = None
    priority_class: str = "default"
    tolerations: list = field(default_factory=list)
    node_selector: dict | None = None
    affinity: dict | None = None
    host_network: bool = False
    runtime_class: str = ""
    overhead: tuple = ()  # (cpu millis, memory bytes)
    service_account: str = "default"
    sa_token: bool = True
    restart_policy: str = "Always"
    grace: int = 30
    volumes: list = field(default_factory=list)
    pod_security: dict = field(default_factory=dict)
    dns_policy: str = "ClusterFirst"
    qos: str = "BestEffort"
    req_cpu: int = 0
    req_mem: int = 0
    req_gpu: int = 0
    host_ports: frozenset = frozenset()
    min_toleration: float = math.inf  # shortest not-ready/unreachable tolerationSeconds
    rollout: int = 0
    replicas: int = 0
    hash: str = ""
    flavor: str = "web"
    pods: list = field(default_factory=list)
    mf_spec: dict = field(default_factory=dict)
    manager: str = "kube-controller-manager"
    spread: list | None = None  # topologySpreadConstraints
    service: bool = False  # a Service selects its pods
    anti_host: bool = False  # required pod anti-affinity on the hostname, among its own pods
    zone_skew: int = 0  # maxSkew of a DoNotSchedule zone constraint, 0 = none
    on_nodes: set = field(default_factory=set)  # indexes of the nodes holding its pods
    zone_counts: dict = field(default_factory=dict)


@dataclass(eq=False, slots=True)
class _Pod:
    wl: _Workload
    name: str
    uid: str
    key: str  # namespace/name, the API server's list order
    node: _Node | None = None
    ip: str = ""
    created: int = 0
    started: int = 0
    # Running | CrashLoop | Creating (scheduled, sandbox not up) | Pending (not yet tried)
    # Unschedulable | Succeeded | Failed
    state: str = "Running"
    ordinal: int = -1
    deleting: int = 0  # deletionTimestamp (epoch), 0 = not being deleted
    preempted: bool = False
    nominated: _Node | None = None
    restarts: int = 0
    last_restart: int = 0
    finished: int = 0
    static_uid: str = ""
    sa_volume: str = ""  # kube-api-access-xxxxx (also named in the Summary volume stats)

    @property
    def ready(self) -> bool:
        return self.state == "Running" and self.node is not None and self.node.state == "Ready"


@dataclass(eq=False, slots=True)
class _PDB:
    wl: _Workload
    name: str
    uid: str
    created: int
    min_available: int | str | None
    max_unavailable: int | str | None
    expected: int = 0
    desired: int = 0
    healthy: int = 0
    allowed: int = 0
    disrupted: dict = field(default_factory=dict)
    unhealthy_policy: str = ""


def _qos(containers: list) -> str:
    """v1qos.GetPodQOS over all (init and regular) containers."""
    requests: dict[str, int] = {}
    limits: dict[str, int] = {}
    guaranteed = True
    for c in containers:
        for name, value in (("cpu", c.cpu_req), ("memory", c.mem_req)):
            if value:
                requests[name] = requests.get(name, 0) + value
        found = 0
        for name, value in (("cpu", c.cpu_lim), ("memory", c.mem_lim)):
            if value:
                found += 1
                limits[name] = limits.get(name, 0) + value
        if found != 2:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


def _effective(containers: list, inits: list, attr: str) -> int:
    """resourcehelper.PodRequests for one resource, without overhead."""
    total = sum(getattr(c, attr) for c in containers)
    sidecars = 0
    init_max = 0
    for c in inits:
        value = getattr(c, attr)
        if c.sidecar:
            sidecars += value
            init_max = max(init_max, sidecars)
        else:
            init_max = max(init_max, value + sidecars)
    return max(total + sidecars, init_max)


def _tolerates(tolerations: list, taint: dict) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint["effect"]:
            continue
        key = t.get("key", "")
        if not key:
            if t.get("operator") == "Exists":
                return True
            continue
        if key != taint["key"]:
            continue
        if t.get("operator") == "Exists" or t.get("value", "") == taint.get("value", ""):
            return True
    return False


def _matches(node: _Node, wl: _Workload) -> bool:
    labels = node.labels
    if wl.node_selector and any(labels.get(k) != v for k, v in wl.node_selector.items()):
        return False
    required = ((wl.affinity or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    if required:
        for term in required["nodeSelectorTerms"]:
            ok = True
            for expr in term.get("matchExpressions", ()):
                value = labels.get(expr["key"])
                op = expr["operator"]
                if op == "In":
                    ok = value in expr["values"]
                elif op == "NotIn":
                    ok = value not in expr["values"]
                elif op == "Exists":
                    ok = value is not None
                else:
                    ok = value is None
                if not ok:
                    break
            if ok:
                break
        else:
            return False
    return all(
        _tolerates(wl.tolerations, taint)
        for taint in node.static_taints
        if taint["effect"] in ("NoSchedule", "NoExecute")
    )


# --- the cluster -------------------------------------------------------------------------------


class _Cluster:
    # the share of application workloads drawn as StatefulSets (generate_volumes.py raises it)
    statefulset_share = 0.08

    def __init__(
        self, nodes: int, pods: int, seed: int, captured_at: str = DEFAULT_CAPTURED_AT
    ) -> None:
        if not 1 <= nodes <= MAX_NODES:
            raise ValueError(f"nodes must be between 1 and {MAX_NODES}")
        if pods < 0:
            raise ValueError("pods must not be negative")
        self.n_nodes = nodes
        self.n_pods = pods
        self.seed = seed
        self.now = _parse_ts(captured_at)
        self.captured_at = _fmt(self.now)
        self.name = f"synthetic-{nodes}n-{pods}p-s{seed}"
        self.rng = random.Random(f"bench.generate/{seed}/plan")
        # Scheduling constraints (pod affinity, spreading, Services, soft taints) draw from
        # their own stream, so that the rest of the plan stays what it was without them.
        self.srng = random.Random(f"bench.generate/{seed}/constraints")
        self.nodes: list[_Node] = []
        self.workloads: list[_Workload] = []
        self.pods: list[_Pod] = []
        self.pdbs: list[_PDB] = []
        self._pools: dict = {}
        self._names: set = set()
        self._ref_nodes: list = []
        self._failed_job = False
        self._forced_constraints = [0.12, 0.03]  # popped from the end
        self._plan_nodes()
        self._plan_workloads()
        self._place()
        self._plan_after()
        self.nodes.sort(key=lambda n: n.name)
        self.pods.sort(key=lambda p: p.key)
        self.pdbs.sort(key=lambda d: d.wl.ns + "/" + d.name)

    # --- nodes ---------------------------------------------------------------------------------

    def _plan_nodes(self) -> None:
        rng, n, now = self.rng, self.n_nodes, self.now
        cp = 0 if n < 3 else 1 if n < 10 else 3
        gpu = max(1, round(n * 0.02)) if n >= 5 else 0
        infra = max(2, round(n * 0.01)) if n >= 20 else 0
        roles = ["control-plane"] * cp + ["gpu"] * gpu + ["infra"] * infra
        roles += ["general"] * (n - len(roles))
        used_ips: set[str] = set()
        region_weights = [r[3] for r in _REGIONS]
        for i, role in enumerate(roles):
            if role == "control-plane":
                region, zones, octet, _ = _REGIONS[0]
                zi = i % 3
            else:
                region, zones, octet, _ = rng.choices(_REGIONS, region_weights)[0]
                zi = rng.randrange(3)
            while True:
                ip = f"172.{octet}.{64 * zi + rng.randrange(64)}.{rng.randrange(1, 255)}"
                if ip not in used_ips:
                    used_ips.add(ip)
                    break
            gpus, product = 0, ""
            if role == "control-plane":
                itype, cores, mem = _CP_TYPE
            elif role == "infra":
                itype, cores, mem = _INFRA_TYPE
            elif role == "gpu":
                itype, cores, mem, gpus, product = rng.choice(_GPU_TYPES)
            else:
                itype, cores, mem, _ = rng.choices(_GENERAL_TYPES, [t[3] for t in _GENERAL_TYPES])[
                    0
                ]
            node = _Node(
                idx=i,
                name=f"ip-{ip.replace('.', '-')}.{region}.compute.internal",
                uid=_uid(rng),
                ip=ip,
                pod_cidr=f"10.{i >> 8}.{i & 255}",
                role=role,
                region=region,
                zone=zones[zi],
                itype=itype,
                cores=cores,
                mem_gib=mem,
                gpus=gpus,
                gpu_product=product,
                instance_id="i-0" + _hex(rng, 16),
            )
            if role == "control-plane":
                node.created = now - 400 * DAY + rng.randrange(3600)
            else:
                node.created = now - rng.randrange(3 * 3600, 240 * DAY)
            node.kubelet = K8S_OLD_VERSION if rng.random() < 0.15 else K8S_VERSION
            node.weight = cores * rng.uniform(0.4, 1.6)
            self.nodes.append(node)

        general = [nd for nd in self.nodes if nd.role == "general"]
        shuffled = rng.sample(general, len(general))
        n_new = round(n * 0.01) if n >= 20 else 0
        n_not_ready = max(2, round(n * 0.02)) if n >= 20 else 1 if n >= 10 else 0
        n_cordoned = (1 if n >= 10 else 0) + (1 if n >= 100 else 0)
        pos = 0
        for nd in shuffled[pos : pos + n_new]:
            nd.new = True
            nd.created = now - rng.randrange(120, 900)
            nd.weight *= 0.05
        pos += n_new
        unknown = (n_not_ready + 1) // 2
        for j, nd in enumerate(shuffled[pos : pos + n_not_ready]):
            nd.state = "Unknown" if j < unknown else "NotReady"
            # Recent enough that the default 300 s tolerations have not expired yet.
            nd.transition = now - rng.randrange(20, 240)
            if nd.state == "Unknown":
                nd.heartbeat = nd.transition - rng.randrange(40, 60)
            else:
                nd.heartbeat = now - rng.randrange(1, 50)
        pos += n_not_ready
        for nd in shuffled[pos : pos + n_cordoned]:
            nd.cordoned = True
        n_legacy = max(1, round(n * 0.01)) if n >= 10 else 0
        for nd in rng.sample(general, min(n_legacy, len(general))):
            nd.legacy_topology = True
        if n >= 10:
            for nd in rng.sample(general, round(len(general) * 0.1)):
                nd.kata = True

        for nd in self.nodes:
            if nd.state == "Ready":
                nd.heartbeat = now - rng.randrange(1, 290)
            self._finish_node(nd)
        for nd in general:
            r = self.srng.random()
            if r < 0.05:
                nd.static_taints = [{"effect": "PreferNoSchedule", "key": "spot", "value": "true"}]
            elif r < 0.06:
                nd.static_taints = [
                    {"effect": "PreferNoSchedule", "key": "maintenance", "value": "scheduled"}
                ]

    def _finish_node(self, nd: _Node) -> None:
        reserved = 0.0
        for core in range(nd.cores):
            reserved += 60 if core == 0 else 10 if core == 1 else 5 if core < 4 else 2.5
        nd.cpu_alloc = nd.cores * 1000 - int(reserved)
        nd.mem_cap_ki = int(nd.mem_gib * 1048576 * 0.9812) // 4 * 4
        # kube-reserved 255Mi + 11Mi per pod, plus the 100Mi hard eviction threshold.
        nd.mem_alloc_ki = nd.mem_cap_ki - (255 + 11 * MAX_PODS_PER_NODE + 100) * 1024
        disk_gib = 200 if nd.role in ("gpu", "control-plane") else 100
        nd.eph_cap_ki = disk_gib * 1048576 - 12948
        cap = nd.eph_cap_ki * KI
        nd.eph_alloc = cap - cap // 10 - GI
        labels = {
            "beta.kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/instance-type": nd.itype,
            "beta.kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "kubernetes.io/hostname": nd.name,
            "kubernetes.io/os": "linux",
            "node.kubernetes.io/instance-type": nd.itype,
            "topology.ebs.csi.aws.com/zone": nd.zone,
        }
        if nd.legacy_topology:
            labels["failure-domain.beta.kubernetes.io/region"] = nd.region
            labels["failure-domain.beta.kubernetes.io/zone"] = nd.zone
        else:
            labels["topology.kubernetes.io/region"] = nd.region
            labels["topology.kubernetes.io/zone"] = nd.zone
        if nd.role == "control-plane":
            labels["kops.k8s.io/instancegroup"] = f"control-plane-{nd.zone}"
            labels["node-role.kubernetes.io/control-plane"] = ""
            labels["node.kubernetes.io/exclude-from-external-load-balancers"] = ""
            nd.static_taints = [
                {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}
            ]
        else:
            labels["node-role.kubernetes.io/node"] = ""
            labels["kops.k8s.io/instancegroup"] = (
                f"{nd.role if nd.role != 'general' else 'nodes'}-{nd.zone}"
            )
            labels["node-pool"] = nd.role
        if nd.role == "gpu":
            labels["nvidia.com/gpu.count"] = str(nd.gpus)
            labels["nvidia.com/gpu.present"] = "true"
            labels["nvidia.com/gpu.product"] = nd.gpu_product
            nd.static_taints = [{"effect": "NoSchedule", "key": "dedicated", "value": "gpu"}]
        elif nd.role == "infra":
            nd.static_taints = [{"effect": "NoExecute", "key": "dedicated", "value": "infra"}]
        if nd.kata:
            labels["katacontainers.io/kata-runtime"] = "true"
        nd.labels = labels

    # --- workloads -----------------------------------------------------------------------------

    def _unique(self, ns: str, base: str) -> str:
        name, k = base, 2
        while (ns, name) in self._names:
            name, k = f"{base}-{k}", k + 1
        self._names.add((ns, name))
        return name

    def _ctr(
        self,
        name: str,
        image: str,
        *,
        cpu: tuple = (0, 0),
        mem: tuple = (0, 0),
        gpu: int = 0,
        sidecar: bool = False,
        ports: list | None = None,
        env: list | None = None,
        probes: tuple = (),
        security: dict | None = None,
        mounts: list | None = None,
        command: list | None = None,
        args: list | None = None,
    ) -> _Ctr:
        requests: dict = {}
        limits: dict = {}
        if cpu[0]:
            requests["cpu"] = _cpu_q(cpu[0])
        if cpu[1]:
            limits["cpu"] = _cpu_q(cpu[1])
        if mem[0]:
            requests["memory"] = _mem_q(mem[0])
        if mem[1]:
            limits["memory"] = _mem_q(mem[1])
        if gpu:
            requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(gpu)
        resources: dict = {}
        if limits:
            resources["limits"] = limits
        if requests:
            resources["requests"] = requests
        spec = {
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "name": name,
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
        if command:
            spec["command"] = command
        if args:
            spec["args"] = args
        if ports:
            spec["ports"] = ports
        if env:
            spec["env"] = env
        if probes:
            spec["livenessProbe"] = probes[0]
            spec["readinessProbe"] = probes[1]
        if security:
            spec["securityContext"] = security
        if sidecar:
            spec["restartPolicy"] = "Always"
        return _Ctr(
            name=name,
            image=image,
            image_id=_image_id(image),
            spec=spec,
            mounts=mounts or [],
            cpu_req=cpu[0],
            cpu_lim=cpu[1],
            mem_req=mem[0],
            mem_lim=mem[1],
            gpu=gpu,
            sidecar=sidecar,
            host_ports=tuple(p["hostPort"] for p in ports or () if p.get("hostPort")),
        )

    def _resources(self, qos: str, scale: float = 1.0) -> tuple[tuple, tuple]:
        """((cpu request, cpu limit), (memory request, memory limit)) for one container."""
        rng = self.rng
        cpu = max(10, int(_weighted(rng, _CPU_CHOICES) * scale))
        mem = max(16 * MI, int(_weighted(rng, _MEM_CHOICES) * scale) // MI * MI)
        if qos == "Guaranteed":
            return (cpu, cpu), (mem, mem)
        if qos == "BestEffort":
            return (0, 0), (0, 0)
        r = rng.random()
        if r < 0.4:
            return (cpu, 0), (mem, mem)
        if r < 0.7:
            return (cpu, cpu * 2), (mem, mem * 2)
        if r < 0.92:
            return (cpu, 0), (mem, 0)
        return (cpu, 0), (0, 0)

    def _finish_workload(self, wl: _Workload) -> None:
        """Derived fields: QoS, effective requests, host ports, managedFields of the spec."""
        everything = [*wl.inits, *wl.containers]
        wl.qos = _qos(everything)
        over_cpu, over_mem = wl.overhead or (0, 0)
        wl.req_cpu = _effective(wl.containers, wl.inits, "cpu_req") + over_cpu
        wl.req_mem = _effective(wl.containers, wl.inits, "mem_req") + over_mem
        wl.req_gpu = _effective(wl.containers, wl.inits, "gpu")
        wl.host_ports = frozenset(p for c in everything for p in c.host_ports)
        for t in wl.tolerations:
            if t.get("key", "") in ("", _NOT_READY, _UNREACHABLE) and "tolerationSeconds" in t:
                wl.min_toleration = min(wl.min_toleration, t["tolerationSeconds"])
        meta = _f("labels")
        if wl.kind in ("ReplicaSet", "DaemonSet", "Job"):
            meta["f:generateName"] = {}
        if wl.annotations:
            meta["f:annotations"] = {}
        if wl.owner and wl.kind != "Node":
            meta["f:ownerReferences"] = {}
        spec = _f("containers")
        if wl.inits:
            spec["f:initContainers"] = {}
        if wl.volumes or wl.kind == "StatefulSet":
            spec["f:volumes"] = {}
        for key, present in (
            ("affinity", wl.affinity or wl.kind == "DaemonSet"),
            ("nodeSelector", wl.node_selector),
            ("tolerations", wl.tolerations and wl.kind != "ReplicaSet"),
            ("topologySpreadConstraints", wl.spread),
        ):
            if present:
                spec[f"f:{key}"] = {}
        wl.mf_spec = {"f:metadata": meta, "f:spec": spec}
        self.workloads.append(wl)

    def _owner(self, api: str, kind: str, name: str) -> dict:
        return {
            "apiVersion": api,
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": kind,
            "name": name,
            "uid": _uid(self.rng),
        }

    def _daemonset(
        self, ns: str, name: str, containers: list, *, inits: list | None = None, **kw
    ) -> _Workload:
        rng = self.rng
        host_network = kw.pop("host_network", False)
        tolerations = [{"operator": "Exists"}, *_DS_TOLERATIONS]
        if host_network:
            tolerations.append(_DS_HOSTNET_TOLERATION)
        wl = _Workload(
            kind="DaemonSet",
            ns=ns,
            app=name,
            prefix=f"{name}-",
            labels={
                "app.kubernetes.io/name": name,
                "controller-revision-hash": _hex(rng, 10)[:10],
                "pod-template-generation": str(rng.randint(1, 9)),
            },
            containers=containers,
            inits=inits or [],
            owner=self._owner("apps/v1", "DaemonSet", name),
            tolerations=tolerations,
            host_network=host_network,
            dns_policy="ClusterFirstWithHostNet" if host_network else "ClusterFirst",
            service_account=name,
            rollout=self.now - rng.randrange(DAY, 30 * DAY),
            **kw,
        )
        self._finish_workload(wl)
        return wl

    def _static(
        self, name: str, containers: list, *, priority: str = "system-node-critical"
    ) -> _Workload:
        wl = _Workload(
            kind="Node",
            ns="kube-system",
            app=name,
            prefix=f"{name}-",
            labels={"k8s-app": name, "tier": "node" if name == "kube-proxy" else "control-plane"},
            containers=containers,
            priority_class=priority,
            tolerations=[{"operator": "Exists"}],
            host_network=True,
            sa_token=False,
            volumes=[
                {"hostPath": {"path": f"/var/lib/{name}", "type": ""}, "name": "varlib"},
                {"hostPath": {"path": "/var/log", "type": ""}, "name": "logfile"},
            ],
            manager="kubelet",
        )
        self._finish_workload(wl)
        return wl

    def _system_workloads(self, budget: int) -> int:
        """Per-node (static and DaemonSet) pods and the cluster add-ons; returns pods used."""
        n = self.n_nodes
        nodes = self.nodes
        cps = [nd for nd in nodes if nd.role == "control-plane"]
        kinds = min(4, int(budget * 0.2) // n)
        used = 0
        mounts_log = [{"mountPath": "/var/log", "name": "logfile"}]
        if kinds >= 1:
            proxy = self._static(
                "kube-proxy",
                [
                    self._ctr(
                        "kube-proxy",
                        f"registry.k8s.io/kube-proxy:{K8S_VERSION}",
                        cpu=(100, 0),
                        mem=(128 * MI, 0),
                        command=["/usr/local/bin/kube-proxy"],
                        args=["--conntrack-max-per-core=131072", "--v=2"],
                        security={"privileged": True},
                        mounts=[
                            {"mountPath": "/var/lib/kube-proxy", "name": "varlib"},
                            *mounts_log,
                        ],
                    )
                ],
            )
            for nd in nodes:
                self._add_pod(proxy, node=nd)
            used += n
            if budget - used >= 4 * len(cps) + n:
                for comp, cpu, image in (
                    (
                        "etcd-manager-main",
                        200,
                        "registry.k8s.io/etcdadm/etcd-manager-slim:v3.0.20241012",
                    ),
                    ("kube-apiserver", 150, f"registry.k8s.io/kube-apiserver:{K8S_VERSION}"),
                    (
                        "kube-controller-manager",
                        100,
                        f"registry.k8s.io/kube-controller-manager:{K8S_VERSION}",
                    ),
                    ("kube-scheduler", 100, f"registry.k8s.io/kube-scheduler:{K8S_VERSION}"),
                ):
                    wl = self._static(
                        comp,
                        [
                            self._ctr(
                                comp,
                                image,
                                cpu=(cpu, 0),
                                mem=(0, 0) if comp != "etcd-manager-main" else (100 * MI, 0),
                                mounts=mounts_log,
                                probes=(
                                    {
                                        "failureThreshold": 8,
                                        "httpGet": {
                                            "host": "127.0.0.1",
                                            "path": "/healthz",
                                            "port": 10250,
                                            "scheme": "HTTPS",
                                        },
                                        "initialDelaySeconds": 15,
                                        "periodSeconds": 10,
                                        "successThreshold": 1,
                                        "timeoutSeconds": 15,
                                    },
                                )
                                * 2,
                            )
                        ],
                        priority="system-cluster-critical"
                        if comp == "etcd-manager-main"
                        else "system-node-critical",
                    )
                    for nd in cps:
                        self._add_pod(wl, node=nd)
                    used += len(cps)
        if kinds >= 2:
            cilium_image = "quay.io/cilium/cilium:v1.16.4"
            wl = self._daemonset(
                "kube-system",
                "cilium",
                [
                    self._ctr(
                        "cilium-agent",
                        cilium_image,
                        cpu=(100, 0),
                        mem=(128 * MI, 0),
                        command=["cilium-agent"],
                        args=["--config-dir=/tmp/cilium/config-map"],
                        env=[
                            _NODE_NAME_ENV,
                            {"name": "CILIUM_K8S_NAMESPACE", "value": "kube-system"},
                        ],
                        ports=[
                            {
                                "containerPort": 9962,
                                "hostPort": 9962,
                                "name": "prometheus",
                                "protocol": "TCP",
                            }
                        ],
                        probes=(
                            {
                                "failureThreshold": 10,
                                "httpGet": {
                                    "host": "127.0.0.1",
                                    "path": "/healthz",
                                    "port": 9879,
                                    "scheme": "HTTP",
                                },
                                "periodSeconds": 30,
                                "successThreshold": 1,
                                "timeoutSeconds": 5,
                            },
                            {
                                "failureThreshold": 3,
                                "httpGet": {
                                    "host": "127.0.0.1",
                                    "path": "/healthz",
                                    "port": 9879,
                                    "scheme": "HTTP",
                                },
                                "periodSeconds": 30,
                                "successThreshold": 1,
                                "timeoutSeconds": 5,
                            },
                        ),
                        security={"privileged": True},
                        mounts=[
                            {"mountPath": "/var/run/cilium", "name": "cilium-run"},
                            {"mountPath": "/tmp", "name": "tmp"},
                        ],
                    )
                ],
                inits=[
                    self._ctr(
                        "mount-cgroup",
                        cilium_image,
                        command=["sh", "-ec"],
                        args=[
                            "nsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt mount-cgroup"
                        ],
                        security={"privileged": True},
                    ),
                    self._ctr(
                        "clean-cilium-state",
                        cilium_image,
                        command=["/init-container.sh"],
                        cpu=(100, 0),
                        mem=(100 * MI, 0),
                        security={"privileged": True},
                        mounts=[{"mountPath": "/var/run/cilium", "name": "cilium-run"}],
                    ),
                ],
                host_network=True,
                priority_class="system-node-critical",
                volumes=[
                    {
                        "hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"},
                        "name": "cilium-run",
                    },
                    {"emptyDir": {}, "name": "tmp"},
                ],
            )
            for nd in nodes:
                self._add_pod(wl, node=nd)
            used += n
        if kinds >= 3:
            wl = self._daemonset(
                "kube-system",
                "ebs-csi-node",
                [
                    self._ctr(
                        "ebs-plugin",
                        "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.37.0",
                        cpu=(10, 0),
                        mem=(40 * MI, 256 * MI),
                        args=["node", "--endpoint=$(CSI_ENDPOINT)", "--v=2"],
                        env=[
                            {"name": "CSI_ENDPOINT", "value": "unix:/csi/csi.sock"},
                            _NODE_NAME_ENV,
                        ],
                        ports=[{"containerPort": 9808, "name": "healthz", "protocol": "TCP"}],
                        security={"privileged": True},
                        mounts=[{"mountPath": "/csi", "name": "plugin-dir"}],
                    ),
                    self._ctr(
                        "node-driver-registrar",
                        "public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.12.0-eks-1-31-7",
                        cpu=(10, 0),
                        mem=(40 * MI, 256 * MI),
                        mounts=[{"mountPath": "/csi", "name": "plugin-dir"}],
                    ),
                    self._ctr(
                        "liveness-probe",
                        "public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe:v2.14.0-eks-1-31-7",
                        cpu=(10, 0),
                        mem=(40 * MI, 256 * MI),
                        mounts=[{"mountPath": "/csi", "name": "plugin-dir"}],
                    ),
                ],
                priority_class="system-node-critical",
                volumes=[
                    {
                        "hostPath": {
                            "path": "/var/lib/kubelet/plugins/ebs.csi.aws.com/",
                            "type": "DirectoryOrCreate",
                        },
                        "name": "plugin-dir",
                    }
                ],
            )
            for nd in nodes:
                self._add_pod(wl, node=nd)
            used += n
        if kinds >= 4:
            wl = self._daemonset(
                "monitoring",
                "node-exporter",
                [
                    self._ctr(
                        "node-exporter",
                        "quay.io/prometheus/node-exporter:v1.8.2",
                        cpu=(100, 100),
                        mem=(64 * MI, 64 * MI),
                        args=["--path.rootfs=/host/root", "--web.listen-address=127.0.0.1:9101"],
                        security=_RESTRICTED,
                        mounts=[
                            {
                                "mountPath": "/host/root",
                                "mountPropagation": "HostToContainer",
                                "name": "root",
                                "readOnly": True,
                            }
                        ],
                    ),
                    self._ctr(
                        "kube-rbac-proxy",
                        "quay.io/brancz/kube-rbac-proxy:v0.18.1",
                        cpu=(20, 20),
                        mem=(32 * MI, 32 * MI),
                        args=[
                            "--secure-listen-address=[$(IP)]:9100",
                            "--upstream=http://127.0.0.1:9101/",
                        ],
                        env=[
                            {
                                "name": "IP",
                                "valueFrom": {
                                    "fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}
                                },
                            }
                        ],
                        ports=[
                            {
                                "containerPort": 9100,
                                "hostPort": 9100,
                                "name": "https",
                                "protocol": "TCP",
                            }
                        ],
                        security=_RESTRICTED,
                    ),
                ],
                host_network=True,
                priority_class="high",
                volumes=[{"hostPath": {"path": "/", "type": ""}, "name": "root"}],
            )
            for nd in nodes:
                self._add_pod(wl, node=nd)
            used += n

        # Cluster add-ons (Deployments and a StatefulSet), while the budget allows.
        addons = (
            (
                "kube-system",
                "coredns",
                max(2, n // 250),
                "registry.k8s.io/coredns/coredns:v1.11.3",
                (100, 0),
                (70 * MI, 170 * MI),
                "system-cluster-critical",
            ),
            (
                "kube-system",
                "metrics-server",
                1,
                "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
                (100, 0),
                (200 * MI, 0),
                "system-cluster-critical",
            ),
            (
                "kube-system",
                "ebs-csi-controller",
                2,
                "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.37.0",
                (10, 0),
                (40 * MI, 256 * MI),
                "system-cluster-critical",
            ),
            (
                "kube-system",
                "cluster-autoscaler",
                1,
                "registry.k8s.io/autoscaling/cluster-autoscaler:v1.31.1",
                (100, 100),
                (600 * MI, 600 * MI),
                "system-cluster-critical",
            ),
            (
                "monitoring",
                "kube-state-metrics",
                1,
                "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.14.0",
                (100, 0),
                (190 * MI, 0),
                "high",
            ),
        )
        for ns, name, replicas, image, cpu, mem, pc in addons:
            if budget - used < replicas + 10:
                break
            ctr = self._ctr(
                name,
                image,
                cpu=cpu,
                mem=mem,
                ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                probes=(_http_probe(8080, "/healthz", 60), _http_probe(8080, "/ready", 0)),
                security=_RESTRICTED,
            )
            wl = self._replicaset(ns, name, [ctr], replicas, priority_class=pc, flavor="addon")
            if name == "coredns":
                wl.node_selector = {"kubernetes.io/os": "linux"}
                wl.tolerations = [
                    {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    *_DEFAULT_TOLERATIONS,
                ]
            used += replicas
        if budget - used >= 12:
            ctr = self._ctr(
                "prometheus",
                "quay.io/prometheus/prometheus:v2.55.1",
                cpu=(2000, 0),
                mem=(8 * GI, 8 * GI),
                ports=[{"containerPort": 9090, "name": "web", "protocol": "TCP"}],
                probes=(_http_probe(9090, "/-/healthy", 0), _http_probe(9090, "/-/ready", 0)),
                security=_RESTRICTED,
                mounts=[{"mountPath": "/prometheus", "name": "prometheus-db"}],
            )
            self._statefulset(
                "monitoring",
                "prometheus-k8s",
                [ctr],
                2,
                priority_class="high",
                claim="prometheus-db",
            )
            used += 2
        # Ingress controllers on the infra nodes: hostPort 80/443, tolerate dedicated=infra.
        infra = [nd for nd in nodes if nd.role == "infra"]
        if len(infra) >= 2 and budget - used >= len(infra) + 10:
            ports = [
                {"containerPort": 80, "hostPort": 80, "name": "http", "protocol": "TCP"},
                {"containerPort": 443, "hostPort": 443, "name": "https", "protocol": "TCP"},
            ]
            ctr = self._ctr(
                "controller",
                "registry.k8s.io/ingress-nginx/controller:v1.11.3",
                cpu=(500, 0),
                mem=(512 * MI, 0),
                ports=ports,
                env=[
                    _POD_NAME_ENV,
                    {
                        "name": "POD_NAMESPACE",
                        "valueFrom": {
                            "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}
                        },
                    },
                ],
                probes=(_http_probe(10254, "/healthz", 10), _http_probe(10254, "/healthz", 10)),
                security={
                    "allowPrivilegeEscalation": False,
                    "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                    "runAsNonRoot": True,
                    "runAsUser": 101,
                },
            )
            wl = self._replicaset(
                "ingress-nginx",
                "ingress-nginx-controller",
                [ctr],
                len(infra) - 1,
                priority_class="high",
                flavor="ingress",
                node_selector={"node-pool": "infra"},
                tolerations=[
                    {
                        "effect": "NoExecute",
                        "key": "dedicated",
                        "operator": "Equal",
                        "value": "infra",
                    }
                ],
            )
            used += wl.replicas
        return used

    def _replicaset(self, ns: str, app: str, containers: list, replicas: int, **kw) -> _Workload:
        rng = self.rng
        pth = _suffix(rng, 10)
        tolerations = kw.pop("tolerations", [])
        if not any(t.get("key") == _NOT_READY or not t.get("key") for t in tolerations):
            tolerations = [*tolerations, *_DEFAULT_TOLERATIONS]
        labels = kw.pop("labels", None) or {"app.kubernetes.io/name": app}
        labels = {**labels, "pod-template-hash": pth}
        wl = _Workload(
            kind="ReplicaSet",
            ns=ns,
            app=app,
            prefix=f"{app}-{pth}-",
            labels=labels,
            containers=containers,
            owner=self._owner("apps/v1", "ReplicaSet", f"{app}-{pth}"),
            tolerations=tolerations,
            replicas=replicas,
            hash=pth,
            rollout=kw.pop("rollout", 0) or self.now - int(rng.expovariate(1 / (9 * DAY))) - 600,
            **kw,
        )
        self._finish_workload(wl)
        for _ in range(replicas):
            self._add_pod(wl)
        return wl

    def _statefulset(
        self, ns: str, app: str, containers: list, replicas: int, *, claim: str = "", **kw
    ) -> _Workload:
        rng = self.rng
        kw.setdefault("flavor", "db")
        tolerations = kw.pop("tolerations", [])
        if not any(t.get("key") == _NOT_READY or not t.get("key") for t in tolerations):
            tolerations = [*tolerations, *_DEFAULT_TOLERATIONS]
        rev = f"{app}-{_suffix(rng, 10)}"
        wl = _Workload(
            kind="StatefulSet",
            ns=ns,
            app=app,
            prefix=f"{app}-",
            labels={"app.kubernetes.io/name": app, "controller-revision-hash": rev},
            containers=containers,
            owner=self._owner("apps/v1", "StatefulSet", app),
            tolerations=tolerations,
            replicas=replicas,
            hash=claim,
            rollout=self.now - int(rng.expovariate(1 / (20 * DAY))) - 3600,
            **kw,
        )
        self._finish_workload(wl)
        for ordinal in range(replicas):
            self._add_pod(wl, ordinal=ordinal)
        return wl

    def _add_pod(self, wl: _Workload, *, node: _Node | None = None, ordinal: int = -1) -> _Pod:
        rng = self.rng
        if wl.kind == "Node":
            name = f"{wl.app}-{node.name}"
        elif wl.kind == "StatefulSet":
            name = f"{wl.prefix}{ordinal}"
        else:
            while True:
                name = wl.prefix + _suffix(rng)
                if (wl.ns, name) not in self._names:
                    break
        self._names.add((wl.ns, name))
        pod = _Pod(wl=wl, name=name, uid=_uid(rng), key=f"{wl.ns}/{name}", ordinal=ordinal)
        if wl.sa_token:
            pod.sa_volume = "kube-api-access-" + _suffix(rng)
        if wl.kind == "Node":
            pod.static_uid = hashlib.md5(f"{node.name}/{wl.app}".encode()).hexdigest()
        if node is not None:
            self._bind(pod, node)
        wl.pods.append(pod)
        self.pods.append(pod)
        return pod

    def _bind(self, pod: _Pod, node: _Node) -> None:
        wl = pod.wl
        pod.node = node
        node.pods.append(pod)
        node.cpu_used += wl.req_cpu
        node.mem_used += wl.req_mem
        node.gpu_used += wl.req_gpu
        node.ports.update(wl.host_ports)
        wl.on_nodes.add(node.idx)
        if wl.zone_skew:
            wl.zone_counts[node.zone] += 1

    def _app_workload(self, ns: str, kind: str, replicas: int, flavor: str) -> _Workload:
        rng = self.rng
        if flavor == "gpu":
            qos = "Guaranteed" if rng.random() < 0.4 else "Burstable"
        elif kind == "StatefulSet":
            qos = "Guaranteed" if rng.random() < 0.5 else "Burstable"
        else:
            qos = _weighted(rng, (("Guaranteed", 20), ("Burstable", 65), ("BestEffort", 15)))
        if kind == "StatefulSet":
            store, image, port = rng.choice(_DATASTORES)
            app = self._unique(ns, f"{ns}-{store}")
            cname = store
        else:
            app = self._unique(ns, f"{ns}-{rng.choice(_COMPONENTS)}")
            version = f"{rng.randint(1, 4)}.{rng.randint(0, 60)}.{rng.randint(0, 20)}"
            image = f"{ECR}/{ns}/{app}:{version}"
            port = 8080
            cname = "app" if rng.random() < 0.5 else app.rsplit("-", 1)[-1]
        cpu, mem = self._resources(qos, 3.0 if flavor == "gpu" else 1.0)
        if replicas > 20 and cpu[0] > 500:
            # Large fleets are made of small pods.
            cpu = (500, cpu[1] * 500 // cpu[0])
        mounts: list = []
        volumes: list = []
        if rng.random() < 0.2:
            mounts.append({"mountPath": "/tmp", "name": "tmp"})
            size = rng.choice(("", "1Gi", "4Gi"))
            volumes.append({"emptyDir": {"sizeLimit": size} if size else {}, "name": "tmp"})
        if rng.random() < 0.15:
            mounts.append({"mountPath": f"/etc/{cname}", "name": "config", "readOnly": True})
            volumes.append(
                {"configMap": {"defaultMode": 420, "name": f"{app}-config"}, "name": "config"}
            )
        if kind == "StatefulSet":
            mounts.append({"mountPath": "/data", "name": "data"})
        ports = [
            {
                "containerPort": port,
                "name": "http" if port == 8080 else cname[:15],
                "protocol": "TCP",
            }
        ]
        if flavor == "worker":
            ports = []
        env = None
        if rng.random() < 0.25:
            env = [{"name": "APP_ENV", "value": "production"}, _POD_NAME_ENV]
            if rng.random() < 0.4:
                env.append(
                    {
                        "name": "GOMAXPROCS",
                        "valueFrom": {
                            "resourceFieldRef": {"divisor": "0", "resource": "limits.cpu"}
                        },
                    }
                )
        probes: tuple = ()
        if flavor != "worker" and rng.random() < 0.3:
            probes = (
                _http_probe(port, "/healthz", rng.choice((0, 10, 30))),
                _http_probe(port, "/ready", 0),
            )
        elif kind == "StatefulSet":
            probes = (_tcp_probe(port), _tcp_probe(port))
        security = _RESTRICTED if rng.random() < 0.2 else None
        containers = [
            self._ctr(
                cname,
                image,
                cpu=cpu,
                mem=mem,
                gpu=(1 if flavor == "gpu" else 0),
                ports=ports,
                env=env,
                probes=probes,
                security=security,
                mounts=mounts,
            )
        ]
        if kind == "StatefulSet" and rng.random() < 0.5:
            exporter = f"quay.io/prometheus-community/{cname}-exporter:v0.15.0"
            ecpu, emem = self._resources(qos, 0.2)
            containers.append(
                self._ctr(
                    "metrics",
                    exporter,
                    cpu=ecpu,
                    mem=emem,
                    ports=[{"containerPort": 9187, "name": "metrics", "protocol": "TCP"}],
                )
            )
        inits: list = []
        if rng.random() < 0.1:
            icpu, imem = self._resources(qos, 0.5)
            inits.append(
                self._ctr("migrate", image, cpu=icpu, mem=imem, args=["migrate", "--wait"])
            )
        if rng.random() < 0.08:
            scpu, smem = self._resources(qos, 0.2)
            inits.append(
                self._ctr(
                    "log-shipper",
                    "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
                    cpu=scpu,
                    mem=smem,
                    sidecar=True,
                    mounts=[{"mountPath": "/var/log/app", "name": "applogs"}],
                )
            )
            containers[0].mounts = [
                *containers[0].mounts,
                {"mountPath": "/var/log/app", "name": "applogs"},
            ]
            volumes.append({"emptyDir": {}, "name": "applogs"})
        pc = _weighted(rng, (("default", 80), ("high", 12), ("low", 8)))
        kw: dict = {
            "inits": inits,
            "priority_class": pc,
            "volumes": volumes,
            "flavor": flavor,
            "service_account": app if rng.random() < 0.5 else "default",
            "pod_security": _POD_SECURITY if security else {},
        }
        if rng.random() < 0.15:
            kw["annotations"] = {"prometheus.io/port": str(port), "prometheus.io/scrape": "true"}
        tolerations: list = []
        if flavor == "gpu":
            kw["node_selector"] = {"nvidia.com/gpu.present": "true"}
            tolerations.append(
                {"effect": "NoSchedule", "key": "dedicated", "operator": "Equal", "value": "gpu"}
            )
        elif flavor == "kata":
            kw["runtime_class"] = "kata"
            kw["overhead"] = _KATA_OVERHEAD
            kw["node_selector"] = {"katacontainers.io/kata-runtime": "true"}
        else:
            r = rng.random()
            # Constraints name values that exist on some schedulable node of this cluster.
            refs = self._ref_nodes
            ref = rng.choice(refs) if refs else None
            if ref is not None and replicas <= 10 and self._forced_constraints:
                # The first small deployments get a zone affinity and a region selector, so
                # that even a small cluster has both.
                r = self._forced_constraints.pop()
            if ref is None or (replicas > 10 and r < 0.19):
                pass  # large deployments are not pinned to a few nodes
            elif r < 0.06:
                kw["node_selector"] = {"topology.kubernetes.io/region": ref.region}
            elif r < 0.10:
                kw["node_selector"] = {"node.kubernetes.io/instance-type": ref.itype}
            elif r < 0.16:
                zones = next(z for name, z, _, _ in _REGIONS if name == ref.region)
                other = rng.choice([z for z in zones if z != ref.zone])
                kw["affinity"] = {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "topology.kubernetes.io/zone",
                                            "operator": "In",
                                            "values": sorted((ref.zone, other)),
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                }
            elif r < 0.19 and ref.itype not in ("m5.2xlarge", "c5.4xlarge"):
                kw["affinity"] = {
                    "nodeAffinity": {
                        "requiredDuringSchedulingIgnoredDuringExecution": {
                            "nodeSelectorTerms": [
                                {
                                    "matchExpressions": [
                                        {
                                            "key": "node.kubernetes.io/instance-type",
                                            "operator": "NotIn",
                                            "values": ["m5.2xlarge", "c5.4xlarge"],
                                        }
                                    ]
                                }
                            ]
                        }
                    }
                }
            elif r < 0.30 and replicas > 1:
                kw["affinity"] = {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "podAffinityTerm": {
                                    "labelSelector": {
                                        "matchLabels": {"app.kubernetes.io/name": app}
                                    },
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                                "weight": 100,
                            }
                        ]
                    }
                }
        if flavor in ("web", "worker", "db"):
            self._scheduling_constraints(kw, app, kind, replicas)
        if kind == "StatefulSet":
            seconds = rng.choice((30, 60))
            tolerations += [
                {
                    "effect": "NoExecute",
                    "key": _NOT_READY,
                    "operator": "Exists",
                    "tolerationSeconds": seconds,
                },
                {
                    "effect": "NoExecute",
                    "key": _UNREACHABLE,
                    "operator": "Exists",
                    "tolerationSeconds": seconds,
                },
            ]
            kw["grace"] = rng.choice((60, 120))
            return self._statefulset(
                ns, app, containers, replicas, claim="data", tolerations=tolerations, **kw
            )
        if rng.random() < 0.05:
            seconds = rng.choice((600, 3600, 86400))
            tolerations += [
                {
                    "effect": "NoExecute",
                    "key": _NOT_READY,
                    "operator": "Exists",
                    "tolerationSeconds": seconds,
                },
                {
                    "effect": "NoExecute",
                    "key": _UNREACHABLE,
                    "operator": "Exists",
                    "tolerationSeconds": seconds,
                },
            ]
        return self._replicaset(ns, app, containers, replicas, tolerations=tolerations, **kw)

    def _scheduling_constraints(self, kw: dict, app: str, kind: str, replicas: int) -> None:
        """Pod (anti-)affinity, topology spread constraints, preferred node affinity and a
        Service, as real workloads declare them (about a third of them carry one of these
        besides the 11 % with preferred hostname anti-affinity chosen above)."""
        rng = self.srng
        own = {"matchLabels": {"app.kubernetes.io/name": app}}
        kw["service"] = kind == "StatefulSet" or (kw["flavor"] == "web" and rng.random() < 0.7)
        affinity = kw.get("affinity") or {}
        r = rng.random()
        hash_key = ["pod-template-hash"] if kind == "ReplicaSet" else []
        if (kind == "StatefulSet" and r < 0.5 and replicas > 1) or (
            2 <= replicas <= 40 and r < 0.08
        ):
            anti = affinity.setdefault("podAntiAffinity", {})
            anti["requiredDuringSchedulingIgnoredDuringExecution"] = [
                {"labelSelector": own, "topologyKey": "kubernetes.io/hostname"}
            ]
            kw["anti_host"] = True
        elif r < 0.12 and replicas > 1:
            zone: dict = {
                "labelSelector": own,
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
            }
            if hash_key:
                zone["matchLabelKeys"] = hash_key
            host = {
                "labelSelector": own,
                "maxSkew": 2,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
            }
            kw["spread"] = [zone, host]
            kw["zone_skew"] = 1
        elif r < 0.16:
            kw["spread"] = [
                {
                    "labelSelector": own,
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ]
        elif r < 0.18 and replicas > 2:
            kw["spread"] = [
                {
                    "labelSelector": own,
                    "maxSkew": 1,
                    "minDomains": 3,
                    "nodeTaintsPolicy": "Honor",
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                }
            ]
            kw["zone_skew"] = 1
        elif r < 0.23 and replicas > 1:
            anti = affinity.setdefault("podAntiAffinity", {})
            anti.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {
                    "podAffinityTerm": {
                        "labelSelector": own,
                        "topologyKey": "topology.kubernetes.io/zone",
                    },
                    "weight": 50,
                }
            )
        elif r < 0.28:
            preference = rng.choice(
                (
                    {"key": "node.kubernetes.io/instance-type", "operator": "In"},
                    {"key": "topology.kubernetes.io/zone", "operator": "In"},
                )
            )
            values = (
                sorted(rng.sample([t[0] for t in _GENERAL_TYPES], 2))
                if preference["key"] == "node.kubernetes.io/instance-type"
                else [rng.choice(rng.choice(_REGIONS)[1])]
            )
            node = affinity.setdefault("nodeAffinity", {})
            node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "preference": {"matchExpressions": [{**preference, "values": values}]},
                    "weight": 20,
                }
            ]
        if affinity:
            kw["affinity"] = affinity

    def _plan_workloads(self) -> None:
        rng = self.rng
        budget = self.n_pods
        budget -= self._system_workloads(budget)
        if budget <= 0:
            return
        teams = list(_TEAMS[: max(2, min(len(_TEAMS), budget // 2000 + 2))])
        self._ref_nodes = [
            nd
            for nd in self.nodes
            if nd.role == "general" and not nd.legacy_topology and nd.state == "Ready"
        ]
        gpu_nodes = [nd for nd in self.nodes if nd.role == "gpu"]
        kata_nodes = [nd for nd in self.nodes if nd.kata]
        # Terminal Job pods.
        terminal = max(2, round(budget * 0.004)) if budget >= 40 else 0
        while terminal > 0:
            size = min(terminal, rng.randint(1, 6))
            self._job(rng.choice(teams), size)
            terminal -= size
            budget -= size
        # GPU inference, kata sandboxes.
        gpu_pods = min(round(budget * 0.01), 3 * sum(nd.gpus for nd in gpu_nodes) // 4)
        if gpu_nodes and budget >= 20:
            gpu_pods = max(1, gpu_pods)
        while gpu_pods > 0:
            size = min(gpu_pods, rng.randint(1, 8))
            self._app_workload("ml", "ReplicaSet", size, "gpu")
            gpu_pods -= size
            budget -= size
        kata_pods = round(budget * 0.01) if kata_nodes else 0
        while kata_pods > 0:
            size = min(kata_pods, rng.randint(1, 5))
            self._app_workload("sandbox", "ReplicaSet", size, "kata")
            kata_pods -= size
            budget -= size
        while budget > 0:
            ns = rng.choice(teams)
            if rng.random() < self.statefulset_share and budget >= 1:
                size = min(budget, rng.choice((1, 2, 3, 3, 3, 5, 5, 7)))
                self._app_workload(ns, "StatefulSet", size, "db")
            else:
                r = rng.random()
                if r < 0.15:
                    size = 1
                elif r < 0.5:
                    size = rng.randint(2, 3)
                elif r < 0.8:
                    size = rng.randint(4, 10)
                elif r < 0.95:
                    size = rng.randint(11, 40)
                else:
                    size = rng.randint(41, 150)
                size = min(budget, size, max(5, self.n_pods // 25))
                self._app_workload(
                    ns, "ReplicaSet", size, "worker" if rng.random() < 0.3 else "web"
                )
            budget -= size

    def _job(self, ns: str, size: int) -> None:
        rng = self.rng
        cron = f"{ns}-{rng.choice(('nightly-report', 'cleanup', 'export', 'reindex', 'backup'))}"
        start = self.now - rng.randrange(600, 6 * 3600)
        job = self._unique(ns, f"{cron}-{start // 60}")
        qos = _weighted(rng, (("Guaranteed", 20), ("Burstable", 60), ("BestEffort", 20)))
        cpu, mem = self._resources(qos)
        image = f"{ECR}/{ns}/{cron}:{rng.randint(1, 9)}.{rng.randint(0, 30)}.0"
        owner = self._owner("batch/v1", "Job", job)
        wl = _Workload(
            kind="Job",
            ns=ns,
            app=job,
            prefix=f"{job}-",
            labels={
                "batch.kubernetes.io/controller-uid": owner["uid"],
                "batch.kubernetes.io/job-name": job,
                "controller-uid": owner["uid"],
                "job-name": job,
            },
            containers=[self._ctr("job", image, cpu=cpu, mem=mem, args=["run", "--once"])],
            owner=owner,
            tolerations=list(_DEFAULT_TOLERATIONS),
            restart_policy="Never",
            priority_class="low",
            replicas=size,
            flavor="job",
            rollout=start,
        )
        self._finish_workload(wl)
        for i in range(size):
            pod = self._add_pod(wl)
            if not self._failed_job:
                pod.state = "Failed"  # there is always at least one
                self._failed_job = True
            else:
                pod.state = "Failed" if i < size - 1 and rng.random() < 0.5 else "Succeeded"

    # --- placement -----------------------------------------------------------------------------

    def _pool(self, wl: _Workload) -> tuple[list, list]:
        key = (
            tuple(sorted((wl.node_selector or {}).items())),
            orjson.dumps(wl.affinity or {}, option=orjson.OPT_SORT_KEYS),
            orjson.dumps(wl.tolerations, option=orjson.OPT_SORT_KEYS),
            wl.min_toleration < 300,
            wl.zone_skew > 0,
        )
        pool = self._pools.get(key)
        if pool is None:
            short = wl.min_toleration < 300
            # A zone spread constraint that must hold rules out nodes without the zone label.
            zoned = wl.zone_skew > 0
            nodes = [
                nd
                for nd in self.nodes
                if _matches(nd, wl)
                and not (short and nd.state != "Ready")
                and not (zoned and nd.legacy_topology)
            ]
            cum: list[float] = []
            total = 0.0
            for nd in nodes:
                total += nd.weight
                cum.append(total)
            pool = (nodes, cum)
            self._pools[key] = pool
        return pool

    @staticmethod
    def _fits(nd: _Node, wl: _Workload) -> bool:
        """Room on the node, and the workload's own required anti-affinity and zone spread."""
        return (
            len(nd.pods) < MAX_PODS_PER_NODE
            and nd.cpu_used + wl.req_cpu <= nd.cpu_alloc
            and nd.mem_used + wl.req_mem <= nd.mem_alloc_ki * KI
            and nd.gpu_used + wl.req_gpu <= nd.gpus
            and not (wl.host_ports & nd.ports)
            and not (wl.anti_host and nd.idx in wl.on_nodes)
            and not (
                wl.zone_skew
                and wl.zone_counts[nd.zone] + 1 - min(wl.zone_counts.values()) > wl.zone_skew
            )
        )

    def _place(self) -> None:
        rng, now = self.rng, self.now
        app_pods = [
            p
            for p in self.pods
            if p.node is None and p.wl.kind == "ReplicaSet" and p.wl.flavor in ("web", "worker")
        ]
        n_pending = max(1, round(len(app_pods) * 0.01)) if len(app_pods) >= 10 else 0
        special = rng.sample(app_pods, min(len(app_pods), n_pending + 2 * (len(app_pods) // 200)))
        chosen = {id(p) for p in special}
        high = [p for p in app_pods if p.wl.priority_class == "high" and id(p) not in chosen]
        if special and n_pending and high:
            # At least one high-priority pending pod, so that there is a preemption to show.
            special[0] = rng.choice(high)
        for i, pod in enumerate(special):
            if i == 0 and pod.wl.priority_class == "high":
                pod.state = "Unschedulable"
            elif i < n_pending:
                pod.state = "Pending" if rng.random() < 0.3 else "Unschedulable"
            elif i % 2:
                pod.state = "Creating"
            else:
                pod.state = "CrashLoop"
        # Constrained workloads first, so that their nodes still have room.
        order = sorted(
            (wl for wl in self.workloads if wl.kind not in ("Node", "DaemonSet")),
            key=lambda wl: (
                0 if wl.req_gpu or wl.host_ports else 1 if wl.node_selector or wl.affinity else 2
            ),
        )
        for wl in order:
            nodes, cum = self._pool(wl)
            total = cum[-1] if cum else 0.0
            if wl.zone_skew:
                wl.zone_counts = dict.fromkeys(sorted({nd.zone for nd in nodes}), 0)
            for pod in wl.pods:
                if pod.node is not None or pod.state in ("Pending", "Unschedulable"):
                    continue
                chosen = None
                if nodes:
                    for _ in range(24):
                        nd = nodes[
                            min(bisect.bisect_left(cum, rng.random() * total), len(nodes) - 1)
                        ]
                        if self._fits(nd, wl):
                            chosen = nd
                            break
                    else:
                        start = rng.randrange(len(nodes))
                        for j in range(len(nodes)):
                            nd = nodes[(start + j) % len(nodes)]
                            if self._fits(nd, wl):
                                chosen = nd
                                break
                if chosen is None:
                    pod.state = "Unschedulable"
                else:
                    self._bind(pod, chosen)

        # Timestamps and pod IPs.
        for wl in self.workloads:
            for pod in wl.pods:
                nd = pod.node
                if pod.state in ("Pending", "Unschedulable"):
                    pod.created = now - rng.randrange(5, 300)
                    continue
                if wl.kind == "Node":
                    created = nd.created + rng.randrange(20, 90)
                elif wl.kind == "DaemonSet":
                    created = max(wl.rollout, nd.created + 30) + rng.randrange(0, 600)
                elif wl.kind == "StatefulSet":
                    created = max(
                        wl.rollout + 45 * pod.ordinal, nd.created + rng.randrange(30, 300)
                    )
                else:
                    created = max(
                        wl.rollout + rng.randrange(0, 600), nd.created + rng.randrange(30, 300)
                    )
                if nd.state != "Ready":
                    created = min(created, nd.transition - 60)
                pod.created = min(created, now - rng.randrange(5, 60))
                pod.started = pod.created + rng.randrange(1, 4)
                if pod.state in ("Succeeded", "Failed"):
                    pod.finished = min(now - 1, pod.started + rng.randrange(20, 900))
                if pod.state == "Creating":
                    pod.created = pod.started = now - rng.randrange(5, 50)
                    continue
                if wl.host_network:
                    pod.ip = nd.ip
                else:
                    pod.ip = f"{nd.pod_cidr}.{nd.ip_next}"
                    nd.ip_next += 1
                if pod.state == "CrashLoop":
                    pod.restarts = rng.randint(4, 60)
                    pod.last_restart = now - rng.randrange(10, 290)
                elif rng.random() < 0.05:
                    pod.restarts = rng.randint(1, 3)
                    pod.last_restart = pod.started + (now - pod.started) // 2

    def _plan_after(self) -> None:
        rng, now, n = self.rng, self.now, self.n_nodes
        # Preemption: pending high-priority pods nominated onto a node with a lower-priority victim.
        for pod in self.pods:
            if pod.state != "Unschedulable" or pod.wl.priority_class != "high":
                continue
            nodes, _ = self._pool(pod.wl)
            for nd in rng.sample(nodes, min(len(nodes), 200)):
                if nd.state != "Ready" or nd.cordoned:
                    continue
                victims = [
                    v
                    for v in nd.pods
                    if v.state == "Running"
                    and not v.deleting
                    and v.wl.kind == "ReplicaSet"
                    and _PRIORITY[v.wl.priority_class][0] < _PRIORITY["high"][0]
                ]
                if victims:
                    victim = rng.choice(victims)
                    victim.deleting = now + rng.randrange(2, victim.wl.grace)
                    victim.preempted = True
                    pod.nominated = nd
                    break
        # StatefulSet rolling updates: the highest ordinal is being replaced.
        sets = [wl for wl in self.workloads if wl.kind == "StatefulSet" and wl.replicas >= 2]
        for wl in rng.sample(sets, min(len(sets), max(1, len(sets) // 30))) if sets else ():
            pod = wl.pods[-1]
            if pod.state == "Running" and pod.node is not None:
                pod.deleting = now + rng.randrange(1, wl.grace)
        # Node pressure, chosen among Ready nodes hosting pods that may exceed their requests.
        candidates = [
            nd
            for nd in self.nodes
            if nd.state == "Ready"
            and not nd.cordoned
            and nd.role == "general"
            and any(
                p.state == "Running"
                and p.wl.kind in ("ReplicaSet", "StatefulSet")
                and any(not c.mem_lim for c in p.wl.containers)
                for p in nd.pods
            )
        ]
        k_mem = max(1, min(8, n // 800)) if n >= 5 else 0
        chosen = rng.sample(candidates, min(len(candidates), k_mem + (1 if n >= 50 else 0)))
        for i, nd in enumerate(chosen):
            if i < k_mem:
                nd.pressure = "memory" if i < (k_mem + 1) // 2 else "memory-unreported"
                nd.transition = now - rng.randrange(15, 200)
            else:
                nd.pressure = "disk"
                nd.transition = now - rng.randrange(15, 200)
        # PodDisruptionBudgets.
        for wl in self.workloads:
            if wl.kind not in ("ReplicaSet", "StatefulSet") or wl.replicas < 2:
                continue
            if wl.app == "coredns":
                self._pdb(wl, None, 1)
            elif wl.kind == "StatefulSet" or rng.random() < 0.3:
                r = rng.random()
                if r < 0.35:
                    self._pdb(wl, max(1, wl.replicas - 1), None)
                elif r < 0.55:
                    self._pdb(wl, "50%", None)
                elif r < 0.8:
                    self._pdb(wl, None, 1)
                else:
                    self._pdb(wl, None, "25%")
        if self.pdbs and not any(d.disrupted for d in self.pdbs):
            # Always show one eviction the API approved and the pod is not gone yet.
            for pdb in self.pdbs:
                healthy = [p for p in pdb.wl.pods if p.ready and not p.deleting]
                if pdb.allowed > 0 and healthy:
                    pdb.disrupted[rng.choice(healthy).name] = now - rng.randrange(1, 90)
                    pdb.healthy -= 1
                    pdb.allowed = max(0, pdb.healthy - pdb.desired)
                    break

    def _pdb(
        self, wl: _Workload, min_available: int | str | None, max_unavailable: int | str | None
    ) -> None:
        rng, now = self.rng, self.now
        pdb = _PDB(
            wl=wl,
            name=self._unique(wl.ns, f"{wl.app}-pdb"),
            uid=_uid(rng),
            created=wl.rollout - rng.randrange(60, 3600),
            min_available=min_available,
            max_unavailable=max_unavailable,
        )
        if rng.random() < 0.15:
            pdb.unhealthy_policy = "AlwaysAllow"
        pods = [p for p in wl.pods if p.state not in ("Succeeded", "Failed")]
        # disruption controller: integer minAvailable counts matching pods, otherwise the scale.
        expected = len(pods) if isinstance(min_available, int) else wl.replicas
        if isinstance(min_available, int):
            desired = min_available
        elif min_available is not None:
            desired = math.ceil(int(min_available[:-1]) * expected / 100)
        elif isinstance(max_unavailable, int):
            desired = max(0, expected - max_unavailable)
        else:
            desired = max(0, expected - math.ceil(int(max_unavailable[:-1]) * expected / 100))
        healthy_pods = [p for p in pods if p.ready and not p.deleting]
        if healthy_pods and len(healthy_pods) > desired and rng.random() < 0.08:
            victim = rng.choice(healthy_pods)
            pdb.disrupted[victim.name] = now - rng.randrange(1, 90)
            healthy_pods.remove(victim)
        pdb.expected = expected
        pdb.desired = desired
        pdb.healthy = len(healthy_pods)
        pdb.allowed = max(0, pdb.healthy - desired)
        self.pdbs.append(pdb)

    # --- rendering: objects --------------------------------------------------------------------

    def items(self) -> Iterator[dict]:
        """The List items: nodes, pods, PDBs, PriorityClasses, Leases (API list order)."""
        rng = random.Random(f"bench.generate/{self.seed}/render")
        rv = [10_000_000 + rng.randrange(1_000_000)]

        def next_rv() -> str:
            rv[0] += rng.randint(1, 40)
            return str(rv[0])

        for nd in self.nodes:
            yield self._render_node(nd, rng, next_rv())
        for pod in self.pods:
            yield self._render_pod(pod, rng, next_rv())
        for pdb in self.pdbs:
            yield self._render_pdb(pdb, next_rv())
        for wl in sorted((w for w in self.workloads if w.service), key=lambda w: (w.ns, w.app)):
            yield self._render_service(wl, rng, next_rv())
        for kind in ("ReplicaSet", "StatefulSet"):
            owned = [w for w in self.workloads if w.kind == kind]
            for wl in sorted(owned, key=lambda w: (w.ns, w.owner["name"])):
                yield self._render_controller(wl, next_rv())
        for pc in sorted(_PRIORITY_CLASSES):
            yield self._render_priority_class(pc, rng, next_rv())
        for nd in self.nodes:
            yield self._render_lease(nd, rng, next_rv())
        cps = [nd for nd in self.nodes if nd.role == "control-plane"]
        if cps and any(p.wl.app == "kube-scheduler" for p in cps[0].pods):
            for component in ("kube-controller-manager", "kube-scheduler"):
                holder = rng.choice(cps)
                renew = self.now - rng.randrange(0, 2)
                yield {
                    "apiVersion": "coordination.k8s.io/v1",
                    "kind": "Lease",
                    "metadata": {
                        "creationTimestamp": _fmt(holder.created + 120),
                        "managedFields": [
                            _mf(
                                component,
                                _fmt(renew),
                                {
                                    "f:spec": _f(
                                        "acquireTime",
                                        "holderIdentity",
                                        "leaseDurationSeconds",
                                        "leaseTransitions",
                                        "renewTime",
                                    )
                                },
                                api="coordination.k8s.io/v1",
                            )
                        ],
                        "name": component,
                        "namespace": "kube-system",
                        "resourceVersion": next_rv(),
                        "uid": _uid(rng),
                    },
                    "spec": {
                        "acquireTime": _fmt_micro(
                            self.now - rng.randrange(DAY, 30 * DAY), rng.randrange(10**6)
                        ),
                        "holderIdentity": f"{holder.name}_{_uid(rng)}",
                        "leaseDurationSeconds": 15,
                        "leaseTransitions": rng.randint(1, 9),
                        "renewTime": _fmt_micro(renew, rng.randrange(10**6)),
                    },
                }

    def _node_conditions(self, nd: _Node) -> list:
        hb = _fmt(nd.heartbeat)
        boot = _fmt(nd.created + 40)
        since = _fmt(nd.transition) if nd.transition else boot
        pressure = {
            "MemoryPressure": (
                "kubelet has sufficient memory available",
                "KubeletHasSufficientMemory",
            ),
            "DiskPressure": ("kubelet has no disk pressure", "KubeletHasNoDiskPressure"),
            "PIDPressure": ("kubelet has sufficient PID available", "KubeletHasSufficientPID"),
        }
        conditions = [
            {
                "lastHeartbeatTime": _fmt(nd.created + 60),
                "lastTransitionTime": _fmt(nd.created + 60),
                "message": "Cilium is running on this node",
                "reason": "CiliumIsUp",
                "status": "False",
                "type": "NetworkUnavailable",
            }
        ]
        for ctype, (message, reason) in pressure.items():
            status, transition = "False", boot
            if nd.state == "Unknown":
                status, reason, message = (
                    "Unknown",
                    "NodeStatusUnknown",
                    "Kubelet stopped posting node status.",
                )
                transition = since
            elif nd.pressure == "memory" and ctype == "MemoryPressure":
                status, reason, message = (
                    "True",
                    "KubeletHasInsufficientMemory",
                    "kubelet has insufficient memory available",
                )
                transition = since
            elif nd.pressure == "disk" and ctype == "DiskPressure":
                status, reason, message = (
                    "True",
                    "KubeletHasDiskPressure",
                    "kubelet has disk pressure",
                )
                transition = since
            conditions.append(
                {
                    "lastHeartbeatTime": hb,
                    "lastTransitionTime": transition,
                    "message": message,
                    "reason": reason,
                    "status": status,
                    "type": ctype,
                }
            )
        if nd.state == "Ready":
            ready = ("True", "KubeletReady", "kubelet is posting ready status", boot)
        elif nd.state == "NotReady":
            ready = (
                "False",
                "KubeletNotReady",
                "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady message:Network plugin returns error: cni plugin not initialized",
                since,
            )
        else:
            ready = ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", since)
        conditions.append(
            {
                "lastHeartbeatTime": hb,
                "lastTransitionTime": ready[3],
                "message": ready[2],
                "reason": ready[1],
                "status": ready[0],
                "type": "Ready",
            }
        )
        return conditions

    def _node_taints(self, nd: _Node) -> list:
        taints = [dict(t) for t in nd.static_taints]
        if nd.state != "Ready":
            key = _UNREACHABLE if nd.state == "Unknown" else _NOT_READY
            added = _fmt(nd.transition + 1)
            taints.append({"effect": "NoSchedule", "key": key, "timeAdded": added})
            taints.append({"effect": "NoExecute", "key": key, "timeAdded": added})
        if nd.pressure == "memory":
            taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/memory-pressure",
                    "timeAdded": _fmt(nd.transition + 1),
                }
            )
        elif nd.pressure == "disk":
            taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/disk-pressure",
                    "timeAdded": _fmt(nd.transition + 1),
                }
            )
        if nd.cordoned:
            taints.append(
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/unschedulable",
                    "timeAdded": _fmt(self.now - 3 * 3600),
                }
            )
        return taints

    def _node_images(self, nd: _Node) -> list:
        images: dict[str, int] = {}
        for pod in nd.pods:
            if pod.state in ("Pending", "Unschedulable"):
                continue
            for c in (*pod.wl.inits, *pod.wl.containers):
                if c.image not in images:
                    images[c.image] = _image_size(c.image)
        images["registry.k8s.io/pause:3.10"] = 320_368
        ordered = sorted(images.items(), key=lambda kv: (-kv[1], kv[0]))[:50]
        return [{"names": [_image_id(img), img], "sizeBytes": size} for img, size in ordered]

    def _render_node(self, nd: _Node, rng: random.Random, rv: str) -> dict:
        capacity = {
            "cpu": str(nd.cores),
            "ephemeral-storage": f"{nd.eph_cap_ki}Ki",
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{nd.mem_cap_ki}Ki",
            "pods": str(MAX_PODS_PER_NODE),
        }
        allocatable = {
            "cpu": _cpu_q(nd.cpu_alloc),
            "ephemeral-storage": str(nd.eph_alloc),
            "hugepages-1Gi": "0",
            "hugepages-2Mi": "0",
            "memory": f"{nd.mem_alloc_ki}Ki",
            "pods": str(MAX_PODS_PER_NODE),
        }
        if nd.gpus:
            capacity["nvidia.com/gpu"] = allocatable["nvidia.com/gpu"] = str(nd.gpus)
        cidr = f"{nd.pod_cidr}.0/24"
        spec: dict = {
            "podCIDR": cidr,
            "podCIDRs": [cidr],
            "providerID": f"aws:///{nd.zone}/{nd.instance_id}",
        }
        taints = self._node_taints(nd)
        if taints:
            spec["taints"] = taints
        if nd.cordoned:
            spec["unschedulable"] = True
        hb = _fmt(nd.heartbeat)
        handlers = [
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": "runc"},
            {"features": {"recursiveReadOnlyMounts": True, "userNamespaces": True}, "name": ""},
        ]
        if nd.kata:
            handlers.append(
                {
                    "features": {"recursiveReadOnlyMounts": False, "userNamespaces": False},
                    "name": "kata",
                }
            )
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": {
                    "alpha.kubernetes.io/provided-node-ip": nd.ip,
                    "csi.volume.kubernetes.io/nodeid": f'{{"ebs.csi.aws.com":"{nd.instance_id}"}}',
                    "node.alpha.kubernetes.io/ttl": "0",
                    "volumes.kubernetes.io/controller-managed-attach-detach": "true",
                },
                "creationTimestamp": _fmt(nd.created),
                "labels": nd.labels,
                "managedFields": [
                    _mf(
                        "kubelet",
                        _fmt(nd.created),
                        {
                            "f:metadata": {
                                "f:annotations": _f(
                                    "alpha.kubernetes.io/provided-node-ip",
                                    "volumes.kubernetes.io/controller-managed-attach-detach",
                                ),
                                "f:labels": _f(
                                    "kubernetes.io/arch",
                                    "kubernetes.io/hostname",
                                    "kubernetes.io/os",
                                    "node.kubernetes.io/instance-type",
                                ),
                            },
                            "f:spec": _f("providerID"),
                        },
                    ),
                    _mf(
                        "kube-controller-manager",
                        _fmt(nd.transition or nd.created + 30),
                        {
                            "f:metadata": {"f:annotations": _f("node.alpha.kubernetes.io/ttl")},
                            "f:spec": _f("podCIDR", "podCIDRs", "taints"),
                        },
                    ),
                    _mf(
                        "kubelet",
                        hb,
                        {
                            "f:status": _f(
                                "allocatable",
                                "capacity",
                                "conditions",
                                "daemonEndpoints",
                                "images",
                                "nodeInfo",
                                "runtimeHandlers",
                            )
                        },
                        subresource="status",
                    ),
                ],
                "name": nd.name,
                "resourceVersion": rv,
                "uid": nd.uid,
            },
            "spec": spec,
            "status": {
                "addresses": [
                    {"address": nd.ip, "type": "InternalIP"},
                    {"address": nd.name, "type": "InternalDNS"},
                    {"address": nd.name, "type": "Hostname"},
                ],
                "allocatable": allocatable,
                "capacity": capacity,
                "conditions": self._node_conditions(nd),
                "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
                "images": self._node_images(nd),
                "nodeInfo": {
                    "architecture": "amd64",
                    "bootID": _uid(rng),
                    "containerRuntimeVersion": "containerd://1.7.23",
                    "kernelVersion": "6.1.115-126.197.amzn2023.x86_64",
                    "kubeProxyVersion": nd.kubelet,
                    "kubeletVersion": nd.kubelet,
                    "machineID": _hex(rng, 32),
                    "operatingSystem": "linux",
                    "osImage": "Amazon Linux 2023.6.20241111",
                    "systemUUID": "ec2" + _hex(rng, 5) + "-" + _uid(rng)[9:],
                },
                "runtimeHandlers": handlers,
            },
        }

    def _render_pod(self, pod: _Pod, rng: random.Random, rv: str) -> dict:
        wl, nd = pod.wl, pod.node
        created = _fmt(pod.created)
        labels = wl.labels
        if wl.kind == "StatefulSet":
            labels = {
                **labels,
                "apps.kubernetes.io/pod-index": str(pod.ordinal),
                "statefulset.kubernetes.io/pod-name": pod.name,
            }
        meta: dict = {
            "creationTimestamp": created,
            "labels": labels,
            "name": pod.name,
            "namespace": wl.ns,
            "resourceVersion": rv,
            "uid": pod.uid,
        }
        annotations = wl.annotations
        if wl.kind == "Node":
            annotations = {
                "kubernetes.io/config.hash": pod.static_uid,
                "kubernetes.io/config.mirror": pod.static_uid,
                "kubernetes.io/config.seen": _fmt_micro(pod.created - 15, rng.randrange(10**6))[:-1]
                + f"{rng.randrange(1000):03d}Z",
                "kubernetes.io/config.source": "file",
            }
            meta["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "controller": True,
                    "kind": "Node",
                    "name": nd.name,
                    "uid": nd.uid,
                }
            ]
        elif wl.owner:
            meta["ownerReferences"] = [wl.owner]
        if annotations:
            meta["annotations"] = annotations
        if wl.kind in ("ReplicaSet", "DaemonSet", "Job"):
            meta["generateName"] = wl.prefix
        if pod.deleting:
            meta["deletionGracePeriodSeconds"] = wl.grace
            meta["deletionTimestamp"] = _fmt(pod.deleting)

        # spec
        containers = []
        api_volume = pod.sa_volume
        sa_mount = None
        if api_volume:
            sa_mount = {"mountPath": _SA_MOUNT_PATH, "name": api_volume, "readOnly": True}
        for c in wl.containers:
            spec_c = dict(c.spec)
            mounts = [*c.mounts, sa_mount] if sa_mount else c.mounts
            if mounts:
                spec_c["volumeMounts"] = mounts
            containers.append(spec_c)
        priority, policy = _PRIORITY[wl.priority_class]
        spec: dict = {
            "containers": containers,
            "dnsPolicy": wl.dns_policy,
            "enableServiceLinks": True,
            "preemptionPolicy": policy,
            "priority": priority,
            "priorityClassName": wl.priority_class,
            "restartPolicy": wl.restart_policy,
            "schedulerName": "default-scheduler",
            "securityContext": wl.pod_security,
            "serviceAccount": wl.service_account,
            "serviceAccountName": wl.service_account,
            "terminationGracePeriodSeconds": wl.grace,
            "tolerations": wl.tolerations,
        }
        if wl.kind == "Node":
            # Static pods have no service account (admission skips mirror pods).
            del spec["serviceAccount"], spec["serviceAccountName"]
        if wl.inits:
            inits = []
            for c in wl.inits:
                spec_c = dict(c.spec)
                mounts = [*c.mounts, sa_mount] if sa_mount else c.mounts
                if mounts:
                    spec_c["volumeMounts"] = mounts
                inits.append(spec_c)
            spec["initContainers"] = inits
        volumes = wl.volumes
        if wl.kind == "StatefulSet":
            volumes = [
                {"name": "data", "persistentVolumeClaim": {"claimName": f"{wl.hash}-{pod.name}"}},
                *volumes,
            ]
            spec["hostname"] = pod.name
            spec["subdomain"] = wl.app
        if api_volume:
            volumes = [*volumes, {"name": api_volume, "projected": _SA_PROJECTION}]
        if volumes:
            spec["volumes"] = volumes
        if nd is not None:
            spec["nodeName"] = nd.name
        if wl.node_selector:
            spec["nodeSelector"] = wl.node_selector
        if wl.kind == "DaemonSet":
            spec["affinity"] = {
                "nodeAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": {
                        "nodeSelectorTerms": [
                            {
                                "matchFields": [
                                    {"key": "metadata.name", "operator": "In", "values": [nd.name]}
                                ]
                            }
                        ]
                    }
                }
            }
        elif wl.affinity:
            spec["affinity"] = wl.affinity
        if wl.spread:
            spec["topologySpreadConstraints"] = wl.spread
        if wl.host_network:
            spec["hostNetwork"] = True
        if wl.runtime_class:
            spec["runtimeClassName"] = wl.runtime_class
            spec["overhead"] = {"cpu": _cpu_q(wl.overhead[0]), "memory": _mem_q(wl.overhead[1])}

        # managedFields
        creator = "kubelet" if wl.kind == "Node" else "kube-controller-manager"
        managed = [_mf(creator, created, wl.mf_spec)]
        if pod.state in ("Unschedulable",):
            managed.append(
                _mf(
                    "kube-scheduler", _fmt(pod.created + 1), _SCHEDULER_FIELDS, subresource="status"
                )
            )
        elif pod.state != "Pending":
            managed.append(
                _mf(
                    "kubelet",
                    _fmt(max(pod.started, pod.last_restart, pod.finished) + 8),
                    _STATUS_FIELDS,
                    subresource="status",
                )
            )
        if pod.deleting and pod.preempted:
            managed.append(
                _mf(
                    "kube-scheduler",
                    _fmt(pod.deleting - wl.grace),
                    {
                        "f:status": {
                            "f:conditions": {
                                'k:{"type":"DisruptionTarget"}': {
                                    ".": {},
                                    **_f(
                                        "lastProbeTime",
                                        "lastTransitionTime",
                                        "message",
                                        "reason",
                                        "status",
                                        "type",
                                    ),
                                }
                            }
                        }
                    },
                    subresource="status",
                )
            )
        meta["managedFields"] = managed

        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": spec,
            "status": self._pod_status(pod, rng),
        }

    def _pod_status(self, pod: _Pod, rng: random.Random) -> dict:
        wl, nd = pod.wl, pod.node
        state = pod.state
        if state == "Pending":
            return {"phase": "Pending", "qosClass": wl.qos}
        if state == "Unschedulable":
            n = self.n_nodes
            taint = sum(
                1
                for x in self.nodes
                if x.state != "Ready"
                or any(t["effect"] != "PreferNoSchedule" for t in x.static_taints)
            )
            mismatch = min(n - taint, n // 7 if (wl.node_selector or wl.affinity) else 0)
            rest = n - taint - mismatch
            reasons = [f"{rest} Insufficient cpu"] if rest else []
            if mismatch:
                reasons.append(f"{mismatch} node(s) didn't match Pod's node affinity/selector")
            if taint:
                reasons.append(f"{taint} node(s) had untolerated taint(s)")
            message = (
                f"0/{n} nodes are available: {', '.join(reasons)}. preemption: 0/{n} nodes are "
                f"available: {rest} No preemption victims found for incoming pod, "
                f"{n - rest} Preemption is not helpful for scheduling."
            )
            status: dict = {
                "conditions": [
                    {
                        "lastProbeTime": None,
                        "lastTransitionTime": _fmt(pod.created + 1),
                        "message": message,
                        "reason": "Unschedulable",
                        "status": "False",
                        "type": "PodScheduled",
                    }
                ],
                "phase": "Pending",
                "qosClass": wl.qos,
            }
            if pod.nominated is not None:
                status["nominatedNodeName"] = pod.nominated.name
            return status

        started = pod.started
        s_started = _fmt(started)
        initialized_at = started + (rng.randrange(2, 20) if wl.inits else 0)
        ready_at = initialized_at + rng.randrange(3, 30)
        init_statuses = []
        statuses = []
        terminal = state in ("Succeeded", "Failed")
        for c in wl.inits:
            st: dict = {
                "containerID": "containerd://" + _hex(rng, 64),
                "image": c.image,
                "imageID": c.image_id,
                "lastState": {},
                "name": c.name,
                "ready": True,
                "restartCount": 0,
            }
            if state == "Creating":
                del st["containerID"]
                st.update(
                    imageID="",
                    ready=False,
                    started=False,
                    state={"waiting": {"reason": "PodInitializing"}},
                )
            elif c.sidecar and not terminal:
                st["started"] = True
                st["state"] = {"running": {"startedAt": _fmt(started + 1)}}
            else:
                st["started"] = False
                st["state"] = {
                    "terminated": {
                        "containerID": st["containerID"],
                        "exitCode": 0,
                        "finishedAt": _fmt(initialized_at),
                        "reason": "Completed",
                        "startedAt": _fmt(started + 1),
                    }
                }
            init_statuses.append(st)
        not_ready = []
        for i, c in enumerate(wl.containers):
            st = {
                "containerID": "containerd://" + _hex(rng, 64),
                "image": c.image,
                "imageID": c.image_id,
                "lastState": {},
                "name": c.name,
                "ready": True,
                "restartCount": pod.restarts,
                "started": True,
            }
            if state == "Creating":
                del st["containerID"]
                st.update(
                    imageID="",
                    ready=False,
                    started=False,
                    state={"waiting": {"reason": "ContainerCreating"}},
                )
                not_ready.append(c.name)
            elif terminal:
                failed = state == "Failed"
                oom = failed and c.mem_lim and rng.random() < 0.3
                st.update(ready=False, started=False)
                st["state"] = {
                    "terminated": {
                        "containerID": st["containerID"],
                        "exitCode": 137 if oom else 1 if failed else 0,
                        "finishedAt": _fmt(pod.finished),
                        "reason": "OOMKilled" if oom else "Error" if failed else "Completed",
                        "startedAt": _fmt(initialized_at + 1),
                    }
                }
            elif state == "CrashLoop" and i == 0:
                st.update(ready=False, started=False)
                st["lastState"] = {
                    "terminated": {
                        "containerID": "containerd://" + _hex(rng, 64),
                        "exitCode": 1,
                        "finishedAt": _fmt(pod.last_restart),
                        "reason": "Error",
                        "startedAt": _fmt(pod.last_restart - rng.randrange(1, 20)),
                    }
                }
                st["state"] = {
                    "waiting": {
                        "message": f"back-off 5m0s restarting failed container={c.name} pod={pod.name}_{wl.ns}({pod.uid})",
                        "reason": "CrashLoopBackOff",
                    }
                }
                not_ready.append(c.name)
            else:
                if pod.restarts and i == 0:
                    st["lastState"] = {
                        "terminated": {
                            "containerID": "containerd://" + _hex(rng, 64),
                            "exitCode": 137 if c.mem_lim else 2,
                            "finishedAt": _fmt(pod.last_restart),
                            "reason": "OOMKilled" if c.mem_lim else "Error",
                            "startedAt": _fmt(initialized_at + 1),
                        }
                    }
                    st["state"] = {"running": {"startedAt": _fmt(pod.last_restart + 1)}}
                else:
                    st["restartCount"] = 0
                    st["state"] = {"running": {"startedAt": _fmt(initialized_at + 1)}}
            statuses.append(st)

        def cond(ctype: str, status: str, when: int, reason: str = "", message: str = "") -> dict:
            c = {
                "lastProbeTime": None,
                "lastTransitionTime": _fmt(when),
                "status": status,
                "type": ctype,
            }
            if reason:
                c["reason"] = reason
            if message:
                c["message"] = message
            return c

        if terminal:
            end = pod.finished
            conditions = [
                cond("PodReadyToStartContainers", "False", end + 1),
                cond("Initialized", "True", initialized_at, "PodCompleted" if not wl.inits else ""),
                cond("Ready", "False", end, "PodCompleted"),
                cond("ContainersReady", "False", end, "PodCompleted"),
                cond("PodScheduled", "True", pod.created),
            ]
        elif state == "Creating":
            msg = f"containers with unready status: [{' '.join(not_ready)}]"
            init_ok = not wl.inits
            conditions = [
                cond("PodReadyToStartContainers", "False", started),
                cond(
                    "Initialized",
                    "True" if init_ok else "False",
                    started,
                    "" if init_ok else "ContainersNotInitialized",
                    ""
                    if init_ok
                    else f"containers with incomplete status: [{' '.join(c.name for c in wl.inits)}]",
                ),
                cond("Ready", "False", started, "ContainersNotReady", msg),
                cond("ContainersReady", "False", started, "ContainersNotReady", msg),
                cond("PodScheduled", "True", pod.created),
            ]
        else:
            conditions = [
                cond("PodReadyToStartContainers", "True", started + 2),
                cond("Initialized", "True", initialized_at),
            ]
            if not_ready:
                msg = f"containers with unready status: [{' '.join(not_ready)}]"
                conditions.append(
                    cond("Ready", "False", pod.last_restart, "ContainersNotReady", msg)
                )
                conditions.append(
                    cond("ContainersReady", "False", pod.last_restart, "ContainersNotReady", msg)
                )
            elif nd.state != "Ready":
                # The node lifecycle controller marks the pods of a not-ready node not ready.
                conditions.append(cond("Ready", "False", nd.transition + rng.randrange(1, 6)))
                conditions.append(cond("ContainersReady", "True", ready_at))
            else:
                conditions.append(cond("Ready", "True", ready_at))
                conditions.append(cond("ContainersReady", "True", ready_at))
            if pod.preempted:
                conditions.insert(
                    0,
                    cond(
                        "DisruptionTarget",
                        "True",
                        pod.deleting - wl.grace,
                        "PreemptionByScheduler",
                        "default-scheduler: preempting to accommodate a higher priority pod",
                    ),
                )
            conditions.append(cond("PodScheduled", "True", pod.created))
        status = {
            "conditions": conditions,
            "containerStatuses": statuses,
            "hostIP": nd.ip,
            "hostIPs": [{"ip": nd.ip}],
            "phase": "Succeeded"
            if state == "Succeeded"
            else "Failed"
            if state == "Failed"
            else "Pending"
            if state == "Creating"
            else "Running",
            "qosClass": wl.qos,
            "startTime": s_started,
        }
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        if pod.ip and state != "Creating":
            status["podIP"] = pod.ip
            status["podIPs"] = [{"ip": pod.ip}]
        return status

    def _render_pdb(self, pdb: _PDB, rv: str) -> dict:
        wl = pdb.wl
        spec: dict = {"selector": {"matchLabels": {"app.kubernetes.io/name": wl.app}}}
        if pdb.min_available is not None:
            spec["minAvailable"] = pdb.min_available
        else:
            spec["maxUnavailable"] = pdb.max_unavailable
        if pdb.unhealthy_policy:
            spec["unhealthyPodEvictionPolicy"] = pdb.unhealthy_policy
        updated = _fmt(self.now - 7)
        status: dict = {
            "conditions": [
                {
                    "lastTransitionTime": updated if pdb.disrupted else _fmt(pdb.created + 2),
                    "message": "",
                    "observedGeneration": 1,
                    "reason": "SufficientPods" if pdb.allowed else "InsufficientPods",
                    "status": "True" if pdb.allowed else "False",
                    "type": "DisruptionAllowed",
                }
            ],
            "currentHealthy": pdb.healthy,
            "desiredHealthy": pdb.desired,
            "disruptionsAllowed": pdb.allowed,
            "expectedPods": pdb.expected,
            "observedGeneration": 1,
        }
        if pdb.disrupted:
            status["disruptedPods"] = {name: _fmt(t) for name, t in sorted(pdb.disrupted.items())}
        return {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {
                "creationTimestamp": _fmt(pdb.created),
                "generation": 1,
                "labels": {"app.kubernetes.io/name": wl.app},
                "managedFields": [
                    _mf(
                        "kubectl-client-side-apply",
                        _fmt(pdb.created),
                        {
                            "f:metadata": {"f:labels": {".": {}, **_f("app.kubernetes.io/name")}},
                            "f:spec": _f(*(k for k in spec if k != "selector"), "selector"),
                        },
                        api="policy/v1",
                    ),
                    _mf(
                        "kube-controller-manager",
                        updated,
                        {"f:status": _f(*status)},
                        subresource="status",
                        api="policy/v1",
                    ),
                ],
                "name": pdb.name,
                "namespace": wl.ns,
                "resourceVersion": rv,
                "uid": pdb.uid,
            },
            "spec": spec,
            "status": status,
        }

    def _render_service(self, wl: _Workload, rng: random.Random, rv: str) -> dict:
        """A ClusterIP Service over the workload's pods (headless for a StatefulSet)."""
        port = next(
            (p for c in wl.containers for p in c.spec.get("ports") or ()),
            {"containerPort": 8080, "name": "http", "protocol": "TCP"},
        )
        headless = wl.kind == "StatefulSet"
        ip = (
            "None"
            if headless
            else f"100.{64 + rng.randrange(64)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        )
        created = _fmt(wl.rollout - DAY)
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "creationTimestamp": created,
                "labels": {"app.kubernetes.io/name": wl.app},
                "managedFields": [
                    _mf(
                        "kubectl-client-side-apply",
                        created,
                        {"f:spec": _f("clusterIP", "ports", "selector", "type")},
                    )
                ],
                "name": wl.app,
                "namespace": wl.ns,
                "resourceVersion": rv,
                "uid": _uid(rng),
            },
            "spec": {
                "clusterIP": ip,
                "clusterIPs": [ip],
                "internalTrafficPolicy": "Cluster",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "ports": [
                    {
                        "name": port.get("name", "http"),
                        "port": port["containerPort"],
                        "protocol": "TCP",
                        "targetPort": port["containerPort"],
                    }
                ],
                "selector": {"app.kubernetes.io/name": wl.app},
                "sessionAffinity": "None",
                "type": "ClusterIP",
            },
            "status": {"loadBalancer": {}},
        }

    def _render_controller(self, wl: _Workload, rv: str) -> dict:
        """The ReplicaSet or StatefulSet owning the workload's pods: its selector (which
        system default spreading reads) and a template with the scheduling fields."""
        selector = {k: v for k, v in wl.labels.items() if k != "controller-revision-hash"}
        template: dict = {
            "containers": [dict(c.spec) for c in wl.containers],
            "schedulerName": "default-scheduler",
        }
        for key, value in (
            ("affinity", wl.affinity),
            ("nodeSelector", wl.node_selector),
            ("tolerations", wl.tolerations),
            ("topologySpreadConstraints", wl.spread),
        ):
            if value:
                template[key] = value
        ready = sum(1 for p in wl.pods if p.ready)
        meta: dict = {
            "creationTimestamp": _fmt(wl.rollout),
            "generation": 1,
            "labels": selector,
            "name": wl.owner["name"],
            "namespace": wl.ns,
            "resourceVersion": rv,
            "uid": wl.owner["uid"],
        }
        if wl.kind == "ReplicaSet":
            deployment = wl.owner["name"].rsplit("-", 1)[0]
            meta["annotations"] = {
                "deployment.kubernetes.io/desired-replicas": str(wl.replicas),
                "deployment.kubernetes.io/max-replicas": str(wl.replicas + 1),
                "deployment.kubernetes.io/revision": "1",
            }
            meta["ownerReferences"] = [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Deployment",
                    "name": deployment,
                    "uid": _sha256(f"{wl.ns}/{deployment}")[:8]
                    + "-0000-4000-8000-"
                    + _sha256(f"{wl.ns}/{deployment}")[8:20],
                }
            ]
        spec: dict = {
            "replicas": wl.replicas,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": selector}, "spec": template},
        }
        if wl.kind == "StatefulSet":
            spec["serviceName"] = wl.app
            spec["podManagementPolicy"] = "OrderedReady"
        return {
            "apiVersion": "apps/v1",
            "kind": wl.kind,
            "metadata": meta,
            "spec": spec,
            "status": {
                "availableReplicas": ready,
                "observedGeneration": 1,
                "readyReplicas": ready,
                "replicas": len(wl.pods),
            },
        }

    def _render_priority_class(self, pc: tuple, rng: random.Random, rv: str) -> dict:
        name, value, global_default, policy, description = pc
        system = name.startswith("system-")
        created = _fmt(self.now - 400 * DAY + (0 if system else 3600))
        obj: dict = {
            "apiVersion": "scheduling.k8s.io/v1",
            "description": description,
            "kind": "PriorityClass",
            "metadata": {
                "creationTimestamp": created,
                "generation": 1,
                "managedFields": [
                    _mf(
                        "kube-apiserver" if system else "kubectl-client-side-apply",
                        created,
                        _f("description", "preemptionPolicy", "value")
                        | ({"f:globalDefault": {}} if global_default else {}),
                        api="scheduling.k8s.io/v1",
                    ),
                ],
                "name": name,
                "resourceVersion": rv,
                "uid": _uid(rng),
            },
            "preemptionPolicy": policy,
            "value": value,
        }
        if global_default:
            obj["globalDefault"] = True
        return obj

    def _render_lease(self, nd: _Node, rng: random.Random, rv: str) -> dict:
        if nd.state == "Unknown":
            renew = nd.heartbeat - rng.randrange(0, 10)
        else:
            renew = self.now - rng.randrange(0, 10)
        micros = rng.randrange(10**6)
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {
                "creationTimestamp": _fmt(nd.created + 5),
                "managedFields": [
                    _mf(
                        "kubelet",
                        _fmt(renew),
                        {
                            "f:metadata": {
                                "f:ownerReferences": {".": {}, f'k:{{"uid":"{nd.uid}"}}': {}}
                            },
                            "f:spec": _f("holderIdentity", "leaseDurationSeconds", "renewTime"),
                        },
                        api="coordination.k8s.io/v1",
                    ),
                ],
                "name": nd.name,
                "namespace": "kube-node-lease",
                "ownerReferences": [
                    {"apiVersion": "v1", "kind": "Node", "name": nd.name, "uid": nd.uid}
                ],
                "resourceVersion": rv,
                "uid": _uid(rng),
            },
            "spec": {
                "holderIdentity": nd.name,
                "leaseDurationSeconds": 40,
                "renewTime": _fmt_micro(renew, micros),
            },
        }

    # --- rendering: kubelet Summary API --------------------------------------------------------

    def stats(self) -> Iterator[tuple[str, dict]]:
        """(node name, Summary) for every node whose kubelet answers (all but Unknown ones)."""
        rng = random.Random(f"bench.generate/{self.seed}/stats")
        for nd in self.nodes:
            if nd.state == "Unknown":
                continue
            yield nd.name, self._summary(nd, rng)

    def _summary(self, nd: _Node, rng: random.Random) -> dict:
        now = self.now
        t = now - rng.randrange(1, 12)
        ts = _fmt(t)
        uniform = rng.uniform
        cap_mem = nd.mem_cap_ki * KI
        pods_limit = nd.mem_alloc_ki * KI + 100 * MI  # the kubepods cgroup: allocatable + threshold
        fs_cap = nd.eph_cap_ki * KI
        fs_inodes = fs_cap // 16384

        # Per-container usage (running containers only).
        entries = []
        for pod in nd.pods:
            if pod.state not in ("Running", "CrashLoop"):
                continue
            wl = pod.wl
            ctrs = []
            for i, c in enumerate((*wl.containers, *(c for c in wl.inits if c.sidecar))):
                if pod.state == "CrashLoop" and i == 0:
                    continue
                if c.mem_lim:
                    ws = int(c.mem_lim * uniform(0.2, 0.8))
                elif c.mem_req:
                    ws = int(c.mem_req * uniform(0.4, 1.25))
                else:
                    ws = int(uniform(12, 320) * MI)
                if c.cpu_lim:
                    cpu = int(c.cpu_lim * uniform(0.02, 0.9) * 1e6)
                elif c.cpu_req:
                    cpu = int(c.cpu_req * uniform(0.05, 1.6) * 1e6)
                else:
                    cpu = int(uniform(1, 150) * 1e6)
                ctrs.append([c, ws, cpu])
            entries.append((pod, ctrs))
        kubelet_ws = int(uniform(60, 180) * MI)
        runtime_ws = int(uniform(80, 400) * MI)
        os_ws = int(uniform(300, 900) * MI)
        pods_ws = sum(x[1] for _, ctrs in entries for x in ctrs)
        if nd.pressure.startswith("memory"):
            avail_target = int(uniform(15, 90) * MI)
            pods_target = min(
                pods_limit - int(uniform(10, 80) * MI),
                cap_mem - avail_target - kubelet_ws - runtime_ws - os_ws,
            )
            need = pods_target - pods_ws
            if need > 0:
                # First fill limited containers towards their limits, the rest goes to containers
                # without a memory limit (these are what the eviction manager ranks first).
                # Only application pods grow: system daemons keep their usual footprint.
                apps = [(p, ctrs) for p, ctrs in entries if p.wl.kind not in ("Node", "DaemonSet")]
                for _, ctrs in apps:
                    for x in ctrs:
                        if need <= 0:
                            break
                        if x[0].mem_lim:
                            add = min(need, int(x[0].mem_lim * 0.95) - x[1])
                            if add > 0:
                                x[1] += add
                                need -= add
                unlimited = [x for _, ctrs in apps for x in ctrs if not x[0].mem_lim]
                if unlimited and need > 0:
                    weights = [uniform(0.2, 3.0) for _ in unlimited]
                    total_w = sum(weights)
                    for x, w in zip(unlimited, weights, strict=True):
                        x[1] += int(need * w / total_w)
                    need = 0
                pods_ws = sum(x[1] for _, ctrs in entries for x in ctrs)
            os_ws = max(os_ws, cap_mem - avail_target - kubelet_ws - runtime_ws - pods_ws)
        else:
            ceiling = int(min(pods_limit, cap_mem) * 0.8)
            if pods_ws > ceiling:
                factor = ceiling / pods_ws
                for _, ctrs in entries:
                    for x in ctrs:
                        x[1] = int(x[1] * factor)
                pods_ws = sum(x[1] for _, ctrs in entries for x in ctrs)

        # Disk usage.
        images_bytes = sum(
            _image_size(c.image)
            for c in {c.image: c for p in nd.pods for c in (*p.wl.inits, *p.wl.containers)}.values()
        )
        os_disk = int(uniform(3, 7) * GI)
        pod_entries = []
        pod_disk_total = 0
        pod_inodes_total = 0
        pod_cpu_total = 0
        pod_mem_total = 0
        procs_total = 0
        disk_pressure = nd.pressure == "disk"
        fs_used_target = int(fs_cap * uniform(0.92, 0.965)) if disk_pressure else 0
        # When the node is under disk pressure, one or two pods write a lot of logs / emptyDir.
        apps = [e for e in entries if e[0].wl.kind not in ("Node", "DaemonSet")] or entries
        heavy = {id(e[0]) for e in apps[:2]} if disk_pressure else set()
        heavy_budget = max(0, fs_used_target - os_disk - images_bytes - len(entries) * 60 * MI)
        pod_fs_rows = []
        for pod, ctrs in entries:
            wl = pod.wl
            rows = []
            for c, ws, cpu in ctrs:
                rootfs = int(uniform(0.01, 40) * MI)
                logs = int(uniform(0.01, 60) * MI)
                if id(pod) in heavy:
                    logs += heavy_budget // max(1, len(heavy)) // max(1, len(ctrs))
                rows.append((c, ws, cpu, rootfs, logs, rng.randrange(3, 400), rng.randrange(1, 30)))
            vols = []
            for v in wl.volumes:
                if "emptyDir" in v:
                    used = (
                        int(uniform(0, 900) * MI)
                        if v["name"] == "tmp"
                        else int(uniform(0, 200) * MI)
                    )
                    vols.append((v["name"], used, rng.randrange(1, 2000), None))
                elif "configMap" in v:
                    vols.append(
                        (v["name"], 8192 + rng.randrange(40000), rng.randrange(3, 12), None)
                    )
            if wl.kind == "StatefulSet":
                vols.append(
                    (
                        "data",
                        int(uniform(1, 80) * GI),
                        rng.randrange(100, 100000),
                        f"{wl.hash}-{pod.name}",
                    )
                )
            if pod.sa_volume:
                vols.append((pod.sa_volume, 12288, 9, None))
            pod_fs_rows.append((pod, rows, vols))
            pod_disk_total += sum(r[3] + r[4] for r in rows) + sum(
                v[1] for v in vols if v[3] is None and v[0] != pod.sa_volume
            )
            pod_inodes_total += sum(r[5] for r in rows) + sum(v[2] for v in vols if v[3] is None)
        fs_used = os_disk + images_bytes + pod_disk_total
        fs_avail = max(fs_cap // 100, fs_cap - fs_used)
        fs_inodes_used = 180_000 + images_bytes // (64 * KI) + pod_inodes_total
        node_fs = {
            "time": ts,
            "availableBytes": fs_avail,
            "capacityBytes": fs_cap,
            "usedBytes": fs_used,
            "inodesFree": fs_inodes - fs_inodes_used,
            "inodes": fs_inodes,
            "inodesUsed": fs_inodes_used,
        }
        image_fs = {**node_fs, "usedBytes": images_bytes, "inodesUsed": images_bytes // (64 * KI)}

        def fs(used: int, inodes_used: int) -> dict:
            return {
                "time": ts,
                "availableBytes": fs_avail,
                "capacityBytes": fs_cap,
                "usedBytes": used,
                "inodesFree": fs_inodes - fs_inodes_used,
                "inodes": fs_inodes,
                "inodesUsed": inodes_used,
            }

        for pod, rows, vols in pod_fs_rows:
            wl = pod.wl
            wl_empty_dirs = {v["name"] for v in wl.volumes if "emptyDir" in v}
            start = _fmt(pod.started)
            containers = []
            mem_sum = 300 * KI  # the pause container
            cpu_sum = 0
            eph_used = 0
            eph_inodes = 0
            procs = 0
            for c, ws, cpu, rootfs, logs, inodes, nproc in rows:
                usage = ws + int(ws * uniform(0.02, 0.3))
                memory = {"time": ts}
                if c.mem_lim:
                    memory["availableBytes"] = max(0, c.mem_lim - ws)
                memory.update(
                    usageBytes=usage,
                    workingSetBytes=ws,
                    rssBytes=int(ws * uniform(0.55, 0.95)),
                    pageFaults=rng.randrange(10_000, 90_000_000),
                    majorPageFaults=rng.randrange(0, 400),
                )
                c_start = (
                    pod.last_restart + 1
                    if pod.restarts and c is wl.containers[0]
                    else pod.started + 2
                )
                containers.append(
                    {
                        "name": c.name,
                        "startTime": _fmt(c_start),
                        "cpu": {
                            "time": ts,
                            "usageNanoCores": cpu,
                            "usageCoreNanoSeconds": cpu * max(1, t - c_start),
                        },
                        "memory": memory,
                        "rootfs": fs(rootfs, inodes),
                        "logs": fs(logs, 1 + inodes // 50),
                    }
                )
                mem_sum += ws
                cpu_sum += cpu
                eph_used += rootfs + logs
                eph_inodes += inodes + 1 + inodes // 50
                procs += nproc
            volume = []
            for name, used, inodes, claim in vols:
                entry = {
                    "time": ts,
                    "availableBytes": fs_avail,
                    "capacityBytes": fs_cap,
                    "usedBytes": used,
                    "inodesFree": fs_inodes - fs_inodes_used,
                    "inodes": fs_inodes,
                    "inodesUsed": inodes,
                    "name": name,
                }
                if claim:
                    pvc_cap = 100 * GI
                    entry.update(
                        availableBytes=pvc_cap - used,
                        capacityBytes=pvc_cap,
                        inodesFree=6_553_600 - inodes,
                        inodes=6_553_600,
                    )
                    entry["pvcRef"] = {"name": claim, "namespace": wl.ns}
                elif name in wl_empty_dirs:
                    eph_used += used
                    eph_inodes += inodes
                volume.append(entry)
            pod_memory = {"time": ts}
            if all(c.mem_lim for c in (*wl.containers, *wl.inits)):
                limit = sum(c.mem_lim for c in wl.containers) + sum(
                    c.mem_lim for c in wl.inits if c.sidecar
                )
                pod_memory["availableBytes"] = max(
                    0, limit + (wl.overhead[1] if wl.overhead else 0) - mem_sum
                )
            pod_memory.update(
                usageBytes=mem_sum + int(mem_sum * uniform(0.02, 0.25)),
                workingSetBytes=mem_sum,
                rssBytes=int(mem_sum * uniform(0.55, 0.95)),
                pageFaults=rng.randrange(10_000, 90_000_000),
                majorPageFaults=rng.randrange(0, 400),
            )
            entry = {
                "podRef": {"name": pod.name, "namespace": wl.ns, "uid": pod.static_uid or pod.uid},
                "startTime": start,
                "containers": containers,
                "cpu": {
                    "time": ts,
                    "usageNanoCores": cpu_sum,
                    "usageCoreNanoSeconds": cpu_sum * max(1, t - pod.started),
                },
                "memory": pod_memory,
            }
            if volume:
                entry["volume"] = volume
            entry["ephemeral-storage"] = fs(eph_used, eph_inodes)
            entry["process_stats"] = {"process_count": procs}
            pod_entries.append(entry)
            pod_cpu_total += cpu_sum
            pod_mem_total += mem_sum
            procs_total += procs

        kubelet_cpu = int(uniform(20, 120) * 1e6)
        runtime_cpu = int(uniform(10, 200) * 1e6)
        node_cpu = pod_cpu_total + kubelet_cpu + runtime_cpu + int(uniform(20, 200) * 1e6)
        node_ws = pod_mem_total + kubelet_ws + runtime_ws + os_ws
        uptime = max(1, t - nd.created)
        boot = _fmt(nd.created + 30)

        def memory(ws: int, available: int | None) -> dict:
            m: dict = {"time": ts}
            if available is not None:
                m["availableBytes"] = max(0, available)
            m.update(
                usageBytes=ws + int(ws * uniform(0.05, 0.35)),
                workingSetBytes=ws,
                rssBytes=int(ws * uniform(0.5, 0.9)),
                pageFaults=rng.randrange(10**6, 10**10),
                majorPageFaults=rng.randrange(0, 100_000),
            )
            return m

        def cpu_stats(nanocores: int) -> dict:
            return {
                "time": ts,
                "usageNanoCores": nanocores,
                "usageCoreNanoSeconds": nanocores * uptime,
            }

        runtime: dict = {"imageFs": image_fs}
        if nd.kubelet == K8S_VERSION:
            runtime["containerFs"] = dict(image_fs)
        rx, tx = rng.randrange(10**10, 10**13), rng.randrange(10**10, 10**13)
        interface = {"name": "eth0", "rxBytes": rx, "rxErrors": 0, "txBytes": tx, "txErrors": 0}
        return {
            "node": {
                "nodeName": nd.name,
                "systemContainers": [
                    {
                        "name": "kubelet",
                        "startTime": boot,
                        "cpu": cpu_stats(kubelet_cpu),
                        "memory": memory(kubelet_ws, None),
                    },
                    {
                        "name": "runtime",
                        "startTime": boot,
                        "cpu": cpu_stats(runtime_cpu),
                        "memory": memory(runtime_ws, None),
                    },
                    {
                        "name": "pods",
                        "startTime": boot,
                        "cpu": cpu_stats(pod_cpu_total),
                        "memory": memory(pod_mem_total, pods_limit - pod_mem_total),
                    },
                ],
                "startTime": _fmt(nd.created),
                "cpu": cpu_stats(node_cpu),
                "memory": memory(node_ws, cap_mem - node_ws),
                "network": {"time": ts, **interface, "interfaces": [interface]},
                "fs": node_fs,
                "runtime": runtime,
                "rlimit": {
                    "time": ts,
                    "maxpid": 4194304,
                    "curproc": procs_total + rng.randrange(180, 600),
                },
            },
            "pods": pod_entries,
        }


def _http_probe(port: int, path: str, initial: int) -> dict:
    probe = {
        "failureThreshold": 3,
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "periodSeconds": 10,
        "successThreshold": 1,
        "timeoutSeconds": 1,
    }
    if initial:
        probe["initialDelaySeconds"] = initial
    return probe


def _tcp_probe(port: int) -> dict:
    return {
        "failureThreshold": 3,
        "periodSeconds": 10,
        "successThreshold": 1,
        "tcpSocket": {"port": port},
        "timeoutSeconds": 1,
    }


# --- public API --------------------------------------------------------------------------------


def iter_items(
    nodes: int, pods: int, seed: int, *, captured_at: str = DEFAULT_CAPTURED_AT
) -> Iterator[dict]:
    """The List items (nodes, pods, PDBs, PriorityClasses, Leases), one dict at a time.

    Dicts may share sub-objects with each other (pod templates); treat them as read-only or
    use :func:`generate`, which returns independent objects.
    """
    return _Cluster(nodes, pods, seed, captured_at).items()


def iter_stats(
    nodes: int, pods: int, seed: int, *, captured_at: str = DEFAULT_CAPTURED_AT
) -> Iterator[tuple[str, dict]]:
    """(node name, kubelet Summary) pairs, in node-name order, skipping unreachable nodes."""
    return _Cluster(nodes, pods, seed, captured_at).stats()


_ITEM_OPTS = orjson.OPT_SORT_KEYS


def iter_chunks(
    nodes: int,
    pods: int,
    seed: int,
    *,
    stats: bool = True,
    list_only: bool = False,
    captured_at: str = DEFAULT_CAPTURED_AT,
    batch: int = 256,
    volumes: bool = False,
) -> Iterator[bytes]:
    """The serialized output, in chunks (what the CLI writes). ``volumes``: the cluster of
    bench/generate_volumes.py (StatefulSets claiming zonal volumes, CSINode limits)."""
    if volumes:
        from bench.generate_volumes import VolumeCluster  # here: it imports this module

        cluster: _Cluster = VolumeCluster(nodes, pods, seed, captured_at)
    else:
        cluster = _Cluster(nodes, pods, seed, captured_at)
    list_head = b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":['
    if list_only:
        yield list_head
    else:
        yield (
            b'{"name":'
            + orjson.dumps(cluster.name)
            + b',"cluster":"synthetic","labels":{"generator":"bench.generate"},"capturedAt":'
            + orjson.dumps(cluster.captured_at)
            + b',"objects":'
            + list_head
        )
    parts: list[bytes] = []
    first = True
    for item in cluster.items():
        if not first:
            parts.append(b",")
        first = False
        parts.append(orjson.dumps(item, option=_ITEM_OPTS))
        if len(parts) >= 2 * batch:
            yield b"".join(parts)
            parts.clear()
    parts.append(b"]}")
    if not list_only and stats:
        parts.append(b',"stats":{')
        first = True
        for name, summary in cluster.stats():
            if not first:
                parts.append(b",")
            first = False
            parts.append(orjson.dumps(name))
            parts.append(b":")
            parts.append(orjson.dumps(summary))
            if len(parts) >= 4 * batch:
                yield b"".join(parts)
                parts.clear()
        parts.append(b"}")
    if not list_only:
        parts.append(b"}")
    parts.append(b"\n")
    yield b"".join(parts)


def generate(
    nodes: int,
    pods: int,
    seed: int,
    *,
    stats: bool = True,
    captured_at: str = DEFAULT_CAPTURED_AT,
) -> dict:
    """The envelope as a Python dict (meant for small sizes); equal to ``json.loads`` of the CLI
    output for the same arguments."""
    return orjson.loads(
        b"".join(iter_chunks(nodes, pods, seed, stats=stats, captured_at=captured_at))
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description="Print a deterministic synthetic cluster snapshot (Verdict envelope) as JSON.",
    )
    parser.add_argument("--nodes", type=int, required=True, help="number of nodes")
    parser.add_argument("--pods", type=int, required=True, help="number of pods")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--list", action="store_true", help="print only the kubectl List (no envelope, no stats)"
    )
    parser.add_argument("--no-stats", action="store_true", help="leave out the Summary API stats")
    parser.add_argument(
        "--volumes", action="store_true", help="StatefulSets claiming zonal volumes, CSINodes"
    )
    parser.add_argument(
        "--captured-at",
        default=DEFAULT_CAPTURED_AT,
        help=f"snapshot time, RFC 3339 (default {DEFAULT_CAPTURED_AT})",
    )
    args = parser.parse_args(argv)
    try:
        _parse_ts(args.captured_at)
    except ValueError:
        parser.error(f"--captured-at: not an RFC 3339 time: {args.captured_at!r}")
    if not 1 <= args.nodes <= MAX_NODES:
        parser.error(f"--nodes must be between 1 and {MAX_NODES}")
    if args.pods < 0:
        parser.error("--pods must not be negative")
    out = sys.stdout.buffer
    try:
        for chunk in iter_chunks(
            args.nodes,
            args.pods,
            args.seed,
            stats=not args.no_stats,
            list_only=args.list,
            captured_at=args.captured_at,
            volumes=args.volumes,
        ):
            out.write(chunk)
        out.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); do not print a traceback.
        sys.stderr.close()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
