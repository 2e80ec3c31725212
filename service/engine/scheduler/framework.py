"""The scheduler framework's shared types: Status and its codes, the per-decision CycleState,
the plugin interfaces (the extension points) and the capabilities a plugin declares.

Mirrors kubernetes/kubernetes ``pkg/scheduler/framework`` (interface.go: Code, Status,
the plugin interfaces; cycle_state.go: CycleState). A plugin is a class named after the
upstream plugin (``name``), built once per decision from its args and the engine settings
(``Plugin``), that derives from the interface of each extension point it has upstream, and
only those. The runtime (``runtime.py``) finds a plugin's extension points and capabilities
by these types, never by its name:

``PreFilterPlugin.pre_filter(state, nodes) -> PreFilterResult``
    PreFilter; a ``tuple[frozenset[str] | None, Status]``. The set restricts the nodes Filter
    runs on (PreFilterResult.NodeNames; None: every node). A SKIP status means the plugin's
    Filter is skipped for this pod; a rejection rejects the pod on every node.
``PreFilterExtensions.add_pod(state, added, ni)`` / ``remove_pod(state, removed, ni)``
    Update the plugin's PreFilter state when a pod (a PodInfo) is added to or removed from
    node ``ni`` (nominated pods, preemption's victims).
``FilterPlugin.filter(state, ni, ns) -> Status | None``
    Filter on NodeInfo ``ni`` whose pods are as in NodeInfoPods ``ns``; None means Success.
``PreScorePlugin.pre_score(state, nodes) -> Status``
    PreScore over the feasible nodes; SKIP means the plugin's Score is skipped for this pod.
``ScorePlugin.score(state, ni, ns) -> int``
    Score one feasible node.
``ScoreExtensions.normalize_score(state, nodes, scores)``
    NormalizeScore: rewrite ``scores`` (parallel to ``nodes``) in place; a Score column, a
    ``list[int]`` or a numpy int64 array (runtime.py ``Column``).

Capabilities are Verdict's own: what a plugin promises so that the runtime and preemption
may skip work, each a base class the plugin opts into (the promise is the plugin's; the
tests hold the fast path to the literal one, ``select_victims_reference``):

``CanPassEveryNode.can_reject(state) -> bool``
    False when the plugin's Filter passes every node for this pod; it is then not run.
``IgnoresNodePods`` (a Filter)
    Its verdict on a node never depends on the node's pods. Preemption runs it once per
    node, not per reprieve, and its verdict never stands in the fast path's way.
``SumsRequests.requests_checked(state)`` (a Filter)
    Its verdict depends on the node's pods only through their summed requests of the
    resources it names (with the pod's request of each) and their number against the
    node's ``pods`` allocatable: preemption may reprieve on running sums.
``SumsHostPorts.host_ports_wanted(state)`` (a Filter)
    Its verdict depends on the node's pods only through the host ports they use, against
    the ones it names: preemption may reprieve by checking each victim's ports.
``CountsPods.counted_pods(state) -> frozenset[int] | None`` (PreFilterExtensions)
    The pods of the view (their ids) whose AddPod/RemovePod may change the plugin's state
    for this pod; None when it cannot tell. Where none of a node's potential victims is
    counted, its verdict on that node is the same with or without any of them.
``KeepsVerdict.keeps_verdict(state, ni, victims) -> bool`` (a Filter)
    Its verdict on ``ni`` is the same whichever of ``victims`` are on it.
``FiltersNodes.filter_nodes(state, nodes) -> list[Status | None]`` (a Filter)
    Filter on many nodes at once (each with its own pods), equal to Filter node by node.
``ScoresNodes.score_nodes(state, nodes) -> Column`` (a Score)
    Score many nodes at once (each with its own pods), equal to Score node by node: a list,
    or an int64 array (a batch computed in numpy answers its array, not a list).
``ReadsWholePods.reads_whole_pods(pod, view) -> bool``
    The plugin reads other pods whole for this pod (their labels, affinity terms or
    volumes), which a view restored from its stored form does not hold.

``state.view`` is the cluster as the scheduler's snapshot holds it (``SchedulerView``): every
node (``view.nodes``), not only those being filtered or scored.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import accumulate, chain, repeat
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar

import msgspec

from service.engine.objects import Node, Pod
from service.engine.ports import HostPorts, wanted_host_ports
from service.engine.quantity import wrap_int64, wrap_int64_values
from service.engine.resources import (
    DEFAULT_CPU_REQUEST_MILLI,
    DEFAULT_MEMORY_REQUEST_BYTES,
    scheduler_pod_requests,
)
from service.engine.version import EngineSettings

if TYPE_CHECKING:
    from service.engine.scheduler.snapshot import SchedulerView

__all__ = [
    "ERROR",
    "MAX_NODE_SCORE",
    "OK",
    "SKIP",
    "SKIPPED",
    "START_TIME_NOW",
    "SUCCESS",
    "UNRESOLVABLE",
    "UNSCHEDULABLE",
    "CanPassEveryNode",
    "CountsPods",
    "CycleState",
    "FilterPlugin",
    "FiltersNodes",
    "IgnoresNodePods",
    "KeepsVerdict",
    "NodeInfo",
    "NodeInfoPods",
    "Plugin",
    "PodInfo",
    "PreFilterExtensions",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "ReadsWholePods",
    "ScoreError",
    "ScoreExtensions",
    "ScorePlugin",
    "ScoresNodes",
    "Status",
    "SumsHostPorts",
    "SumsRequests",
    "node_info_pods_of",
    "pod_info",
    "prefilter_state_missing",
    "used_ports_of",
]

# --- status codes (framework.Code) ---
SUCCESS = "Success"
UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
ERROR = "Error"
SKIP = "Skip"

# framework.MaxNodeScore: the top of every Score plugin's normalized range.
MAX_NODE_SCORE = 100


@dataclass(frozen=True, slots=True)
class Status:
    """framework.Status: a code, the reasons, and the plugin that produced it."""

    code: str = SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code == SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code == SKIP

    @property
    def is_rejected(self) -> bool:
        return self.code == UNSCHEDULABLE or self.code == UNRESOLVABLE

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


OK = Status()
SKIPPED = Status(SKIP)

# What PreFilter answers: PreFilterResult.NodeNames (None: every node) and the status.
PreFilterResult = tuple[frozenset[str] | None, Status]


class ScoreError(Exception):
    """A Score plugin's error status: RunScorePlugins fails, and with it the cycle."""


