"""Capacity's replicas scored by groups of nodes instead of node by node (the fast path of
incremental.py), taken only where it decides exactly as the full cycle does.

A scheduling cycle's total on a feasible node is the sum over the Score plugins of weight ×
the plugin's normalized score (runtime.Framework.run_score_plugins, then selectHost). For
replicas of one template, when

* every Filter that runs is node-local (``NODE_LOCAL_FILTERS``) or InterPodAffinity for a
  template without pod (anti-)affinity terms (a bound replica then adds no term, and the
  existing pods' terms the filter reads do not change), and PreFilter restricts no nodes,

only the node a replica was bound to changes its verdict, its node-local scores and its
NodeInfo: nodes only leave the feasible set. The Score plugins split in three:

* the *local* ones (no NormalizeScore, their raw read only the node: NodeResourcesFit,
  NodeResourcesBalancedAllocation, ImageLocality) give a node's own part L(n) (ImageLocality
  reads the node's images, not its pods: scored once per node, ``IMAGE_SCORES``);
* the *constant* ones (NormalizeScore over the feasible nodes, but a raw score a bind does
  not change: TaintToleration, NodeAffinity, InterPodAffinity for a template without
  terms, DynamicResources for a template without claims): their raw score per node is
  kept, and their normalized score depends only on it and on the *set* of raw values among
  the feasible nodes (min / max normalizations);
* PodTopologySpread, when every constraint's key is not the hostname: its raw score is a
  function of the node's domains (and whether PreScore ignored the node), its PreScore
  state is carried with each bound replica counted (``CarriesPreScore``), and it is
  computed again (PreScore over the feasible nodes) when the feasible nodes' domains change
  (its weights and counted domains read them).

Nodes are grouped by (their spread domains and ignored flag, their constant raw scores);
within a group the feasible nodes are kept in a heap by (-L, snapshot index). Per replica
the plugins' own Score and NormalizeScore run on one representative node per group (the
group's best; min / max over the groups' values equal those over every feasible node), and
PodTopologySpread's on one node per spread key (its raw score depends on nothing else), so
no plugin is re-implemented here; the best total is the max over groups of (the group's
normalized part + its best L), ties to the smallest snapshot index, and the tied nodes are
listed as pick_host lists them.

The binds the replicas make are kept here and applied to the WorkingCluster at once
(``flush``, WorkingCluster.bind_all) before anything else reads it. Anything this path does
not prove exact (another filter or score plugin, hostname spread, a filter Error, an
out-of-range score, no feasible node, ``tieBreak.seed``) is left to incremental.py and the
full cycle, which also give a failing replica its stop reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from heapq import heappop, heappush, heapreplace

import msgspec

from service.engine.objects import Pod
from service.engine.quantity import MAX_INT64, MIN_INT64, wrap_int64, wrap_int64_values
from service.engine.scheduler.framework import (
    ERROR,
    MAX_NODE_SCORE,
    CycleState,
    NodeInfo,
    PodInfo,
    ScoreExtensions,
    pod_info,
)
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import as_scheduler_sees, has_pod_affinity
from service.engine.version import EngineSettings

__all__ = ["CONSTANT_SCORES", "IMAGE_SCORES", "LOCAL_SCORES", "NODE_LOCAL_FILTERS", "ScoreGroups"]

# Filter plugins whose verdict on a node reads only the pod, that node and its pods (and
# cluster objects no bind changes): a bind elsewhere cannot change it (incremental.py
# keeps them per node too)
NODE_LOCAL_FILTERS = frozenset(
    {
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
    }
)
# Score plugins without NormalizeScore whose raw score reads only the node and its pods
LOCAL_SCORES = frozenset({"NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality"})
# Of those, the ones whose raw score reads the node's images, not its pods: a bind does
# not change it, so it is scored once per node
IMAGE_SCORES = frozenset({"ImageLocality"})
# Score plugins with NormalizeScore whose raw score a replica's bind does not change (with
# the template conditions of ``_constant_ok``)
CONSTANT_SCORES = frozenset(
    {"TaintToleration", "NodeAffinity", "InterPodAffinity", "DynamicResources"}
)
_SPREAD = "PodTopologySpread"
_HOSTNAME = "kubernetes.io/hostname"


class _Group:
    """Nodes alike for every non-local plugin: the feasible ones as a heap by (-L, index).

    A heap, not a sorted list: a replica is always bound to a group's top (the node picked
    is a group's best), so a bind pops the top and pushes the node back with its new L."""

    __slots__ = ("constant", "key", "members", "normalized")

    def __init__(self, key: tuple, constant: tuple[int, ...]) -> None:
        self.key = key
        self.constant = constant  # the constant plugins' raw scores
        self.members: list[tuple[int, int]] = []
        self.normalized = 0  # the constant plugins' weighted normalized scores

    @property
    def top(self) -> tuple[int, int] | None:
        """The best member: the smallest (-L, index)."""
        return self.members[0] if self.members else None

    def tied_at_top(self) -> bool:
        """Whether another member has the top's L (the second smallest is a child of the
        heap's root)."""
        members = self.members
        return len(members) > 1 and min(members[1:3])[0] == members[0][0]

    def add(self, entry: tuple[int, int]) -> None:
        heappush(self.members, entry)

    def pop_top(self) -> tuple[int, int]:
        return heappop(self.members)

    def replace_top(self, entry: tuple[int, int]) -> tuple[int, int]:
        """The top popped and ``entry`` pushed, in one pass down the heap."""
        return heapreplace(self.members, entry)


