"""The scheduling queue: many pending pods, each given one scheduling cycle on the state the
cycles before it left.

Mirrors kubernetes/kubernetes v1.35 ``pkg/scheduler``:

* ``backend/queue/scheduling_queue.go`` ``PriorityQueue`` popping its active queue in the
  order of ``framework/plugins/queuesort`` ``PrioritySort.Less``: higher priority first,
  then the earlier queue timestamp. Verdict takes the pod's creationTimestamp as the time it
  entered the queue (a pod without one entered last), then the order the pods were given.
* ``schedule_one.go`` ``ScheduleOne``: ``schedulePod`` (``placement.place``); on a FitError
  the PostFilter plugins (``preemption.preempt``, DefaultPreemption); on success the pod is
  assumed on its node (``Cache.AssumePod``: the node's requested resources, ports, volumes,
  affinity and spread counts now include it) and bound.
* A pod that preempted is nominated to the node; its victims are deleted
  (``prepareCandidate``), lower-priority nominations there are cleared, and the pod goes
  back to the queue. The real scheduler retries it after the victims' deletion events and
  its backoff, so after the pods already queued: Verdict retries it once they are done, and
  it binds if it then fits. Victims leave at once (their graceful termination is not
  modelled). A pod is retried once; nominated again, it stays nominated.
* ``selectHost``: ties between the top totals go to the first node in snapshot order, and
  every step names the tied nodes. Given ``tie_break_seed``, the pick is reservoir sampling
  as selectHost does it (each node equal to the best so far replaces it with probability
  1/count), its draws taken from Python's ``random.Random(seed)`` (Mersenne Twister), not
  Go's ``math/rand`` stream: the same seed gives the same run in Verdict, not the same
  choices as a real scheduler.

The state between cycles is never a copied snapshot: every cycle reads a SchedulerView
derived from the one before (``_successor``): the unchanged nodes' NodeInfos are shared, the
nodes a step changed get new ones, and the view's indexes over all pods are rebuilt lazily.
The Cluster each cycle sees is a deferred one whose snapshot (the base snapshot with the
run's changes so far) is only built if something reads it.
"""

from __future__ import annotations

import heapq
import random
import time
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from operator import attrgetter

import msgspec
import numpy as np

from service.engine.collector import collector_paused
from service.engine.objects import Cluster, Node, Pod, Snapshot
from service.engine.scheduler.framework import NodeInfo, PodInfo, pod_info
from service.engine.scheduler.placement import PlacementOutcome, place
from service.engine.scheduler.plugins.interpod_affinity import (
    EXISTING_ANTI_TERMS,
    EXISTING_TERMS,
    TOPOLOGY,
    existing_term_groups,
    existing_terms_after,
)
from service.engine.scheduler.preemption import PreemptionOutcome, preempt
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, Profile
from service.engine.scheduler.runtime import Column
from service.engine.scheduler.snapshot import (
    SchedulerView,
    as_scheduler_sees,
    has_pod_affinity,
    index_pod_affinity,
    install_view,
    scheduler_view,
)
from service.engine.version import EngineSettings

__all__ = [
    "BOUND",
    "NOMINATED",
    "UNSCHEDULABLE",
    "NodeUsage",
    "QueueRun",
    "QueueStep",
    "WorkingCluster",
    "pick_host",
    "queue_order",
    "reason_counts",
    "run_queue",
    "select_host",
]

BOUND = "bound"
NOMINATED = "nominated"
UNSCHEDULABLE = "unschedulable"

DEFAULT_MAX_STEPS = 100_000
_REASONS = attrgetter("reasons")


@dataclass(slots=True)
class QueueStep:
    """One scheduling cycle: the pod, what became of it, the node it was bound or nominated
    to, the pods it preempted (victims, most important first), the cycle's message, and the
    nodes that tied at the top total (``ties``: empty when one node led alone; the fixed pick
    is the first of them, the seeded pick any). ``reasons``: for an unschedulable pod, each
    filter reason with the number of nodes giving it. ``placement`` and ``preemption`` are the
    cycle's full outcomes, kept only when ``run_queue(keep_outcomes=True)``. ``nomination``:
    the pod's nominated node after the step (a failed retry keeps it unless its PostFilter
    cleared it)."""

    pod_key: str
    pod: Pod
    outcome: str
    node: str | None
    victims: list[PodInfo]
    message: str
    ties: tuple[str, ...] = ()
    attempt: int = 1
    reasons: dict[str, int] = field(default_factory=dict)
    cleared_nominations: list[str] = field(default_factory=list)
    placement: PlacementOutcome | None = None
    preemption: PreemptionOutcome | None = None
    nomination: str = ""  # the node the pod is nominated to after the step ("" none)


