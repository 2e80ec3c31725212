"""`verdict serve` logs JSON: gunicorn's access line per request carries the request,
decision and snapshot ids; gunicorn's own messages are JSON too."""

from __future__ import annotations

import subprocess

import orjson

from tests.conftest import kube_list, node
from tests.serve.helpers import VERDICT, call, serving, sqlite_env


def test_gunicorn_access_lines_are_json_with_the_ids(tmp_path):
    env = sqlite_env(tmp_path, VERDICT_LOG_LEVEL="INFO")
    key = subprocess.run(
        [VERDICT, "keys", "create", "--role", "decide"], env=env, capture_output=True, text=True
    ).stdout.splitlines()[-1]
    with (
        (tmp_path / "stdout").open("wb") as out,
        (tmp_path / "stderr").open("wb") as err,
        serving(env, "--workers", "1", stdout=out, stderr=err) as served,
    ):
        base = served.base
        auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        body = {"objects": kube_list(node("n1")), "capturedAt": "2026-11-20T10:00:00Z"}
        status, answer, _ = call(f"{base}/v1/snapshots", "POST", orjson.dumps(body), auth)
        snapshot_id = orjson.loads(answer)["id"]
        status, answer, _ = call(
            f"{base}/v1/decisions/node-eviction-rate",
            "POST",
            orjson.dumps({"snapshotId": snapshot_id}),
            {**auth, "X-Request-ID": "req-serve"},
        )
        assert status == 201
        decision_id = orjson.loads(answer)["id"]
    access = [
        orjson.loads(line)
        for line in (tmp_path / "stdout").read_bytes().splitlines()
        if line.startswith(b"{")
    ]
    decision = [a for a in access if a.get("path") == "/v1/decisions/node-eviction-rate"]
    assert len(decision) == 1 and decision[0]["logger"] == "gunicorn.access"
    assert decision[0]["requestId"] == "req-serve" and decision[0]["status"] == 201
    assert decision[0]["decisionId"] == decision_id
    assert decision[0]["snapshotId"] == snapshot_id
    # Each request is logged once: the app leaves the access line to gunicorn.
    errors = (tmp_path / "stderr").read_bytes().splitlines()
    assert not any(b'"verdict.access"' in line for line in errors)
    assert any(
        orjson.loads(line)["logger"] == "gunicorn.error" for line in errors if line.startswith(b"{")
    )
