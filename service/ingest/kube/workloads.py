"""Workloads: PodDisruptionBudgets, PriorityClasses, Namespaces, Services and the workload
controllers (ReplicaSet, StatefulSet, ReplicationController)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.engine import objects as m
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError
from service.ingest.kube.decode import require_name
from service.ingest.kube.selectors import label_selector, selector_requirements


def to_pdb(raw: wire.PodDisruptionBudget, prefix: str = "") -> m.PodDisruptionBudget:
    require_name(raw, "a PodDisruptionBudget", prefix)
    sel = raw.spec.selector
    selector = None
    if sel is not None:
        selector = m.LabelSelector(
            match_labels=sel.match_labels or {},
            match_expressions=selector_requirements(
                sel.match_expressions, m.LabelSelectorRequirement
            ),
        )
    return m.PodDisruptionBudget(
        namespace=raw.metadata.namespace or "default",
        name=raw.metadata.name,
        selector=selector,
        disruptions_allowed=raw.status.disruptions_allowed,
        disrupted_pods=raw.status.disrupted_pods or {},
        current_healthy=raw.status.current_healthy,
        desired_healthy=raw.status.desired_healthy,
        expected_pods=raw.status.expected_pods,
        generation=raw.metadata.generation,
        observed_generation=raw.status.observed_generation,
        unhealthy_pod_eviction_policy=raw.spec.unhealthy_pod_eviction_policy or "",
    )


def to_priority_class(raw: wire.PriorityClass, prefix: str = "") -> m.PriorityClass:
    require_name(raw, "a PriorityClass", prefix)
    return m.PriorityClass(
        name=raw.metadata.name,
        value=raw.value,
        global_default=raw.global_default,
        preemption_policy=raw.preemption_policy,
    )


def to_namespace(raw: wire.Namespace, prefix: str = "") -> m.Namespace:
    require_name(raw, "a Namespace", prefix)
    return m.Namespace(name=raw.metadata.name, labels=raw.metadata.labels or {})


def to_service(raw: wire.Service, prefix: str = "") -> m.Service:
    require_name(raw, "a Service", prefix)
    return m.Service(
        namespace=raw.metadata.namespace or "default",
        name=raw.metadata.name,
        selector=raw.spec.selector,
    )


def workload_converter(kind: str) -> Callable[[Any, str], m.WorkloadController]:
    """The converter of a ReplicaSet, StatefulSet or ReplicationController."""

    def convert(raw: Any, prefix: str = "") -> m.WorkloadController:
        require_name(raw, f"a {kind}", prefix)
        errors: list[FieldError] = []
        if kind == "ReplicationController":
            selector = m.LabelSelector(match_labels=raw.spec.selector or {})
        else:
            selector = label_selector(raw.spec.selector, "spec.selector", errors)
        if errors:
            raise IngestError(errors).prefixed(prefix)
        return m.WorkloadController(
            kind=kind,
            namespace=raw.metadata.namespace or "default",
            name=raw.metadata.name,
            selector=selector,
        )

    return convert