@dataclass(slots=True)
class NodeUsage:
    """A node's allocatable and its pods' requested sums (NodeInfo.Requested), before the run
    and after it, in base units (millicores, bytes): the views' own mappings, read-only."""

    name: str
    allocatable: Mapping[str, int]
    requested_before: Mapping[str, int]
    requested_after: Mapping[str, int]
    pods_before: int
    pods_after: int

    @property
    def changed(self) -> bool:
        return self.requested_before != self.requested_after or self.pods_before != self.pods_after


@dataclass(slots=True)
class QueueRun:
    """A queue run: its steps in order, the cluster after it (a deferred Cluster: its
    snapshot is built when first read), per node the usage before and after, and whether the
    run stopped at ``max_steps`` with pods still queued (``truncated``)."""

    steps: list[QueueStep]
    cluster: Cluster
    nodes: list[NodeUsage]
    truncated: bool
    pending: list[str] = field(default_factory=list)  # pods left in the queue when truncated
    limit: str | None = None  # what truncated it: "MaxSteps" or "TimeLimit"

    def counts(self) -> dict[str, int]:
        """Pods per final outcome (a pod nominated then bound counts as bound)."""
        last: dict[str, str] = {}
        for step in self.steps:
            last[step.pod_key] = step.outcome
        return dict(Counter(last.values()))


# --- the working cluster -----------------------------------------------------------------


