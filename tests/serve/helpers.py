"""What the tests of a real `verdict serve` share: the installed `verdict` command, a free
loopback port, an HTTP call that returns error answers instead of raising them, and a server
started, awaited on /healthz and stopped, in one place so that every such test waits, fails
and cleans up the same way (a server left running would hold its port and database)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

VERDICT = str(Path(sys.executable).with_name("verdict"))
STARTUP_SECONDS = 30
STOP_SECONDS = 15


@dataclass(frozen=True)
class Served:
    """A `verdict serve` process and where it listens."""

    process: subprocess.Popen
    port: int
    base: str


def free_port() -> int:
    """A loopback port nothing listens on (the kernel's choice, so parallel runs differ)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(url: str, method: str = "GET", body: bytes | None = None, headers: dict | None = None):
    """(status, body, headers) of one request; 4xx and 5xx are answers here, not exceptions."""
    req = urllib.request.Request(url, data=body, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read(), dict(exc.headers)


def healthz(base: str) -> int:
    """The status of /healthz, 0 while nothing listens yet."""
    try:
        return call(f"{base}/healthz")[0]
    except OSError:
        return 0


def start(env: dict, *options: str, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) -> Served:
    """`verdict serve` on a free loopback port with ``options``; not yet awaited, so that
    several servers can start at once."""
    port = free_port()
    process = subprocess.Popen(
        [VERDICT, "serve", "--host", "127.0.0.1", "--port", str(port), *options],
        env=env,
        stdout=stdout,
        stderr=stderr,
    )
    return Served(process, port, f"http://127.0.0.1:{port}")


def wait_until_up(served: Served) -> None:
    """Wait for /healthz to answer 200; past the deadline, kill the server and fail the test
    with the end of its stderr when the caller piped it."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while healthz(served.base) != 200:
        if time.monotonic() > deadline:
            served.process.kill()
            stderr = served.process.stderr
            detail = stderr.read().decode()[-2000:] if stderr else ""
            pytest.fail(f"server did not start: {detail}")
        time.sleep(0.2)


def stop(served: Served) -> None:
    """Terminate the server (gunicorn stops its workers), killing it if it does not exit."""
    served.process.terminate()
    try:
        served.process.wait(timeout=STOP_SECONDS)
    except subprocess.TimeoutExpired:
        served.process.kill()


@contextmanager
def serving(env: dict, *options: str, **streams) -> Iterator[Served]:
    """A started, awaited server for the ``with`` block, stopped after it."""
    served = start(env, *options, **streams)
    try:
        wait_until_up(served)
        yield served
    finally:
        stop(served)


def sqlite_env(home: Path, **settings: str) -> dict:
    """This process's environment with an instance folder of its own (SQLite inside it), the
    VERDICT_DATABASE_URL of the test run left out, and ``settings`` on top."""
    env = {**os.environ, "VERDICT_INSTANCE_PATH": str(home), **settings}
    env.pop("VERDICT_DATABASE_URL", None)
    return env


@pytest.fixture
def server(tmp_path):
    """`verdict serve` (two workers) on SQLite in a temporary instance folder: (base, env)."""
    env = sqlite_env(tmp_path, VERDICT_LOG_LEVEL="WARNING")
    with serving(env, "--workers", "2", stderr=subprocess.PIPE) as served:
        yield served.base, env