def prefilter_state_missing(plugin: str) -> Status:
    """The Error a Filter answers when its plugin's PreFilter did not run (a profile that
    disables it): upstream's ``getPreFilterState`` error."""
    return Status(ERROR, (f'reading "PreFilter{plugin}" from cycleState: not found',), plugin)


class CycleState:
    """framework.CycleState for one scheduling attempt of one pod: the pod and its PodInfo,
    the engine settings, the scheduler's view of the cluster, what each plugin wrote at
    PreFilter or PreScore (``data``, by plugin name), and the cycle's framework-level facts:
    the PreFilter verdict and node set, the plugins whose Filter is skipped, the pods counted
    in pass 1 of the nominated-pods filter, and the pods taken off a node for this pod."""

    __slots__ = (
        "data",
        "filters",
        "info",
        "node_names",
        "nominated",
        "not_modelled",
        "pod",
        "prefilter_status",
        "removed",
        "settings",
        "skip_filter",
        "skip_score",
        "view",
    )

    def __init__(
        self,
        pod: Pod,
        view: SchedulerView | None,
        settings: EngineSettings,
        info: PodInfo | None = None,
    ) -> None:
        self.pod = pod
        self.view = view
        self.settings = settings
        self.info = info if info is not None else pod_info(pod, settings)
        self.data: dict[str, Any] = {}
        # PreFilter's verdict: a rejection for every node, and PreFilterResult's node set.
        self.prefilter_status: Status | None = None
        self.node_names: frozenset[str] | None = None
        # Plugins whose PreFilter / PreScore answered Skip (SkipFilterPlugins,
        # SkipScorePlugins), and the Filter methods left to run.
        self.skip_filter: set[str] = set()
        self.skip_score: set[str] = set()
        self.filters: list[Any] = []
        # node name -> pods counted in pass 1 of the nominated-pods filter (nominated pods
        # of priority >= the pod's, explicit holds): nominated.prepare_nominated, holds.py.
        self.nominated: dict[str, list[PodInfo]] = {}
        # node name -> pods taken off that node for this pod (a StatefulSet predecessor).
        self.removed: dict[str, list[PodInfo]] = {}
        self.not_modelled: tuple[str, ...] = ()

    @property
    def priority(self) -> int:
        return self.info.priority

    def read(self, key: str) -> Any:
        return self.data.get(key)

    def write(self, key: str, value: Any) -> None:
        self.data[key] = value

    def copy(self, **changes: Any) -> CycleState:
        """A shallow copy with some attributes replaced (plugin states shared)."""
        other = CycleState.__new__(CycleState)
        for slot in CycleState.__slots__:
            setattr(other, slot, changes[slot] if slot in changes else getattr(self, slot))
        return other

    def clone(self) -> CycleState:
        """CycleState.Clone: plugin states with a ``clone()`` method are copied (those that
        AddPod/RemovePod change); the others are shared, being read-only after PreFilter."""
        return self.copy(
            data={
                key: value.clone() if hasattr(value, "clone") else value
                for key, value in self.data.items()
            }
        )


