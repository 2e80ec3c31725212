"""Slow clients do not slow the others (issue 24): the latency of ordinary recorded admission
decisions with and without 300 slow connections open against `verdict serve`.

    python -m bench.bench_slow_clients [--database-url URL] [--workers 2] [--slow 300] \
        [--requests 1000] [--clients 2] [--repeat 3]

The slow connections are half of them a request that stops halfway through its headers, half
a request whose body stops after a few bytes; a keeper thread opens a new one whenever the
server times one out, so that ``--slow`` are open throughout the measurement (as an attacker
would keep them). Everything is on 127.0.0.1; every loop is bounded.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import selectors
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

from bench.bench_decisions_http import _bodies
from bench.common import VERDICT, create_key, free_port, wait_healthy
from bench.generate import generate

HALF_HEADERS = b"POST /v1/decisions/admission HTTP/1.1\r\nHost: 127.0.0.1\r\nCont"
HALF_BODY = (
    b"POST /v1/decisions/admission HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    b"Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n" + b'{"pod": '
)


class SlowKeeper:
    """Keeps ``count`` slow connections open until stopped, replacing those the server
    closes; counts how many it had to open."""

    def __init__(self, port: int, count: int) -> None:
        self.port, self.count, self.opened = port, count, 0
        self.selector = selectors.DefaultSelector()
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _open(self, n: int) -> None:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        sock.sendall(HALF_HEADERS if n % 2 else HALF_BODY)
        sock.setblocking(False)
        self.selector.register(sock, selectors.EVENT_READ, n)
        self.opened += 1

    def open_count(self) -> int:
        return len(self.selector.get_map())

    def _run(self) -> None:
        for n in range(self.count):
            self._open(n)
        while not self.stop.is_set():
            for key, _ in self.selector.select(timeout=0.2):
                try:
                    data = key.fileobj.recv(65536)
                except OSError:
                    data = b""
                if not data:  # closed by the server (after its answer, if any): replace it
                    self.selector.unregister(key.fileobj)
                    key.fileobj.close()
                    self._open(key.data)
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()

    def __enter__(self) -> SlowKeeper:
        self.thread.start()
        deadline = time.monotonic() + 30
        while self.open_count() < self.count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self

    def __exit__(self, *_exc) -> None:
        self.stop.set()
        self.thread.join(timeout=30)


def _latencies(port: int, bodies, headers, requests: int, clients: int) -> tuple[list, dict]:
    """Milliseconds of each 201 from ``clients`` closed-loop clients; statuses counted."""
    latencies: list[float] = []
    statuses: dict[int, int] = {}
    lock = threading.Lock()

    def client(n: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        for i in range(n, requests, clients):
            start = time.perf_counter()
            conn.request(
                "POST", "/v1/decisions/admission", body=bodies[i % len(bodies)], headers=headers
            )
            response = conn.getresponse()
            response.read()
            elapsed = (time.perf_counter() - start) * 1000
            with lock:
                statuses[response.status] = statuses.get(response.status, 0) + 1
                if response.status == 201:
                    latencies.append(elapsed)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return sorted(latencies), statuses


def _p(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, round(q * (len(values) - 1)))] if values else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--database-url", default="")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--slow", type=int, default=300)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--clients", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="verdict-slow-"))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(workdir),
        "VERDICT_LOG_LEVEL": "ERROR",
    }
    if args.database_url:
        env["VERDICT_DATABASE_URL"] = args.database_url
    subprocess.run([VERDICT, "db", "upgrade"], env=env, check=True, capture_output=True)
    headers = {"Authorization": f"Bearer {create_key(env)}", "Content-Type": "application/json"}
    port = free_port()
    server = subprocess.Popen(
        [VERDICT, "serve", "--port", str(port), "--workers", str(args.workers)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(port)
        cluster = generate(50, 3000, 1)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        conn.request("POST", "/v1/snapshots", body=json.dumps(cluster).encode(), headers=headers)
        bodies = _bodies("admission", json.loads(conn.getresponse().read())["id"], cluster)
        _latencies(port, bodies, headers, 100, args.clients)  # warm every worker
        print(
            f"workers={args.workers} clients={args.clients} requests={args.requests} "
            f"slow={args.slow} database={'postgresql' if args.database_url else 'sqlite'}"
        )
        for run in range(args.repeat):
            calm, calm_statuses = _latencies(port, bodies, headers, args.requests, args.clients)
            with SlowKeeper(port, args.slow) as keeper:
                open_now = keeper.open_count()
                slow, slow_statuses = _latencies(port, bodies, headers, args.requests, args.clients)
                open_after = keeper.open_count()
            ratio = _p(slow, 0.99) / _p(calm, 0.99)
            print(
                f"run {run + 1}: without: p50 {_p(calm, 0.5):.1f} ms p99 {_p(calm, 0.99):.1f} ms "
                f"{calm_statuses}; with {open_now}..{open_after} slow open "
                f"({keeper.opened} opened): p50 {_p(slow, 0.5):.1f} ms p99 "
                f"{_p(slow, 0.99):.1f} ms {slow_statuses}; p99 ratio {ratio:.2f}; "
                f"load {os.getloadavg()[0]:.1f}"
            )
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