class ScoreGroups:
    """The group fast path for replicas of one template on ``work``: ``start`` with the
    first replica (False: not provably exact, use the other paths), then per replica
    ``place`` (None: give up, ``flush`` and use the other paths) and ``bound``."""

    def __init__(self, work: WorkingCluster, fwk: Framework, settings: EngineSettings) -> None:
        self.work = work
        self.fwk = fwk
        self.settings = settings
        self.state: CycleState | None = None
        # the binds not yet applied to ``work`` (each pod as bound, its PodInfo) and the
        # indexes of the nodes they changed
        self.pending: list[tuple[Pod, PodInfo]] = []
        self._touched: dict[int, None] = {}
        self._info: PodInfo | None = None  # the first replica's PodInfo (``_replica_info``)
        self._nodes: list[NodeInfo] = []  # every node as the replicas left it
        self._group_of: list[_Group | None] = []  # per node index (None: not feasible)
        self._local_of: list[int] = []  # per node index: L (valid while feasible)
        self._images_of: list[int] = []  # per node index: IMAGE_SCORES' part of L
        self._groups: list[_Group] = []
        self._feasible = 0
        self._changed = True  # a group emptied: the normalizations are computed again
        self._local: list[tuple[object, int]] = []  # but IMAGE_SCORES
        self._images: list[tuple[object, int]] = []  # IMAGE_SCORES
        self._constant: list[tuple[object, int]] = []
        self._spread: tuple[object, int] | None = None
        self._live: list[_Group] = []  # the groups with feasible nodes
        # PodTopologySpread's raw score depends only on a group's spread key (its domains,
        # whether PreScore ignored it): scored and normalized once per key among the live
        # groups' (``_spread_keys``, a node of each in ``_spread_reps``, each live group's
        # position there in ``_spread_of``); the raw scores known by key, and the keys in
        # each spread domain (topology key, value)
        self._spread_keys: list[tuple] = []
        self._spread_reps: list[NodeInfo] = []
        self._spread_of: list[int] = []
        self._spread_raw: dict[tuple, int] = {}
        self._in_domain: dict[tuple[str, str], list[tuple]] = {}

    # --- set-up ---

    def start(self, pod: Pod) -> bool:
        """PreFilter, the filters and PreScore of a full cycle for ``pod`` on the current
        view, and the groups; False when this path is not provably exact for it."""
        fwk, view = self.fwk, self.work.view
        pod = as_scheduler_sees(pod, self.settings)
        if pod.nominated_node_name or fwk.needs_whole_pods(pod, view):
            return False
        terms = has_pod_affinity(pod)
        state = fwk.cycle_state(pod, view)
        prepare_nominated(state, view)
        if state.prefilter_status is not None or state.removed or state.node_names is not None:
            return False
        allowed = NODE_LOCAL_FILTERS if terms else NODE_LOCAL_FILTERS | {"InterPodAffinity"}
        if any(name not in allowed for name, _ in state.filters):
            return False
        self._nodes = list(view.nodes)
        feasible = []
        for ni in self._nodes:
            status = fwk.run_filter_plugins_with_nominated(state, ni)
            if status.code == ERROR:
                return False
            if status.is_success:
                feasible.append(ni)
        if not feasible:
            return False  # the full cycle gives the stop reason
        fwk.run_pre_score_plugins(state, feasible)
        if not self._classify(state, pod, terms):
            return False
        self.state = state
        return self._group(feasible)

    def _classify(self, state: CycleState, pod: Pod, terms: bool) -> bool:
        """The Score plugins that run, by kind; False when one is of none of them."""
        for plugin, weight in self.fwk.score_plugins:
            name = plugin.name
            if name in state.skip_score:
                continue
            if name in LOCAL_SCORES and not isinstance(plugin, ScoreExtensions):
                kind = self._images if name in IMAGE_SCORES else self._local
                kind.append((plugin, weight))
            elif name in CONSTANT_SCORES and _constant_ok(name, pod, terms):
                self._constant.append((plugin, weight))
            elif name == _SPREAD and self._spread_ok(state):
                self._spread = (plugin, weight)
            else:
                return False
        return True

    def _spread_ok(self, state: CycleState) -> bool:
        s = state.data.get(_SPREAD + "/score")
        return s is not None and all(c.topology_key != _HOSTNAME for c in s.constraints)

    def _group(self, feasible: Sequence[NodeInfo]) -> bool:
        """The groups of the feasible nodes; False on an out-of-range local score."""
        state = self.state
        count = len(self._nodes)
        self._group_of, self._local_of = [None] * count, [0] * count
        self._images_of = [0] * count
        by_key: dict[tuple, _Group] = {}
        for ni in feasible:
            constant = tuple(plugin.score(state, ni, ni) for plugin, _ in self._constant)
            key = (self._spread_key(ni), constant)
            group = by_key.get(key)
            if group is None:
                group = by_key[key] = _Group(key, constant)
            images = self._weighted(self._images, ni)
            if images is None:
                return False
            self._images_of[ni.index] = images
            local = self._local_score(ni)
            if local is None:
                return False
            self._group_of[ni.index], self._local_of[ni.index] = group, local
            group.add((-local, ni.index))
        self._groups = list(by_key.values())
        if self._spread is not None:
            s = self.state.data[_SPREAD + "/score"]  # type: ignore[union-attr]
            for spread_key in dict.fromkeys(group.key[0] for group in self._groups):
                for c, value in zip(s.constraints, spread_key[0], strict=True):
                    domain = (c.topology_key, "" if value is None else value)
                    self._in_domain.setdefault(domain, []).append(spread_key)
        self._feasible = len(feasible)
        self._changed = True
        return True

    def _spread_key(self, ni: NodeInfo) -> tuple:
        if self._spread is None:
            return ()
        s = self.state.data[_SPREAD + "/score"]  # type: ignore[union-attr]
        labels = ni.node.labels
        return (tuple(labels.get(c.topology_key) for c in s.constraints), ni.name in s.ignored)

    def _local_score(self, ni: NodeInfo) -> int | None:
        """L: the weighted local scores (those reading the node's pods scored now)."""
        local = self._weighted(self._local, ni)
        return None if local is None else local + self._images_of[ni.index]

    def _weighted(self, plugins: list[tuple[object, int]], ni: NodeInfo) -> int | None:
        """The plugins' weighted sum of raw scores on ``ni``; None if one is out of range."""
        total = 0
        for plugin, weight in plugins:
            raw = plugin.score(self.state, ni, ni)  # type: ignore[attr-defined]
            if raw < 0 or raw > MAX_NODE_SCORE:
                return None  # invalid_score: the full cycle reports it
            total += weight * raw
        return total

    # --- a replica ---

    def place(self) -> tuple[str, bool] | None:
        """The node the full cycle would bind the next replica to, and whether other nodes
        tied with it at the top total (pick_host's choice without rng); None when this path
        cannot say."""
        if self._feasible < 2:
            if self._feasible == 1:  # schedulePod takes a lone feasible node unscored
                (group,) = [g for g in self._groups if g.top is not None]
                return self._nodes[group.top[1]].name, False  # type: ignore[index]
            return None
        if self._changed and not self._normalize_constant():
            return None
        groups = self._live
        spread = self._spread_part()
        if spread is None:
            return None
        # the live groups are not empty: their tops read without the ``top`` property
        totals = [
            g.normalized + spread[i] - g.members[0][0]
            for g, i in zip(groups, self._spread_of, strict=True)
        ]
        best = max(totals)
        if totals.count(best) == 1:  # one group leads: its top, tied with its next or not
            group = groups[totals.index(best)]
            return self._nodes[group.members[0][1]].name, group.tied_at_top()
        tied = [g for g, total in zip(groups, totals, strict=True) if total == best]
        first = min(g.members[0][1] for g in tied)
        several = len(tied) > 1 or tied[0].tied_at_top()
        return self._nodes[first].name, several

    def _normalize_constant(self) -> bool:
        """Each group's weighted normalized constant scores, by the plugins' own
        NormalizeScore over one node per non-empty group; and PodTopologySpread's PreScore
        again when the feasible nodes' domains changed."""
        groups = self._live = [g for g in self._groups if g.top is not None]
        reps = [self._nodes[g.top[1]] for g in groups]  # type: ignore[index]
        self._spread_of = [0] * len(groups)  # without PodTopologySpread: its part is 0
        if self._spread is not None:
            if not self._spread_domains_same(groups):
                self._pre_score_spread()
            position = {key: i for i, key in enumerate(dict.fromkeys(g.key[0] for g in groups))}
            self._spread_keys = list(position)
            self._spread_of = [position[g.key[0]] for g in groups]
            self._spread_reps = [None] * len(position)  # type: ignore[list-item]
            for g, ni in zip(groups, reps, strict=True):
                self._spread_reps[position[g.key[0]]] = ni
        for g in groups:
            g.normalized = 0
        for i, (plugin, weight) in enumerate(self._constant):
            scores = [g.constant[i] for g in groups]
            if isinstance(plugin, ScoreExtensions):
                plugin.normalize_score(self.state, reps, scores)
            if scores and (min(scores) < 0 or max(scores) > MAX_NODE_SCORE):
                return False
            for g, score in zip(groups, scores, strict=True):
                g.normalized += weight * score
        self._changed = False
        return True

    def _spread_domains_same(self, groups: list[_Group]) -> bool:
        """Whether the feasible nodes not ignored span the domains PreScore counted (its
        counts' keys, which also give its weights)."""
        s = self.state.data[_SPREAD + "/score"]  # type: ignore[union-attr]
        counted = [g.key[0][0] for g in groups if not g.key[0][1]]
        for i, domains in enumerate(s.counts):
            if {"" if values[i] is None else values[i] for values in counted} != set(domains):
                return False
        return True

    def _pre_score_spread(self) -> None:
        """PodTopologySpread's PreScore over the feasible nodes now (it reads the pods of
        every node: the binds are applied first)."""
        self.flush()
        state = self.state
        state.view = self.work.view  # type: ignore[union-attr]
        self._nodes = list(self.work.view.nodes)
        feasible = [ni for ni in self._nodes if self._is_feasible(ni.index)]
        self._spread[0].pre_score(state, feasible)  # type: ignore[index]
        self._spread_raw = {}

    def _is_feasible(self, index: int) -> bool:
        return self._group_of[index] is not None

    def _spread_part(self) -> list[int] | None:
        """Each spread key's weighted normalized PodTopologySpread score (a live group's is
        at its ``_spread_of`` position): the plugin's own Score and NormalizeScore on one
        node per spread key (the min / max over the keys' values are those over every
        feasible node)."""
        if self._spread is None:
            return [0]
        plugin, weight = self._spread
        state, known, reps = self.state, self._spread_raw, self._spread_reps
        scores = [known.get(key) for key in self._spread_keys]
        if None in scores:
            for i, key in enumerate(self._spread_keys):
                if scores[i] is None:
                    scores[i] = known[key] = plugin.score(state, reps[i], reps[i])
        plugin.normalize_score(state, reps, scores)  # type: ignore[arg-type]
        if min(scores) < 0 or max(scores) > MAX_NODE_SCORE:  # type: ignore[type-var]
            return None
        return [weight * score for score in scores]  # type: ignore[operator]

    def bound(self, pod: Pod, node_name: str) -> bool:
        """The replica ``pod`` bound to ``node_name`` (applied to the cluster at ``flush``):
        that node's verdict and local score again, PodTopologySpread's counts with it.
        False on a filter Error (the caller gives up)."""
        state = self.state
        index = self.work.view.by_name[node_name].index
        bound = msgspec.structs.replace(pod, node_name=node_name, nominated_node_name="")
        seen = as_scheduler_sees(bound, self.settings) if bound.init_containers else bound
        info = self._replica_info(seen)
        self.pending.append((bound, info))
        ni = self._nodes[index]
        if index in self._touched and not info.has_ports:
            _add_pod(ni, info)  # made by an earlier bind here: no view holds it yet
        else:
            ni = self._nodes[index] = _with_pod(ni, info)
        self._touched[index] = None
        if self._spread is not None:
            changed = self._spread[0].carry_pre_score(state, state, info, ni)
            if changed:
                self._forget_spread(changed)
        group = self._group_of[index]
        top = (-self._local_of[index], index)  # a replica goes to a group's top
        status = self.fwk.run_filter_plugins_with_nominated(state, ni)  # type: ignore[arg-type]
        if status.code == ERROR:
            return False
        local = self._local_score(ni) if status.is_success else None
        if local is None:
            if status.is_success:
                return False
            popped = group.pop_top()  # type: ignore[union-attr]
            self._feasible -= 1
            self._group_of[index] = None
            self._changed = self._changed or group.top is None  # type: ignore[union-attr]
        else:
            self._local_of[index] = local
            popped = group.replace_top((-local, index))  # type: ignore[union-attr]
        assert popped == top, "a replica goes to a group's top"
        return True

    def _replica_info(self, seen: Pod) -> PodInfo:
        """The bound replica's PodInfo as WorkingCluster.bind makes it (pod_info): the
        first replica's with the pod, name and UID replaced, as the replicas differ only
        there and in the node, which pod_info does not read."""
        if self._info is None:
            self._info = pod_info(seen, self.settings)
            return self._info
        return msgspec.structs.replace(self._info, pod=seen, name=seen.name, uid=seen.uid)

    def _forget_spread(self, changed: frozenset[tuple[str, str]]) -> None:
        """Drop the kept PodTopologySpread raw scores of the spread keys in a changed
        domain."""
        known = self._spread_raw
        for domain in changed:
            for key in self._in_domain.get(domain, ()):
                known.pop(key, None)

    def flush(self) -> None:
        """Apply the binds kept so far to the WorkingCluster."""
        pending, self.pending = self.pending, []
        touched, self._touched = self._touched, {}
        self.work.bind_all(pending, {index: self._nodes[index] for index in touched})