class WorkingCluster:
    """A cluster as a run changes it, one step at a time, without copying the snapshot.

    ``cluster`` is the Cluster the next cycle reads: deferred, its SchedulerView installed
    (the base view with the run's changes applied, ``_successor``). The base Cluster and its
    cached view are never modified. ``cordoned`` nodes are marked unschedulable first
    (``kubectl cordon``: spec.unschedulable) and the ``deleted`` pods are gone (a drain's
    evictions), both applied to the base view as one step: the run's "before" is the
    cluster after them."""

    def __init__(
        self,
        base: Cluster,
        settings: EngineSettings,
        *,
        cordoned: Collection[str] = (),
        deleted: Collection[Pod] = (),
        fresh: bool = False,
    ) -> None:
        self.base = base
        self.settings = settings
        # fresh: every step's view built anew from the snapshot after it (the full cycle the
        # incremental views are tested against), instead of derived from the one before
        self.fresh = fresh
        # the pods a step removed, kept alive: the run's indexes key pods by id()
        self._gone: list[PodInfo] = []
        view = scheduler_view(base, settings, whole_pods=True)
        self._base_view = view
        # the run's changes in order: (pod key, the pod now, or None when deleted)
        self._changes: list[tuple[str, Pod | None]] = []
        self._latest: dict[str, Pod | None] = {}
        # the nominator's map last indexed, its pods' UIDs and keys (_without_nomination)
        self._nominees: tuple[object, set[str], set[str]] = (None, set(), set())
        self._pod_count = base.pod_count
        self._nodes: tuple[Node, ...] = base.nodes
        self._view = view
        self._cluster = base
        if not fresh:
            # built (once) on the snapshot's own view, which the snapshot cache keeps: each
            # run's first step then copies them instead of its first cycle building them
            existing_term_groups(view)
        if cordoned or deleted:
            self._cordon_and_delete(cordoned, deleted)
        self.before = [(ni.requested, ni.pod_count) for ni in self._view.nodes]

    @property
    def view(self) -> SchedulerView:
        return self._view

    @property
    def cluster(self) -> Cluster:
        return self._cluster

    def current(self, pod: Pod) -> Pod:
        """``pod`` as the run has left it (a cleared nomination, a nomination)."""
        now = self._latest.get(pod.key)
        return pod if now is None else now

    def _record(self, key: str, pod: Pod | None) -> None:
        """One change of the run, and the pod count it makes."""
        latest = self._latest
        existed = latest[key] is not None if key in latest else key in self.base.pod_keys
        self._pod_count += (pod is not None) - existed
        latest[key] = pod
        self._changes.append((key, pod))

    def _cordon_and_delete(self, names: Collection[str], deleted: Collection[Pod]) -> None:
        """spec.unschedulable on each named node (NodeUnschedulable then rejects it), and
        the ``deleted`` pods gone from their nodes and from the nominator: one step, so the
        base view's indexes are copied once and no view of the whole cluster is built."""
        view = self._view
        nodes = list(self._nodes)
        for name in names:
            ni = view.by_name[name]
            nodes[ni.index] = msgspec.structs.replace(ni.node, unschedulable=True)
        gone_by_node: dict[str, set[str]] = {}
        nominated = view.nominated
        for pod in deleted:
            self._record(pod.key, None)
            if pod.node_name in view.by_name:
                gone_by_node.setdefault(pod.node_name, set()).add(pod.key)
            elif pod.nominated_node_name:
                info = pod_info(as_scheduler_sees(pod, self.settings), self.settings)
                nominated = _without_nomination(nominated, info)
        changed: dict[int, NodeInfo] = {}
        removed: list[PodInfo] = []
        for ni in sorted({view.by_name[n] for n in (*names, *gone_by_node)}, key=_index):
            keys = gone_by_node.get(ni.name, ())
            kept = [pi for pi in ni.pods if pi.key not in keys] if keys else ni.pods
            removed.extend(pi for pi in ni.pods if pi.key in keys)
            changed[ni.index] = NodeInfo(nodes[ni.index], ni.index, kept)
        self._nodes = tuple(nodes)
        self._advance(changed, nominated, [], removed)

    def bind(self, pod: Pod, node_name: str) -> None:
        """AssumePod: ``pod`` joins ``node_name``'s pods; its nomination, if any, is gone."""
        bound = msgspec.structs.replace(pod, node_name=node_name, nominated_node_name="")
        view = self._view
        ni = view.by_name[node_name]
        seen = as_scheduler_sees(bound, self.settings) if bound.init_containers else bound
        info = pod_info(seen, self.settings)
        node = NodeInfo(ni.node, ni.index, [*ni.pods, info])
        nominated = self._without_nomination(view.nominated, info)
        self._record(pod.key, bound)
        self._advance({ni.index: node}, nominated, [info], [])

    def bind_all(self, binds: Sequence[tuple[Pod, PodInfo]], changed: dict[int, NodeInfo]) -> None:
        """``bind`` of each (pod, its PodInfo) in order, the view advanced once: the same
        cluster and view as binding them one by one (capacity's replicas placed without
        reading the view in between, score_groups.py). The caller made what ``bind``
        makes: each pod as bound (``node_name`` set, not nominated), its PodInfo, and the
        ``changed`` nodes (each node bound to, its binds' PodInfos appended to its pods)."""
        if not binds:
            return
        nominated = self._view.nominated
        for bound, info in binds:
            nominated = self._without_nomination(nominated, info)
            self._record(bound.key, bound)
        self._advance(changed, nominated, [info for _, info in binds], [])

    def _without_nomination(
        self, nominated: dict[str, list[PodInfo]], info: PodInfo
    ) -> dict[str, list[PodInfo]]:
        """``_without_nomination``, answering ``nominated`` itself at once when ``info``'s
        pod is not in it: most bound pods were never nominated, and the map's UIDs and keys
        are indexed once while the map stays the same object (PodInfo.same_pod compares
        by UID, or by key when either UID is missing: a key match is looked at closely)."""
        if self._nominees[0] is not nominated:
            infos = [pi for pods in nominated.values() for pi in pods]
            self._nominees = (nominated, {pi.uid for pi in infos}, {pi.key for pi in infos})
        _, uids, keys = self._nominees
        if (info.uid and info.uid in uids) or info.key in keys:
            return _without_nomination(nominated, info)
        return nominated

    def clear_nomination(self, pod: Pod) -> Pod:
        """A PostFilter that finds no node clears the pod's nomination (ModeOverride with
        no node): the nominator forgets it. Returns the pod as it now is."""
        cleared = msgspec.structs.replace(pod, nominated_node_name="")
        info = pod_info(as_scheduler_sees(pod, self.settings), self.settings)
        self._record(pod.key, cleared)
        self._advance({}, _without_nomination(self._view.nominated, info), [], [])
        return cleared

    def nominate(
        self, pod: Pod, node_name: str, victims: Sequence[PodInfo], cleared: Sequence[PodInfo]
    ) -> Pod:
        """prepareCandidate and the nomination: the victims are deleted, the ``cleared``
        lower-priority nominations on the node are dropped, and ``pod`` is nominated to
        ``node_name``. Returns the pod as it now is (status.nominatedNodeName set)."""
        view = self._view
        nominee = msgspec.structs.replace(pod, nominated_node_name=node_name)
        info = pod_info(as_scheduler_sees(nominee, self.settings), self.settings)
        nominated = _without_nomination(view.nominated, info)
        for pi in cleared:
            nominated = _without_nomination(nominated, pi)
            if pi.pod is not None:
                self._record(pi.key, msgspec.structs.replace(pi.pod, nominated_node_name=""))
        nominated[node_name] = [*nominated.get(node_name, ()), info]  # the old list is the view's
        changed: dict[int, NodeInfo] = {}
        removed: list[PodInfo] = []
        if victims:
            ni = view.by_name[node_name]
            gone = {id(v) for v in victims}
            removed = [pi for pi in ni.pods if id(pi) in gone]
            kept = [pi for pi in ni.pods if id(pi) not in gone]
            changed[ni.index] = NodeInfo(ni.node, ni.index, kept)
            for v in victims:
                self._record(v.key, None)
        self._record(pod.key, nominee)
        self._advance(changed, nominated, [], removed)
        return nominee

    def _advance(
        self,
        changed: dict[int, NodeInfo],
        nominated: dict[str, list[PodInfo]],
        added: list[PodInfo],
        removed: list[PodInfo],
    ) -> None:
        """The next view and its deferred Cluster."""
        base, changes, count = self.base, self._changes, len(self._changes)
        nodes = self._nodes
        cluster = Cluster.deferred(
            lambda: _snapshot_after(base.snapshot, nodes, changes[:count]),
            nodes=nodes,
            priority_classes=base.priority_classes,
            pod_count=self._pod_count,
        )
        if self.fresh:
            view = scheduler_view(cluster, self.settings, whole_pods=True)
        else:
            owned = self._view is not self._base_view
            view = _successor(
                self._view, changed, nominated, added, removed, owned=owned, base=self._base_view
            )
            install_view(cluster, view)
        self._gone.extend(removed)
        self._view, self._cluster = view, cluster

    def usage(self) -> list[NodeUsage]:
        """Every node's usage before the run and now."""
        return [
            NodeUsage(ni.name, ni.allocatable, req, ni.requested, count, ni.pod_count)
            for ni, (req, count) in zip(self._view.nodes, self.before, strict=True)
        ]


