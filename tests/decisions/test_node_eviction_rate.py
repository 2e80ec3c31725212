"""Decision kind "node-eviction-rate" (service.decisions.node_eviction_rate): request schema,
``now`` defaulting, input errors naming the field, result shape (the contract) and subjects."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from marshmallow import ValidationError

from service.decisions import KINDS, DecisionInputError
from service.decisions.node_eviction_rate import NodeEvictionRateRequestSchema, decide
from service.decisions.run import compute
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.nodelifecycle.helpers import (
    DEFAULTS,
    UNREACHABLE,
    at,
    cluster,
    healthy,
    node,
    pod,
    taint,
)


def _cluster(captured: float | None = 0.0):
    return cluster(
        node("dead", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -60)]),
        node("silent", heartbeat=-120),
        *healthy("h", 8),
        pod("web", "dead", DEFAULTS),
        pod("bare", "silent"),
        pod("ok", "h-0", DEFAULTS),
        captured=captured,
    )


def _load(body: dict) -> dict:
    return NodeEvictionRateRequestSchema().load(body) | {"settings": DEFAULT_SETTINGS}


def test_registered():
    assert KINDS["node-eviction-rate"].decide is decide


def test_now_defaults_to_captured_at_and_the_result_has_the_api_shape():
    result = decide(_cluster(), _load({}))
    assert set(result) == {"zones", "allZonesFullyDisrupted", "nodes", "pods", "nowSource"}
    assert result["nowSource"] == "capturedAt"
    assert result["zones"] == [
        {
            "key": "r1:\x00:a",
            "region": "r1",
            "zone": "a",
            "state": "Normal",
            "nodes": 10,
            "notReadyNodes": 2,
            "evictionRate": 0.1,
        }
    ]
    assert result["allZonesFullyDisrupted"] is False
    nodes = {n["nodeName"]: n for n in result["nodes"]}
    assert nodes["dead"] == {
        "nodeName": "dead",
        "zone": "r1:\x00:a",
        "ready": "Unknown",
        "taint": UNREACHABLE,
        "taintedAt": at(-60),
        "slotGroup": None,
    }
    # Stale but still Ready=True in the snapshot: marked Unknown at now, queued 5 s later.
    assert nodes["silent"]["taintedAt"] == at(5)
    pods = {p["pod"]["name"]: p for p in result["pods"]}
    assert set(pods) == {"web", "bare"}  # pods on untainted healthy nodes are not listed
    assert pods["web"]["evictAt"] == at(240)
    assert pods["bare"]["evictAt"] == at(5)
    assert pods["web"]["pod"] == {
        "namespace": "default",
        "name": "web",
        "uid": "uid-web",
        "nodeName": "dead",
        "priority": 0,
        "qosClass": "BestEffort",
    }


def test_explicit_now_and_config():
    body = {"now": "2024-01-01T00:00:30Z", "config": {"applyDefaultTolerations": True}}
    result = decide(_cluster(captured=None), _load(body))
    pods = {p["pod"]["name"]: p["evictAt"] for p in result["pods"]}
    # "silent" is queued at the second pass (now + 5 s) and gets the 300 s default.
    assert pods == {"web": at(240), "bare": at(35 + 300)}


def test_now_required_without_captured_at():
    with pytest.raises(DecisionInputError) as exc:
        decide(_cluster(captured=None), _load({}))
    assert exc.value.path == "now"


@pytest.mark.parametrize(
    ("config", "field"),
    [
        ({"nodeEvictionRate": -1}, "nodeEvictionRate"),
        ({"secondaryNodeEvictionRate": -0.01}, "secondaryNodeEvictionRate"),
        ({"unhealthyZoneThreshold": 0}, "unhealthyZoneThreshold"),
        ({"unhealthyZoneThreshold": 1.5}, "unhealthyZoneThreshold"),
        ({"nodeMonitorGracePeriod": "fifty seconds"}, "nodeMonitorGracePeriod"),
        ({"podEvictionTimeout": "5"}, "podEvictionTimeout"),
        ({"mode": "manual"}, "mode"),
        ({"largeClusterSizeThreshold": -5}, "largeClusterSizeThreshold"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_bad_config_is_rejected_naming_the_field(config, field):
    with pytest.raises(ValidationError) as exc:
        _load({"config": config})
    assert list(exc.value.messages) == ["config"]
    assert list(exc.value.messages["config"]) == [field]


@pytest.mark.parametrize(
    "body",
    [
        {"now": "yesterday"},
        {"config": "fast"},
        {"nodeName": "dead"},
    ],
)
def test_malformed_request_fields(body):
    with pytest.raises(ValidationError) as exc:
        _load(body)
    assert set(exc.value.messages) == set(body)


def test_compute_and_subjects():
    kind = KINDS["node-eviction-rate"]
    outcome = compute(kind, _cluster(), {"config": {"nodeMonitorGracePeriod": "1h"}})
    assert outcome.request == {
        "config": {"nodeMonitorGracePeriod": "1h"},
        "kubernetesVersion": "1.37",
    }
    # With a 1 h grace, "silent" is healthy: only "dead" is about to be tainted.
    assert outcome.subjects.node_names == ["dead"]
    assert outcome.subjects.pods == ["default/web"]


def test_naive_now_is_utc():
    loaded = _load({})
    loaded["now"] = datetime(2024, 1, 1)  # as if a caller passed a naive datetime
    aware = dict(loaded, now=datetime(2024, 1, 1, tzinfo=UTC))
    assert decide(_cluster(), loaded) == decide(_cluster(), aware)
