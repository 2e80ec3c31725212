"""Per-node and per-pod views of a snapshot (GET /v1/snapshots/{id}/nodes and /pods)."""

from __future__ import annotations

from service.engine.objects import Cluster, Node, Pod, ResourceList
from service.engine.qos import is_critical_pod, oom_score_adjusts
from service.engine.quantity import DECIMAL_SI, base_units_to_string
from service.engine.refs import pod_ref
from service.engine.resources import pod_limits, pod_requests
from service.engine.topology import zone_label

TERMINAL_PHASES = frozenset({"Succeeded", "Failed"})


def quantities(resources: ResourceList, formats: dict[str, str]) -> dict[str, str]:
    """Base-unit integers → canonical quantity strings, in the format first seen."""
    return {
        name: base_units_to_string(name, amount, formats.get(name, DECIMAL_SI))
        for name, amount in sorted(resources.items())
    }


def node_view(cluster: Cluster, node: Node) -> dict:
    """Requested = sum of the effective requests of the node's non-terminal pods."""
    requested: dict[str, int] = {}
    formats: dict[str, str] = {}
    pods = [p for p in cluster.pods_on(node.name) if p.phase not in TERMINAL_PHASES]
    for pod in pods:
        for name, amount in pod_requests(pod).items():
            requested[name] = requested.get(name, 0) + amount
            formats.setdefault(name, pod.formats.get(name, DECIMAL_SI))
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
        "allocatable": quantities(node.allocatable, node.formats),
        "requested": quantities(requested, formats),
        "podCount": len(pods),
    }


def pod_view(pod: Pod, node: Node | None) -> dict:
    """PodRef plus phase, criticality, effective requests/limits and OOM score adjust."""
    memory_capacity = node.capacity.get("memory") if node is not None else None
    return pod_ref(pod) | {
        "phase": pod.phase,
        "critical": is_critical_pod(pod),
        "requests": quantities(pod_requests(pod), pod.formats),
        "limits": quantities(pod_limits(pod), pod.formats),
        "oomScoreAdj": oom_score_adjusts(pod, memory_capacity) if memory_capacity else None,
    }