def _index(ni: NodeInfo) -> int:
    return ni.index


def _without_nomination(
    nominated: Mapping[str, list[PodInfo]], info: PodInfo
) -> dict[str, list[PodInfo]]:
    """The nominator's map without ``info``'s pod (compared as the scheduler does, by UID);
    a new dict, with new lists only where the pod was."""
    out: dict[str, list[PodInfo]] = {}
    for node_name, pods in nominated.items():
        if any(pi.same_pod(info) for pi in pods):
            kept = [pi for pi in pods if not pi.same_pod(info)]
            if kept:
                out[node_name] = kept
        else:
            out[node_name] = pods
    return out


def _successor(
    view: SchedulerView,
    changed: Mapping[int, NodeInfo],
    nominated: dict[str, list[PodInfo]],
    added: Sequence[PodInfo],
    removed: Sequence[PodInfo],
    *,
    owned: bool,
    base: SchedulerView,
) -> SchedulerView:
    """A SchedulerView equal to ``view`` but for the ``changed`` NodeInfos (``added`` and
    ``removed`` pods on them) and the nominator's map. Only what the step changes is
    recomputed: the other NodeInfos, the PDB and workload indexes are shared; the label and
    pod-affinity indexes over all pods are updated for the pods added and removed, and so
    are InterPodAffinity's groups of the existing pods' terms (the pods added and removed
    with terms counted or uncounted: interpod_affinity.existing_terms_after); its topology
    (the nodes' domains) is kept while the changed NodeInfos hold the same Nodes.
    ``owned``: ``view``'s indexes belong to this run (derived earlier), so they are updated
    in place; the first step copies the base view's instead. InterPodAffinity's groups are
    shared with ``base`` until a step changes them (most steps add no pod with terms), then
    copied first."""
    new = SchedulerView.__new__(SchedulerView)
    new.__dict__.update(view.__dict__)
    if changed:
        nodes = list(view.nodes)
        by_name = dict(view.by_name)
        for index, ni in changed.items():
            nodes[index] = ni
            by_name[ni.name] = ni
        new.nodes, new.by_name = nodes, by_name
    new.nominated = nominated
    if removed and view.terminating_statefulset_pods:
        gone = {id(pi) for pi in removed}
        new.terminating_statefulset_pods = [
            entry for entry in view.terminating_statefulset_pods if id(entry[1]) not in gone
        ]
    moved = [pi for pi in (*added, *removed) if pi.pod is not None]
    if any(_has_pod_affinity(pi.pod) for pi in moved):  # type: ignore[arg-type]
        new.inter_pod_affinity_in_use = True
    new._pod_terms = view._pod_terms if owned else dict(view._pod_terms)
    new._by_label = _labels_after(view._by_label, added, removed, owned)
    with_terms = [pi for pi in moved if has_pod_affinity(pi.pod)]  # type: ignore[arg-type]
    new._with_affinity, new._with_required_anti = _affinity_after(view, changed, with_terms, owned)
    kept = {key: value for key, value in view._derived.items() if key in _AFFINITY_DERIVED}
    if kept and with_terms:  # the base view's groups are copied, never changed
        of_base = any(value is base._derived.get(key) for key, value in kept.items())
        kept = _existing_terms_after(kept, new, added, removed, with_terms, owned=not of_base)
    topology = view._derived.get(TOPOLOGY)
    if topology is not None and all(ni.node is view.nodes[i].node for i, ni in changed.items()):
        kept[TOPOLOGY] = topology  # the same Node objects: the same labels by index
    new._derived = kept
    new._bound = []
    new._bound_pdbs_done = True  # PodInfos not yet looked up are looked up when asked
    return new


