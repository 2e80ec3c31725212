"""Kubelet pod admission on one node: the eviction manager's admit handler, the predicate
admit handler, and the critical pod admission handler behind it.

Mirrors, as of k8s 1.35:

* pkg/kubelet/eviction/eviction_manager.go ``managerImpl.Admit`` (registered first);
* pkg/kubelet/lifecycle/predicate.go ``predicateAdmitHandler.Admit`` and ``generalFilter``,
  which calls pkg/scheduler ``AdmissionCheck`` (NodeResourcesFit ``Fits``, NodeAffinity,
  NodeName, NodePorts) and adds the NoExecute taint check;
* pkg/kubelet/preemption ``HandleAdmissionFailure`` (see ``kubelet.preemption``).

The kubelet's handlers run in registration order and the first rejection wins, so a pod
rejected by the eviction manager or the OS checks is not fitted at all. Within the
general filter every failure is collected; the FIRST one gives the pod's rejection reason
and message.

Choices made for a snapshot (documented, deterministic):

* The kubelet is a Linux kubelet (``KUBELET_OS``).
* The node's pressure conditions are the node's ``MemoryPressure`` / ``DiskPressure`` /
  ``PIDPressure`` conditions with status True, in the node's condition order (the
  eviction manager keeps them in Go map order).
* Scalar resources (hugepages, extended, ...) are checked in name order (Go map order
  upstream). The node's other pods are taken in snapshot order (the kubelet's pod manager
  returns them in map order), which only matters for preemption tie-breaks.
* Not modelled: SupplementalGroupsPolicy=Strict (the model has neither the pod's security
  context nor the node's status.features), the re-fetch of the Node when node affinity is
  the only failure (the snapshot's node is the only node there is), the
  NotEvictPodOnKubeletRestart shortcut (irrelevant for a new pod), device-plugin resource
  updates, DRA-backed extended resources.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

from service.engine.kubelet.preemption import Requirement, handle_admission_failure
from service.engine.nodeaffinity import matches_node_selector_and_affinity
from service.engine.objects import Node, Pod, Taint
from service.engine.ports import HostPorts, wanted_host_ports
from service.engine.qos import BEST_EFFORT, get_pod_qos, is_critical_pod, is_static_pod
from service.engine.quantity import wrap_int64_values
from service.engine.resize import as_allocated, as_resized
from service.engine.resources import is_extended_resource_name, pod_requests
from service.engine.scheduler.plugins.noderesources.fit import fit_state, fits_request
from service.engine.tolerations import find_untolerated, tolerates_any
from service.engine.version import EngineSettings

__all__ = [
    "KUBELET_OS",
    "AdmissionResult",
    "AdmitRejection",
    "InsufficientResource",
    "PodAdmitAttributes",
    "PodRequestsMemo",
    "PredicateFailure",
    "active_pods",
    "admit",
    "eviction_admit",
    "fits_resources",
    "general_filter",
    "node_pressure_conditions",
    "reject_pod_admission_based_on_os_field",
    "reject_pod_admission_based_on_os_selector",
]

KUBELET_OS = "linux"
LABEL_OS = "kubernetes.io/os"

# Pod status reasons the kubelet sets on rejection (lifecycle/predicate.go, eviction/types.go).
POD_OS_SELECTOR_NODE_LABEL_DOES_NOT_MATCH = "PodOSSelectorNodeLabelDoesNotMatch"
POD_OS_NOT_SUPPORTED = "PodOSNotSupported"
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"
EVICTED = "Evicted"

# Predicate names and descriptions (scheduler plugin names and ErrReason texts).
NODE_AFFINITY = "NodeAffinity"
NODE_AFFINITY_DESC = "node(s) didn't match Pod's node affinity/selector"
NODE_NAME = "NodeName"
NODE_NAME_DESC = "node(s) didn't match the requested node name"
NODE_PORTS = "NodePorts"
NODE_PORTS_DESC = "node(s) didn't have free ports for the requested pod ports"
TAINT_TOLERATION = "TaintToleration"
TAINT_TOLERATION_DESC = "node(s) had taints that the pod didn't tolerate"

_PRESSURE_CONDITIONS = ("MemoryPressure", "DiskPressure", "PIDPressure")
_MEMORY_PRESSURE_TAINT = Taint(key="node.kubernetes.io/memory-pressure", effect="NoSchedule")
_NO_EXECUTE = frozenset({"NoExecute"})
_TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})
_OUT_OF = {
    "cpu": "OutOfcpu",
    "memory": "OutOfmemory",
    "ephemeral-storage": "OutOfephemeral-storage",
    "pods": "OutOfpods",
}


@dataclass(frozen=True, slots=True)
class InsufficientResource:
    """lifecycle.InsufficientResourceError (k8s 1.35). Amounts in base units."""

    resource: str
    requested: int
    used: int
    capacity: int
    is_resource: ClassVar[bool] = True

    @property
    def reason(self) -> str:
        """GetReason: "Insufficient cpu"."""
        return f"Insufficient {self.resource}"

    @property
    def message(self) -> str:
        """Error(): the text the kubelet puts in the rejection event and pod status."""
        return (
            f"Node didn't have enough resource: {self.resource}, requested: {self.requested}, "
            f"used: {self.used}, capacity: {self.capacity}"
        )

    @property
    def insufficient_amount(self) -> int:
        """GetInsufficientAmount: requested - (capacity - used)."""
        return self.requested - (self.capacity - self.used)

    @property
    def kubelet_reason(self) -> str:
        """The pod status reason: OutOfcpu, OutOfmemory, ..., OutOf<name>."""
        return _OUT_OF.get(self.resource) or f"OutOf{self.resource}"


@dataclass(frozen=True, slots=True)
class PredicateFailure:
    """lifecycle.PredicateFailureError (k8s 1.35)."""

    name: str
    desc: str
    is_resource: ClassVar[bool] = False

    @property
    def reason(self) -> str:
        """GetReason: the predicate description."""
        return self.desc

    @property
    def message(self) -> str:
        return f"Predicate {self.name} failed: {self.desc}"

    @property
    def kubelet_reason(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class AdmitRejection:
    """A whole admit handler's rejection (OS checks, eviction manager, preemption error):
    ``kubelet_reason`` and ``message`` are the PodAdmitResult's Reason and Message."""

    kubelet_reason: str
    message: str
    is_resource: ClassVar[bool] = False

    @property
    def reason(self) -> str:
        return self.message


