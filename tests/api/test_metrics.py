"""What operators read: /metrics (build info, ingest, snapshot cache, decisions by kind and
outcome), JSON log lines carrying the request's ids, and a 401 that says how to get a key."""

from __future__ import annotations

import io
import logging

import orjson
from prometheus_client.parser import text_string_to_metric_families

from service.api import logs
from tests.conftest import kube_list, node, pod

SUMMARY = {
    "node": {"nodeName": "n1", "memory": {"availableBytes": 50 * 2**20, "workingSetBytes": 2**30}},
    "pods": [],
}


def _samples(api) -> dict:
    text = api.get("/metrics", role=None).get_data(as_text=True)
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _snapshot(api) -> str:
    body = {
        "objects": kube_list(node("n1"), pod("a", "n1", memory="1Gi")),
        "stats": {"n1": SUMMARY},
    }
    return api.post("/v1/snapshots", json=body).json["id"]


def test_metrics_count_ingest_cache_and_decisions_by_outcome(api):
    before = _samples(api)
    snapshot_id = _snapshot(api)
    for _ in range(2):
        api.post(
            "/v1/decisions/eviction",
            json={"snapshotId": snapshot_id, "nodeName": "n1", "now": "2026-11-20T10:00:00Z"},
        )
    api.post(
        "/v1/decisions/admission",
        json={"snapshotId": snapshot_id, "pod": pod("b", "n1", cpu="100")},
    )
    after = _samples(api)
    infos = [k for k in after if k[0] == "verdict_build_info"]
    assert len(infos) == 1 and after[infos[0]] == 1
    assert {"version", "engine_version", "python"} == {k for k, _ in infos[0][1]}

    def delta(name, **labels):
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert delta("verdict_ingest_bytes_count") == 1 and delta("verdict_ingest_bytes_sum") > 500
    assert delta("verdict_ingest_duration_seconds_count") == 1
    # The stored snapshot is in the cache from the start: three reads, three hits.
    assert delta("verdict_snapshot_cache_total", result="hit") == 3
    assert delta("verdict_decisions_total", kind="eviction", outcome="evict") == 2
    assert delta("verdict_decisions_total", kind="admission", outcome="rejected") == 1


def test_log_lines_are_json_with_the_requests_ids(api):
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logs.formatter())
    handler.addFilter(logs.RequestIds())
    logger = logging.getLogger("verdict")
    logger.addHandler(handler)
    level = logger.level
    logger.setLevel(logging.INFO)
    try:
        snapshot_id = _snapshot(api)
        decision = api.post(
            "/v1/decisions/eviction",
            json={"snapshotId": snapshot_id, "nodeName": "n1"},
            headers={"X-Request-ID": "req-42"},
        )
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    lines = [orjson.loads(line) for line in stream.getvalue().splitlines()]
    access = [entry for entry in lines if entry["logger"] == "verdict.access"]
    assert access[-1]["requestId"] == "req-42" and access[-1]["status"] == 201
    assert access[-1]["decisionId"] == decision.json["id"]
    assert access[-1]["snapshotId"] == snapshot_id
    assert access[-1]["level"] == "INFO" and "time" in access[-1]
    assert access[0]["snapshotId"] == snapshot_id  # POST /v1/snapshots names what it stored


def test_a_401_says_how_to_create_a_key(api):
    for headers in ({}, {"Authorization": "Bearer vk_nope"}):
        response = api.get("/v1/snapshots", role=None, headers=headers)
        assert response.status_code == 401
        assert "verdict keys create --role" in response.json["detail"]
