"""VolumeBinding (kubernetes/kubernetes pkg/scheduler/framework/plugins/volumebinding, v1.35):
PreFilter (podHasPVCs, the binder's GetPodVolumeClaims and GetEligibleNodes), Filter (the
binder's FindPodVolumes: bound claims' node affinity (a migrated in-tree volume's as
csi-translation-lib translates it), unbound WaitForFirstConsumer claims
matched to available volumes or provisioned), PreScore and Score. The Score needs the
StorageCapacityScoring feature gate (off up to 1.36, on from 1.37:
``settings.storage_capacity_scoring``); without it PreScore skips. No PreFilterExtensions
upstream (a claim's binding does not depend on the node's pods)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from service.engine.labels import selector_matches
from service.engine.nodeaffinity import matches_node_selector_terms
from service.engine.objects import (
    CSIStorageCapacity,
    Node,
    PersistentVolume,
    PersistentVolumeClaim,
    TopologySelectorTerm,
)
from service.engine.scheduler.csi_translation import (
    MIGRATIONS,
    TranslationError,
    pv_handle,
    translated_node_affinity,
)
from service.engine.scheduler.framework import (
    ERROR,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    CycleState,
    KeepsVerdict,
    NodeInfo,
    PodInfo,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    ScorePlugin,
    Status,
    prefilter_state_missing,
)
from service.engine.scheduler.plugins.helper import ReadsPodVolumes
from service.engine.scheduler.plugins.noderesources.resource_allocation import (
    broken_linear_function,
)
from service.engine.scheduler.storage import (
    Storage,
    claim_name,
    ephemeral_owner_error,
    pvc_not_found,
)

__all__ = [
    "ERR_REASON_BIND_CONFLICT",
    "ERR_REASON_NODE_CONFLICT",
    "ERR_REASON_NOT_ENOUGH_SPACE",
    "ERR_REASON_PV_NOT_EXIST",
    "VolumeBinding",
    "find_matching_volume",
]

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) didn't match PersistentVolume's node affinity"
# The same reason up to v1.32 (``settings.volume_conflict_names_pv_affinity``, kubernetes#129887).
ERR_REASON_NODE_CONFLICT_V132 = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = (
    "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
)
UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_BARE_NODES = "VolumeBinding/bareNodes"  # SchedulerView.derived key: labels_only per node
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"


@dataclass(frozen=True, slots=True)
class _Claims:
    """PodVolumeClaims: the pod's bound claims and its unbound WaitForFirstConsumer ones."""

    bound: tuple[PersistentVolumeClaim, ...]
    delayed: tuple[PersistentVolumeClaim, ...]


