"""DynamicResources (kubernetes/kubernetes pkg/scheduler/framework/plugins/dynamicresources,
v1.35): the pod's ResourceClaims resolved at PreFilter, the structured allocator run on each
node at Filter (service/engine/dra/allocator.py), and at Score the preference for earlier
``firstAvailable`` subrequests.

* PreFilter (``PreFilter``, ``foreachPodResourceClaim``, ``resourceclaim.Name``,
  ``IsForPod``, ``validateDeviceClass``): a claim named directly, or generated from a
  template and named in ``status.resourceClaimStatuses`` (then owned by the pod); a
  missing claim or class, a claim being deleted or made for another pod reject the pod
  everywhere. A claim already allocated keeps its devices (``CanBeReserved`` is always true
  in 1.35: a claim reserved for other pods can be shared) and limits the pod to its
  allocation's nodes; the others are allocated at Filter. A pod without claims: Skip.
* Filter: ``cannot allocate all claims`` when the allocator finds no solution on the node,
  ``resourceclaim not available on the node`` outside an allocated claim's nodes;
  both UnschedulableAndUnresolvable, so preemption never frees devices (evicting a pod
  does not deallocate its claims). An allocator error (a selector failing at run time,
  a request for all devices of an incomplete pool) is an Error: the cycle fails.
* Score (``computeScore``): per claim, 8 - index of the chosen subrequest for each
  firstAvailable request; normalized (DefaultNormalizeScore). No PreFilterExtensions.
  There is no PreScore upstream, so Score runs for every pod: for a pod without claims it
  is 0 on every node, which the batch (ScoresNodes) answers at once, and NormalizeScore
  then has nothing to scale.

What the allocator chose on each feasible node is what Reserve would persist:
``allocation_of`` gives it to the placement result.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from service.engine.dra.allocator import (
    AllocationError,
    Allocator,
    FailedOnNode,
    allocation_config,
)
from service.engine.nodeaffinity import matches_node_selector_terms
from service.engine.objects import (
    AllocatedDevice,
    DeviceAllocationConfiguration,
    NodeSelectorTerm,
    Pod,
    ResourceClaim,
)
from service.engine.scheduler.dra_manager import DraManager, claim_not_found
from service.engine.scheduler.framework import (
    ERROR,
    MAX_NODE_SCORE,
    OK,
    SKIPPED,
    UNRESOLVABLE,
    CycleState,
    IgnoresNodePods,
    NodeInfo,
    NodeInfoPods,
    PreFilterPlugin,
    PreFilterResult,
    ScoreError,
    ScoreExtensions,
    ScoresNodes,
    Status,
    prefilter_state_missing,
)

__all__ = [
    "FIRST_AVAILABLE_MAX_SIZE",
    "DynamicResources",
    "allocating",
    "allocation_config_of",
    "allocation_of",
]

# resourceapi.FirstAvailableDeviceRequestMaxSize
FIRST_AVAILABLE_MAX_SIZE = 8
CANNOT_ALLOCATE = "cannot allocate all claims"
NOT_AVAILABLE = "resourceclaim not available on the node"


@dataclass(slots=True)
class _State:
    """stateData: the pod's claims in spec order, where each allocated one is available, the
    allocator for the others, and per node the Filter's answer (a node's allocation does
    not depend on its pods, so preemption's dry runs reuse it)."""

    claims: list[ResourceClaim]
    available_on: list[tuple[NodeSelectorTerm, ...] | None]
    allocator: Allocator | None
    per_node: dict[str, Status | list[list[AllocatedDevice]]] = field(default_factory=dict)

    @property
    def to_allocate(self) -> list[ResourceClaim]:
        return [c for c in self.claims if c.allocation is None]


def _unresolvable(reason: str) -> Status:
    return Status(UNRESOLVABLE, (reason,), DynamicResources.name)


def pod_claims(pod: Pod, dra: DraManager) -> list[ResourceClaim] | str:
    """podResourceClaims: the pod's claims in spec order, or the reason PreFilter rejects it
    (resourceclaim.Name, the claim lister's NotFound, deletion, IsForPod)."""
    claims = []
    for ref in pod.resource_claims:
        must_check_owner = False
        if ref.resource_claim_name:
            name = ref.resource_claim_name
        elif ref.resource_claim_template_name:
            if ref.name not in pod.resource_claim_statuses:
                return f'pod "{pod.namespace}/{pod.name}": ResourceClaim not created yet'
            name = pod.resource_claim_statuses[ref.name]
            if not name:
                continue  # the status says no claim is needed
            must_check_owner = True
        else:
            return (
                f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{ref.name}": '
                "none of the supported fields are set"
            )
        claim = dra.claim(pod.namespace, name)
        if claim is None:
            return claim_not_found(pod.namespace, name)
        if claim.deletion_timestamp is not None:
            return f'resourceclaim "{claim.name}" is being deleted'
        if must_check_owner and (
            claim.namespace != pod.namespace or not pod.uid or claim.controller_uid != pod.uid
        ):
            return (
                f"ResourceClaim {claim.namespace}/{claim.name} was not created for pod "
                f"{pod.namespace}/{pod.name} (pod is not owner)"
            )
        claims.append(claim)
    return claims


def _missing_class(claim: ResourceClaim, dra: DraManager) -> str | None:
    """validateDeviceClass over an unallocated claim's requests and subrequests."""
    for request in claim.spec.requests:
        if request.exactly is not None:
            subs = [(request.name, request.exactly.device_class_name)]
        else:
            subs = [
                (f"{request.name}/{s.name}", s.device_class_name) for s in request.first_available
            ]
        for name, class_name in subs:
            if class_name not in dra.classes:
                return f"request {name}: device class {class_name} does not exist"
    return None


