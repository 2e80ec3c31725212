"""Overload is shed, not queued (issue 14): recorded admission decisions on PostgreSQL.

    python -m bench.bench_overload --database-url postgresql+psycopg://postgres@127.0.0.1:5432/verdict_bench \
        [--hosts 1] [--workers 2] [--max-in-flight 2] [--factor 2] [--seconds 15]

1. Sustainable rate: ``--clients`` closed-loop clients spread over the hosts for
   ``--seconds``; the throughput of 201s is the rate the service sustains (with ``--hosts 2``,
   the chain's ceiling with both hosts saturating it).
2. Overload: an open-loop sender at ``--factor`` times that rate (requests are sent on
   schedule whether or not earlier ones have been answered, from ``--senders`` connections),
   for ``--seconds``. Reports the accepted requests' latency, how many were shed (503), and
   checks that every 201 is stored and the chain verifies.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import queue
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench.bench_decisions_http import _bodies
from bench.common import VERDICT, create_key, free_port, wait_healthy
from bench.generate import generate


def _start_hosts(args, env: dict) -> tuple[list, list[int]]:
    servers, ports = [], []
    for _ in range(args.hosts):
        port = free_port()
        servers.append(
            subprocess.Popen(
                [
                    VERDICT,
                    "serve",
                    "--port",
                    str(port),
                    "--workers",
                    str(args.workers),
                ],
                env=env,
                stderr=subprocess.DEVNULL,
            )
        )
        ports.append(port)
    for port in ports:
        wait_healthy(port)
    return servers, ports


def _percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else float("nan")


def _post(conn, body: bytes, headers: dict) -> int:
    conn.request("POST", "/v1/decisions/admission", body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    return response.status


def _closed_loop(ports, bodies, headers, clients: int, seconds: float) -> tuple[int, float]:
    """(201s, their rate) with ``clients`` clients each waiting for its answer."""
    ok = [0] * clients
    deadline = time.monotonic() + seconds

    def client(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", ports[n % len(ports)], timeout=60)
        i = n
        while time.monotonic() < deadline:
            if _post(conn, bodies[i % len(bodies)], headers) == 201:
                ok[n] += 1
            i += 1

    started = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sum(ok), sum(ok) / (time.monotonic() - started)


def _open_loop(ports, bodies, headers, rate: float, seconds: float, senders: int) -> dict:
    """Send at ``rate``/s on schedule; latency counted from the scheduled send time."""
    schedule: queue.Queue = queue.Queue()
    results: list[tuple[int, float]] = []
    lock = threading.Lock()

    def sender(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", ports[n % len(ports)], timeout=60)
        mine = []
        while (item := schedule.get()) is not None:
            due, i = item
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            try:
                status = _post(conn, bodies[i % len(bodies)], headers)
            except OSError:
                conn = http.client.HTTPConnection("127.0.0.1", ports[n % len(ports)], timeout=60)
                status = -1
            mine.append((status, (time.perf_counter() - due) * 1000))
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=sender, args=(n,)) for n in range(senders)]
    for t in threads:
        t.start()
    start = time.perf_counter() + 0.1
    total = int(rate * seconds)
    for i in range(total):
        schedule.put((start + i / rate, i))
    for _ in threads:
        schedule.put(None)
    for t in threads:
        t.join()
    accepted = [ms for status, ms in results if status == 201]
    statuses: dict[int, int] = {}
    for status, _ in results:
        statuses[status] = statuses.get(status, 0) + 1
    return {
        "sent": len(results),
        "statuses": statuses,
        "p50": _percentile(accepted, 0.5),
        "p99": _percentile(accepted, 0.99),
        "created": len(accepted),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--hosts", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--max-in-flight", type=int, default=2)
    # Default: as many closed-loop clients as the hosts admit at once (none is shed).
    parser.add_argument("--clients", type=int, default=0)
    parser.add_argument("--senders", type=int, default=48)
    parser.add_argument("--factor", type=float, default=2.0)
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--skip-overload", action="store_true")
    args = parser.parse_args()
    if not args.clients:
        args.clients = args.hosts * args.workers * (args.max_in_flight or 4)

    workdir = Path(tempfile.mkdtemp(prefix="verdict-overload-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(workdir),
        "VERDICT_LOG_LEVEL": "WARNING",
        "VERDICT_DATABASE_URL": args.database_url,
        "VERDICT_MAX_IN_FLIGHT": str(args.max_in_flight),
    }
    subprocess.run([VERDICT, "db", "upgrade"], env=env, check=True, capture_output=True)
    secret = create_key(env)
    headers = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    servers, ports = _start_hosts(args, env)
    try:
        cluster = generate(50, 3000, 1)
        conn = http.client.HTTPConnection("127.0.0.1", ports[0], timeout=120)
        conn.request("POST", "/v1/snapshots", body=json.dumps(cluster).encode(), headers=headers)
        snapshot_id = json.loads(conn.getresponse().read())["id"]
        bodies = _bodies("admission", snapshot_id, cluster)
        _closed_loop(ports, bodies, headers, args.clients, 3)  # warm every worker
        before = _verify(ports[0], headers)["records"]
        created, rate = _closed_loop(ports, bodies, headers, args.clients, args.seconds)
        print(
            f"hosts={args.hosts} workers={args.workers} "
            f"max_in_flight={args.max_in_flight} clients={args.clients}"
        )
        print(f"sustainable: {rate:.0f} recorded decisions/s (closed loop)")
        if not args.skip_overload:
            overload = _open_loop(
                ports, bodies, headers, rate * args.factor, args.seconds, args.senders
            )
            created += overload["created"]
            print(
                f"at {args.factor:g}x ({rate * args.factor:.0f}/s offered): sent "
                f"{overload['sent']}, statuses {overload['statuses']}; accepted p50 "
                f"{overload['p50']:.1f} ms, p99 {overload['p99']:.1f} ms"
            )
        verify = _verify(ports[0], headers)
        lost = before + created - verify["records"]
        print(
            f"chain ok: {verify['ok']}; 201s {created}, stored {verify['records'] - before}; lost {lost}"
        )
    finally:
        for server in servers:
            server.terminate()
        for server in servers:
            server.wait(timeout=30)


def _verify(port: int, headers: dict) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("GET", "/v1/audit/verify", headers=headers)
    return json.loads(conn.getresponse().read())


if __name__ == "__main__":
    main()
