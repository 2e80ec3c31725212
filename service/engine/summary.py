"""Per-node and per-pod views of a snapshot (GET /v1/snapshots/{id}/nodes and /pods)."""

from __future__ import annotations

from service.engine.objects import Cluster, Node, Pod
from service.engine.qos import is_critical_pod, oom_score_adjusts
from service.engine.refs import pod_ref
from service.engine.resources import exact_list, exact_pod_limits, exact_pod_requests
from service.engine.topology import zone_label
from service.engine.version import EngineSettings

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def quantities(resources: dict) -> dict[str, str]:
    """Exact Quantities → their String(), by resource name."""
    return {name: str(q) for name, q in sorted(resources.items())}


def node_view(cluster: Cluster, node: Node, *, settings: EngineSettings) -> dict:
    """Requested = sum of the effective requests of the node's non-terminal pods, added in
    exact Quantities (Quantity.Add) in pod order."""
    requested: dict = {}
    pods = [p for p in cluster.pods_on(node.name) if p.phase not in TERMINAL_PHASES]
    for pod in pods:
        for name, q in exact_pod_requests(pod, settings=settings).items():
            old = requested.get(name)
            requested[name] = q if old is None else old + q
    ready = node.condition("Ready")
    return {
        "name": node.name,
        "zone": zone_label(node.labels),
        "ready": ready.status if ready else "Unknown",
        "unschedulable": node.unschedulable,
        "taints": [
            {"key": t.key, "value": t.value, "effect": t.effect}
            | (
                {"timeAdded": t.time_added.isoformat().replace("+00:00", "Z")}
                if t.time_added
                else {}
            )
            for t in node.taints
        ],
        "allocatable": quantities(
            exact_list(node.allocatable, node.allocatable_given, node.formats)
        ),
        "requested": quantities(requested),
        "podCount": len(pods),
    }


def pod_view(pod: Pod, node: Node | None, *, settings: EngineSettings) -> dict:
    """PodRef plus phase, criticality, effective requests/limits and OOM score adjust."""
    memory_capacity = node.capacity.get("memory") if node is not None else None
    return pod_ref(pod, settings=settings) | {
        "phase": pod.phase,
        "critical": is_critical_pod(pod),
        "requests": quantities(exact_pod_requests(pod, settings=settings)),
        "limits": quantities(exact_pod_limits(pod, settings=settings)),
        "oomScoreAdj": oom_score_adjusts(pod, memory_capacity, settings=settings)
        if memory_capacity
        else None,
    }