Reason = InsufficientResource | PredicateFailure | AdmitRejection


@dataclass(frozen=True)
class AdmissionResult:
    """The kubelet's answer for one pod on one node.

    ``reasons``: every failure found by the handler that rejected (or, for a critical pod
    admitted after preemption, the resource failures that preemption cleared), in kubelet
    order. ``kubelet_reason`` / ``message``: the pod status reason and message of the
    rejection (None / "" when admitted). ``victims``: pods the critical pod admission
    handler kills first, in kill order. ``requirements``: what preemption had to free.
    """

    admitted: bool
    critical: bool
    reasons: list[Reason] = field(default_factory=list)
    kubelet_reason: str | None = None
    message: str = ""
    victims: list[Pod] = field(default_factory=list)
    requirements: list[Requirement] = field(default_factory=list)
    preemption_error: str | None = None

    @classmethod
    def answer(
        cls, critical: bool, reasons: list[Reason], rejection: Reason | None, **preemption
    ) -> AdmissionResult:
        """The result whose rejection (None: admitted) gives the pod status reason and
        message."""
        return cls(
            admitted=rejection is None,
            critical=critical,
            reasons=reasons,
            kubelet_reason=None if rejection is None else rejection.kubelet_reason,
            message="" if rejection is None else rejection.message,
            **preemption,
        )


# --- which pods count ------------------------------------------------------------------------


def active_pods(pods: Sequence[Pod]) -> list[Pod]:
    """Kubelet.filterOutInactivePods (k8s 1.35) as far as a snapshot shows it: pods bound to
    the node whose phase is not terminal (Succeeded / Failed). Terminating pods still count
    (their containers may still run); the kubelet's private pod-worker state is not in a
    snapshot."""
    return [p for p in pods if p.phase not in _TERMINAL_PHASES]


