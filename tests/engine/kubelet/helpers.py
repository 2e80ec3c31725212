"""Shared helpers for the kubelet eviction/allocatable tests: conformance data and builders."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path

import pytest

from service.engine.kubelet.eviction_config import (
    Threshold,
    ThresholdValue,
    _f32,
    parse_go_duration,
)
from service.engine.objects import NodeStats
from service.engine.quantity import parse_quantity
from service.ingest import wire
from service.ingest.kube import convert_object, node_stats

CONFORMANCE = Path(__file__).resolve().parents[2] / "conformance" / "kubelet.json"
NOW = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)


@cache
def _groups() -> dict[str, list]:
    data = json.loads(CONFORMANCE.read_text())
    return {g["function"]: g["cases"] for g in data["groups"]}


def cases(function: str) -> list:
    """Every case of a conformance group as pytest params (input, expected), id = name."""
    group = _groups()[function]
    assert group, function
    return [pytest.param(c["input"], c["expected"], id=c["name"]) for c in group]


def group_names() -> list[str]:
    return list(_groups())


def value_from_case(value: dict | None) -> ThresholdValue:
    """{quantity: "1Gi"} | {percentage: 0.1} | {quantity: null, percentage: 0} | null."""
    if value is None:
        return ThresholdValue()
    if value.get("quantity") is not None:
        return ThresholdValue(quantity=parse_quantity(value["quantity"]))
    return ThresholdValue(percentage=_f32(float(value.get("percentage") or 0)))


def threshold_from_case(case: dict) -> Threshold:
    min_reclaim = case.get("minReclaim")
    return Threshold(
        signal=case["signal"],
        operator=case.get("operator") or "LessThan",
        value=value_from_case(case.get("value")),
        grace_period=parse_go_duration(case.get("gracePeriod") or "0s"),
        min_reclaim=value_from_case(min_reclaim) if min_reclaim is not None else None,
    )


def threshold_view(t: Threshold) -> tuple:
    """A hashable, comparable description of a threshold (for set comparisons)."""

    def value(v: ThresholdValue | None):
        if v is None:
            return None
        if v.quantity is not None:
            return ("q", v.quantity.value)
        return ("p", v.percentage)

    return (t.signal, t.operator, value(t.value), t.grace_period, value(t.min_reclaim))


def summary_to_stats(summary: dict, node_name: str = "node-1") -> NodeStats:
    """A kubelet Summary API object → the model NodeStats (through the ingest edge)."""
    return node_stats(node_name, convert_object(summary, wire.Summary, "summary"))


def ago(seconds: float) -> datetime:
    return NOW - timedelta(seconds=seconds)