class Plugin:
    """Base of the plugin classes (see the module docstring for the extension points)."""

    name: ClassVar[str] = ""

    def __init__(self, args: object | None = None, *, settings: EngineSettings):
        self.args = args
        self.settings = settings


# --- the extension points (framework.PreFilterPlugin, FilterPlugin, ...) ---


class PreFilterPlugin(Plugin):
    """framework.PreFilterPlugin."""

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        raise NotImplementedError


class PreFilterExtensions(PreFilterPlugin):
    """framework.PreFilterExtensions: the PreFilter state follows pods added and removed."""

    def add_pod(self, state: CycleState, added: PodInfo, ni: NodeInfo) -> None:
        raise NotImplementedError

    def remove_pod(self, state: CycleState, removed: PodInfo, ni: NodeInfo) -> None:
        raise NotImplementedError


class FilterPlugin(Plugin):
    """framework.FilterPlugin."""

    def filter(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> Status | None:
        raise NotImplementedError


class PreScorePlugin(Plugin):
    """framework.PreScorePlugin."""

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        raise NotImplementedError


class CarriesPreScore(PreScorePlugin):
    """A PreScore plugin whose state can be carried from one cycle to the next of a pod
    like the last one (a replica of one template), with the pod bound in between counted,
    instead of being computed again (not upstream: engine/scheduler/incremental.py)."""

    def carry_pre_score(
        self, previous: CycleState, state: CycleState, added: PodInfo, ni: NodeInfo
    ) -> frozenset[tuple[str, str]] | None:
        """Move ``previous``'s PreScore state into ``state`` with ``added`` (now on ``ni``)
        counted, as PreScore over the same feasible nodes would count it. Returns the
        topology domains (key, value) whose counts changed: the plugin's Score changes only
        on the nodes in them and on ``ni``. None when ``previous`` holds no state (PreScore
        then runs)."""
        raise NotImplementedError


class ScorePlugin(Plugin):
    """framework.ScorePlugin."""

    def score(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> int:
        raise NotImplementedError


class ScoreExtensions(ScorePlugin):
    """framework.ScoreExtensions: NormalizeScore after every node is scored."""

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        raise NotImplementedError


# --- capabilities: what a plugin promises, so that work can be skipped (module docstring) ---


class CanPassEveryNode(FilterPlugin):
    """A Filter that can tell, once per pod, that it passes every node."""

    def can_reject(self, state: CycleState) -> bool:
        """False when this Filter passes every node for ``state.pod``: it is then not run."""
        raise NotImplementedError


class IgnoresNodePods(FilterPlugin):
    """A Filter whose verdict on a node never depends on the node's pods.

    Preemption assumes: taking pods off a node or putting them back never changes it, so
    the Evaluator may run it once per node before the victim search, and the fast path
    treats it as passed on every reprieve."""


class SumsRequests(FilterPlugin):
    """A Filter whose verdict depends on the node's pods only through the sums of their
    requests of the resources it checks, and their number.

    The fast path assumes: the pod fits iff, for every ``(resource, request)`` of
    ``requests_checked``, allocatable − Σ the node's pods' requests ≥ request, and the pods
    are fewer than the node's ``pods`` allocatable; removing a pod only loosens that."""

    def requests_checked(self, state: CycleState) -> Sequence[tuple[str, int]]:
        raise NotImplementedError


class SumsHostPorts(FilterPlugin):
    """A Filter whose verdict depends on the node's pods only through the host ports they
    use.

    The fast path assumes: the pod fits iff none of ``host_ports_wanted`` conflicts with a
    port of a pod on the node; a victim whose ports conflict is never reprieved."""

    def host_ports_wanted(self, state: CycleState) -> Sequence[Any]:
        raise NotImplementedError


class CountsPods(PreFilterExtensions):
    """A PreFilterExtensions plugin that can name the pods its state counts.

    The fast path assumes: where none of a node's potential victims is among
    ``counted_pods``, the plugin's verdict on that node is the same with every victim gone
    and with any of them back (AddPod / RemovePod of an uncounted pod change nothing)."""

    def counted_pods(self, state: CycleState) -> frozenset[int] | None:
        """The ids of the view's pods whose AddPod / RemovePod may change this plugin's state
        for ``state.pod``; None when it cannot tell."""
        raise NotImplementedError


class KeepsVerdict(FilterPlugin):
    """A Filter that can tell, per node, that some pods leaving or returning leave its
    verdict as it is.

    The fast path assumes: where ``keeps_verdict(state, ni, victims)`` is True, the
    plugin's verdict on ``ni`` is the same whichever of ``victims`` are on it."""

    def keeps_verdict(self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]) -> bool:
        raise NotImplementedError


class FiltersNodes(FilterPlugin):
    """A Filter that can filter many nodes at once, faster than node by node.

    The batch assumes: ``filter_nodes(state, nodes)`` equals
    ``[filter(state, ni, ni) for ni in nodes]`` (each node with its own pods), status for
    status; the tests hold every implementation to its per-node Filter."""

    def filter_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[Status | None]:
        raise NotImplementedError


class FiltersNodesWithPods(FilterPlugin):
    """A Filter that can filter many nodes at once with their pods as given (pass 1 of the
    nominated pods: ``NodeInfo.with_nominated``), faster than node by node.

    The batch assumes: ``filter_with_pods(state, nodes, pods)`` equals
    ``[filter(state, ni, ns) for ni, ns in zip(nodes, pods)]``, status for status; the tests
    hold every implementation to its per-node Filter."""

    def filter_with_pods(
        self, state: CycleState, nodes: Sequence[NodeInfo], pods: Sequence[NodeInfoPods]
    ) -> list[Status | None]:
        raise NotImplementedError


class ScoresNodes(ScorePlugin):
    """A Score plugin that can score many nodes at once, faster than node by node.

    The batch assumes: ``score_nodes(state, nodes)`` equals
    ``[score(state, ni, ni) for ni in nodes]`` (each node with its own pods), and raises the
    ScoreError the first failing node in that order would; the tests hold every
    implementation to its per-node Score."""

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int]:
        raise NotImplementedError