# --- eviction manager admission (E.9) ------------------------------------------------------


def node_pressure_conditions(node: Node) -> list[str]:
    """The eviction manager's current node conditions, read back from the node's status."""
    return [
        c.type for c in node.conditions if c.type in _PRESSURE_CONDITIONS and c.status == "True"
    ]


def eviction_admit(pod: Pod, node: Node, *, settings: EngineSettings) -> AdmitRejection | None:
    """eviction managerImpl.Admit (k8s 1.35): None when admitted.

    No pressure → admit; critical pods → admit. Under MemoryPressure alone, non-BestEffort
    pods are admitted, and BestEffort pods only when they tolerate the
    node.kubernetes.io/memory-pressure:NoSchedule taint. Otherwise (DiskPressure or
    PIDPressure present, or an intolerant BestEffort pod) reject with reason Evicted and
    "The node had condition: [<conditions>]. ".
    """
    conditions = node_pressure_conditions(node)
    if not conditions:
        return None
    if is_critical_pod(pod):
        return None
    if conditions == ["MemoryPressure"]:
        if get_pod_qos(pod, settings=settings) != BEST_EFFORT:
            return None
        if tolerates_any(pod.tolerations, _MEMORY_PRESSURE_TAINT):
            return None
    return AdmitRejection(EVICTED, f"The node had condition: [{' '.join(conditions)}]. ")


# --- predicate admit handler (D.2) ---------------------------------------------------------


def reject_pod_admission_based_on_os_selector(
    pod: Pod, node: Node, kubelet_os: str = KUBELET_OS
) -> bool:
    """rejectPodAdmissionBasedOnOSSelector (k8s 1.35): the pod's ``kubernetes.io/os`` label,
    when present, must equal the kubelet's OS (the node label is overridden by it)."""
    del node  # the node's own label is replaced by the kubelet's OS before comparing
    wanted = pod.labels.get(LABEL_OS)
    return wanted is not None and wanted != kubelet_os


def reject_pod_admission_based_on_os_field(pod: Pod, kubelet_os: str = KUBELET_OS) -> bool:
    """rejectPodAdmissionBasedOnOSField (k8s 1.35): ``spec.os.name``, when set, must equal
    the kubelet's OS."""
    return bool(pod.os_name) and pod.os_name != kubelet_os


def _fit_request(pod: Pod, node: Node, settings: EngineSettings) -> dict[str, int]:
    """The pod's request as NodeResourcesFit sees it in the kubelet: PodRequests (overhead
    included) after removeMissingExtendedResources (extended resources absent from node
    allocatable are dropped from the containers' requests; overhead is left alone)."""
    allocatable = node.allocatable
    missing = [
        name
        for c in pod.containers + pod.init_containers
        for name in c.requests
        if name not in allocatable and is_extended_resource_name(name)
    ]
    if not missing:
        return pod_requests(pod, settings=settings)
    request = pod_requests(pod, exclude_overhead=True, settings=settings)
    for name in missing:
        request.pop(name, None)
    for name, value in pod.overhead.items():
        request[name] = request.get(name, 0) + value
    return request


RequestsOf = Callable[[Pod], dict[str, int]]


def counted_requests(pod: Pod, settings: EngineSettings) -> dict[str, int]:
    """What one of the node's pods counts in NodeInfo.Requested (NewNodeInfo's PodRequests,
    overhead included). From v1.33 the allocation manager hands the admit handlers the pods
    as it allocated them (``getAllocatedPods``: the spec's requests replaced by
    ``allocatedResources``), and PodRequests then takes, per resource, the larger of that
    and the actuated requests (resize.py): a resize the kubelet has not allocated yet
    (pending, deferred) does not count."""
    return pod_requests(as_resized(as_allocated(pod, settings), settings), settings=settings)


# Sums a memo keeps: one per node of a 5,000-node snapshot, twice over. Replays of pods
# already on their node each sum another list (the node's pods minus that one); past the
# bound such sums are computed, not kept, so memory stays bounded.
MAX_KEPT_SUMS = 10_000


