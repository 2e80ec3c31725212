"""Request ids and JSON log lines (api/logs.py): X-Request-ID echoed, generated or refused
past its length, and log lines carrying the request's ids."""

from __future__ import annotations

import io
import logging

import orjson

from service.api import logs
from tests.api.helpers import snapshot_with_stats


def test_request_id_echoed_and_generated(api):
    given = api.get("/healthz", role=None, headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    assert len(api.get("/healthz", role=None).headers["X-Request-ID"]) == 36


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
        snapshot_id = snapshot_with_stats(api)
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


def test_a_request_id_past_its_max_length_is_a_400_and_one_at_it_is_echoed(api):
    refused = api.get("/healthz", headers={"X-Request-ID": "r" * 201}, role=None, validate=False)
    assert refused.status_code == 400
    assert refused.json["errors"][0]["path"] == "X-Request-ID"
    echoed = api.get("/healthz", headers={"X-Request-ID": "r" * 200}, role=None)
    assert echoed.headers["X-Request-ID"] == "r" * 200