# SchedulerView.derived keys that depend only on the existing pods' affinity terms
# (InterPodAffinity's existing terms and required anti-affinity terms, by node labels).
_AFFINITY_DERIVED = frozenset({EXISTING_TERMS, EXISTING_ANTI_TERMS})


def _existing_terms_after(
    derived: dict[str, object],
    view: SchedulerView,
    added: Sequence[PodInfo],
    removed: Sequence[PodInfo],
    with_terms: Sequence[PodInfo],
    *,
    owned: bool,
) -> dict[str, object]:
    """InterPodAffinity's groups of the existing pods' terms with the step's pods that have
    terms counted (added) or uncounted (removed) on their nodes, instead of built again
    over every pod of the cluster by the next cycle."""
    keep = {id(pi) for pi in with_terms}

    def on_nodes(pods: Sequence[PodInfo]) -> list[tuple[PodInfo, Mapping[str, str]]]:
        return [
            (pi, view.by_name[pi.pod.node_name].node.labels)  # type: ignore[union-attr]
            for pi in pods
            if id(pi) in keep
        ]

    return existing_terms_after(derived, view, on_nodes(added), on_nodes(removed), owned=owned)


def _labels_after(
    index: dict[tuple[str, str], list[PodInfo]] | None,
    added: Sequence[PodInfo],
    removed: Sequence[PodInfo],
    owned: bool,
) -> dict[tuple[str, str], list[PodInfo]] | None:
    """The label index (SchedulerView.pods_labelled) with ``added`` filed and ``removed``
    taken out; None (built when asked) when the view had none."""
    if index is None:
        return None
    if not owned:
        index = {pair: list(pods) for pair, pods in index.items()}
    for pi in removed:
        if pi.pod is None:
            continue
        for pair in pi.pod.labels.items():
            pods = index.get(pair)
            if pods is not None:
                index[pair] = [p for p in pods if p is not pi]
    for pi in added:
        if pi.pod is None:
            continue
        for pair in pi.pod.labels.items():
            index.setdefault(pair, []).append(pi)
    return index


