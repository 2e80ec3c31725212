"""kubectl drain over a snapshot: cordon the nodes, then each node's pods through the
filters and the Eviction API, and the pending copies their controllers create.

Mirrors k8s.io/kubectl/pkg/cmd/drain (v1.35) ``RunDrain``: every node is cordoned first
(``spec.unschedulable``); then node by node, ``GetPodsForDeletion`` (filters.py) lists the
node's pods (every namespace, in the API's order: namespace, then name); if any pod is an
error, the node's drain fails and no pod of it is evicted; otherwise each pod to delete is
evicted (eviction_api.py; ``--disable-eviction``: deleted, budgets bypassed). kubectl evicts
a node's pods concurrently, so which of two pods under one budget gets its last disruption
is a race upstream; Verdict evicts them in list order and says so. A refused eviction (429)
is retried by kubectl every 5 s until ``--timeout`` (default: forever): in one snapshot the
budget does not change, so the pod is ``blocked`` and the node is not drained. When a node's
drain fails, kubectl stops there (the later nodes stay cordoned, undrained) unless
``--ignore-errors``.

The result carries the cordoned cluster (the drained nodes unschedulable, the deleted pods
gone) and the recreated pods (recreation.py) for the scheduling queue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import msgspec

from service.engine.drain.eviction_api import Budgets, EvictionAnswer, evict
from service.engine.drain.filters import DrainOptions, PodDeleteStatus, pod_delete_status
from service.engine.drain.recreation import recreated_copy, recreation_of
from service.engine.objects import Cluster, Pod, Snapshot

__all__ = ["DrainPlan", "NodeDrain", "PodFate", "drain_nodes"]

EVICTED, BLOCKED, KEPT = "evicted", "blocked", "kept"


@dataclass(slots=True)
class PodFate:
    """What the drain does to one pod: ``outcome`` evicted | blocked | kept, the rule or
    API answer behind it (``reason``, ``message``), a filter's warning, the Eviction API's
    answer, and the pending copy its controller creates (``replacement``)."""

    pod: Pod
    outcome: str
    reason: str
    message: str = ""
    warning: str = ""
    eviction: EvictionAnswer | None = None
    recreated: bool = False
    recreation: str = ""
    replacement: Pod | None = None


@dataclass(slots=True)
class NodeDrain:
    """One node: its pods' fates in kubectl's order, whether kubectl's drain of it
    succeeded (``drained``), and the error kubectl prints when it does not."""

    node_name: str
    pods: list[PodFate] = field(default_factory=list)
    drained: bool = False
    error: str = ""
    reached: bool = True


@dataclass(slots=True)
class DrainPlan:
    """The drain: per node its pods' fates; the cluster after it (deferred: its snapshot is
    built only when read); the pods the drain deleted (``deleted``: evicted, in order) and
    the nodes it cordoned (``cordoned``), which the scheduling queue applies to the
    snapshot's own view (``run_queue(cluster, ..., cordoned=, deleted=)``)."""

    nodes: list[NodeDrain]
    cluster: Cluster  # cordoned, the deleted pods gone
    recreated: list[Pod]  # in eviction order
    stopped_at: str | None  # the node kubectl stops at (without --ignore-errors)
    budgets: dict[tuple[str, str], int]  # disruptionsAllowed left, for the budgets used
    deleted: list[Pod] = field(default_factory=list)
    cordoned: list[str] = field(default_factory=list)


def _api_order(pods: tuple[Pod, ...]) -> list[Pod]:
    """The pod list as the API server returns it: by namespace, then name."""
    return sorted(pods, key=lambda p: (p.namespace, p.name))


def _filter_errors(fates: list[tuple[Pod, PodDeleteStatus]]) -> str:
    """list.errors() as kubectl prints them: "cannot delete <message>: ns/name, ..." once
    per message (a message already saying "cannot delete" is not prefixed again), several in utilerrors' aggregate brackets. Upstream gathers them in a map,
    so their order is arbitrary; Verdict keeps the order first seen."""
    by_message: dict[str, list[str]] = {}
    for pod, status in fates:
        if status.is_error:
            by_message.setdefault(status.message, []).append(f"{pod.namespace}/{pod.name}")
    errs = [
        f"{'' if msg.lower().startswith('cannot delete') else 'cannot delete '}{msg}: "
        + ", ".join(names)
        for msg, names in by_message.items()
    ]
    return errs[0] if len(errs) == 1 else "[" + ", ".join(errs) + "]" if errs else ""


