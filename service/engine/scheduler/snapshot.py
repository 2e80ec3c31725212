"""The scheduler's snapshot of a cluster: NodeInfos in snapshot order, nominated pods, PDBs.

Mirrors kubernetes/kubernetes ``pkg/scheduler/backend/cache`` (the cache's ``Snapshot``: the
NodeInfo list the scheduling cycle reads) and the nominator's ``NominatedPodsForNode``, plus
the PodDisruptionBudget lookups preemption needs (``filterPodsWithPDBViolation``).

A ``SchedulerView`` (per-node aggregates over 150,000 pods) is built once per ``Cluster`` and
cached in a ``WeakKeyDictionary`` keyed by the Cluster object, so a request never re-sums the
snapshot's pods.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from service.engine.objects import (
    Cluster,
    LabelSelector,
    Namespace,
    Node,
    Pod,
    PodDisruptionBudget,
    Service,
    WorkloadController,
)
from service.engine.ports import without_sidecar_host_ports
from service.engine.resize import as_resized
from service.engine.scheduler.dra_manager import EMPTY_DRA, DraManager
from service.engine.scheduler.framework import NodeInfo, PodInfo, pod_info
from service.engine.scheduler.storage import EMPTY_STORAGE, Storage
from service.engine.version import EngineSettings

__all__ = [
    "PdbInfo",
    "SchedulerView",
    "as_scheduler_sees",
    "has_pod_affinity",
    "index_pod_affinity",
    "install_view",
    "scheduler_view",
    "view_release",
]

T = TypeVar("T")


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
    nominator's pods by node, PDBs by namespace, the storage objects the volume plugins
    read (none in a restored view), the resource.k8s.io objects DynamicResources reads,
    for a release (``settings``: the PodInfos' requests depend on it). Build with
    ``scheduler_view(cluster, settings)``."""

    storage: Storage = EMPTY_STORAGE
    dra: DraManager = EMPTY_DRA

    def __init__(self, cluster: Cluster, settings: EngineSettings) -> None:
        self.settings = settings
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
                if pod.init_containers or pod.resize is not None:
                    pod = as_scheduler_sees(pod, settings)
                pi = pod_info(pod, settings)
                per_node[i].append(pi)
                append_bound(pi)
                if pod.unmodelled and "InterPodAffinity" in pod.unmodelled:
                    inter_pod_affinity = True
                if pod.deletion_timestamp is not None:
                    ctrl = pod.controller
                    if ctrl is not None and ctrl.kind == "StatefulSet":
                        terminating_sts.append((node_name, pi))
            elif pod.nominated_node_name:
                info = pod_info(as_scheduler_sees(pod, settings), settings)
                nominated.setdefault(pod.nominated_node_name, []).append(info)
        self._assemble(
            [NodeInfo(node, i, per_node[i]) for i, node in enumerate(nodes)],
            nominated,
            terminating_sts,
            inter_pod_affinity,
            snapshot.pdbs,
        )
        self._bound = bound  # the nodes' pods in snapshot order
        self._bound_pdbs_done = False
        self.whole_pods = True
        self.index_workloads(snapshot.namespaces, snapshot.services, snapshot.controllers)
        self.storage = Storage.of(snapshot)
        self.dra = DraManager.of_snapshot(snapshot)

    @classmethod
    def restored(
        cls,
        nodes: Sequence[Node],
        node_pods: Sequence[list[PodInfo]],
        node_totals: Sequence[tuple[dict[str, int], int, int]],
        nominated: Iterable[Pod],
        terminating_statefulset: Iterable[tuple[int, int]],
        inter_pod_affinity_in_use: bool,
        workloads: tuple[
            Sequence[PodDisruptionBudget],
            Sequence[Namespace],
            Sequence[Service],
            Sequence[WorkloadController],
        ],
        settings: EngineSettings,
        dra: DraManager = EMPTY_DRA,
    ) -> SchedulerView:
        """The view built from parts computed earlier (the store keeps them with each
        snapshot, ``store/scheduler_view.py``), with the same nodes, pods, order and answers
        as the view they were taken from. ``node_pods[i]`` are node i's PodInfos in snapshot
        order, already holding their matching PDBs; ``node_totals[i]`` its Requested and
        NonZeroRequested sums; ``nominated`` the pods with a nominated node;
        ``terminating_statefulset`` (node index, position in that node's pods) pairs;
        ``workloads`` the PDBs, namespaces, services and workload controllers; ``settings``
        the release the PodInfos were derived under; ``dra`` the resource.k8s.io objects."""
        pdbs, namespaces, services, controllers = workloads
        infos = [
            NodeInfo(node, i, pods, totals)
            for i, (node, pods, totals) in enumerate(
                zip(nodes, node_pods, node_totals, strict=True)
            )
        ]
        nominated_infos: dict[str, list[PodInfo]] = {}
        for pod in nominated:
            nominated_infos.setdefault(pod.nominated_node_name, []).append(pod_info(pod, settings))
        terminating = [(infos[i].name, infos[i].pods[j]) for i, j in terminating_statefulset]
        view = cls.__new__(cls)
        view.settings = settings
        view._assemble(infos, nominated_infos, terminating, inter_pod_affinity_in_use, pdbs)
        view._bound = []
        view._bound_pdbs_done = True
        view.whole_pods = False  # most PodInfos carry no Pod: see scheduler_view(whole_pods=)
        view.index_workloads(namespaces, services, controllers)
        view.dra = dra
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
        self._pod_terms: dict[int, object] = {}
        self._derived: dict[str, object] = {}
        # what the images of the nodes are keyed by (ImageLocality's image states): a view
        # derived from this one with the same nodes keeps it (engine/scheduler/queue.py)
        self.images_key: object = self
        self._with_affinity: dict[int, list[PodInfo]] | None = None
        self._with_required_anti: dict[int, list[PodInfo]] | None = None
        self._by_label: dict[tuple[str, str], list[PodInfo]] | None = None
        # the view whose label index a view derived from this one starts from (the derived
        # views share this attribute: engine/scheduler/queue.py copies a view's fields)
        self._label_origin: weakref.ref[SchedulerView] = weakref.ref(self)

    def index_workloads(
        self,
        namespaces: Sequence[Namespace],
        services: Sequence[Service],
        controllers: Sequence[WorkloadController],
    ) -> None:
        """Namespace labels, Services by namespace, controllers by (kind, namespace, name):
        what pod affinity's namespaceSelector and the default topology spreading read."""
        self.namespace_labels = {ns.name: ns.labels for ns in namespaces}
        self._services: dict[str, list[Service]] = {}
        for service in services:
            self._services.setdefault(service.namespace, []).append(service)
        self._controllers = {(c.kind, c.namespace, c.name): c for c in controllers}

    def services_of(self, namespace: str) -> list[Service]:
        return self._services.get(namespace, [])

    def controller(self, kind: str, namespace: str, name: str) -> WorkloadController | None:
        return self._controllers.get((kind, namespace, name))

    # --- pods with inter-pod affinity (NodeInfo.PodsWithAffinity, PodsWithRequiredAntiAffinity)

    def derived(self, key: str, build: Callable[[], T]) -> T:
        """``build()``, computed once per view: data a plugin derives from the whole view."""
        found = self._derived.get(key)
        if found is None:
            found = self._derived[key] = build()
        return found  # type: ignore[return-value]

    def pod_terms(self, pi: PodInfo, build: Callable[[Pod], T]) -> T:
        """``build(pod)`` for a pod of the view, computed once (its affinity terms)."""
        found = self._pod_terms.get(id(pi))
        if found is None:
            found = self._pod_terms[id(pi)] = build(pi.pod)
        return found  # type: ignore[return-value]

    def _affinity_index(self) -> tuple[dict[int, list[PodInfo]], dict[int, list[PodInfo]]]:
        if self._with_affinity is None or self._with_required_anti is None:
            with_affinity: dict[int, list[PodInfo]] = {}
            with_anti: dict[int, list[PodInfo]] = {}
            for ni in self.nodes:
                index_pod_affinity(ni, with_affinity, with_anti)
            self._with_affinity, self._with_required_anti = with_affinity, with_anti
        return self._with_affinity, self._with_required_anti

    def nodes_with_affinity(self) -> list[NodeInfo]:
        """HavePodsWithAffinityList: nodes holding a pod with any pod (anti-)affinity."""
        return [self.nodes[i] for i in self._affinity_index()[0]]

    def pods_with_affinity(self, ni: NodeInfo) -> list[PodInfo]:
        return self._affinity_index()[0].get(ni.index, [])

    def nodes_with_required_anti_affinity(self) -> list[NodeInfo]:
        """HavePodsWithRequiredAntiAffinityList."""
        return [self.nodes[i] for i in self._affinity_index()[1]]

    def pods_with_required_anti_affinity(self, ni: NodeInfo) -> list[PodInfo]:
        return self._affinity_index()[1].get(ni.index, [])

    # --- pods by label (what a selector naming a label value can match) ---

    def pods_labelled(self, key: str, value: str) -> list[PodInfo]:
        """The view's bound pods whose label ``key`` is ``value``: an index built once per
        view, so that PodTopologySpread and InterPodAffinity match a selector against the
        few pods that carry its values instead of every pod. Callers only read the list."""
        index = self._by_label
        if index is None:
            index = self._by_label = self._label_index()
        return index.get((key, value), [])

    def _label_index(self) -> dict[tuple[str, str], list[PodInfo]]:
        """The label index, copied from the view this one was derived from (its origin, the
        snapshot's view: built there once, then each queue run copies it) with the pods of
        the NodeInfos that differ refiled; built over every pod for an origin."""
        origin = self._label_origin()
        if origin is None or origin is self or len(origin.nodes) != len(self.nodes):
            return _labels_of(pi for ni in self.nodes for pi in ni.pods)
        base = origin._by_label
        if base is None:
            base = origin._by_label = origin._label_index()
        index = {pair: list(pods) for pair, pods in base.items()}
        gone: dict[tuple[str, str], set[int]] = {}
        added: list[PodInfo] = []
        for old, new in zip(origin.nodes, self.nodes, strict=True):
            if old is new:
                continue
            old_ids, new_ids = set(map(id, old.pods)), set(map(id, new.pods))
            for pi in old.pods:
                if id(pi) not in new_ids and pi.pod is not None:
                    for pair in pi.pod.labels.items():
                        gone.setdefault(pair, set()).add(id(pi))
            added.extend(pi for pi in new.pods if id(pi) not in old_ids)
        for pair, ids in gone.items():
            index[pair] = [pi for pi in index[pair] if id(pi) not in ids]
        for pair, pods in _labels_of(added).items():
            index.setdefault(pair, []).extend(pods)
        return index

    def selector_candidates(self, selector: LabelSelector) -> list[PodInfo] | None:
        """The pods a selector can match, from its most selective ``matchLabels`` pair or
        ``In`` requirement (a pod without one of those values cannot match); None when the
        selector names no value (only NotIn, Exists, DoesNotExist, or empty): scan every pod.
        Only the chosen requirement's lists are joined (their lengths decide). Callers still
        match each candidate against the whole selector."""
        best: tuple[list[PodInfo], ...] | None = None
        size = 0
        for key, value in selector.match_labels.items():
            found = (self.pods_labelled(key, value),)
            if best is None or len(found[0]) < size:
                best, size = found, len(found[0])
        for req in selector.match_expressions:
            if req.operator == "In":
                found = tuple(self.pods_labelled(req.key, v) for v in dict.fromkeys(req.values))
                total = sum(map(len, found))
                if best is None or total < size:
                    best, size = found, total
        if best is None:
            return None
        if len(best) == 1:
            return best[0]
        return [pi for pods in best for pi in pods]

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