class PodRequestsMemo:
    """PodRequests of a snapshot's pods under one release's ``settings``, computed once per
    pod (by identity) and kept for the life of the snapshot: admission sums every other pod
    on the node, on every decision. The returned dicts must not be changed."""

    def __init__(self, settings: EngineSettings) -> None:
        self.settings = settings
        self._found: dict[int, tuple[Pod, dict[str, int]]] = {}
        # the pods are held with their sum: their ids stay their own
        self._sums: dict[tuple, tuple[tuple[Pod, ...], dict[str, int]]] = {}

    def __call__(self, pod: Pod) -> dict[str, int]:
        hit = self._found.get(id(pod))
        if hit is not None and hit[0] is pod:
            return hit[1]
        requests = counted_requests(pod, self.settings)
        self._found[id(pod)] = (pod, requests)  # the pod is held: its id stays its own
        return requests

    def used(self, pods: Sequence[Pod], names: tuple[str, ...]) -> dict[str, int]:
        """``summed_requests`` of ``pods``, computed once per list of pods (by identity, in
        order) and resource names: admission sums the same node's pods on every decision
        about it. A fresh dict each time (the caller may change it)."""
        key = (tuple(map(id, pods)), names)
        found = self._sums.get(key)
        if found is None:  # a stored key's pods are held, so no other pod has their ids
            found = (tuple(pods), summed_requests(pods, names, self))
            if len(self._sums) < MAX_KEPT_SUMS:
                self._sums[key] = found
        return dict(found[1])


def summed_requests(
    pods: Sequence[Pod], names: tuple[str, ...], requests_of: RequestsOf
) -> dict[str, int]:
    """NodeInfo.Requested of ``pods`` for the resources ``names``: each pod's requests
    (``requests_of``) added up, wrapping as Go's int64 ``+=`` does."""
    used = dict.fromkeys(names, 0)
    if not used:
        return used
    for pod in pods:
        requests = requests_of(pod)
        for name in names:
            value = requests.get(name)
            if value:
                used[name] += value
    wrap_int64_values(used)
    return used


@dataclass(frozen=True, slots=True)
class PodAdmitAttributes:
    """lifecycle.PodAdmitAttributes (k8s 1.35), what every admit handler is given: the pod
    and the node's other pods (``active_pods``); with the node the kubelet runs on, the
    engine settings, and a memo of the other pods' requests (``PodRequestsMemo``, made for
    the same settings)."""

    pod: Pod
    node: Node
    other_pods: Sequence[Pod]
    settings: EngineSettings
    requests_of: RequestsOf | None = None


def fits_resources(attrs: PodAdmitAttributes) -> list[InsufficientResource]:
    """noderesources.Fits as the kubelet calls it (k8s 1.35), after
    removeMissingExtendedResources: the scheduler's own ``fits_request`` on a node whose
    requested resources are the other pods' (PodRequests, overhead included), each shortfall
    turned into the kubelet's InsufficientResourceError."""
    pod, node, other_pods, settings = attrs.pod, attrs.node, attrs.other_pods, attrs.settings
    requests_of = attrs.requests_of
    if isinstance(requests_of, PodRequestsMemo) and requests_of.settings is not settings:
        requests_of = None  # another release's requests
    state = fit_state(_fit_request(pod, node, settings))
    names = tuple(dict.fromkeys(name for name, _ in state.checks))
    if isinstance(requests_of, PodRequestsMemo):
        used = requests_of.used(other_pods, names)
    else:
        used = summed_requests(
            other_pods, names, requests_of or (lambda other: counted_requests(other, settings))
        )
    return [
        InsufficientResource(f.resource_name, f.requested, f.used, f.capacity)
        for f in fits_request(state, node.allocatable, used, len(other_pods))
    ]


