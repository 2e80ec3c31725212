"""Shared helpers for the scheduler engine tests: conformance data and model builders."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from service.engine.objects import (
    Cluster,
    Container,
    ContainerPort,
    LabelSelector,
    Node,
    OwnerReference,
    Pod,
    PodDisruptionBudget,
    Snapshot,
    Taint,
    Toleration,
)
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance" / "scheduler.json"


def conformance_group(function_prefix: str) -> list[dict]:
    """The cases of the group whose ``function`` starts with ``function_prefix``."""
    data = json.loads(CONFORMANCE.read_text())
    groups = [g for g in data["groups"] if g["function"].startswith(function_prefix)]
    assert len(groups) == 1, (function_prefix, [g["function"] for g in groups])
    return groups[0]["cases"]


def cluster_of(*object_lists: list[dict]) -> Cluster:
    """A Cluster from Kubernetes JSON objects (ingest path, API defaulting applied)."""
    objects: list[dict] = []
    for items in object_lists:
        objects.extend(items or [])
    return Cluster(snapshot_from_objects(objects))


# --- direct model builders for hand-written cases ---

GI = 1024**3


def node(
    name: str,
    cpu: int = 4000,
    memory: int = 8 * GI,
    pods: int = 110,
    *,
    labels: dict[str, str] | None = None,
    taints: tuple[Taint, ...] = (),
    unschedulable: bool = False,
    extra: dict[str, int] | None = None,
) -> Node:
    alloc = {"cpu": cpu, "memory": memory, "pods": pods, **(extra or {})}
    return Node(
        name=name,
        labels=labels or {"kubernetes.io/hostname": name},
        taints=taints,
        unschedulable=unschedulable,
        capacity=dict(alloc),
        allocatable=alloc,
    )


def at(seconds: int) -> datetime:
    return datetime.fromtimestamp(seconds, tz=UTC)


def pod(
    name: str,
    cpu: int = 0,
    memory: int = 0,
    *,
    node: str = "",
    priority: int | None = None,
    namespace: str = "default",
    uid: str | None = None,
    labels: dict[str, str] | None = None,
    start: int | None = None,
    nominated: str = "",
    deleting: bool = False,
    host_ports: tuple[int, ...] = (),
    tolerations: tuple[Toleration, ...] = (),
    node_selector: dict[str, str] | None = None,
    owner: OwnerReference | None = None,
    preemption_policy: str | None = None,
    extra: dict[str, int] | None = None,
    phase: str = "",
    unmodelled: tuple[str, ...] = (),
) -> Pod:
    requests: dict[str, int] = {}
    if cpu:
        requests["cpu"] = cpu
    if memory:
        requests["memory"] = memory
    requests.update(extra or {})
    ports = tuple(ContainerPort(container_port=p, host_port=p) for p in host_ports)
    return Pod(
        namespace=namespace,
        name=name,
        uid=uid if uid is not None else f"uid-{namespace}-{name}",
        node_name=node,
        labels=labels or {},
        priority=priority,
        preemption_policy=preemption_policy,
        start_time=at(start) if start is not None else None,
        deletion_timestamp=at(10**9) if deleting else None,
        nominated_node_name=nominated,
        containers=(Container(name="c", requests=requests, ports=ports),),
        tolerations=tolerations,
        node_selector=node_selector or {},
        owner_references=(owner,) if owner else (),
        phase=phase or ("Running" if node else "Pending"),
        unmodelled=unmodelled,
    )


def pdb(
    name: str,
    match_labels: dict[str, str] | None,
    allowed: int,
    *,
    namespace: str = "default",
    disrupted: tuple[str, ...] = (),
) -> PodDisruptionBudget:
    return PodDisruptionBudget(
        namespace=namespace,
        name=name,
        selector=None if match_labels is None else LabelSelector(match_labels=match_labels),
        disruptions_allowed=allowed,
        disrupted_pods={p: at(0) for p in disrupted},
    )


def cluster(nodes: list[Node], pods: list[Pod], pdbs: list[PodDisruptionBudget] = ()) -> Cluster:
    return Cluster(Snapshot(nodes=tuple(nodes), pods=tuple(pods), pdbs=tuple(pdbs)))


def cycle(pod: Pod, view, fit_args=None, profile=None):
    """A Framework for ``profile`` (default: the default profile, NodeResourcesFit built with
    ``fit_args``) and a CycleState for ``pod`` on ``view``, PreFilter run."""
    from dataclasses import replace

    from service.engine.scheduler.profile import DEFAULT_PROFILE
    from service.engine.scheduler.runtime import Framework

    profile = profile or DEFAULT_PROFILE
    if fit_args is not None:
        profile = replace(profile, args={**profile.args, "NodeResourcesFit": fit_args})
    fwk = Framework(profile, settings=DEFAULT_SETTINGS)
    return fwk, fwk.cycle_state(pod, view)


def filter_statuses(nodes, pods, incoming, fit_args=None):
    """Each node's filter status for ``incoming``, nominated pods included (the two-pass
    RunFilterPluginsWithNominatedPods), on a cluster of ``nodes`` and ``pods``."""
    from service.engine.scheduler.nominated import prepare_nominated
    from service.engine.scheduler.snapshot import scheduler_view

    cl = cluster(nodes, pods)
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    fwk, ctx = cycle(incoming, view, fit_args)
    prepare_nominated(ctx, view)
    return {ni.name: fwk.run_filter_plugins_with_nominated(ctx, ni) for ni in view.nodes}