def _affinity_after(
    view: SchedulerView,
    changed: Mapping[int, NodeInfo],
    with_terms: Sequence[PodInfo],
    owned: bool,
) -> tuple[dict[int, list[PodInfo]] | None, dict[int, list[PodInfo]] | None]:
    """The pods-with-affinity indexes with the changed nodes that gained or lost a pod with
    terms (``with_terms``, the step's) filed again; the other changed nodes hold the same
    PodInfos with terms as before, so their entries stay."""
    with_affinity, with_anti = view._with_affinity, view._with_required_anti
    if with_affinity is None or with_anti is None:
        return None, None
    if not owned:
        with_affinity, with_anti = dict(with_affinity), dict(with_anti)
    names = {pi.pod.node_name for pi in with_terms}  # type: ignore[union-attr]
    for index, ni in changed.items():
        if ni.name not in names:
            continue
        with_affinity.pop(index, None)
        with_anti.pop(index, None)
        index_pod_affinity(ni, with_affinity, with_anti)
    return with_affinity, with_anti


def _has_pod_affinity(pod: Pod) -> bool:
    return bool(pod.unmodelled and "InterPodAffinity" in pod.unmodelled)


def _snapshot_after(
    base: Snapshot, nodes: tuple[Node, ...], changes: Sequence[tuple[str, Pod | None]]
) -> Snapshot:
    """The base snapshot with the run's changes: each pod as last changed (bound,
    nominated, or deleted), pods the base did not hold appended in the order they came."""
    latest: dict[str, Pod | None] = {}
    for key, pod in changes:
        latest[key] = pod
    pods: list[Pod] = []
    for pod in base.pods:
        key = pod.key
        if key in latest:
            now = latest.pop(key)
            if now is not None:
                pods.append(now)
        else:
            pods.append(pod)
    pods.extend(p for p in latest.values() if p is not None)
    return msgspec.structs.replace(base, nodes=nodes, pods=tuple(pods))


# --- pods of one template ----------------------------------------------------------------


# --- the queue ---------------------------------------------------------------------------


def queue_order(pods: Sequence[Pod]) -> list[int]:
    """PrioritySort.Less over ``pods``: positions in the order the active queue pops them
    (priority descending, creationTimestamp ascending with none last, then given order)."""

    def key(i: int) -> tuple:
        pod = pods[i]
        ts = pod.creation_timestamp
        if ts is None:
            return (-(pod.priority or 0), 1, 0.0, i)
        stamp = (ts if ts.tzinfo else ts.replace(tzinfo=UTC)).timestamp()
        return (-(pod.priority or 0), 0, stamp, i)

    return sorted(range(len(pods)), key=key)


def select_host(outcome: PlacementOutcome, rng: random.Random | None) -> tuple[str | None, tuple]:
    """selectHost over the scored feasible nodes (snapshot order): the chosen node and the
    nodes tied at the top total. Without ``rng``, the first tied node (place's choice); with
    it, reservoir sampling: a node equal to the best so far replaces it when
    ``rng.randrange(count) == 0``. A nominated node taken without scoring, a lone feasible
    node and a failed cycle involve no draw."""
    chosen = outcome.selected_node
    if chosen is None or outcome.nominated_node_chosen:
        return chosen, ()
    return pick_host(outcome.feasible_nodes, outcome.totals, rng)


def pick_host(
    nodes: Sequence[NodeInfo], totals: Column, rng: random.Random | None
) -> tuple[str | None, tuple[str, ...]]:
    """selectHost over scored feasible nodes given in snapshot order (``totals`` parallel to
    ``nodes``, a list or an int64 array): the name of the chosen node and of the nodes tied
    at the top total (empty when one led alone or fewer than two nodes were scored).
    Without ``rng`` the first of the top nodes; see select_host."""
    if len(nodes) < 2:
        return (nodes[0].name if nodes else None), ()
    top = np.asarray(totals)
    tied = np.flatnonzero(top == top.max()).tolist()
    first = tied[0]
    if len(tied) < 2:
        return nodes[first].name, ()
    ties = tuple(nodes[i].name for i in tied)
    if rng is None:
        return ties[0], ties
    return nodes[_reservoir(top, rng)].name, ties


