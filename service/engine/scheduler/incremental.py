"""Repeated scheduling cycles of one pod template, recomputing per node only what a bind can
change (capacity's replicas: capacity.py).

A full cycle (placement.place) filters and scores every node. Between two replicas of one
template only the node the last replica was bound to has changed, so this keeps, per node,
the verdict of the *node-local* Filter plugins and the raw scores of the *node-local* Score
plugins: those whose answer on a node reads only the pod, that node and its pods, and
objects a bind does not change (``NODE_LOCAL_FILTERS``, ``NODE_LOCAL_SCORES``). After a bind
only the bound node's are recomputed. Everything else runs as in the full cycle, through the
same Framework and the same plugins (this module re-implements no plugin):

* PreFilter runs on each replica's view, and so does PreScore, except that a plugin
  declaring ``CarriesPreScore`` (PodTopologySpread) has its PreScore state carried from
  the last replica with the bound one counted when the feasible nodes are the same (its
  PreScore reads them); while carried, its raw scores are kept too and scored again only
  on the nodes of the domains the bound replica changed and on the bound node;
* every other Filter plugin (PodTopologySpread, InterPodAffinity, the volume and DRA
  plugins) runs on every node, in the profile's order, before the first node-local plugin
  that rejected it (RunFilterPlugins returns the first rejection);
* every other Score plugin scores every feasible node; NormalizeScore, the weights and
  selectHost run over all of them (runtime.Framework.run_score_plugins with the cached raw
  scores as ``known``).

A node with nominated pods is filtered by the full RunFilterPluginsWithNominatedPods every
time. Whenever the cycle is not the ordinary one (PreFilter rejects, no node or a filter
Error, a Score error or an out-of-range score, a pod nominated, a node taken off for the
pod) ``place`` answers
None and the caller runs the full cycle instead (queue.cycle): so the stop reason of a
capacity run is always a full cycle's. ``tests/engine/scheduler/test_queue_incremental.py``
requires this to place every replica where the full cycle does.
"""

from __future__ import annotations

import random
from bisect import bisect_left
from collections.abc import Sequence
from itertools import compress

from service.engine.objects import Pod
from service.engine.scheduler.framework import (
    ERROR,
    SUCCESS,
    CarriesPreScore,
    CycleState,
    NodeInfo,
    PodInfo,
    ScoreError,
    Status,
)
from service.engine.scheduler.nominated import prepare_nominated
from service.engine.scheduler.profile import Profile
from service.engine.scheduler.queue import WorkingCluster, pick_host
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.score_groups import NODE_LOCAL_FILTERS, ScoreGroups
from service.engine.scheduler.snapshot import as_scheduler_sees
from service.engine.version import EngineSettings

__all__ = ["NODE_LOCAL_FILTERS", "NODE_LOCAL_SCORES", "TemplateCycles"]

_UNCACHED = 10**9

# Score plugins whose raw score on a node is likewise node-local (ImageLocality reads the
# number of nodes holding an image: node images do not change in a capacity run).
NODE_LOCAL_SCORES = frozenset(
    {
        "NodeResourcesFit",
        "NodeResourcesBalancedAllocation",
        "ImageLocality",
        "TaintToleration",
        "NodeAffinity",
    }
)