def _labels_of(pods: Iterable[PodInfo]) -> dict[tuple[str, str], list[PodInfo]]:
    """(label key, value) -> the pods carrying it, in ``pods``' order (SchedulerView's label
    index; PodInfos without a Pod carry no labels)."""
    index: dict[tuple[str, str], list[PodInfo]] = {}
    for pi in pods:
        pod = pi.pod
        if pod is None:
            continue
        for pair in pod.labels.items():
            found = index.get(pair)
            if found is None:
                index[pair] = [pi]
            else:
                found.append(pi)
    return index


def has_pod_affinity(pod: Pod) -> bool:
    """Whether the pod has any pod affinity or anti-affinity term (NodeInfo.PodsWithAffinity)."""
    return bool(
        pod.pod_anti_affinity_required
        or pod.pod_affinity_required
        or pod.pod_affinity_preferred
        or pod.pod_anti_affinity_preferred
    )


def index_pod_affinity(
    ni: NodeInfo,
    with_affinity: dict[int, list[PodInfo]],
    with_anti: dict[int, list[PodInfo]],
) -> None:
    """File the node's pods with pod (anti-)affinity (NodeInfo.PodsWithAffinity) and with
    required anti-affinity (PodsWithRequiredAntiAffinity) under its index."""
    for pi in ni.pods:
        pod = pi.pod
        if pod is None:
            continue
        if pod.pod_anti_affinity_required:
            with_anti.setdefault(ni.index, []).append(pi)
        if has_pod_affinity(pod):
            with_affinity.setdefault(ni.index, []).append(pi)