def _reservoir(totals: np.ndarray, rng: random.Random) -> int:
    """selectHost's reservoir sampling, replayed on the nodes where it acts: walking the
    nodes in order, one above the highest total so far is taken (a new count), and one
    equal to it is taken when ``rng.randrange(count) == 0`` after counting it; so the
    draws are the same, in the same order, as node by node. The chosen position."""
    highest = np.maximum.accumulate(totals)[:-1]  # the highest total before each next node
    later = totals[1:]
    acts = np.flatnonzero(later >= highest)
    rises = (later[acts] > highest[acts]).tolist()
    chosen, count = 0, 1
    for at, rise in zip((acts + 1).tolist(), rises, strict=True):
        if rise:
            chosen, count = at, 1
        else:
            count += 1
            if rng.randrange(count) == 0:
                chosen = at
    return chosen


def reason_counts(outcome: PlacementOutcome) -> dict[str, int]:
    """Each filter reason with the number of nodes that gave it (the FitError histogram).
    The nodes' reasons are counted per distinct tuple first: thousands of nodes give a few."""
    counts: Counter[str] = Counter()
    for reasons, nodes in Counter(map(_REASONS, outcome.statuses.values())).items():
        for reason in reasons:
            counts[reason] += nodes
    return dict(sorted(counts.items()))


def profile_of(pod: Pod, profiles: Mapping[str, Profile]) -> Profile | None:
    """The profile whose schedulerName is the pod's (default-scheduler when unset)."""
    return profiles.get(pod.scheduler_name or DEFAULT_SCHEDULER_NAME)


def cycle(
    work: WorkingCluster,
    pod: Pod,
    profile: Profile,
    *,
    preemption: bool,
    rng: random.Random | None,
    attempt: int = 1,
    keep_outcomes: bool = False,
) -> QueueStep:
    """One ScheduleOne for ``pod`` on the working cluster, applied to it: bound, nominated
    (victims deleted), or unschedulable."""
    settings = work.settings
    outcome = place(work.cluster, pod, profile=profile, settings=settings, records=keep_outcomes)
    node, ties = select_host(outcome, rng)
    kept = outcome if keep_outcomes else None
    if node is not None:
        work.bind(pod, node)
        return QueueStep(pod.key, pod, BOUND, node, [], outcome.message, ties, attempt,
                         placement=kept)  # fmt: skip
    reasons = reason_counts(outcome)
    # DefaultPreemption is the PostFilter that preempts (DynamicResources' is not modelled)
    if (
        outcome.cycle_error is not None
        or not preemption
        or ("DefaultPreemption" not in profile.post_filter)
    ):
        return QueueStep(pod.key, pod, UNSCHEDULABLE, None, [], outcome.message, (), attempt,
                         reasons, placement=kept,
                         nomination=pod.nominated_node_name)  # fmt: skip
    result = preempt(work.cluster, pod, profile=profile, settings=settings)
    kept_pre = result if keep_outcomes else None
    if result.nominated_node_name:
        cleared = [pi.key for pi in result.cleared_nominations]
        nominee = work.nominate(
            pod, result.nominated_node_name, result.victims, result.cleared_nominations
        )
        victims = ", ".join(v.key for v in result.victims)
        message = (
            f'{outcome.message.rstrip(".")}; preemption nominates "{result.nominated_node_name}", '
            f"deleting {len(result.victims)} pod(s) of lower priority ({victims})"
        )
        return QueueStep(nominee.key, nominee, NOMINATED, result.nominated_node_name,
                         list(result.victims), message, (), attempt, reasons, cleared,
                         kept, kept_pre, nominee.nominated_node_name)  # fmt: skip
    message = outcome.message
    if result.message:
        message = f"{message} {result.message}"
    nomination = pod.nominated_node_name
    if result.nominated_node_name == "" and nomination:
        work.clear_nomination(pod)
        message += f' The nomination to "{nomination}" is cleared.'
        nomination = ""
    return QueueStep(pod.key, pod, UNSCHEDULABLE, None, [], message, (), attempt, reasons,
                     placement=kept, preemption=kept_pre, nomination=nomination)  # fmt: skip


