"""The ``node-eviction-rate`` decision: zone states and rates, node taints and when, and when
taint-based eviction (or, in legacy mode, the node controller) removes each pod.

The result is exactly the contract's ``POST /v1/decisions/node-eviction-rate`` result. How the
controllers' state is approximated from one snapshot at ``now`` is documented in
``timeline.py``. Order is stable: zones in the order their
first node appears in the snapshot, nodes in snapshot order, pods by node (snapshot node
order) then in snapshot pod order.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from service.engine.nodelifecycle.clock import format_time, to_ns
from service.engine.nodelifecycle.config import NodeLifecycleConfig, config_from_dict
from service.engine.nodelifecycle.timeline import plan_evictions
from service.engine.objects import Cluster
from service.engine.refs import pod_ref
from service.engine.version import EngineSettings

__all__ = ["node_eviction_rate"]


def node_eviction_rate(
    cluster: Cluster,
    now: datetime | int,
    config: NodeLifecycleConfig | Mapping[str, Any] | None = None,
    *,
    settings: EngineSettings,
) -> dict:
    """What kube-controller-manager's node lifecycle controller and taint eviction controller
    would do on this snapshot at ``now`` (a datetime, or Unix nanoseconds).

    ``config`` is a NodeLifecycleConfig or the API's camelCase ``config`` object (Go duration
    strings); ConfigError (a ValueError naming the field) for values Verdict cannot use.
    ``settings``: the release, which names each pod's QoS class.
    """
    if config is None or isinstance(config, Mapping):
        config = config_from_dict(config or {})
    now_ns = now if isinstance(now, int) else to_ns(now)
    plan = plan_evictions(cluster, now_ns, config)
    formatted: dict[int, str] = {}

    def _time(ns: int | None) -> str | None:
        if ns is None:
            return None
        text = formatted.get(ns)
        if text is None:
            text = formatted[ns] = format_time(ns)
        return text

    return {
        "zones": [
            {
                "key": zone.key,
                "region": zone.region,
                "zone": zone.zone,
                "state": zone.state,
                "nodes": zone.nodes,
                "notReadyNodes": zone.not_ready,
                "evictionRate": zone.rate,
            }
            for zone in plan.zones
        ],
        "allZonesFullyDisrupted": plan.all_fully_disrupted,
        "nodes": [
            {
                "nodeName": node.node.name,
                "zone": node.state.zone,
                "ready": node.ready,
                "taint": node.wanted,
                "taintedAt": _time(node.tainted_at),
                "slotGroup": node.slot_group,
            }
            for node in plan.nodes
        ],
        "pods": [
            {
                "pod": pod_ref(pod.pod, settings=settings),
                "evictAt": _time(pod.evict_at),
                "reason": pod.reason,
            }
            for pod in plan.pods
        ],
    }