def view_release(settings: EngineSettings) -> tuple[bool, ...]:
    """What a SchedulerView reads of the release: the switches ``scheduler_pod_requests``
    reads to derive a PodInfo, whether sidecars' host ports count and which status a
    resized pod's requests come from (``as_scheduler_sees``). Two releases with the same reading share one view."""
    return (
        settings.pod_level_resources,
        settings.host_ports_of_sidecars,
        settings.requests_from_resize_status,
        settings.pod_level_requests_from_resize_status,
    )


def as_scheduler_sees(pod: Pod, settings: EngineSettings) -> Pod:
    """``pod`` as the release's scheduler counts it: a resized pod with the requests its
    status gives it (resize.py, from v1.33), and without its sidecars' host ports before
    v1.34 (``settings.host_ports_of_sidecars``, kubernetes#132040)."""
    pod = as_resized(pod, settings)
    return pod if settings.host_ports_of_sidecars else without_sidecar_host_ports(pod)


# Cluster -> view_release -> its SchedulerView.
_VIEWS: weakref.WeakKeyDictionary[Cluster, dict[tuple[bool, ...], SchedulerView]] = (
    weakref.WeakKeyDictionary()
)
_VIEWS_LOCK = threading.Lock()


def install_view(cluster: Cluster, view: SchedulerView) -> None:
    """Make ``view`` the SchedulerView of ``cluster`` for its release (one restored from a
    stored form)."""
    with _VIEWS_LOCK:
        _VIEWS.setdefault(cluster, {})[view_release(view.settings)] = view


def scheduler_view(
    cluster: Cluster, settings: EngineSettings, whole_pods: bool = False
) -> SchedulerView:
    """The SchedulerView of ``cluster`` under ``settings``, built at most once per Cluster
    object and ``view_release`` (weakly cached: it goes when the Cluster goes).
    ``whole_pods``: the view must hold every pod whole (pod affinity reads their labels and
    terms), so a view restored from its stored form is replaced by one built from the
    snapshot, decoding it."""
    key = view_release(settings)
    views = _VIEWS.get(cluster)
    view = views.get(key) if views is not None else None
    if view is None or (whole_pods and not view.whole_pods):
        with _VIEWS_LOCK:
            views = _VIEWS.setdefault(cluster, {})
            view = views.get(key)
            if view is None or (whole_pods and not view.whole_pods):
                view = SchedulerView(cluster, settings)
                views[key] = view
    return view