def allocating(state: CycleState) -> bool:
    """Whether Filter allocates devices for this pod (else ``allocation_of`` and
    ``allocation_config_of`` answer None on every node): asked once per cycle."""
    s = state.read(DynamicResources.name)
    return isinstance(s, _State) and s.allocator is not None


def allocation_of(state: CycleState, node_name: str) -> dict[str, list[AllocatedDevice]] | None:
    """The devices Filter allocated on ``node_name`` for the pod's unallocated claims, by
    claim name (None: nothing to allocate, or the node was not feasible)."""
    s = state.read(DynamicResources.name)
    if not isinstance(s, _State) or s.allocator is None:
        return None
    found = s.per_node.get(node_name)
    if not isinstance(found, list):
        return None
    return {c.name: list(r) for c, r in zip(s.to_allocate, found, strict=True)}


def allocation_config_of(
    state: CycleState, node_name: str
) -> dict[str, list[DeviceAllocationConfiguration]] | None:
    """The configuration each claim's allocation on ``node_name`` carries (the claims that
    carry some), as Reserve would write it with the devices (None: nothing allocated)."""
    s = state.read(DynamicResources.name)
    if not isinstance(s, _State) or s.allocator is None:
        return None
    found = s.per_node.get(node_name)
    if not isinstance(found, list):
        return None
    classes = s.allocator.classes
    out = {}
    for claim, devices in zip(s.to_allocate, found, strict=True):
        config = allocation_config(claim, devices, classes)
        if config:
            out[claim.name] = config
    return out or None


class DynamicResources(IgnoresNodePods, PreFilterPlugin, ScoreExtensions, ScoresNodes):
    name = "DynamicResources"

    def pre_filter(self, state: CycleState, nodes: Sequence[NodeInfo]) -> PreFilterResult:
        dra = state.view.dra if state.view is not None else DraManager()
        claims = pod_claims(state.pod, dra)
        if isinstance(claims, str):
            state.write(self.name, _State([], [], None))
            return None, _unresolvable(claims)
        if not claims:
            state.write(self.name, _State([], [], None))
            return None, SKIPPED
        available_on: list[tuple[NodeSelectorTerm, ...] | None] = []
        to_allocate = 0
        for claim in claims:
            available_on.append(
                claim.allocation_node_selector if claim.allocation is not None else None
            )
            if claim.allocation is None:
                to_allocate += 1
                if reason := _missing_class(claim, dra):
                    state.write(self.name, _State([], [], None))
                    return None, _unresolvable(reason)
        allocator = None
        if to_allocate:
            allocator = Allocator(
                dra.allocated, dra.classes, dra.candidates, dra.pool_slices, dra.matcher
            )
        state.write(self.name, _State(claims, available_on, allocator))
        return None, OK

    def filter(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> Status | None:
        s = state.read(self.name)
        if s is None:
            return prefilter_state_missing(self.name)
        if not s.claims:
            return None
        found = s.per_node.get(ni.name)
        if found is None:
            found = s.per_node[ni.name] = self._filter(s, ni)
        return found if isinstance(found, Status) else None

    def _filter(self, s: _State, ni: NodeInfo) -> Status | list[list[AllocatedDevice]]:
        node = ni.node
        unavailable = any(
            terms is not None and not matches_node_selector_terms(terms, node)
            for terms in s.available_on
        )
        results: list[list[AllocatedDevice]] = []
        if s.allocator is not None:
            try:
                allocated = s.allocator.allocate(node, s.to_allocate)
            except FailedOnNode as exc:
                return _unresolvable(str(exc))
            except AllocationError as exc:
                return Status(ERROR, (str(exc),), self.name)
            if allocated is None:
                return _unresolvable(CANNOT_ALLOCATE)
            results = allocated
        if unavailable:
            return _unresolvable(NOT_AVAILABLE)
        return results

    def score(self, state: CycleState, ni: NodeInfo, ns: NodeInfoPods) -> int:
        """computeScore over the pod's claims (all of them, indexed like the allocation
        results of those allocated here, as upstream does)."""
        s = state.read(self.name)
        if s is None or not s.claims:
            return 0
        found = s.per_node.get(ni.name)
        if not isinstance(found, list) or s.allocator is None:
            return 0
        total = 0
        for i, claim in enumerate(s.claims):
            if i >= len(found):
                raise ScoreError(
                    f"number of allocations {len(found)} is smaller than number of claims"
                )
            chosen = {r.request for r in found[i] if r.request.count("/") == 1}
            for request in claim.spec.requests:
                if request.exactly is not None:
                    continue
                for j, sub in enumerate(request.first_available):
                    if f"{request.name}/{sub.name}" in chosen:
                        total += FIRST_AVAILABLE_MAX_SIZE - j
        return total

    def score_nodes(self, state: CycleState, nodes: Sequence[NodeInfo]) -> list[int] | np.ndarray:
        """0 on every node (an int64 column) for a pod without claims (or without the
        PreFilter state)."""
        s = state.read(self.name)
        if s is None or not s.claims:
            return np.zeros(len(nodes), np.int64)
        return [self.score(state, ni, ni) for ni in nodes]

    def normalize_score(
        self, state: CycleState, nodes: Sequence[NodeInfo], scores: list[int]
    ) -> None:
        """helper.DefaultNormalizeScore(MaxNodeScore, reverse=false). A pod without claims
        scores 0 everywhere: nothing to scale, and the scores are not read."""
        s = state.read(self.name)
        if s is None or not s.claims:
            return
        top = max(scores, default=0)
        if top == 0:
            return
        for i, value in enumerate(scores):
            scores[i] = MAX_NODE_SCORE * value // top