def _host_ports_conflict(pod: Pod, other_pods: Sequence[Pod], settings: EngineSettings) -> bool:
    """AdmissionCheck's nodeports.Fits over NewNodeInfo(other pods): the release's scheduler
    code, so sidecars' host ports count on both sides from v1.34 only (kubernetes#132040;
    v1.32.5 and v1.33.3 read ``spec.containers``)."""
    sidecars = settings.host_ports_of_sidecars
    if not wanted_host_ports(pod, sidecars=sidecars):
        return False
    return not HostPorts.of_pods(other_pods, sidecars=sidecars).fits(pod, sidecars=sidecars)


def general_filter(attrs: PodAdmitAttributes) -> list[InsufficientResource | PredicateFailure]:
    """lifecycle generalFilter (k8s 1.35) = scheduler AdmissionCheck with all failures
    (resources, NodeAffinity, NodeName, NodePorts) plus, except for static pods, an
    untolerated NoExecute taint (TaintToleration)."""
    pod, node = attrs.pod, attrs.node
    reasons: list[InsufficientResource | PredicateFailure] = list(fits_resources(attrs))
    if not matches_node_selector_and_affinity(pod, node):
        reasons.append(PredicateFailure(NODE_AFFINITY, NODE_AFFINITY_DESC))
    if pod.node_name and pod.node_name != node.name:
        reasons.append(PredicateFailure(NODE_NAME, NODE_NAME_DESC))
    if _host_ports_conflict(pod, attrs.other_pods, attrs.settings):
        reasons.append(PredicateFailure(NODE_PORTS, NODE_PORTS_DESC))
    if (
        node.taints
        and not is_static_pod(pod)
        and find_untolerated(node.taints, pod.tolerations, _NO_EXECUTE) is not None
    ):
        reasons.append(PredicateFailure(TAINT_TOLERATION, TAINT_TOLERATION_DESC))
    return reasons


def _handler_rejection(attrs: PodAdmitAttributes, kubelet_os: str) -> AdmitRejection | None:
    """The first rejection of the handlers before the general filter: the eviction
    manager, then the predicate handler's OS label and OS field checks."""
    pod = attrs.pod
    rejection = eviction_admit(pod, attrs.node, settings=attrs.settings)
    if rejection is None and reject_pod_admission_based_on_os_selector(pod, attrs.node, kubelet_os):
        rejection = AdmitRejection(
            POD_OS_SELECTOR_NODE_LABEL_DOES_NOT_MATCH,
            "Failed to admit pod as the `kubernetes.io/os` label doesn't match node label",
        )
    if rejection is None and reject_pod_admission_based_on_os_field(pod, kubelet_os):
        rejection = AdmitRejection(
            POD_OS_NOT_SUPPORTED, "Failed to admit pod as the OS field doesn't match node OS"
        )
    return rejection


def admit(attrs: PodAdmitAttributes, kubelet_os: str = KUBELET_OS) -> AdmissionResult:
    """The kubelet's admission of ``attrs.pod`` on ``attrs.node`` next to its other pods
    (the node's other active pods, see ``active_pods``), with critical-pod preemption.

    Eviction manager first, then the predicate handler: OS label, OS field, the general
    filter; failures go to the critical pod admission handler, which may clear resource
    failures by preempting pods. The first remaining failure is the rejection.
    """
    critical = is_critical_pod(attrs.pod)
    rejection = _handler_rejection(attrs, kubelet_os)
    if rejection is not None:
        return AdmissionResult.answer(critical, [rejection], rejection)
    reasons = general_filter(attrs)
    if not reasons:
        return AdmissionResult(admitted=True, critical=critical)
    outcome = handle_admission_failure(
        attrs.pod, reasons, attrs.other_pods, settings=attrs.settings
    )
    if outcome.error is not None:
        rejection = AdmitRejection(
            UNEXPECTED_ADMISSION_ERROR,
            "Unexpected error while attempting to recover from admission failure: "
            f"{outcome.error_message}",
        )
    elif outcome.reasons:
        rejection = outcome.reasons[0]
    return AdmissionResult.answer(
        critical,
        list(reasons),
        rejection,
        victims=outcome.victims,
        requirements=outcome.requirements,
        preemption_error=outcome.error_message,
    )