class ReadsWholePods(Plugin):
    """A plugin that may read other pods whole (labels, affinity terms, volumes), which a
    view restored from its stored form does not hold (``SchedulerView.whole_pods``)."""

    def reads_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        """Whether this pod's cycle makes the plugin read the view's pods whole."""
        raise NotImplementedError


# A pod without status.startTime counts as started "now" (util.GetPodStartTime): the newest.
START_TIME_NOW = 2**63 - 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class PodInfo(msgspec.Struct, eq=False, gc=False, array_like=True):
    """A pod as the scheduler's cache holds it: effective requests (PodRequests), the non-zero
    cpu/memory used for NonZeroRequested, priority, start time in ns, host ports.

    A msgspec Struct, not a plain class: a view builds one per pod (150,000), and a Struct is
    created several times faster. Compared and hashed by identity (``eq=False``); untracked by
    the garbage collector (``gc=False``: it never refers back to itself). ``requests`` may be
    the pod's own container dict (see ``pod_info``): read it, never mutate it.

    ``pod`` is None for an explicit hold, and for the pods of a view restored from a stored
    scheduler form (``store/scheduler_view.py``) that the scheduler never needs whole: those carry
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


def pod_info(pod: Pod, settings: EngineSettings) -> PodInfo:
    """Precompute what the scheduler reads of a pod (NodeInfo.AddPod's calculateResource).
    ``requests`` may be shared with the pod's container (``scheduler_pod_requests``).

    Runs for every pod of the snapshot when a view is built, so the common shape (one
    container; no init containers, overhead or pod-level resources) is handled here, as
    ``scheduler_pod_requests`` handles it (the release's ``settings`` matter only beyond
    that shape: pod-level resources)."""
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
        requests, nz_cpu, nz_mem = scheduler_pod_requests(pod, settings=settings)
        cpu = requests.get("cpu")
        memory = requests.get("memory")
        has_ports = bool(wanted_host_ports(pod))
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
        "_nominated_states",
        "_pdb_positions",
        "_port_positions",
        "_ports_before",
        "allocatable",
        "allowed_pods",
        "index",
        "name",
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
        self.name = node.name
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
        self._nominated_states: dict[tuple[PodInfo, ...], NodeInfoPods] | None = None
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
            # NodeInfo.update adds with int64 ``+=``: a sum past int64 wraps around, as in Go.
            self.requested = wrap_int64_values(
                {
                    name: sum(map(get, reqs, repeat(name), repeat(0)))
                    for name in dict.fromkeys(chain.from_iterable(reqs))
                }
            )
            self.nz_cpu = wrap_int64(sum(map(_NZ_CPU, pods)))
            self.nz_mem = wrap_int64(sum(map(_NZ_MEM, pods)))
        if any(map(_HAS_PORTS, pods)):
            self.port_pods = tuple(filter(_HAS_PORTS, pods))
            self.used_ports = used_ports_of(self.port_pods)
        else:
            self.port_pods = ()
            self.used_ports = None

    def forget_orders(self) -> None:
        """Drop the lazy per-node indexes below (after the pods changed in place)."""
        self._by_importance = self._neg_priority = self._cum = None
        self._pdb_positions = self._port_positions = self._ports_before = None
        self._nominated_states = None

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

    def with_nominated(self, added: Sequence[PodInfo]) -> NodeInfoPods:
        """``base_state().with_pods(added)``, kept per tuple of added pods (PodInfos compare
        by identity): pass 1 of the nominated-pods filter adds the same nominated pods to
        an unchanged NodeInfo cycle after cycle (a queue run's views share it). A few
        tuples are kept (pods of other priorities see other nominated pods)."""
        key = tuple(added)
        states = self._nominated_states
        if states is None:
            states = self._nominated_states = {}
        found = states.get(key)
        if found is None:
            if len(states) >= _NOMINATED_STATES_KEPT:
                states.clear()
            found = states[key] = self.base_state().with_pods(key)
        return found

    def base_state(self) -> NodeInfoPods:
        return NodeInfoPods(
            self.requested,
            self.pod_count,
            self.used_ports,
            self.nz_cpu,
            self.nz_mem,
            self.port_pods,
            self.pods,
        )


_NOMINATED_STATES_KEPT = 4  # NodeInfo.with_nominated's tuples of added pods, per NodeInfo
_REQUESTS = attrgetter("requests")
_NZ_CPU = attrgetter("nz_cpu")
_NZ_MEM = attrgetter("nz_mem")
_HAS_PORTS = attrgetter("has_ports")
_PRIORITY = attrgetter("priority")
_START_NS = attrgetter("start_ns")
_CPU = attrgetter("cpu")
_MEMORY = attrgetter("memory")


@dataclass(slots=True)
class NodeInfoPods:
    """What a NodeInfo holds of its pods, the part of a copy that adding or removing pods
    changes (requested sums, pod count, host ports, the pods). ``port_pods`` are the pods
    holding host ports; ``used_ports`` is built from them."""

    requested: dict[str, int]
    pod_count: int
    used_ports: HostPorts | None
    nz_cpu: int = 0
    nz_mem: int = 0
    port_pods: tuple[PodInfo, ...] = ()
    # The pods themselves, for the filters that read them (the volume plugins); None where
    # a state is built from sums alone (preemption's fast path, which those filters avoid).
    pods: Sequence[PodInfo] | None = None

    def with_pods(self, added: Sequence[PodInfo], removed: Sequence[PodInfo] = ()) -> NodeInfoPods:
        """A copy with ``added`` pods added and ``removed`` pods taken away."""
        requested = dict(self.requested)
        get = requested.get
        nz_cpu, nz_mem = self.nz_cpu, self.nz_mem
        ports_change = False
        for pi in added:
            for name, value in pi.requests.items():
                requested[name] = get(name, 0) + value
            nz_cpu += pi.nz_cpu
            nz_mem += pi.nz_mem
            ports_change = ports_change or pi.has_ports
        for pi in removed:
            for name, value in pi.requests.items():
                requested[name] = get(name, 0) - value
            nz_cpu -= pi.nz_cpu
            nz_mem -= pi.nz_mem
            ports_change = ports_change or pi.has_ports
        wrap_int64_values(requested)  # int64 ``+=`` and ``-=``, as NodeInfo.update
        nz_cpu, nz_mem = wrap_int64(nz_cpu), wrap_int64(nz_mem)
        ports, port_pods = self.used_ports, self.port_pods
        if ports_change:
            gone = {id(pi) for pi in removed}
            port_pods = tuple(pi for pi in port_pods if id(pi) not in gone) + tuple(
                pi for pi in added if pi.has_ports
            )
            ports = used_ports_of(port_pods)
        pods = self.pods
        if pods is not None and removed:
            gone = {id(pi) for pi in removed}
            pods = [pi for pi in pods if id(pi) not in gone] + list(added)
        elif pods is not None:
            pods = [*pods, *added]
        return NodeInfoPods(
            requested,
            self.pod_count + len(added) - len(removed),
            ports,
            nz_cpu,
            nz_mem,
            port_pods,
            pods,
        )


def used_ports_of(pods: Sequence[PodInfo]) -> HostPorts | None:
    """NodeInfo.UsedPorts of ``pods`` (None when none of them holds a host port)."""
    with_ports = [pi.pod for pi in pods if pi.has_ports and pi.pod is not None]
    return HostPorts.of_pods(with_ports) if with_ports else None


def node_info_pods_of(pods: list[PodInfo]) -> NodeInfoPods:
    """A NodeInfoPods aggregated from scratch over ``pods`` (the literal NodeInfo of a copy)."""
    requested: dict[str, int] = {}
    nz_cpu = nz_mem = 0
    for pi in pods:
        for name, value in pi.requests.items():
            requested[name] = requested.get(name, 0) + value
        nz_cpu += pi.nz_cpu
        nz_mem += pi.nz_mem
    port_pods = tuple(pi for pi in pods if pi.has_ports)
    return NodeInfoPods(
        wrap_int64_values(requested),
        len(pods),
        used_ports_of(port_pods),
        wrap_int64(nz_cpu),
        wrap_int64(nz_mem),
        port_pods,
        pods,
    )
