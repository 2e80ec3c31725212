"""Loading tests/conformance/nodelifecycle.json and turning its inputs into engine objects."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path

import pytest

from service.engine.nodelifecycle.clock import SECOND, to_ns
from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.objects import Toleration

VECTORS = Path(__file__).resolve().parents[2] / "conformance" / "nodelifecycle.json"


@cache
def _groups() -> tuple[dict, ...]:
    return tuple(json.loads(VECTORS.read_text())["groups"])


def group(function: str) -> dict:
    matches = [g for g in _groups() if g["function"] == function]
    assert len(matches) == 1, function
    return matches[0]


def cases(function: str) -> list:
    """pytest params, one per case, id = case name."""
    return [pytest.param(c, id=c["name"]) for c in group(function)["cases"]]


def ns(text: str) -> int:
    return to_ns(datetime.fromisoformat(text.replace("Z", "+00:00")))


def config(raw: dict, **extra) -> NodeLifecycleConfig:
    """A case's ``config`` block as a NodeLifecycleConfig."""
    kwargs = dict(
        node_eviction_rate=raw["nodeEvictionRate"],
        secondary_node_eviction_rate=raw["secondaryNodeEvictionRate"],
        large_cluster_size_threshold=raw["largeClusterSizeThreshold"],
        unhealthy_zone_threshold=raw["unhealthyZoneThreshold"],
        node_monitor_grace_period_ns=raw["nodeMonitorGracePeriodSeconds"] * SECOND,
        node_startup_grace_period_ns=raw["nodeStartupGracePeriodSeconds"] * SECOND,
        node_monitor_period_ns=raw["nodeMonitorPeriodSeconds"] * SECOND,
        partial_disruption_qps_override=raw.get("partialDisruptionQPSOverride"),
        full_disruption_qps_override=raw.get("fullDisruptionQPSOverride"),
    )
    if "legacyPodEvictionTimeoutSeconds" in raw:
        kwargs["mode"] = "legacy"
        kwargs["pod_eviction_timeout_ns"] = raw["legacyPodEvictionTimeoutSeconds"] * SECOND
    kwargs.update(extra)
    return NodeLifecycleConfig(**kwargs)


def toleration(raw: dict) -> Toleration:
    return Toleration(
        key=raw.get("key", ""),
        operator=raw.get("operator", ""),
        value=raw.get("value", ""),
        effect=raw.get("effect", ""),
        toleration_seconds=raw.get("tolerationSeconds"),
    )


def toleration_dict(t: Toleration) -> dict:
    """A model Toleration back in the API's form (empty fields left out)."""
    out = {}
    for name, value in (
        ("key", t.key),
        ("operator", t.operator),
        ("value", t.value),
        ("effect", t.effect),
    ):
        if value:
            out[name] = value
    if t.toleration_seconds is not None:
        out["tolerationSeconds"] = t.toleration_seconds
    return out
