"""Slow clients cannot hold a real `verdict serve` (issue 24): with two hundred connections
that stop halfway through their headers or their body, ordinary decisions are answered as
usual; the stalled connections are timed out (headers: closed; bodies: 408), on the test
run's database (SQLite, or PostgreSQL through gevent's patched waits).

Everything stays on 127.0.0.1 and every loop is bounded."""

from __future__ import annotations

import os
import socket

import orjson
import pytest

from tests.conftest import kube_list, node, pod
from tests.serve.helpers import call, serving

SLOW = 100  # of each kind
HEADER_TIMEOUT, IDLE_TIMEOUT = 2, 3


@pytest.fixture
def slow_server(tmp_path, database_url, app):  # app: the tables emptied
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(tmp_path),
        "VERDICT_DATABASE_URL": database_url,
        "VERDICT_LOG_LEVEL": "ERROR",
        "VERDICT_AUTH_ENABLED": "false",
        "VERDICT_PRELOAD_SNAPSHOTS": "0",
    }
    options = ("--workers", "1", "--header-timeout", str(HEADER_TIMEOUT))
    with serving(env, *options, "--idle-timeout", str(IDLE_TIMEOUT)) as served:
        yield served


def _connect(port: int, data: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=30)
    sock.sendall(data)
    return sock


def _half_headers(port: int) -> socket.socket:
    return _connect(port, b"POST /v1/decisions/admission HTTP/1.1\r\nHost: 127.0.0.1\r\nCont")


def _half_body(port: int) -> socket.socket:
    head = (
        b"POST /v1/decisions/admission HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    )
    return _connect(port, head + b'{"pod": ')


def _until_closed(sock: socket.socket) -> bytes:
    """What the server sends before it closes (bounded: at most 64 reads of 30 s)."""
    received = b""
    for _ in range(64):
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
    sock.close()
    return received


def test_slow_clients_hold_nothing(slow_server):
    base = slow_server.base
    snapshot = {"objects": kube_list(node("n1", cpu="4")), "capturedAt": "2026-11-20T10:00:00Z"}
    status, body, _ = call(
        f"{base}/v1/snapshots", "POST", orjson.dumps(snapshot), {"Content-Type": "application/json"}
    )
    assert status == 201, body
    decision = orjson.dumps(
        {"snapshotId": orjson.loads(body)["id"], "nodeName": "n1", "pod": pod("p", cpu="1")}
    )
    headers_slow = [_half_headers(slow_server.port) for _ in range(SLOW)]
    bodies_slow = [_half_body(slow_server.port) for _ in range(SLOW)]
    answered = [
        call(
            f"{base}/v1/decisions/admission", "POST", decision, {"Content-Type": "application/json"}
        )[0]
        for _ in range(20)
    ]
    assert answered == [201] * 20
    assert call(f"{base}/healthz")[0] == 200
    assert {_until_closed(sock) for sock in headers_slow} == {b""}  # closed, nothing said
    for sock in bodies_slow:
        assert _until_closed(sock).startswith(b"HTTP/1.1 408 ")
    assert (
        call(
            f"{base}/v1/decisions/admission", "POST", decision, {"Content-Type": "application/json"}
        )[0]
        == 201
    )
