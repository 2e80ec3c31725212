"""Ingest benchmark (issue targets): POST /v1/snapshots of a large synthetic cluster through
a real `verdict serve`, against json.loads of the same body with the collector off; peak
server memory; summary and per-node pod reads.

    python -m bench.bench_ingest --nodes 5000 --pods 150000 [--body cluster.json]
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import VERDICT, create_key, free_port


def _json_loads_seconds(path: Path) -> float:
    data = path.read_bytes()
    gc.disable()
    started = time.perf_counter()
    json.loads(data)
    elapsed = time.perf_counter() - started
    gc.enable()
    return elapsed


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def _peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _cpu_seconds(pid: int) -> float:
    """The process's user + system CPU time so far (from /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _request(port: int, method: str, path: str, headers: dict, body=None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    data = response.read()
    conn.close()
    return response.status, data


def _latencies(port: int, path: str, headers: dict, n: int = 50) -> tuple[float, float]:
    samples = []
    for _ in range(n):
        started = time.perf_counter()
        status, _ = _request(port, "GET", path, headers)
        samples.append((time.perf_counter() - started) * 1000)
        assert status == 200, status
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--body", type=Path)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="verdict-bench-") as workdir:
        _run(args, Path(workdir))


def _run(args: argparse.Namespace, workdir: Path) -> None:
    """Generate the body unless given, POST it to a server whose instance lives in
    ``workdir`` (removed afterwards, with any generated body), print the figures."""
    body = args.body or workdir / "cluster.json"
    if not body.exists():
        with body.open("wb") as out:
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "bench.generate",
                    "--nodes",
                    str(args.nodes),
                    "--pods",
                    str(args.pods),
                    "--seed",
                    "1",
                ],
                stdout=out,
                check=True,
            )
    size_mb = body.stat().st_size / 1e6
    baseline = _json_loads_seconds(body)

    env = {**os.environ, "VERDICT_INSTANCE_PATH": str(workdir), "VERDICT_LOG_LEVEL": "WARNING"}
    env.pop("VERDICT_DATABASE_URL", None)
    secret = create_key(env)
    port = free_port()
    server = subprocess.Popen([VERDICT, "serve", "--port", str(port), "--workers", "1"], env=env)
    try:
        headers = {"Authorization": f"Bearer {secret}"}
        for _ in range(100):
            try:
                if _request(port, "GET", "/healthz", {})[0] == 200:
                    break
            except OSError:
                time.sleep(0.2)
        workers = _children(server.pid)
        cpu_before = sum(_cpu_seconds(pid) for pid in workers)
        with body.open("rb") as stream:
            started = time.perf_counter()
            status, data = _request(
                port,
                "POST",
                "/v1/snapshots",
                {
                    **headers,
                    "Content-Type": "application/json",
                    "Content-Length": str(body.stat().st_size),
                },
                stream,
            )
            ingest = time.perf_counter() - started
        cpu = sum(_cpu_seconds(pid) for pid in workers) - cpu_before
        assert status == 201, data[:500]
        snapshot = json.loads(data)
        peak = max(_peak_rss_mib(pid) for pid in workers)
        summary = _latencies(port, f"/v1/snapshots/{snapshot['id']}", headers)
        pods = _latencies(
            port, f"/v1/snapshots/{snapshot['id']}/pods?node=node-00042&limit=1000", headers
        )
    finally:
        server.terminate()
        server.wait(timeout=30)
    print(
        f"machine: {platform.machine()} {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    print(f"body: {size_mb:.0f} MB, {snapshot['counts']}")
    print(f"json.loads (gc off): {baseline:.2f} s")
    print(f"POST /v1/snapshots: {ingest:.2f} s  ({ingest / baseline:.2f}x json.loads)")
    # CPU time of the worker for the POST: less sensitive than wall time to other work on
    # the machine (it includes the warming thread's start on the new snapshot, if any).
    print(f"worker CPU during the POST: {cpu:.2f} s")
    print(f"server worker peak RSS: {peak:.0f} MiB")
    print(f"GET summary: p50 {summary[0]:.1f} ms, p99 {summary[1]:.1f} ms")
    print(f"GET pods?node=: p50 {pods[0]:.1f} ms, p99 {pods[1]:.1f} ms")


if __name__ == "__main__":
    main()