def _evict_node(
    node: NodeDrain,
    listed: list[tuple[Pod, PodDeleteStatus]],
    options: DrainOptions,
    budgets: Budgets,
    created_at: datetime | None,
) -> None:
    """The node's pods to delete, evicted (or deleted) in list order."""
    failures: list[str] = []
    for pod, status in listed:
        if not status.delete:
            node.pods.append(
                PodFate(pod, KEPT, status.rule, status.message, warning=status.message)
            )
            continue
        warning = status.message if status.reason == "Warning" else ""
        if options.disable_eviction:
            fate = PodFate(pod, EVICTED, "Deleted", "deleted (--disable-eviction)", warning)
        else:
            answer = evict(pod, budgets)
            if not answer.allowed:
                text = answer.message + (f" {answer.cause}" if answer.cause else "")
                node.pods.append(
                    PodFate(pod, BLOCKED, _blocked_reason(answer), text, warning, answer)
                )
                failures.append(_eviction_error(pod, answer, text))
                continue
            fate = PodFate(pod, EVICTED, "Evicted", "evicted", warning, answer)
        fate.recreated, fate.recreation = recreation_of(pod)
        if fate.recreated:
            fate.replacement = recreated_copy(pod, created_at)
        node.pods.append(fate)
    node.drained = not failures
    node.error = "; ".join(failures)


def _eviction_error(pod: Pod, answer: EvictionAnswer, text: str) -> str:
    """evictPods' message for a refused eviction: a 429 is retried every 5 s."""
    retry = " (will retry after 5s)" if answer.code == 429 else ""
    return f'error when evicting pods/"{pod.name}" -n "{pod.namespace}"{retry}: {text}'


def _blocked_reason(answer: EvictionAnswer) -> str:
    if answer.code == 429:
        return "DisruptionBudget"
    if answer.code == 500:
        return "MultipleDisruptionBudgets"
    return "Forbidden"


def _not_reached(node: NodeDrain, pods: list[Pod], stopped_at: str) -> None:
    node.reached = False
    node.error = f"not drained: kubectl drain stopped at node {stopped_at!r}"
    for pod in pods:
        node.pods.append(PodFate(pod, KEPT, "NotReached", node.error))


def drain_nodes(
    cluster: Cluster,
    node_names: list[str],
    options: DrainOptions,
    *,
    now: datetime | None = None,
    created_at: datetime | None = None,
) -> DrainPlan:
    """RunDrain over ``node_names`` (in the order given, as kubectl takes its arguments).
    ``now`` is read only by --skip-wait-for-delete-timeout; ``created_at`` stamps the
    recreated pods."""
    budgets = Budgets(cluster.snapshot.pdbs)
    nodes: list[NodeDrain] = []
    stopped_at: str | None = None
    for name in node_names:
        node = NodeDrain(name)
        nodes.append(node)
        pods = _api_order(cluster.pods_on(name))
        if stopped_at is not None:
            _not_reached(node, pods, stopped_at)
            continue
        listed = [(pod, pod_delete_status(pod, options, now)) for pod in pods]
        errors = _filter_errors(listed)
        if errors:
            node.error = errors
            for pod, status in listed:
                if status.delete:
                    reason, message = "NodeNotDrained", "not evicted: the node's drain failed"
                else:
                    reason, message = status.rule, status.message
                node.pods.append(PodFate(pod, KEPT, reason, message))
        else:
            _evict_node(node, listed, options, budgets, created_at)
        if not node.drained and not options.ignore_errors and len(node_names) > 1:
            stopped_at = name
    deleted = [f.pod for n in nodes for f in n.pods if f.outcome == EVICTED]
    recreated = [f.replacement for n in nodes for f in n.pods if f.replacement is not None]
    return DrainPlan(
        nodes=nodes,
        cluster=cordoned(cluster, set(node_names), {id(p) for p in deleted}),
        recreated=recreated,
        stopped_at=stopped_at,
        budgets=budgets.consumed(),
        deleted=deleted,
        cordoned=list(node_names),
    )


def cordoned(cluster: Cluster, names: set[str], deleted: set[int]) -> Cluster:
    """The cluster after the drain: ``names`` unschedulable (kubectl cordon), the pods whose
    ids are in ``deleted`` gone. Shares every other object with ``cluster``; deferred: the
    snapshot is built when first read (the queue does not read it)."""
    nodes = tuple(
        msgspec.structs.replace(n, unschedulable=True) if n.name in names else n
        for n in cluster.nodes
    )

    def load() -> Snapshot:
        snapshot = cluster.snapshot
        pods = snapshot.pods
        if deleted:
            pods = tuple(p for p in pods if id(p) not in deleted)
        return msgspec.structs.replace(snapshot, nodes=nodes, pods=pods)

    return Cluster.deferred(
        load,
        nodes=nodes,
        priority_classes=cluster.priority_classes,
        pod_count=cluster.pod_count - len(deleted),
    )
