"""Sustained decision load through a real `verdict serve` (gunicorn), every decision recorded.

    python -m bench.bench_decisions_http --kind admission --seconds 20 --clients 8 \
        [--database-url postgresql+psycopg://postgres@127.0.0.1:5432/verdict_bench]

Reports throughput, latency percentiles, the workers' CPU time per request (from /proc),
and checks that the number of stored records equals the number of 201 responses (none
lost), and the CPU each worker spent. ``--worker gthread`` serves the same app with
gunicorn's threaded worker (4 threads per worker, what `verdict serve` ran before issue 24,
with the same JSON access line) instead of `verdict serve`'s gevent worker, to compare the
two in one machine state.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench.common import VERDICT, create_key, free_port, wait_healthy
from bench.generate import generate


def _bodies(kind: str, snapshot_id: str, env: dict) -> list[bytes]:
    nodes = [i for i in env["objects"]["items"] if i["kind"] == "Node"]
    stats_nodes = [n for n in nodes if n["metadata"]["name"] in env.get("stats", {})]
    out = []
    for i, node in enumerate(stats_nodes or nodes):
        name = node["metadata"]["name"]
        if kind == "admission":
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"bench-{i}", "namespace": "default"},
                "spec": {
                    "containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}
                    ]
                },
            }
            body = {"snapshotId": snapshot_id, "nodeName": name, "pod": pod}
        else:
            body = {
                "snapshotId": snapshot_id,
                "nodeName": name,
                "config": {"evictionHard": "memory.available<500Mi,nodefs.available<10%"},
            }
        out.append(json.dumps(body).encode())
    return out


def _workers(master: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{master}/task/{master}/children").read_text().split()]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kind", default="admission", choices=["admission", "eviction"])
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=50)
    parser.add_argument("--pods", type=int, default=3000)
    parser.add_argument("--database-url")
    parser.add_argument("--worker", default="gevent", choices=["gevent", "gthread"])
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="verdict-load-"))
    env = {**os.environ, "VERDICT_INSTANCE_PATH": str(workdir), "VERDICT_LOG_LEVEL": "WARNING"}
    if args.database_url:
        env["VERDICT_DATABASE_URL"] = args.database_url
    else:
        env.pop("VERDICT_DATABASE_URL", None)
    subprocess.run([VERDICT, "db", "upgrade"], env=env, check=True, capture_output=True)
    secret = create_key(env)
    port = free_port()
    command = [VERDICT, "serve", "--port", str(port), "--workers", str(args.workers)]
    if args.worker == "gthread":
        gunicorn = str(Path(VERDICT).with_name("gunicorn"))
        command = [gunicorn, "-k", "gthread", "--threads", "4", "-w", str(args.workers)]
        command += ["-b", f"127.0.0.1:{port}", "--timeout", "300", "--access-logfile", "-"]
        command += ["--logger-class", "service.api.logs.GunicornLogger"]
        command += ["service.app:create_app()"]
    # Both write gunicorn's JSON access line per request, to /dev/null: not to this bench's
    # output, whose reader would otherwise set the pace of the gevent workers alone.
    server = subprocess.Popen(
        command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    try:
        wait_healthy(port)
        cluster = generate(args.nodes, args.pods, 1)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request("POST", "/v1/snapshots", body=json.dumps(cluster).encode(), headers=headers)
        response = conn.getresponse()
        snapshot_id = json.loads(response.read())["id"]
        bodies = _bodies(args.kind, snapshot_id, cluster)
        latencies: list[float] = []
        created = 0
        failures: dict[int, int] = {}
        lock = threading.Lock()
        deadline = time.monotonic() + args.seconds

        def client(offset: int) -> None:
            nonlocal created
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            i = offset
            mine, ok, bad = [], 0, {}
            while time.monotonic() < deadline:
                started = time.perf_counter()
                conn.request(
                    "POST",
                    f"/v1/decisions/{args.kind}",
                    body=bodies[i % len(bodies)],
                    headers=headers,
                )
                response = conn.getresponse()
                response.read()
                mine.append((time.perf_counter() - started) * 1000)
                if response.status == 201:
                    ok += 1
                else:
                    bad[response.status] = bad.get(response.status, 0) + 1
                i += 1
            with lock:
                latencies.extend(mine)
                created += ok
                for k, v in bad.items():
                    failures[k] = failures.get(k, 0) + v

        workers = _workers(server.pid)
        each_before = [_cpu_seconds(pid) for pid in workers]
        started = time.monotonic()
        threads = [threading.Thread(target=client, args=(n * 7,)) for n in range(args.clients)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        elapsed = time.monotonic() - started
        each = [_cpu_seconds(pid) - b for pid, b in zip(workers, each_before, strict=True)]
        cpu = sum(each)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request("GET", "/v1/audit/verify", headers=headers)
        verify = json.loads(conn.getresponse().read())
    finally:
        server.terminate()
        server.wait(timeout=30)
    latencies.sort()
    pct = lambda p: latencies[min(len(latencies) - 1, int(len(latencies) * p))]  # noqa: E731
    print(
        f"kind={args.kind} database={'postgresql' if args.database_url else 'sqlite'} "
        f"worker={args.worker} workers={args.workers} clients={args.clients}"
    )
    print(
        f"workers' CPU: {cpu:.1f} s ({', '.join(f'{c:.1f}' for c in each)} s each), "
        f"{cpu / max(1, len(latencies)) * 1000:.2f} ms per request"
    )
    print(
        f"requests: {len(latencies)} in {elapsed:.1f} s = {len(latencies) / elapsed:.0f}/s; 201: {created}; other: {failures}"
    )
    print(
        f"latency ms: p50 {statistics.median(latencies):.1f}, p90 {pct(0.9):.1f}, p99 {pct(0.99):.1f}"
    )
    print(
        f"stored records: {verify['records']} (chain ok: {verify['ok']}); lost: {created - verify['records']}"
    )


if __name__ == "__main__":
    main()