def run_queue(
    cluster: Cluster,
    pods: Sequence[Pod],
    *,
    profiles: Mapping[str, Profile],
    settings: EngineSettings,
    preemption: bool = True,
    tie_break_seed: int | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    cordoned: Collection[str] = (),
    deleted: Collection[Pod] = (),
    keep_outcomes: bool = False,
    max_seconds: float | None = None,
    fresh_views: bool = False,
    between_steps: Callable[[], None] | None = None,
) -> QueueRun:
    """The scheduling queue run until it is empty (or ``max_steps`` cycles): ``pods`` in
    PrioritySort order, each given one cycle with ``profiles[pod's schedulerName]``; a pod
    nominated by preemption is retried once after the others. See the module docstring.
    ``cordoned`` nodes are marked unschedulable and the ``deleted`` pods (a drain's
    evictions) are gone before the first cycle, on ``cluster``'s own view (no second view
    of the whole cluster is built).
    A pod whose schedulerName has no profile is not this scheduler's: it is reported
    unschedulable without a cycle. ``max_seconds`` bounds the run's time as ``max_steps``
    its cycles (the pods left are named in ``pending``). ``fresh_views``: build every
    cycle's view from the whole snapshot after the step before (the full recompute the
    step-by-step views are tested against). ``keep_outcomes``: keep each cycle's
    PlacementOutcome with every node's record (slower; the queue needs only the choice).
    ``between_steps`` is called before each cycle (the caller's chance to let other work
    run: decisions/cooperative.py)."""
    # a run makes long-lived objects (each step's view) and no cyclic garbage
    # (tests/engine/scheduler/test_queue.py): collections would find nothing. Views built
    # anew every step (fresh_views) do leave some.
    with collector_paused(not fresh_views):
        work = WorkingCluster(
            cluster, settings, cordoned=cordoned, deleted=deleted, fresh=fresh_views
        )
        rng = random.Random(tie_break_seed) if tie_break_seed is not None else None
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        steps, pending, limit = _cycles(
            work, pods, profiles, preemption, rng, max_steps, deadline, keep_outcomes,
            between_steps,
        )  # fmt: skip
        usage = work.usage()
    return QueueRun(steps, work.cluster, usage, limit is not None, pending, limit)


def _cycles(
    work: WorkingCluster,
    pods: Sequence[Pod],
    profiles: Mapping[str, Profile],
    preemption: bool,
    rng: random.Random | None,
    max_steps: int,
    deadline: float | None,
    keep_outcomes: bool,
    between_steps: Callable[[], None] | None,
) -> tuple[list[QueueStep], list[str], str | None]:
    """run_queue's loop: the active queue popped in PrioritySort order, the nominated pods
    retried after it. Returns the steps, the pods left when a limit stopped it, and the
    limit ("MaxSteps", "TimeLimit", or None)."""
    heap = [(rank, i) for rank, i in enumerate(queue_order(pods))]
    heapq.heapify(heap)
    retries: list[Pod] = []
    steps: list[QueueStep] = []
    while heap or retries:
        if between_steps is not None:
            between_steps()
        limit = None
        if len(steps) >= max_steps:
            limit = "MaxSteps"
        elif deadline is not None and time.monotonic() > deadline:
            limit = "TimeLimit"
        if limit is not None:
            pending = [pods[i].key for _, i in sorted(heap)] + [p.key for p in retries]
            return steps, pending, limit
        if heap:
            pod, attempt = pods[heapq.heappop(heap)[1]], 1
        else:
            pod, attempt = retries.pop(0), 2
        pod = work.current(pod)
        profile = profile_of(pod, profiles)
        if profile is None:
            steps.append(QueueStep(pod.key, pod, UNSCHEDULABLE, None, [],
                                   f"no profile has schedulerName {pod.scheduler_name!r}: "
                                   "this scheduler does not schedule the pod", (), attempt))  # fmt: skip
            continue
        step = cycle(work, pod, profile, preemption=preemption, rng=rng, attempt=attempt,
                     keep_outcomes=keep_outcomes)  # fmt: skip
        steps.append(step)
        if step.outcome == NOMINATED and attempt == 1:
            retries.append(step.pod)
    return steps, [], None