class TemplateCycles:
    """Scheduling cycles of replicas of one template on a WorkingCluster, each as
    placement.place would decide it on the cluster the earlier ones left. Call ``place`` for
    a replica, bind it (``work.bind``), then ``bound`` with the node before the next one."""

    def __init__(
        self,
        work: WorkingCluster,
        profile: Profile,
        settings: EngineSettings,
    ) -> None:
        """The group path (score_groups.py) is tried first; its binds the caller applies
        through ``defer``/``finish``."""
        self.work = work
        self.settings = settings
        self.fwk = Framework(profile, settings)
        self._filters: tuple | None = None  # the filters the cache was computed with
        self._local: list[tuple[Status, int] | None] = []  # per node: verdict, position
        self._skip: frozenset[str] | None = None  # the Score plugins skipped, for _raw
        self._raw: dict[str, list[int | None]] = {}  # node-local plugin -> raw per node
        # the last cycle's state and feasible nodes, and the replicas bound since
        self._previous: tuple[CycleState, list[int]] | None = None
        self._added: list[tuple[PodInfo, NodeInfo]] = []
        # the raw scores of the plugins whose PreScore state is carried (CarriesPreScore),
        # per node, valid while it is carried; node indexes by (topology key, value)
        self._carried_raw: dict[str, list[int | None]] = {}
        self._domains: dict[str, dict[str, list[int]]] = {}
        # the group fast path (score_groups.py): None until tried; off once it gave up
        self._groups: ScoreGroups | None = None
        self._grouped = True
        self.deferred = False  # the last ``place`` answer was the group path's: ``defer``
        self.tied = False  # the last ``place`` answer had other nodes tied at the top

    @property
    def feasible_count(self) -> int:
        """How many nodes the last node-by-node answer found feasible (its message names
        them): the feasible nodes kept for PreScore's carry, or one when it took a lone
        feasible node without scoring (none kept then)."""
        return 1 if self._previous is None else len(self._previous[1])

    def defer(self, pod: Pod, node_name: str) -> None:
        """Bind ``pod`` (placed by the group path) to ``node_name``: kept by the group path
        and applied to the cluster at ``finish`` or when the path gives up."""
        assert self._groups is not None
        if not self._groups.bound(pod, node_name):
            self._give_up()

    def finish(self) -> None:
        """Apply the binds the group path keeps (before the cluster is read)."""
        if self._groups is not None:
            self._groups.flush()

    def _give_up(self) -> None:
        """The group path stops for this template: its binds applied, the node-by-node
        caches (which never saw them) dropped."""
        if self._groups is not None:
            self._groups.flush()
        self._groups, self._grouped = None, False
        self._local, self._skip, self._raw = [], None, {}
        self._previous, self._added, self._carried_raw = None, [], {}

    def _place_grouped(self, pod: Pod) -> tuple[str, bool] | None:
        groups = self._groups
        if groups is None:
            groups = ScoreGroups(self.work, self.fwk, self.settings)
            if not groups.start(pod):
                self._grouped = False
                return None
            self._groups = groups
        found = groups.place()
        if found is None:
            self._give_up()
        return found

    def bound(self, node_name: str, pod_key: str) -> None:
        """A replica was bound to ``node_name``: its cached verdict and scores are stale."""
        ni = self.work.view.by_name[node_name]
        self._added.append((next(pi for pi in ni.pods if pi.key == pod_key), ni))
        index = ni.index
        if index < len(self._local):
            self._local[index] = None
        for raw in self._raw.values():
            raw[index] = None

    def place(self, pod: Pod, rng: random.Random | None) -> tuple[str, tuple[str, ...]] | None:
        """The node the full cycle would bind ``pod`` to and the nodes tied at the top
        (select_host's answer), or None when the cycle is not the ordinary one (see the
        module docstring): the caller then runs the full cycle. ``deferred`` tells whether
        the group path answered (the caller then binds with ``defer``; the nodes tied are
        then not listed, ``tied`` says whether there were any)."""
        self.deferred = self.tied = False
        if rng is None and self._grouped:
            grouped = self._place_grouped(pod)
            if grouped is not None:
                self.deferred, self.tied = True, grouped[1]
                return grouped[0], ()
        pod = as_scheduler_sees(pod, self.settings)
        view = self.work.view
        fwk = self.fwk
        previous, self._previous = self._previous, None
        added, self._added = self._added, []
        if pod.nominated_node_name or fwk.needs_whole_pods(pod, view):
            return None
        state = fwk.cycle_state(pod, view)
        prepare_nominated(state, view)
        if state.prefilter_status is not None or state.removed:
            return None
        feasible = self._filter(state, view.nodes)
        if feasible is None or not feasible:
            return None
        if len(feasible) == 1:  # schedulePod takes a lone feasible node without scoring
            return feasible[0].name, ()
        indexes = [ni.index for ni in feasible]
        carried = self._carry(previous, state, indexes, added)
        fwk.run_pre_score_plugins(state, feasible, carried)
        try:
            known = self._known(state, feasible)
            known.update(self._known_carried(state, feasible, carried))
        except ScoreError:
            return None  # the full cycle reports it
        scores = fwk.run_score_plugins(state, feasible, feasible, known)
        if scores.error is not None:
            return None
        if scores.invalid():
            return None  # invalid_score: the full cycle reports it
        self._previous = (state, indexes)
        found = pick_host(feasible, scores.totals(len(feasible)), rng)
        self.tied = bool(found[1])
        return found  # type: ignore[return-value]

    def _carry(
        self,
        previous: tuple[CycleState, list[int]] | None,
        state: CycleState,
        feasible: list[int],
        added: list[tuple[PodInfo, NodeInfo]],
    ) -> set[str]:
        """The PreScore plugins whose state is carried from the last cycle (CarriesPreScore)
        with the one replica bound since counted: only when that cycle was this cache's and
        had the same feasible nodes (PreScore reads them). Their cached raw scores are
        dropped on the nodes of the domains the replica changed and on its node; a plugin
        not carried loses them all."""
        carried: set[str] = set()
        if previous is not None and len(added) == 1 and previous[1] == feasible:
            info, ni = added[0]
            for plugin in self.fwk.pre_score_plugins:
                if not isinstance(plugin, CarriesPreScore):
                    continue
                changed = plugin.carry_pre_score(previous[0], state, info, ni)
                if changed is None:
                    continue
                carried.add(plugin.name)
                raw = self._carried_raw.get(plugin.name)
                if raw is not None:
                    raw[ni.index] = None
                    for key, value in changed:
                        for index in self._nodes_in(key, value):
                            raw[index] = None
        for name in list(self._carried_raw):
            if name not in carried:
                del self._carried_raw[name]
        return carried

    def _nodes_in(self, key: str, value: str) -> list[int]:
        """The indexes of the nodes labelled ``key=value`` (node labels do not change)."""
        by_value = self._domains.get(key)
        if by_value is None:
            by_value = self._domains[key] = {}
            for ni in self.work.view.nodes:
                found = ni.node.labels.get(key)
                if found is not None:
                    by_value.setdefault(found, []).append(ni.index)
        return by_value.get(value, [])

    def _known_carried(
        self, state: CycleState, feasible: Sequence[NodeInfo], carried: set[str]
    ) -> dict[str, list[int]]:
        """The raw scores of the Score plugins whose PreScore state was carried: cached
        where the carried update cannot have changed them, scored again elsewhere."""
        known: dict[str, list[int]] = {}
        count = len(self.work.view.nodes)
        for plugin, _ in self.fwk.score_plugins:
            name = plugin.name
            if name in state.skip_score or name in NODE_LOCAL_SCORES:
                continue
            if name not in carried:
                if isinstance(plugin, CarriesPreScore):
                    self._carried_raw[name] = [None] * count  # filled by the cycle below
                continue
            raw = self._carried_raw.setdefault(name, [None] * count)
            known[name] = _column(raw, plugin, state, feasible)
        return known

    def _filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[NodeInfo] | None:
        """The feasible nodes in snapshot order (None on a filter Error)."""
        fwk = self.fwk
        names = [name for name, _ in state.filters]
        key = (tuple(names), state.node_names)
        if key != self._filters or len(self._local) != len(nodes):
            self._filters, self._local = key, [None] * len(nodes)
        local = state.copy(filters=[f for f in state.filters if f[0] in NODE_LOCAL_FILTERS])
        position = {name: i for i, name in enumerate(names)}
        others = [(i, f) for i, f in enumerate(state.filters) if f[0] not in NODE_LOCAL_FILTERS]
        at_others = [i for i, _ in others]
        # the other filters that run before a position, by how many of them do
        before: dict[int, CycleState] = {}
        cached = self._local
        # the nodes whose verdict is not the cached one this cycle
        override: dict[int, Status] = {}
        by_name = self.work.view.by_name
        for name, pods in state.nominated.items():
            ni = by_name.get(name)
            if pods and ni is not None:
                override[ni.index] = fwk.run_filter_plugins_with_nominated(state, ni)
        if None in cached:
            for ni in nodes:
                if cached[ni.index] is None and ni.index not in override:
                    status, at = self._local_verdict(local, ni, position)
                    if at == _UNCACHED or status.code == ERROR:
                        override[ni.index] = fwk.run_filter_plugins(state, ni)
                    else:
                        cached[ni.index] = (status, at)
        if others:
            for ni, entry in zip(nodes, cached, strict=True):
                if entry is None or ni.index in override:
                    continue
                count = bisect_left(at_others, entry[1])
                if count:
                    sub = before.get(count)
                    if sub is None:
                        sub = before[count] = state.copy(filters=[f for _, f in others[:count]])
                    earlier = fwk.run_filter_plugins(sub, ni)
                    if not earlier.is_success:
                        override[ni.index] = earlier
        if any(status.code == ERROR for status in override.values()):
            return None
        passed = [entry is not None and entry[0].code == SUCCESS for entry in cached]
        for index, status in override.items():
            passed[index] = status.is_success
        return list(compress(nodes, passed))

    def _local_verdict(
        self, local: CycleState, ni: NodeInfo, position: dict[str, int]
    ) -> tuple[Status, int]:
        """The node-local filters' verdict on ``ni`` and the position (in the cycle's
        filters) of the one that rejected it: after every filter when none did, before
        every filter when the PreFilter node set left the node out."""
        found = self.fwk.run_filter_plugins(local, ni)
        if found.is_success:
            return found, len(position)
        if not found.plugin:  # no plugin: the PreFilter result's node set left it out
            return found, -1
        # a status naming a plugin not among the filters: the full filters decide each time
        return found, position.get(found.plugin, _UNCACHED)

    def _known(self, state: CycleState, feasible: Sequence[NodeInfo]) -> dict[str, list[int]]:
        """The node-local Score plugins' raw scores over ``feasible``: cached, the nodes
        bound to since the last cycle (or never scored) scored again."""
        skip = frozenset(state.skip_score)
        if skip != self._skip:
            self._skip, self._raw = skip, {}
        count = len(self.work.view.nodes)
        known: dict[str, list[int]] = {}
        for plugin, _ in self.fwk.score_plugins:
            name = plugin.name
            if name in skip or name not in NODE_LOCAL_SCORES:
                continue
            raw = self._raw.setdefault(name, [None] * count)
            known[name] = _column(raw, plugin, state, feasible)
        return known


def _column(
    raw: list[int | None], plugin, state: CycleState, feasible: Sequence[NodeInfo]
) -> list[int]:
    """The plugin's raw scores over ``feasible`` from ``raw`` (per node index), the nodes
    without one scored (and kept)."""
    column = [raw[ni.index] for ni in feasible]
    if None in column:
        for j in [j for j, value in enumerate(column) if value is None]:
            ni = feasible[j]
            column[j] = raw[ni.index] = plugin.score(state, ni, ni)
    return column  # type: ignore[return-value]