def _with_pod(ni: NodeInfo, info: PodInfo) -> NodeInfo:
    """``ni`` with ``info`` added (NodeInfo.AddPod): its sums updated rather than summed
    again over every pod (int64 wrap-around kept: the sum of wrapped sums wraps alike)."""
    pods = [*ni.pods, info]
    if info.has_ports or not ni.pods:
        return NodeInfo(ni.node, ni.index, pods)
    requested = dict(ni.requested)
    for name, value in info.requests.items():
        requested[name] = requested.get(name, 0) + value
    totals = (wrap_int64_values(requested), wrap_int64(ni.nz_cpu + info.nz_cpu),
              wrap_int64(ni.nz_mem + info.nz_mem))  # fmt: skip
    new = NodeInfo(ni.node, ni.index, [], totals)
    new.pods, new.pod_count = pods, len(pods)
    new.requested, new.nz_cpu, new.nz_mem = totals
    new.port_pods, new.used_ports = ni.port_pods, ni.used_ports
    return new


def _add_pod(ni: NodeInfo, info: PodInfo) -> None:
    """``_with_pod`` in place, for a NodeInfo this path made and no view holds yet (a node
    bound to again before ``flush``): the pods list and sums updated, not copied. ``info``
    has no host ports (those change the node's port sets: ``_with_pod`` builds it anew)."""
    ni.pods.append(info)
    ni.pod_count += 1
    requested = ni.requested
    for name, value in info.requests.items():
        total = requested.get(name, 0) + value
        requested[name] = total if MIN_INT64 <= total <= MAX_INT64 else wrap_int64(total)
    total = ni.nz_cpu + info.nz_cpu
    ni.nz_cpu = total if MIN_INT64 <= total <= MAX_INT64 else wrap_int64(total)
    total = ni.nz_mem + info.nz_mem
    ni.nz_mem = total if MIN_INT64 <= total <= MAX_INT64 else wrap_int64(total)
    ni.forget_orders()


def _constant_ok(name: str, pod: Pod, terms: bool) -> bool:
    """Whether the plugin's raw score stays the same on every node from one replica to the
    next: InterPodAffinity for a template without pod (anti-)affinity terms (the bound
    replicas add none), DynamicResources for one without claims."""
    if name == "InterPodAffinity":
        return not terms
    if name == "DynamicResources":
        return not pod.resource_claims
    return True
