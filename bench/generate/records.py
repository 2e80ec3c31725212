"""The plan's records (nodes, workloads, pods, PDBs) and the few scheduling predicates the
planner evaluates on them (QoS class, effective requests, taints and node affinity).

The planner decides everything on these records first; rendering turns them into
kubectl-shaped objects afterwards, so shared facts (a pod's node, a PDB's healthy count)
are decided once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from bench.generate.common import K8S_VERSION


@dataclass(eq=False, slots=True)
class ContainerPlan:
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
class NodePlan:
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
class WorkloadPlan:
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
class PodPlan:
    wl: WorkloadPlan
    name: str
    uid: str
    key: str  # namespace/name, the API server's list order
    node: NodePlan | None = None
    ip: str = ""
    created: int = 0
    started: int = 0
    # Running | CrashLoop | Creating (scheduled, sandbox not up) | Pending (not yet tried)
    # Unschedulable | Succeeded | Failed
    state: str = "Running"
    ordinal: int = -1
    deleting: int = 0  # deletionTimestamp (epoch), 0 = not being deleted
    preempted: bool = False
    nominated: NodePlan | None = None
    restarts: int = 0
    last_restart: int = 0
    finished: int = 0
    static_uid: str = ""
    sa_volume: str = ""  # kube-api-access-xxxxx (also named in the Summary volume stats)

    @property
    def ready(self) -> bool:
        return self.state == "Running" and self.node is not None and self.node.state == "Ready"


@dataclass(eq=False, slots=True)
class PDBPlan:
    wl: WorkloadPlan
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


def qos_class(containers: list) -> str:
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


def effective_request(containers: list, inits: list, attr: str) -> int:
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


def tolerates(tolerations: list, taint: dict) -> bool:
    """Whether some toleration in ``tolerations`` tolerates ``taint`` (v1 ToleratesTaint)."""
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


def node_matches(node: NodePlan, wl: WorkloadPlan) -> bool:
    """Whether ``wl``'s pods may run on ``node``: nodeSelector, required node affinity, and
    tolerations for its NoSchedule and NoExecute taints."""
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
        tolerates(wl.tolerations, taint)
        for taint in node.static_taints
        if taint["effect"] in ("NoSchedule", "NoExecute")
    )
