"""The real thing: `verdict serve` under gunicorn on a loopback port, driven over HTTP."""

from __future__ import annotations

import gzip
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import orjson
import pytest

from tests.conftest import kube_list, node, pod

VERDICT = str(Path(sys.executable).with_name("verdict"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _call(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None):
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


@pytest.fixture
def server(tmp_path):
    port = _free_port()
    env = {**os.environ, "VERDICT_INSTANCE_PATH": str(tmp_path), "VERDICT_LOG_LEVEL": "WARNING"}
    env.pop("VERDICT_DATABASE_URL", None)
    process = subprocess.Popen(
        [VERDICT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "2"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            if _call(f"{base}/healthz")[0] == 200:
                break
        except OSError:
            time.sleep(0.2)
    else:
        process.kill()
        pytest.fail(f"server did not start: {process.stderr.read().decode()[-2000:]}")
    yield base, env
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()


def test_fresh_machine_flow(server):
    base, env = server
    created = subprocess.run(
        [VERDICT, "keys", "create", "--role", "decide"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    secret = created.stdout.strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {secret}"}

    assert _call(f"{base}/v1/snapshots")[0] == 401
    assert _call(f"{base}/readyz")[0] == 200

    cluster = kube_list(node("n1"), pod("web", "n1", cpu="100m", memory="64Mi"))
    status, body, _ = _call(
        f"{base}/v1/snapshots",
        "POST",
        gzip.compress(orjson.dumps(cluster)),
        {**auth, "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert status == 201, body
    snapshot = orjson.loads(body)
    # Read back through (possibly) the other worker: the stored form, not a process cache.
    for _ in range(4):
        status, body, _ = _call(f"{base}/v1/snapshots/{snapshot['id']}/pods?node=n1", headers=auth)
        assert status == 200
        assert [p["name"] for p in orjson.loads(body)["items"]] == ["web"]

    status, body, _ = _call(f"{base}/metrics")
    assert status == 200 and b"verdict_http_requests_total" in body
    status, body, _ = _call(f"{base}/docs")
    assert status == 200 and b"cdn" not in body.lower()
