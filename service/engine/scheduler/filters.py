"""kube-scheduler Filter plugins of the default profile, and the scheduler's view of a snapshot.

Mirrors, from kubernetes/kubernetes (master, about v1.35/1.36; spec/scheduler.md):

* ``pkg/scheduler/framework/plugins/nodeunschedulable`` (NodeUnschedulable),
  ``nodename`` (NodeName), ``tainttoleration`` (TaintToleration, filter part),
  ``nodeaffinity`` (NodeAffinity, required part + nodeSelector), ``nodeports`` (NodePorts),
  ``noderesources/fit.go`` (NodeResourcesFit PreFilter/Filter, ``fitsRequest`` with the newest
  ``unresolvable`` flag);
* ``pkg/scheduler/framework/runtime`` ``RunFilterPlugins``: plugins run in the default
  profile's order and the first rejection ends the run (its status is the node's status);
* ``pkg/scheduler/framework/types.go`` NodeInfo aggregates (Requested, NonZeroRequested, pod
  count, used host ports).

The filters of the default profile that Verdict does not model (volume filters,
PodTopologySpread, InterPodAffinity) are never silently passed over: ``not_modelled`` names
them whenever the pod (or, for InterPodAffinity, an existing pod's anti-affinity) would make
them matter, and every result built on these filters reports that list.

Performance: a ``SchedulerView`` (per-node aggregates over 150,000 pods) is built once per
``Cluster`` and cached in a ``WeakKeyDictionary`` keyed by the Cluster object, so a request
never re-sums the snapshot's pods.
"""

from __future__ import annotations

import bisect
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import accumulate, chain, repeat
from operator import attrgetter
from typing import Any

import msgspec

from service.engine.nodeaffinity import matches_node_selector_and_affinity
from service.engine.objects import (
    Cluster,
    ContainerPort,
    Node,
    Pod,
    PodDisruptionBudget,
    Taint,
)
from service.engine.ports import HostPorts, wanted_host_ports
from service.engine.resources import (
    DEFAULT_CPU_REQUEST_MILLI,
    DEFAULT_MEMORY_REQUEST_BYTES,
    scheduler_pod_requests,
)
from service.engine.scheduler.framework import (
    ERROR,
    OK,
    SKIP,
    SUCCESS,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Status,
)
from service.engine.tolerations import find_untolerated, tolerates_any

__all__ = [
    "DEFAULT_FILTER_ORDER",
    "ERROR",
    "MODELLED_FILTERS",
    "SKIP",
    "SUCCESS",
    "UNRESOLVABLE",
    "UNSCHEDULABLE",
    "FitArgs",
    "InsufficientResource",
    "NodeInfo",
    "NodeState",
    "PodContext",
    "PodInfo",
    "SchedulerView",
    "Status",
    "base_state",
    "fits_request",
    "install_view",
    "is_extended_resource_name",
    "is_scalar_resource_name",
    "node_affinity",
    "node_affinity_prefilter",
    "node_name",
    "node_ports",
    "node_resources_fit",
    "node_unschedulable",
    "pod_context",
    "pod_info",
    "run_filter_plugins",
    "scheduler_view",
    "state_of",
    "taint_toleration",
    "used_ports_of",
]

# --- reasons, in the plugins' own words ---
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
ERR_REASON_NODE_NAME = "node(s) didn't match the requested node name"
ERR_REASON_NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_NODE_PORTS = "node(s) didn't have free ports for the requested pod ports"
ERR_REASON_SIDECARS_DISABLED = (
    "Pod has a restartable init container and the SidecarContainers feature is disabled"
)
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"

# The default profile's Filter plugins, in order (pkg/scheduler/apis/config/v1
# default_plugins.go). Verdict evaluates the first six; the rest are reported as not modelled.
DEFAULT_FILTER_ORDER = (
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
)
MODELLED_FILTERS = DEFAULT_FILTER_ORDER[:6]

# A pod without status.startTime counts as started "now" (util.GetPodStartTime): the newest.
START_TIME_NOW = 2**63 - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)




@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """noderesources.InsufficientResource (newest: with the ``Unresolvable`` flag)."""

    resource_name: str
    reason: str
    requested: int
    used: int
    capacity: int
    unresolvable: bool = False


@dataclass(frozen=True, slots=True)
class FitArgs:
    """NodeResourcesFitArgs.ignoredResources / ignoredResourceGroups."""

    ignored_resources: frozenset[str] = frozenset()
    ignored_resource_groups: frozenset[str] = frozenset()


DEFAULT_FIT_ARGS = FitArgs()


# --- resource name classes (pkg/apis/core/v1/helper, scheduler util) ---


