"""How `verdict serve` runs the app (service/serving.py): a body the app refused is not read
to its end by the worker, and a small leftover still keeps the connection alive (issue 24).

The cost is the worker's own CPU time, read from /proc before and after the request (not
wall time: the machine may be loaded)."""

from __future__ import annotations

import contextlib
import http.client
import os
import socket
from pathlib import Path

import pytest

from tests.serve.helpers import serving

MIB = 1024 * 1024
BODY_MIB = 200


@pytest.fixture(scope="module")
def one_worker(tmp_path_factory, database_url):
    """One worker on the test run's database, default limits (decision bodies: 64 MiB),
    auth off."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_DATABASE_URL": database_url,
        "VERDICT_INSTANCE_PATH": str(tmp_path_factory.mktemp("serving")),
        "VERDICT_LOG_LEVEL": "ERROR",
        "VERDICT_AUTH_ENABLED": "false",
        "VERDICT_PRELOAD_SNAPSHOTS": "0",
    }
    with serving(env, "--workers", "1") as served:
        yield served


def _worker(served) -> int:
    pid = served.process.pid
    (child,) = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return int(child)


def _cpu_seconds(pid: int) -> float:
    """User + system time of a process, from /proc/<pid>/stat."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _yaml_decision(mib: int):
    """A YAML decision body of ``mib`` MiB (a flow sequence of zeros), in 1 MiB pieces."""
    yield b"nodeName: n1\npod: [" + b" " * (MIB - 19)
    for _ in range(mib - 2):
        yield b"0, " * (MIB // 3) + b" "
    yield b" " * (MIB - 2) + b"]\n"


@pytest.mark.parametrize("framing", ["chunked", "Content-Length"])
def test_a_refused_200_mib_body_costs_the_worker_under_a_second(one_worker, framing):
    """The 413 came at the limit, then gunicorn parsed the other 136 MiB of a chunked body
    (3.5-4.2 s of the worker's CPU) to keep the connection; now it is discarded unparsed and
    the connection closed, and the client, still sending, reads its 413."""
    worker = _worker(one_worker)
    before = _cpu_seconds(worker)
    conn = http.client.HTTPConnection("127.0.0.1", one_worker.port, timeout=120)
    headers = {"Content-Type": "application/yaml"}
    if framing == "Content-Length":
        headers["Content-Length"] = str(BODY_MIB * MIB)
    with contextlib.suppress(OSError):  # the server may close before the end is sent
        conn.request(
            "POST",
            "/v1/decisions/admission",
            body=_yaml_decision(BODY_MIB),
            headers=headers,
            encode_chunked=framing == "chunked",
        )
    response = conn.getresponse()
    answer = response.read()
    conn.close()
    spent = _cpu_seconds(worker) - before
    assert response.status == 413, answer[:300]
    assert b"exceeds the limit" in answer
    assert spent < 1.0, f"the worker spent {spent:.2f} s of CPU on a refused body"
    assert _worker(one_worker) == worker  # the same worker, still there


def test_a_small_refused_body_keeps_the_connection(one_worker):
    """A leftover under DRAIN_BYTES is read as before: the next request goes on the same
    connection (a gzip decision body is a 415 its route never reads)."""
    sock = socket.create_connection(("127.0.0.1", one_worker.port), timeout=30)
    body = b"x" * 4000
    sock.sendall(
        b"POST /v1/decisions/admission HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
        b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    )
    sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
    received = b""
    while received.count(b"HTTP/1.1 ") < 2 or not received.endswith(b"}"):
        chunk = sock.recv(65536)
        if not chunk:
            break
        received += chunk
        if len(received) > 1 << 20:
            break
    sock.close()
    answers = received.split(b"HTTP/1.1 ")[1:]
    assert [answer[:3] for answer in answers] == [b"415", b"200"], received[:500]


def test_a_worker_exits_without_logging_errors(tmp_path):
    """gunicorn's TERM after a snapshot (the preloader ran): no "Exception ignored in
    _removeHandlerRef" from gevent's torn-down ``get_ident`` on the worker's way out."""
    import subprocess
    import urllib.request

    from tests.serve.helpers import sqlite_env, start, stop, wait_until_up

    env = sqlite_env(tmp_path, VERDICT_LOG_LEVEL="WARNING", VERDICT_AUTH_ENABLED="false")
    served = start(env, "--workers", "1", stderr=subprocess.PIPE)
    try:
        wait_until_up(served)
        body = (Path(__file__).parents[2] / "examples" / "cluster.yaml").read_bytes()
        request = urllib.request.Request(
            f"{served.base}/v1/snapshots",
            data=body,
            headers={"Content-Type": "application/yaml"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            assert response.status == 201
    finally:
        stop(served)
    stderr = served.process.stderr.read().decode()
    assert "Worker exiting" in stderr  # the worker did go through its exit
    assert "Exception ignored" not in stderr and "Traceback" not in stderr, stderr[-2000:]
