"""Helpers the benchmarks share: a timing loop, a free loopback port, a server key, a
snapshot read from a generated envelope."""

from __future__ import annotations

import gc
import http.client
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from service.engine.objects import Snapshot
from service.ingest.body import parse_snapshot

VERDICT = str(Path(sys.executable).with_name("verdict"))


def snapshot_from_envelope(envelope: dict) -> Snapshot:
    """The Snapshot of a snapshot envelope (``bench.generate``'s, or ``{"objects": [...]}``),
    read as a POST /v1/snapshots body is."""
    return parse_snapshot(orjson.dumps(envelope)).snapshot


def time_calls(
    fn: Callable[[], object], iterations: int, warmup: int = 50
) -> tuple[float, float, float]:
    """(median, p95, mean) in milliseconds, the garbage collector off while timing."""
    for _ in range(min(warmup, iterations)):
        fn()
    samples = []
    gc.collect()
    gc.disable()
    try:
        for _ in range(iterations):
            start = time.perf_counter()
            fn()
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        gc.enable()
    samples.sort()
    p95 = samples[min(len(samples) - 1, round(0.95 * (len(samples) - 1)))]
    return statistics.median(samples), p95, statistics.fmean(samples)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def create_key(env: dict, role: str = "admin") -> str:
    """A new API key through the CLI, as an operator makes one (the secret is its last line)."""
    done = subprocess.run(
        [VERDICT, "keys", "create", "--role", role],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip().splitlines()[-1]


def wait_healthy(port: int, seconds: float = 30) -> None:
    """Until a server on this loopback port answers /healthz with 200."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
    raise SystemExit(f"no server answered on port {port} within {seconds:.0f} s")