class _Failure(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def labels_only(node: Node) -> Node:
    """The node as CheckNodeAffinity sees it: its labels only (no name for matchFields)."""
    return Node(name="", labels=node.labels)


def check_node_affinity(pv: PersistentVolume, bare: Node) -> bool:
    """volume.CheckNodeAffinity: the PV's required terms match the labels of ``bare``, a
    node's labels_only copy."""
    if pv.node_affinity is None:
        return True
    return matches_node_selector_terms(pv.node_affinity, bare)


def _bound_to_claim(pv: PersistentVolume, pvc: PersistentVolumeClaim) -> bool:
    """IsVolumeBoundToClaim: the claimRef names the claim (and its UID, when set)."""
    if not pv.has_claim_ref:
        return False
    if pv.claim_name != pvc.name or pv.claim_namespace != pvc.namespace:
        return False
    return not pv.claim_uid or pv.claim_uid == pvc.uid


def find_matching_volume(
    pvc: PersistentVolumeClaim,
    volumes: Sequence[PersistentVolume],
    bare: Node,
    excluded: set[str],
) -> PersistentVolume | None:
    """volume.FindMatchingVolume on the scheduler's path (delayBinding, a node): the volume
    pre-bound to the claim if its node affinity admits the node, else the smallest available
    volume of the claim's class that is large enough, of the claim's volume mode, matching
    its selector, its access modes and the node. With the VolumeAttributesClass gate on
    (1.35's default), a volume whose spec.volumeAttributesClassName differs from the
    claim's is passed over, a pre-bound one too (the names are compared; the
    VolumeAttributesClass objects are not read)."""
    requested = pvc.request or 0
    smallest: PersistentVolume | None = None
    for pv in volumes:
        if pv.name in excluded:
            continue
        if pv.has_claim_ref and not _bound_to_claim(pv, pvc):
            continue
        capacity = pv.capacity or 0
        if capacity < requested:
            continue
        if (pv.volume_mode or "Filesystem") != (pvc.volume_mode or "Filesystem"):
            continue
        if pv.volume_attributes_class != pvc.volume_attributes_class:
            continue  # the VolumeAttributesClass gate is on (GA): names must be equal
        if pv.deleting:
            continue
        affinity_ok = check_node_affinity(pv, bare)
        if _bound_to_claim(pv, pvc):
            return pv if affinity_ok else None
        if pv.phase != "Available":
            continue
        if pvc.selector is not None and not selector_matches(pvc.selector, pv.labels):
            continue
        if pv.storage_class != pvc.storage_class:
            continue
        if not affinity_ok:
            continue
        if not all(mode in pv.access_modes for mode in pvc.access_modes):
            continue
        if smallest is None or (smallest.capacity or 0) > capacity:
            smallest = pv
    return smallest


def _topology_matches(terms: Sequence[TopologySelectorTerm], labels: dict[str, str]) -> bool:
    """v1helper.MatchTopologySelectorTerms: no terms match everything; terms are ORed, an
    empty term selects nothing, a term's requirements (key In values) are ANDed."""
    if not terms:
        return True
    for term in terms:
        reqs = term.match_label_expressions
        if not reqs:
            continue
        if all(req.values and labels.get(req.key) in req.values for req in reqs):
            return True
    return False


class VolumeBinding(PreFilterPlugin, KeepsVerdict, PreScorePlugin, ScorePlugin, ReadsPodVolumes):
    name = "VolumeBinding"

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        """Skip for a pod without claims; reject a pod whose claims are missing, lost, being
        deleted or unbound with Immediate binding. No PreFilterResult: the 1.35 scheduler
        filters every node for a bound local volume (observed with its framework)."""
        storage = state.view.storage if state.view is not None else Storage()
        try:
            pvcs = self._pod_claims(state, storage)
        except _Failure as failure:
            return None, Status(failure.code, (failure.message,), self.name)
        if not pvcs:
            return None, SKIPPED
        claims, immediate = self._pod_volume_claims(storage, pvcs)
        if immediate:
            return None, Status(UNRESOLVABLE, (UNBOUND_IMMEDIATE,), self.name)
        state.write(self.name, claims)
        return None, OK

    @staticmethod
    def _pod_claims(state: CycleState, storage: Storage) -> list[PersistentVolumeClaim]:
        """podHasPVCs: the pod's claims in volume order; raises for one that cannot be
        used."""
        pod = state.pod
        found = []
        for v in pod.volumes:
            name = claim_name(pod, v)
            if name is None:
                continue
            pvc = storage.pvc(pod.namespace, name)
            if pvc is None:
                if v.source == "ephemeral":
                    raise _Failure(
                        UNRESOLVABLE,
                        "waiting for ephemeral volume controller to create the "
                        f'persistentvolumeclaim "{name}"',
                    )
                raise _Failure(UNRESOLVABLE, pvc_not_found(name))
            if pvc.phase == "Lost":
                raise _Failure(
                    UNRESOLVABLE,
                    f'persistentvolumeclaim "{pvc.name}" bound to non-existent '
                    f'persistentvolume "{pvc.volume_name}"',
                )
            if pvc.deleting:
                raise _Failure(UNRESOLVABLE, f'persistentvolumeclaim "{pvc.name}" is being deleted')
            if v.source == "ephemeral":
                problem = ephemeral_owner_error(pod, pvc)
                if problem is not None:
                    raise _Failure(UNRESOLVABLE, problem)
            found.append(pvc)
        return found

    def _pod_volume_claims(
        self, storage: Storage, pvcs: Sequence[PersistentVolumeClaim]
    ) -> tuple[_Claims, bool]:
        """GetPodVolumeClaims: bound claims (volumeName and bind-completed), unbound claims
        of a WaitForFirstConsumer class without a volumeName, and whether any other claim is
        unbound (Immediate binding, or pre-bound to a volume not yet bound)."""
        bound: list[PersistentVolumeClaim] = []
        delayed: list[PersistentVolumeClaim] = []
        immediate = False
        for pvc in pvcs:
            if pvc.volume_name and pvc.bind_completed:
                bound.append(pvc)
                continue
            if self._delay_binding(storage, pvc) and not pvc.volume_name:
                delayed.append(pvc)
            else:
                immediate = True
        return _Claims(tuple(bound), tuple(delayed)), immediate

    @staticmethod
    def _delay_binding(storage: Storage, pvc: PersistentVolumeClaim) -> bool:
        """IsDelayBindingMode: the claim's class exists and binds WaitForFirstConsumer."""
        if not pvc.storage_class:
            return False
        sc = storage.classes.get(pvc.storage_class)
        return sc is not None and sc.volume_binding_mode == "WaitForFirstConsumer"

    def keeps_verdict(self, state: CycleState, ni: NodeInfo, victims: Sequence[PodInfo]) -> bool:
        """Always: the filter reads the pod's claims, the volumes and the node, never the
        node's pods (preemption's fast path asks, see Framework.reprieve_on_sums_at)."""
        return True

    def filter(self, state: CycleState, ni: NodeInfo, ns: object) -> Status | None:
        claims = state.read(self.name)
        if claims is None:
            return prefilter_state_missing(self.name)
        storage = state.view.storage if state.view is not None else Storage()
        bare_nodes = state.view.derived(_BARE_NODES, dict) if state.view is not None else {}
        bare = bare_nodes.get(ni.name)
        if bare is None:
            bare = bare_nodes[ni.name] = labels_only(ni.node)
        try:
            reasons = self._find_pod_volumes(storage, claims, ni.node, bare)
        except _Failure as failure:
            return Status(failure.code, (failure.message,), self.name)
        if reasons:
            return Status(UNRESOLVABLE, tuple(reasons), self.name)
        return None

    def _find_pod_volumes(
        self, storage: Storage, claims: _Claims, node: Node, bare: Node
    ) -> list[str]:
        """FindPodVolumes: the conflict reasons, in upstream's order (``bare``: the node's
        labels_only copy)."""
        bound_ok = unbound_ok = enough_space = pvs_found = True
        if claims.bound:
            bound_ok, pvs_found = self._check_bound_claims(storage, claims.bound, node, bare)
        if claims.delayed:
            unbound_ok, enough_space = self._check_unbound_claims(
                storage, claims.delayed, node, bare
            )
        reasons = []
        if not bound_ok:
            if self.settings.volume_conflict_names_pv_affinity:
                reasons.append(ERR_REASON_NODE_CONFLICT)
            else:
                reasons.append(ERR_REASON_NODE_CONFLICT_V132)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not enough_space:
            reasons.append(ERR_REASON_NOT_ENOUGH_SPACE)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return reasons

    @staticmethod
    def _check_bound_claims(
        storage: Storage, bound: Sequence[PersistentVolumeClaim], node: Node, bare: Node
    ) -> tuple[bool, bool]:
        """checkBoundClaims: (node affinity satisfied, every volume found). A migrated
        in-tree volume's node affinity is the translated one (tryTranslatePVToCSI) where
        the node's CSINode lists its plugin as migrated; a volume the translator refuses
        fails the filter with an Error, as upstream's."""
        for pvc in bound:
            pv = storage.pvs.get(pvc.volume_name)
            if pv is None:
                return True, False
            affinity = pv.node_affinity
            migration = MIGRATIONS.get(pv.in_tree) if not pv.csi_driver else None
            csi_node = storage.csi_nodes.get(node.name) if migration is not None else None
            if csi_node is not None and migration.plugin in csi_node.migrated_plugins:
                try:
                    pv_handle(pv)  # the translator's own checks (zones, volume id)
                except TranslationError as exc:
                    raise _Failure(ERROR, f"could not translate pv: {exc}") from None
                affinity = translated_node_affinity(pv, migration)
            if affinity is not None and not matches_node_selector_terms(affinity, bare):
                return False, True
        return True, True

    def _check_unbound_claims(
        self,
        storage: Storage,
        delayed: Sequence[PersistentVolumeClaim],
        node: Node,
        bare: Node,
    ) -> tuple[bool, bool]:
        """The unbound part of FindPodVolumes: claims with a selected node only fit it;
        the others are matched to volumes, smallest request first, and those left over
        must be provisionable here. Returns (volumes satisfied, enough storage)."""
        to_match = []
        to_provision = []
        for pvc in delayed:
            if pvc.selected_node is not None:
                if pvc.selected_node != node.name:
                    return False, True
                to_provision.append(pvc)
            else:
                to_match.append(pvc)
        satisfied = True
        if to_match:
            chosen: set[str] = set()
            for pvc in sorted(to_match, key=lambda c: c.request or 0):
                pv = find_matching_volume(
                    pvc, storage.pvs_of_class(pvc.storage_class), bare, chosen
                )
                if pv is None:
                    to_provision.append(pvc)
                    satisfied = False
                else:
                    chosen.add(pv.name)
        if to_provision:
            return self._check_volume_provisions(storage, to_provision, node)
        return satisfied, True

    @staticmethod
    def _check_volume_provisions(
        storage: Storage, claims: Sequence[PersistentVolumeClaim], node: Node
    ) -> tuple[bool, bool]:
        """checkVolumeProvisions: each claim's class must provision, allow the node's
        topology and, for a CSI driver with capacity tracking, have a CSIStorageCapacity
        the node can reach that is large enough. The claims are WaitForFirstConsumer ones,
        so their class exists (upstream's errors for a missing class cannot arise)."""
        for pvc in claims:
            sc = storage.classes[pvc.storage_class]
            if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
                return False, True
            if not _topology_matches(sc.allowed_topologies, node.labels):
                return False, True
            if not _has_enough_capacity(storage, sc.provisioner, pvc, node):
                return True, False
        return True, True

    def pre_score(self, state: CycleState, nodes: Sequence[NodeInfo]) -> Status:
        """PreScore: with the StorageCapacityScoring gate on (1.37) the Score runs; without
        it, Skip. Not upstream: a pod without claims skips too. Upstream's Score runs for
        it and gives 0 on every node, which changes no total; the entry is left out so
        that the scores of every placement without volumes read as in 1.36 (an impact of
        1.36 -> 1.37 would otherwise count each of them as changed)."""
        if not self.settings.storage_capacity_scoring or state.read(self.name) is None:
            return SKIPPED
        return OK

    def score(self, state: CycleState, ni: NodeInfo, ns: object) -> int:
        """Score: per storage class, what the pod's new volumes would ask of the node
        against what the class has there, scored by the shape and averaged over the
        classes. The volumes the pod would bind statically (their class, the claims'
        requests summed against the volumes' capacities summed) if there are any; else
        the ones it would provision, for a driver with capacity tracking (the claims'
        requests summed against the node's CSIStorageCapacity of the class). Recomputed
        for the node as the Filter found it (upstream keeps the Filter's podVolumes)."""
        claims = state.read(self.name)
        if claims is None or not claims.delayed:
            return 0
        storage = state.view.storage if state.view is not None else Storage()
        bare = labels_only(ni.node)
        static, provisions = _new_volumes(storage, claims.delayed, ni.node, bare)
        classes: dict[str, list[int]] = {}
        if static:
            for pvc, pv in static:
                use = classes.setdefault(pv.storage_class, [0, 0])
                use[0] += pvc.request or 0
                use[1] += pv.capacity or 0
        else:
            for pvc in provisions:
                sc = storage.classes[pvc.storage_class]
                found, capacity = _enough_capacity(storage, sc.provisioner, pvc, ni.node)
                if not found or capacity is None:
                    continue
                use = classes.setdefault(pvc.storage_class, [0, 0])
                use[1] = capacity.capacity or 0  # set, not added: one pool per class
                use[0] += pvc.request or 0
        return capacity_score(classes.values(), self._shape())

    def _shape(self) -> list[tuple[int, int]]:
        """VolumeBindingArgs' shape (v1 default: (0, 10), (100, 0)), each score scaled from
        MaxCustomPriorityScore (10) to MaxNodeScore (100)."""
        shape = getattr(self.args, "shape", None) or ((0, 10), (100, 0))
        return [(u, s * 10) for u, s in shape]


def capacity_score(classes, shape: Sequence[tuple[int, int]]) -> int:
    """volumebinding buildScorerFunction: each class's (requested, capacity) scored by the
    broken-linear shape at requested * 100 / capacity (at 100 when the capacity is 0 or
    exceeded), the mean over the classes rounded half away from zero; 0 without classes."""
    f = broken_linear_function(shape)
    total = count = 0
    for requested, capacity in classes:
        total += f(100 if capacity == 0 or requested > capacity else requested * 100 // capacity)
        count += 1
    if count == 0:
        return 0
    return (2 * total + count) // (2 * count)  # non-negative: math.Round of total / count


def _new_volumes(
    storage: Storage, delayed: Sequence[PersistentVolumeClaim], node: Node, bare: Node
) -> tuple[list[tuple[PersistentVolumeClaim, PersistentVolume]], list[PersistentVolumeClaim]]:
    """The unbound part of FindPodVolumes on a node that passed it: the claims bound to
    available volumes (static bindings, matched smallest request first) and the claims to
    provision (those with a selected node and those no volume matched)."""
    static: list[tuple[PersistentVolumeClaim, PersistentVolume]] = []
    provisions = [pvc for pvc in delayed if pvc.selected_node is not None]
    chosen: set[str] = set()
    for pvc in sorted(
        (c for c in delayed if c.selected_node is None), key=lambda c: c.request or 0
    ):
        pv = find_matching_volume(pvc, storage.pvs_of_class(pvc.storage_class), bare, chosen)
        if pv is None:
            provisions.append(pvc)
        else:
            chosen.add(pv.name)
            static.append((pvc, pv))
    return static, provisions


def _has_enough_capacity(
    storage: Storage, provisioner: str, pvc: PersistentVolumeClaim, node: Node
) -> bool:
    """hasEnoughCapacity: see ``_enough_capacity``."""
    return _enough_capacity(storage, provisioner, pvc, node)[0]


def _enough_capacity(
    storage: Storage, provisioner: str, pvc: PersistentVolumeClaim, node: Node
) -> tuple[bool, CSIStorageCapacity | None]:
    """hasEnoughCapacity: a claim without a storage request, or a provisioner that is not
    a CSIDriver asking for capacity tracking, always fits (no capacity object); else the
    first CSIStorageCapacity of the class whose maximumVolumeSize (else capacity) holds
    the request and that selects the node by its nodeTopology (upstream takes the first
    its lister returns, in no set order; here the snapshot's order)."""
    if pvc.request is None:
        return True, None
    driver = storage.csi_drivers.get(provisioner)
    if driver is None or not driver.storage_capacity:
        return True, None
    for capacity in storage.capacities:
        if capacity.storage_class != pvc.storage_class:
            continue
        limit = (
            capacity.maximum_volume_size
            if capacity.maximum_volume_size is not None
            else capacity.capacity
        )
        if limit is None or limit < pvc.request:
            continue
        # nodeHasAccess: no nodeTopology means no access (a nil selector matches nothing)
        if selector_matches(capacity.node_topology, node.labels):
            return True, capacity
    return False, None
