"""`verdict serve` logs JSON: gunicorn's access line per request carries the request,
decision and snapshot ids; gunicorn's own messages are JSON too."""

from __future__ import annotations

import os
import subprocess
import time

import orjson

from tests.conftest import kube_list, node
from tests.test_end_to_end import VERDICT, _call, _free_port


def test_gunicorn_access_lines_are_json_with_the_ids(tmp_path):
    port = _free_port()
    env = {**os.environ, "VERDICT_INSTANCE_PATH": str(tmp_path), "VERDICT_LOG_LEVEL": "INFO"}
    env.pop("VERDICT_DATABASE_URL", None)
    key = subprocess.run(
        [VERDICT, "keys", "create", "--role", "decide"], env=env, capture_output=True, text=True
    ).stdout.splitlines()[-1]
    out, err = (tmp_path / "stdout").open("wb"), (tmp_path / "stderr").open("wb")
    process = subprocess.Popen(
        [VERDICT, "serve", "--port", str(port), "--workers", "1"], env=env, stdout=out, stderr=err
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                if _call(f"{base}/healthz")[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        auth = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        body = {"objects": kube_list(node("n1")), "capturedAt": "2026-11-20T10:00:00Z"}
        status, answer, _ = _call(f"{base}/v1/snapshots", "POST", orjson.dumps(body), auth)
        snapshot_id = orjson.loads(answer)["id"]
        status, answer, _ = _call(
            f"{base}/v1/decisions/node-eviction-rate",
            "POST",
            orjson.dumps({"snapshotId": snapshot_id}),
            {**auth, "X-Request-ID": "req-serve"},
        )
        assert status == 201
        decision_id = orjson.loads(answer)["id"]
    finally:
        process.terminate()
        process.wait(timeout=15)
        out.close()
        err.close()
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