def _is_native_resource(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def is_extended_resource_name(name: str) -> bool:
    """v1helper.IsExtendedResourceName: not native, not "requests."-prefixed, and (being a
    qualified name with a "/") a valid quota resource name."""
    return not (_is_native_resource(name) or name.startswith("requests."))


def is_scalar_resource_name(name: str) -> bool:
    """schedutil.IsScalarResourceName: extended, hugepages-*, prefixed native
    (``*kubernetes.io/*``) or attachable-volumes-*."""
    return (
        is_extended_resource_name(name)
        or name.startswith("hugepages-")
        or "kubernetes.io/" in name
        or name.startswith("attachable-volumes-")
    )


class PodInfo(msgspec.Struct, eq=False, gc=False, array_like=True):
    """A pod as the scheduler's cache holds it: effective requests (PodRequests), the non-zero
    cpu/memory used for NonZeroRequested, priority, start time in ns, host ports.

    A msgspec Struct, not a plain class: a view builds one per pod (150,000), and a Struct is
    created several times faster. Compared and hashed by identity (``eq=False``); untracked by
    the garbage collector (``gc=False``: it never refers back to itself). ``requests`` may be
    the pod's own container dict (see ``pod_info``): read it, never mutate it.

    ``pod`` is None for an explicit hold, and for the pods of a view restored from a stored
    scheduler form (``scheduler/stored.py``) that the scheduler never needs whole: those carry
    their QoS class in ``qos`` for the result's pod reference. Encoded as an array in that
    form (``array_like``).
    """

    pod: Pod | None
    namespace: str
    name: str
    uid: str
    priority: int
    requests: dict[str, int]
    nz_cpu: int
    nz_mem: int
    start_ns: int = START_TIME_NOW
    has_ports: bool = False
    # requests["cpu"] and requests["memory"] (0 when absent), set by pod_info so that
    # preemption's per-node sums read a field instead of a dict; None: read ``requests``.
    cpu: int | None = None
    memory: int | None = None
    # Indexes of the PDBs selecting the pod, filled in by the SchedulerView holding it on
    # the first pdb_positions (None: not looked up; SchedulerView.matching_pdbs computes).
    pdbs: tuple[int, ...] | None = None
    # status QoS class, set only where ``pod`` is None in a restored view ("" elsewhere).
    qos: str = ""
    # The pod's own host ports (HostPorts.of_pods([pod])), built on first use by preemption.
    # Typed Any so that msgspec can decode a stored view, where it is always None.
    host_ports: Any = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def same_pod(self, other: PodInfo) -> bool:
        """Pods compared by UID (upstream); by namespace/name when a UID is missing."""
        if self.uid and other.uid:
            return self.uid == other.uid
        return self.key == other.key

    def __repr__(self) -> str:  # pragma: no cover - debugging aid
        return f"PodInfo({self.key}, priority={self.priority})"


def pod_info(pod: Pod) -> PodInfo:
    """Precompute what the scheduler reads of a pod (NodeInfo.AddPod's calculateResource).
    ``requests`` may be shared with the pod's container (``scheduler_pod_requests``).

    Runs for every pod of the snapshot when a view is built, so the common shape (one
    container; no init containers, overhead or pod-level resources) is handled here, as
    ``scheduler_pod_requests`` handles it."""
    containers = pod.containers
    if (
        len(containers) == 1
        and not pod.init_containers
        and not pod.overhead
        and pod.resources is None
    ):
        c = containers[0]
        requests = c.requests
        cpu = requests.get("cpu")
        memory = requests.get("memory")
        nz_cpu = DEFAULT_CPU_REQUEST_MILLI if cpu is None else cpu
        nz_mem = DEFAULT_MEMORY_REQUEST_BYTES if memory is None else memory
        has_ports = False
        for p in c.ports:
            if p.host_port > 0:
                has_ports = True
                break
    else:
        requests, nz_cpu, nz_mem = scheduler_pod_requests(pod)
        cpu = requests.get("cpu")
        memory = requests.get("memory")
        has_ports = False
        for c in containers:
            for p in c.ports:
                if p.host_port > 0:
                    has_ports = True
                    break
    start = pod.start_time
    if start is None:
        start_ns = START_TIME_NOW
    else:
        if start.tzinfo is None:
            start = start.replace(tzinfo=UTC)
        delta = start - _EPOCH
        start_ns = (
            delta.days * 86_400 + delta.seconds
        ) * 1_000_000_000 + delta.microseconds * 1_000
    priority = pod.priority
    return PodInfo(
        pod,
        pod.namespace,
        pod.name,
        pod.uid,
        0 if priority is None else priority,
        requests,
        nz_cpu,
        nz_mem,
        start_ns,
        has_ports,
        0 if cpu is None else cpu,
        0 if memory is None else memory,
    )


class NodeInfo:
    """framework.NodeInfo for one node of the snapshot: allocatable, the node's pods (bound,
    not terminal, terminating included, snapshot order) and their aggregates."""

    __slots__ = (
        "_by_importance",
        "_cum",
        "_neg_priority",
        "_pdb_positions",
        "_port_positions",
        "_ports_before",
        "allocatable",
        "allowed_pods",
        "index",
        "node",
        "nz_cpu",
        "nz_mem",
        "pod_count",
        "pods",
        "port_pods",
        "requested",
        "used_ports",
    )

    def __init__(
        self,
        node: Node,
        index: int,
        pods: list[PodInfo],
        totals: tuple[dict[str, int], int, int] | None = None,
    ) -> None:
        """``totals``: (Requested, NonZeroRequested cpu, memory) of ``pods`` when already known
        (a restored view stores them); summed here otherwise."""
        self.node = node
        self.index = index
        self.allocatable = node.allocatable
        self.allowed_pods = node.allocatable.get("pods", 0)
        self.pods = pods
        self.pod_count = len(pods)
        self._by_importance: list[PodInfo] | None = None
        self._neg_priority: list[int] | None = None
        self._cum: dict[str, list[int]] | None = None
        self._pdb_positions: list[tuple[int, tuple[tuple[int, int, bool], ...]]] | None = None
        self._port_positions: list[tuple[int, PodInfo]] | None = None
        self._ports_before: dict[int, tuple[tuple[PodInfo, ...], HostPorts | None]] | None = None
        if not pods:
            self.requested: dict[str, int] = {}
            self.nz_cpu = self.nz_mem = 0
            self.port_pods: tuple[PodInfo, ...] = ()
            self.used_ports: HostPorts | None = None
            return
        if totals is not None:
            self.requested, self.nz_cpu, self.nz_mem = totals
        else:
            # The sums of calculateResource over the pods, per resource in first-seen order;
            # the iteration is left to map/sum (this runs for 150,000 pods per view).
            reqs = list(map(_REQUESTS, pods))
            get = dict.get
            self.requested = {
                name: sum(map(get, reqs, repeat(name), repeat(0)))
                for name in dict.fromkeys(chain.from_iterable(reqs))
            }
            self.nz_cpu = sum(map(_NZ_CPU, pods))
            self.nz_mem = sum(map(_NZ_MEM, pods))
        if any(map(_HAS_PORTS, pods)):
            self.port_pods = tuple(filter(_HAS_PORTS, pods))
            self.used_ports = used_ports_of(self.port_pods)
        else:
            self.port_pods = ()
            self.used_ports = None

    @property
    def name(self) -> str:
        return self.node.name

    # Lazy per-node indexes over pods_by_importance(), for preemption (computed at most once
    # per node and Cluster; concurrent first use computes the same values). The importance
    # order, the priorities, the cpu and memory prefix sums and the host-port positions are
    # built together in one pass (``_build_order``): the node's pods lie scattered in memory,
    # so each is best visited once.

    def first_below(self, priority: int) -> int:
        """Position, in pods_by_importance(), of the first pod with a priority < ``priority``
        (the potential victims are that suffix)."""
        neg = self._neg_priority
        if neg is None:
            neg = self._build_order()[1]
        return bisect.bisect_right(neg, -priority)

    def cumulative(self, resource: str) -> list[int]:
        """Prefix sums of ``resource`` requests over pods_by_importance() (length n + 1)."""
        cums = self._cum
        if cums is None:
            cums = self._build_order()[2]
        cum = cums.get(resource)
        if cum is None:
            values = map(
                dict.get, map(_REQUESTS, self.pods_by_importance()), repeat(resource), repeat(0)
            )
            cum = cums[resource] = list(accumulate(values, initial=0))
        return cum

    def pdb_positions(
        self, view: SchedulerView
    ) -> list[tuple[int, tuple[tuple[int, int, bool], ...]]]:
        """For the pods some PDB selects, in pods_by_importance() order: (position, ((PDB
        index, its disruptionsAllowed, whether the pod is in its disruptedPods), ...))."""
        found = self._pdb_positions
        if found is None:
            found = view._pdb_positions_of(self.pods_by_importance()) if view.pdbs else []
            self._pdb_positions = found
        return found

    def port_positions(self) -> list[tuple[int, PodInfo]]:
        """(position, pod) for the pods with host ports, in pods_by_importance() order."""
        found = self._port_positions
        if found is None:
            found = self._build_order()[3]
        return found

    def ports_before(self, first: int) -> tuple[tuple[PodInfo, ...], HostPorts | None]:
        """The pods with host ports among the first ``first`` of pods_by_importance() and
        their used ports (None when there are none): the pods preemption keeps on the node.
        Cached per position (a HostPorts is never modified once built)."""
        if self.used_ports is None:
            return (), None
        cache = self._ports_before
        if cache is None:
            cache = self._ports_before = {}
        found = cache.get(first)
        if found is None:
            kept = tuple(pi for pos, pi in self.port_positions() if pos < first)
            found = cache[first] = (kept, used_ports_of(kept))
        return found

    def pods_by_importance(self) -> list[PodInfo]:
        """The node's pods, most important first (util.MoreImportantPod: higher priority, then
        earlier start; a missing start time is "now"). Ties keep snapshot order (upstream's
        sort is unstable there). Computed once per node."""
        order = self._by_importance
        if order is None:
            order = self._build_order()[0]
        return order

    def _build_order(
        self,
    ) -> tuple[list[PodInfo], list[int], dict[str, list[int]], list[tuple[int, PodInfo]]]:
        """pods_by_importance() with its negated priorities, the cpu and memory prefix sums
        and the host-port positions.

        The order is two stable sorts on plain attributes (start time, then priority
        descending, which keeps the start order among equal priorities): the order of one
        sort on (-priority, start), without a Python key call per pod."""
        order = sorted(self.pods, key=_START_NS)
        order.sort(key=_PRIORITY, reverse=True)
        neg = [-p for p in map(_PRIORITY, order)]
        cums: dict[str, list[int]] = {}
        for resource, field_of in (("cpu", _CPU), ("memory", _MEMORY)):
            values = list(map(field_of, order))
            if None in values:  # a PodInfo not made by pod_info: read its requests
                values = [pi.requests.get(resource, 0) for pi in order]
            cums[resource] = list(accumulate(values, initial=0))
        ports = []
        if self.port_pods:
            ports = [(pos, pi) for pos, pi in enumerate(order) if pi.has_ports]
        self._neg_priority = neg
        self._cum = cums
        self._port_positions = ports
        self._by_importance = order
        return order, neg, cums, ports

    def base_state(self) -> NodeState:
        return NodeState(
            self.requested,
            self.pod_count,
            self.used_ports,
            self.nz_cpu,
            self.nz_mem,
            self.port_pods,
        )


_REQUESTS = attrgetter("requests")
_NZ_CPU = attrgetter("nz_cpu")
_NZ_MEM = attrgetter("nz_mem")
_HAS_PORTS = attrgetter("has_ports")
_PRIORITY = attrgetter("priority")
_START_NS = attrgetter("start_ns")
_CPU = attrgetter("cpu")
_MEMORY = attrgetter("memory")


@dataclass(slots=True)
class NodeState:
    """The mutable part of a NodeInfo copy: what adding/removing pods changes. ``port_pods``
    are the pods holding host ports; ``used_ports`` is built from them."""

    requested: dict[str, int]
    pod_count: int
    used_ports: HostPorts | None
    nz_cpu: int = 0
    nz_mem: int = 0
    port_pods: tuple[PodInfo, ...] = ()

    def with_pods(self, added: Sequence[PodInfo], removed: Sequence[PodInfo] = ()) -> NodeState:
        """A copy with ``added`` pods added and ``removed`` pods taken away."""
        requested = dict(self.requested)
        nz_cpu, nz_mem = self.nz_cpu, self.nz_mem
        for pi in added:
            for name, value in pi.requests.items():
                requested[name] = requested.get(name, 0) + value
            nz_cpu += pi.nz_cpu
            nz_mem += pi.nz_mem
        for pi in removed:
            for name, value in pi.requests.items():
                requested[name] = requested.get(name, 0) - value
            nz_cpu -= pi.nz_cpu
            nz_mem -= pi.nz_mem
        ports, port_pods = self.used_ports, self.port_pods
        if any(pi.has_ports for pi in removed) or any(pi.has_ports for pi in added):
            gone = {id(pi) for pi in removed}
            port_pods = tuple(pi for pi in port_pods if id(pi) not in gone) + tuple(
                pi for pi in added if pi.has_ports
            )
            ports = used_ports_of(port_pods)
        return NodeState(
            requested,
            self.pod_count + len(added) - len(removed),
            ports,
            nz_cpu,
            nz_mem,
            port_pods,
        )


def used_ports_of(pods: Sequence[PodInfo]) -> HostPorts | None:
    """NodeInfo.UsedPorts of ``pods`` (None when none of them holds a host port)."""
    with_ports = [pi.pod for pi in pods if pi.has_ports and pi.pod is not None]
    return HostPorts.of_pods(with_ports) if with_ports else None


def state_of(pods: list[PodInfo]) -> NodeState:
    """A NodeState aggregated from scratch over ``pods`` (the literal NodeInfo of a copy)."""
    requested: dict[str, int] = {}
    nz_cpu = nz_mem = 0
    for pi in pods:
        for name, value in pi.requests.items():
            requested[name] = requested.get(name, 0) + value
        nz_cpu += pi.nz_cpu
        nz_mem += pi.nz_mem
    port_pods = tuple(pi for pi in pods if pi.has_ports)
    return NodeState(requested, len(pods), used_ports_of(port_pods), nz_cpu, nz_mem, port_pods)


@dataclass(frozen=True, slots=True)
class PdbInfo:
    """A PodDisruptionBudget as preemption reads it (status.disruptionsAllowed only)."""

    index: int
    namespace: str
    name: str
    match_labels: tuple[tuple[str, str], ...]
    match_expressions: tuple[tuple[str, str, frozenset[str]], ...]
    valid: bool  # LabelSelectorAsSelector succeeded
    empty: bool  # nil or empty selector: matches nothing for preemption
    disruptions_allowed: int
    disrupted_pods: frozenset[str]

    def matches(self, labels: dict[str, str]) -> bool:
        """labels.Selector.Matches for the PDB's selector (In, NotIn, Exists,
        DoesNotExist); False for an invalid or nil/empty selector."""
        if not self.valid or self.empty:
            return False
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        for key, op, values in self.match_expressions:
            have = labels.get(key)
            if op == "In":
                if have is None or have not in values:
                    return False
            elif op == "NotIn":
                if have is not None and have in values:
                    return False
            elif op == "Exists":
                if have is None:
                    return False
            elif op == "DoesNotExist" and have is not None:
                return False
        return True


def _pdb_info(index: int, pdb) -> PdbInfo:
    sel = pdb.selector
    if sel is None:
        return PdbInfo(
            index,
            pdb.namespace,
            pdb.name,
            (),
            (),
            True,
            True,
            pdb.disruptions_allowed,
            frozenset(pdb.disrupted_pods),
        )
    valid = True
    exprs = []
    for req in sel.match_expressions:
        op = req.operator
        if op in ("In", "NotIn"):
            if not req.values:
                valid = False
        elif op in ("Exists", "DoesNotExist"):
            if req.values:
                valid = False
        else:
            valid = False
        exprs.append((req.key, op, frozenset(req.values)))
    empty = not sel.match_labels and not sel.match_expressions
    return PdbInfo(
        index,
        pdb.namespace,
        pdb.name,
        tuple(sel.match_labels.items()),
        tuple(exprs),
        valid,
        empty,
        pdb.disruptions_allowed,
        frozenset(pdb.disrupted_pods),
    )


class SchedulerView:
    """The scheduler's cache/snapshot for one Cluster: NodeInfos in snapshot order, the
    nominator's pods by node, PDBs by namespace. Build with ``scheduler_view(cluster)``."""

    def __init__(self, cluster: Cluster) -> None:
        snapshot = cluster.snapshot
        nodes = snapshot.nodes
        index = {node.name: i for i, node in enumerate(nodes)}
        per_node: list[list[PodInfo]] = [[] for _ in nodes]
        nominated: dict[str, list[PodInfo]] = {}
        terminating_sts: list[tuple[str, PodInfo]] = []
        inter_pod_affinity = False
        bound: list[PodInfo] = []
        append_bound = bound.append
        for pod in snapshot.pods:
            # The scheduler's pod informer skips terminal pods (status.phase!=Succeeded,Failed).
            phase = pod.phase
            if phase == "Succeeded" or phase == "Failed":
                continue
            node_name = pod.node_name
            if node_name:
                i = index.get(node_name)
                if i is None:
                    continue  # bound to a node missing from the snapshot
                pi = pod_info(pod)
                per_node[i].append(pi)
                append_bound(pi)
                if pod.unmodelled and "InterPodAffinity" in pod.unmodelled:
                    inter_pod_affinity = True
                if pod.deletion_timestamp is not None:
                    ctrl = pod.controller
                    if ctrl is not None and ctrl.kind == "StatefulSet":
                        terminating_sts.append((node_name, pi))
            elif pod.nominated_node_name:
                nominated.setdefault(pod.nominated_node_name, []).append(pod_info(pod))
        self._assemble(
            [NodeInfo(node, i, per_node[i]) for i, node in enumerate(nodes)],
            nominated,
            terminating_sts,
            inter_pod_affinity,
            snapshot.pdbs,
        )
        self._bound = bound  # the nodes' pods in snapshot order
        self._bound_pdbs_done = False

    @classmethod
    def restored(
        cls,
        nodes: list[NodeInfo],
        nominated: dict[str, list[PodInfo]],
        terminating_statefulset_pods: list[tuple[str, PodInfo]],
        inter_pod_affinity_in_use: bool,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> SchedulerView:
        """A view from parts computed earlier (a stored scheduler form, see
        ``scheduler/stored.py``); the nodes' PodInfos already hold their matching PDBs."""
        view = cls.__new__(cls)
        view._assemble(
            nodes, nominated, terminating_statefulset_pods, inter_pod_affinity_in_use, pdbs
        )
        view._bound = []
        view._bound_pdbs_done = True
        return view

    def _assemble(
        self,
        nodes: list[NodeInfo],
        nominated: dict[str, list[PodInfo]],
        terminating_statefulset_pods: list[tuple[str, PodInfo]],
        inter_pod_affinity_in_use: bool,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> None:
        """Keep the parts and index the PDBs."""
        self.nodes: list[NodeInfo] = nodes
        self.by_name: dict[str, NodeInfo] = {ni.name: ni for ni in self.nodes}
        self.nominated = nominated
        self.terminating_statefulset_pods = terminating_statefulset_pods
        self.inter_pod_affinity_in_use = inter_pod_affinity_in_use
        self.pdbs = [_pdb_info(i, pdb) for i, pdb in enumerate(pdbs)]
        self.pdbs_by_namespace: dict[str, list[PdbInfo]] = {}
        # Candidate index: a PDB with matchLabels is filed under its first (key, value) pair
        # (a pod lacking that pair cannot match it); the others are scanned. PDBs whose
        # selector is invalid, nil or empty match nothing and are left out.
        self._pdb_by_label: dict[str, dict[tuple[str, str], list[PdbInfo]]] = {}
        self._pdb_scan: dict[str, list[PdbInfo]] = {}
        for info in self.pdbs:
            self.pdbs_by_namespace.setdefault(info.namespace, []).append(info)
            if not info.valid or info.empty:
                continue
            if info.match_labels:
                by_label = self._pdb_by_label.setdefault(info.namespace, {})
                by_label.setdefault(info.match_labels[0], []).append(info)
            else:
                self._pdb_scan.setdefault(info.namespace, []).append(info)
        # Namespace (with a PDB that can match) -> the label keys its selectors read, sorted;
        # and -> the values of those keys on a pod -> the matching PDB indexes.
        read: dict[str, set[str]] = {}
        for info in self.pdbs:
            if info.valid and not info.empty:
                keys = read.setdefault(info.namespace, set())
                keys.update(key for key, _ in info.match_labels)
                keys.update(key for key, _, _ in info.match_expressions)
        self._pdb_keys: dict[str, tuple[str, ...]] = {
            ns: tuple(sorted(keys)) for ns, keys in read.items()
        }
        self._pdb_memo: dict[str, dict[object, tuple[int, ...]]] = {ns: {} for ns in read}
        self._pdb_entries: dict[tuple[int, ...], tuple[tuple[int, int, bool], ...]] = {}

    def nominated_for(self, node_name: str) -> list[PodInfo]:
        """PodNominator.NominatedPodsForNode: pending pods whose status.nominatedNodeName is
        the node (unbound, not terminal), in snapshot order."""
        return self.nominated.get(node_name, [])

    def matching_pdbs(self, pi: PodInfo) -> tuple[int, ...]:
        """Indexes (snapshot order) of the PDBs whose selector matches the pod: same
        namespace, labelled pod, valid non-empty selector. For the view's own pods, the
        answer the view keeps in ``PodInfo.pdbs`` once preemption has asked for it."""
        found = pi.pdbs
        if found is None:
            found = self._lookup_pdbs(pi)  # not kept: the PodInfo may not be this view's
        return found

    def _lookup_pdbs(self, pi: PodInfo) -> tuple[int, ...]:
        """matching_pdbs, memoized: a selector reads only its own label keys, so the answer
        depends only on the namespace and the pod's values for the keys that namespace's
        selectors read (often one key, such as the app name, shared by every pod of a
        workload). A namespace without a PDB that can match is answered at once. The PDB
        set of a snapshot never changes."""
        pod = pi.pod
        if pod is None:
            return ()
        labels = pod.labels
        if not labels:
            return ()  # upstream skips unlabelled pods before looking at any PDB
        keys = self._pdb_keys.get(pi.namespace)
        if keys is None:
            return ()
        memo = self._pdb_memo[pi.namespace]
        values = labels.get(keys[0]) if len(keys) == 1 else tuple(map(labels.get, keys))
        found = memo.get(values)
        if found is None:
            found = memo[values] = self._match_pdbs(pi.namespace, labels)
        return found

    def resolve_pdbs(self) -> None:
        """Fill in ``PodInfo.pdbs`` for every pod on a node (done once)."""
        if not self._bound_pdbs_done:
            self._lookup_all_pdbs()

    def _lookup_all_pdbs(self) -> None:
        """matching_pdbs for every pod of the view, in snapshot order, with _lookup_pdbs'
        common cases inlined: no PDB in the namespace, an unlabelled pod, a memoized answer
        for a namespace whose selectors read one label key."""
        by_namespace: dict[str, tuple[str | None, dict[object, tuple[int, ...]]]] = {
            ns: (keys[0] if len(keys) == 1 else None, self._pdb_memo[ns])
            for ns, keys in self._pdb_keys.items()
        }
        lookup = self._lookup_pdbs
        for pi in self._bound:
            spec = by_namespace.get(pi.namespace)
            labels = pi.pod.labels if spec is not None else None  # type: ignore[union-attr]
            if not labels:
                pi.pdbs = ()
                continue
            key, memo = spec  # type: ignore[misc]
            found = memo.get(labels.get(key)) if key is not None else None
            pi.pdbs = found if found is not None else lookup(pi)
        self._bound_pdbs_done = True

    def _pdb_positions_of(
        self, pods: Sequence[PodInfo]
    ) -> list[tuple[int, tuple[tuple[int, int, bool], ...]]]:
        """NodeInfo.pdb_positions over ``pods``.

        The first call looks up the PDBs of every pod of the view at once, in snapshot order:
        a node's pods lie scattered in memory, the snapshot's pods in order do not, and
        reading every pod's labels that way costs a fraction of reading them node by node."""
        self.resolve_pdbs()
        found: list[tuple[int, tuple[tuple[int, int, bool], ...]]] = []
        for pos, pi in enumerate(pods):
            matches = pi.pdbs
            if matches is None:
                matches = self.matching_pdbs(pi)
            if matches:
                found.append((pos, self._entries_for(matches, pi.name)))
        return found

    def _entries_for(
        self, matches: tuple[int, ...], pod_name: str
    ) -> tuple[tuple[int, int, bool], ...]:
        """((PDB index, its disruptionsAllowed, whether ``pod_name`` is in its disruptedPods),
        ...) for the PDBs ``matches`` names; shared by every pod when none of them lists a
        disrupted pod."""
        entries = self._pdb_entries.get(matches)
        if entries is None:
            pdbs = self.pdbs
            entries = tuple((idx, pdbs[idx].disruptions_allowed, False) for idx in matches)
            if any(pdbs[idx].disrupted_pods for idx in matches):
                return tuple(
                    (idx, allowed, pod_name in pdbs[idx].disrupted_pods)
                    for idx, allowed, _ in entries
                )
            self._pdb_entries[matches] = entries
        return entries

    def _match_pdbs(self, namespace: str, labels: dict[str, str]) -> tuple[int, ...]:
        """The PDBs of ``namespace`` matching ``labels``, by the candidate index."""
        candidates: list[PdbInfo] = []
        by_label = self._pdb_by_label.get(namespace)
        if by_label:
            for pair in labels.items():
                filed = by_label.get(pair)
                if filed:
                    candidates.extend(filed)
        candidates.extend(self._pdb_scan.get(namespace, ()))
        return tuple(sorted(info.index for info in candidates if info.matches(labels)))


_VIEWS: weakref.WeakKeyDictionary[Cluster, SchedulerView] = weakref.WeakKeyDictionary()
_VIEWS_LOCK = threading.Lock()


def install_view(cluster: Cluster, view: SchedulerView) -> None:
    """Make ``view`` the SchedulerView of ``cluster`` (one restored from a stored form)."""
    with _VIEWS_LOCK:
        _VIEWS[cluster] = view


def scheduler_view(cluster: Cluster) -> SchedulerView:
    """The SchedulerView of ``cluster``, built at most once per Cluster object (weakly cached:
    it goes when the Cluster goes)."""
    view = _VIEWS.get(cluster)
    if view is None:
        with _VIEWS_LOCK:
            view = _VIEWS.get(cluster)
            if view is None:
                view = SchedulerView(cluster)
                _VIEWS[cluster] = view
    return view


# --- the pod being scheduled: PreFilter state ---


@dataclass(slots=True)
class PodContext:
    """Per-pod state computed once per scheduling attempt (the plugins' PreFilter): effective
    request as NodeResourcesFit's preFilterState, wanted host ports, and the nominated pods /
    holds that count against each node for this pod."""

    pod: Pod
    info: PodInfo
    fit_args: FitArgs
    cpu: int
    memory: int
    ephemeral: int
    scalars: tuple[tuple[str, int], ...]  # (name, request) sorted by name, request 0 kept
    checks: tuple[tuple[str, int], ...]  # resources actually checked (request > 0, not ignored)
    wanted_ports: list[ContainerPort]
    prefilter_status: Status | None
    not_modelled: tuple[str, ...]
    # NodeAffinity PreFilterResult: the only nodes Filter runs on (None: every node)
    prefilter_nodes: frozenset[str] | None = None
    # node name -> pods counted in pass 1 of the nominated-pods filter (nominated pods of
    # priority >= the pod's, explicit holds), set by nominated.prepare_nominated.
    nominated: dict[str, list[PodInfo]] = field(default_factory=dict)
    # node name -> pods taken off that node for this pod (a StatefulSet predecessor).
    removed: dict[str, list[PodInfo]] = field(default_factory=dict)

    @property
    def priority(self) -> int:
        return self.info.priority


def pod_context(
    pod: Pod, view: SchedulerView | None = None, fit_args: FitArgs = DEFAULT_FIT_ARGS
) -> PodContext:
    """PreFilter for the modelled plugins (NodeResourcesFit computePodResourceRequest, NodePorts
    getContainerPorts) and the list of default-profile filters Verdict does not evaluate."""
    info = pod_info(pod)
    reqs = info.requests
    cpu = reqs.get("cpu", 0)
    memory = reqs.get("memory", 0)
    ephemeral = reqs.get("ephemeral-storage", 0)
    scalars = tuple(sorted((n, v) for n, v in reqs.items() if is_scalar_resource_name(n)))
    checks: list[tuple[str, int]] = []
    if cpu > 0:
        checks.append(("cpu", cpu))
    if memory > 0:
        checks.append(("memory", memory))
    if ephemeral > 0:
        checks.append(("ephemeral-storage", ephemeral))
    for name, value in scalars:
        if value == 0:
            continue
        if is_extended_resource_name(name) and _ignored(name, fit_args):
            continue
        checks.append((name, value))
    not_modelled = set(pod.unmodelled)
    if view is not None and view.inter_pod_affinity_in_use:
        not_modelled.add("InterPodAffinity")
    ordered = tuple(p for p in DEFAULT_FILTER_ORDER if p in not_modelled) + tuple(
        sorted(n for n in not_modelled if n not in DEFAULT_FILTER_ORDER)
    )
    prefilter_nodes, prefilter_status = node_affinity_prefilter(pod)
    return PodContext(
        pod=pod,
        info=info,
        fit_args=fit_args,
        cpu=cpu,
        memory=memory,
        ephemeral=ephemeral,
        scalars=scalars,
        checks=tuple(checks),
        wanted_ports=wanted_host_ports(pod),
        prefilter_status=prefilter_status,
        not_modelled=ordered,
        prefilter_nodes=prefilter_nodes,
    )


ERR_REASON_AFFINITY_CONFLICT = "pod affinity terms conflict"
ERR_REASON_PREFILTER_NODE_AFFINITY = "node(s) didn't satisfy plugin(s) [NodeAffinity]"


def node_affinity_prefilter(pod: Pod) -> tuple[frozenset[str] | None, Status | None]:
    """nodeaffinity PreFilter: when every required term pins ``metadata.name`` with In
    (intersected within a term, united across terms), the PreFilterResult names the only
    nodes to filter; pinned to nothing is UnschedulableAndUnresolvable "pod affinity terms
    conflict" for the whole pod."""
    terms = pod.required_node_affinity
    if not terms:
        return None, None
    names: set[str] | None = None
    for term in terms:
        term_names: set[str] | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                values = set(req.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None, None
        names = term_names if names is None else names | term_names
    if names is not None and not names:
        return None, Status(UNRESOLVABLE, (ERR_REASON_AFFINITY_CONFLICT,), "NodeAffinity")
    return (frozenset(names) if names else None), None


def _ignored(name: str, args: FitArgs) -> bool:
    if name in args.ignored_resources:
        return True
    if args.ignored_resource_groups:
        group = name.split("/", 1)[0]
        return group in args.ignored_resource_groups
    return False


# --- the Filter plugins ---


def node_unschedulable(pod: Pod, node: Node) -> Status | None:
    """nodeunschedulable.Filter: an unschedulable node rejects pods that do not tolerate the
    node.kubernetes.io/unschedulable:NoSchedule taint."""
    if not node.unschedulable:
        return None
    taint = Taint(key=TAINT_NODE_UNSCHEDULABLE, effect="NoSchedule")
    if tolerates_any(pod.tolerations, taint):
        return None
    return Status(UNRESOLVABLE, (ERR_REASON_UNSCHEDULABLE,), "NodeUnschedulable")


def node_name(pod: Pod, node: Node) -> Status | None:
    """nodename.Filter: spec.nodeName, when set, must be the node's name."""
    if not pod.node_name or pod.node_name == node.name:
        return None
    return Status(UNRESOLVABLE, (ERR_REASON_NODE_NAME,), "NodeName")


_DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


def taint_toleration(pod: Pod, node: Node) -> Status | None:
    """tainttoleration.Filter: the first NoSchedule/NoExecute taint the pod does not tolerate."""
    if not node.taints:
        return None
    taint = find_untolerated(node.taints, pod.tolerations, _DO_NOT_SCHEDULE)
    if taint is None:
        return None
    reason = f"node(s) had untolerated taint {{{taint.key}: {taint.value}}}"
    return Status(UNRESOLVABLE, (reason,), "TaintToleration")


def node_affinity(pod: Pod, node: Node) -> Status | None:
    """nodeaffinity.Filter (required terms and spec.nodeSelector; no addedAffinity args)."""
    if not pod.node_selector and pod.required_node_affinity is None:
        return None
    if matches_node_selector_and_affinity(pod, node):
        return None
    return Status(UNRESOLVABLE, (ERR_REASON_NODE_AFFINITY,), "NodeAffinity")


def node_ports(wanted: list[ContainerPort], used: HostPorts | None) -> Status | None:
    """nodeports.Filter: a wanted host port already in use on the node."""
    if not wanted or used is None:
        return None
    for p in wanted:
        if used.conflicts(p.host_ip, p.protocol, p.host_port):
            return Status(UNSCHEDULABLE, (ERR_REASON_NODE_PORTS,), "NodePorts")
    return None


def fits_request(
    ctx: PodContext,
    allocatable: dict[str, int],
    requested: dict[str, int],
    pod_count: int,
) -> list[InsufficientResource]:
    """noderesources fitsRequest (newest): every failure, in order pods, cpu, memory,
    ephemeral-storage, then scalar resources (sorted by name: upstream iterates a Go map).

    A resource is checked only when the pod requests it (> 0); a scalar request of 0 and
    ignored extended resources (ignoredResources / ignoredResourceGroups) are skipped. A
    record is *unresolvable* when the request alone exceeds the node's allocatable.
    """
    out: list[InsufficientResource] = []
    allowed = allocatable.get("pods", 0)
    if pod_count + 1 > allowed:
        out.append(InsufficientResource("pods", "Too many pods", 1, pod_count, allowed))
    if not ctx.checks:
        return out
    for name, want in ctx.checks:
        have = allocatable.get(name, 0)
        used = requested.get(name, 0)
        if want > have - used:
            out.append(
                InsufficientResource(name, f"Insufficient {name}", want, used, have, want > have)
            )
    return out


def node_resources_fit(
    ctx: PodContext, allocatable: dict[str, int], requested: dict[str, int], pod_count: int
) -> Status | None:
    """noderesources Fit.Filter: Unschedulable with every reason, UnschedulableAndUnresolvable
    when any insufficient resource is unresolvable (newest)."""
    allowed = allocatable.get("pods", 0)
    if pod_count + 1 <= allowed:
        # Fast path: most nodes pass; only build records on failure.
        for name, want in ctx.checks:
            if want > allocatable.get(name, 0) - requested.get(name, 0):
                break
        else:
            return None
    failures = fits_request(ctx, allocatable, requested, pod_count)
    if not failures:
        return None
    code = UNRESOLVABLE if any(f.unresolvable for f in failures) else UNSCHEDULABLE
    return Status(code, tuple(f.reason for f in failures), "NodeResourcesFit")


def static_filters(ctx: PodContext, node: Node) -> Status | None:
    """The filters whose answer does not depend on the node's pods, in profile order."""
    pod = ctx.pod
    if node.unschedulable:
        status = node_unschedulable(pod, node)
        if status is not None:
            return status
    if pod.node_name and pod.node_name != node.name:
        return node_name(pod, node)
    if node.taints:
        status = taint_toleration(pod, node)
        if status is not None:
            return status
    if pod.node_selector or pod.required_node_affinity is not None:
        status = node_affinity(pod, node)
        if status is not None:
            return status
    return None


def base_state(ctx: PodContext, ni: NodeInfo) -> NodeState:
    """The node as this pod sees it: its pods, minus any predecessor taken off for the pod
    (holds.py), without nominated pods."""
    removed = ctx.removed.get(ni.name)
    if not removed:
        return ni.base_state()
    return ni.base_state().with_pods([], removed)


def run_filter_plugins(ctx: PodContext, ni: NodeInfo, state: NodeState | None = None) -> Status:
    """frameworkImpl.RunFilterPlugins over the modelled default-profile filters: the first
    plugin that rejects decides the node's status."""
    if ctx.prefilter_status is not None:
        return ctx.prefilter_status
    if ctx.prefilter_nodes is not None and ni.name not in ctx.prefilter_nodes:
        # not filtered at all: the absent-node status findNodesThatFitPod sets
        return Status(UNRESOLVABLE, (ERR_REASON_PREFILTER_NODE_AFFINITY,), "NodeAffinity")
    status = static_filters(ctx, ni.node)
    if status is not None:
        return status
    if state is None:
        state = base_state(ctx, ni)
    status = node_ports(ctx.wanted_ports, state.used_ports)
    if status is not None:
        return status
    status = node_resources_fit(ctx, ni.allocatable, state.requested, state.pod_count)
    if status is not None:
        return status
    return OK
