"""Preemption over HTTP from a stored 150,000-pod snapshot: the first request and the cached
ones, through a real `verdict serve` (one gunicorn worker).

    python -m bench.bench_preemption_http [--snapshot snap.msgpack] [--database-url URL]

``--snapshot`` is a msgspec-msgpack Snapshot (as bench_scheduler takes); without it the
synthetic cluster is generated (about a minute). The snapshot is stored straight through the
store layer, not POSTed: ingest is bench_ingest's subject. Three servers are started in turn:

- ``cold``: warming off (VERDICT_PRELOAD_SNAPSHOTS=0); the first request reads the stored
  scheduler view, restores it, builds the preemption indexes, then decides (the pods of the
  snapshot are never decoded);
- ``warm``: warming on; the first request is sent once the worker logs that it warmed the
  snapshot (it does so right after start);
- in both, five more requests show the cached path.

The preemptor wants host port 9100, which every generated node's node-exporter holds at a
lower priority, and asks for every potential node to be a candidate
(minCandidateNodesPercentage 100).
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

import msgspec

from bench.common import VERDICT, create_key, free_port, snapshot_from_envelope, wait_healthy
from service.engine.objects import Snapshot
from service.store import migrate
from service.store import snapshots as store
from service.store.db import Database

PREEMPTOR = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "preemptor", "namespace": "bench", "uid": "bench-preemptor"},
    "spec": {
        "priority": 1_000_000,
        "containers": [
            {
                "name": "c",
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                "ports": [{"containerPort": 9100, "hostPort": 9100}],
            }
        ],
    },
}


def _snapshot(path: Path | None) -> Snapshot:
    if path is not None:
        return msgspec.msgpack.decode(path.read_bytes(), type=Snapshot)
    from bench.generate import generate

    env = generate(5000, 150_000, 1, stats=False)
    return snapshot_from_envelope(env)


def _store(url: str, snapshot: Snapshot) -> str:
    migrate.upgrade(url)
    db = Database(url)
    with db.session(write=True) as session:
        row = store.save(session, snapshot, name="bench", cluster=None, labels={}, key_id=None)
        snapshot_id = row.id
    db.dispose()
    return snapshot_id


def _request(port: int, secret: str, snapshot_id: str) -> tuple[float, int, int]:
    body = json.dumps(
        {
            "snapshotId": snapshot_id,
            "pod": PREEMPTOR,
            "options": {"minCandidateNodesPercentage": 100, "offset": 0},
        }
    ).encode()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    started = time.perf_counter()
    conn.request(
        "POST",
        "/v1/decisions/preemption",
        body=body,
        headers={"Authorization": f"Bearer {secret}", "Content-Type": "application/json"},
    )
    response = conn.getresponse()
    payload = response.read()
    elapsed = (time.perf_counter() - started) * 1000
    if response.status != 201:
        raise SystemExit(f"preemption answered {response.status}: {payload[:500]!r}")
    candidates = len(json.loads(payload)["result"]["candidates"])
    return elapsed, len(payload), candidates


def _serve(env: dict, port: int, warm: bool) -> tuple[subprocess.Popen, threading.Event, float]:
    env = {
        **env,
        "VERDICT_PRELOAD_SNAPSHOTS": "1" if warm else "0",
        "VERDICT_LOG_LEVEL": "INFO",
    }
    started = time.perf_counter()
    server = subprocess.Popen(
        [VERDICT, "serve", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    warmed = threading.Event()

    def watch() -> None:
        for line in server.stderr:
            if "snapshot warmed" in line:
                warmed.set()

    threading.Thread(target=watch, daemon=True).start()
    wait_healthy(port)
    return server, warmed, started


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_preemption_http")
    parser.add_argument("--snapshot", type=Path)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="verdict-preempt-"))
    url = args.database_url or f"sqlite:///{workdir / 'verdict.db'}"
    env = {**os.environ, "VERDICT_INSTANCE_PATH": str(workdir), "VERDICT_DATABASE_URL": url}
    snapshot = _snapshot(args.snapshot)
    print(f"snapshot: {len(snapshot.nodes)} nodes, {len(snapshot.pods)} pods")
    snapshot_id = _store(url, snapshot)
    del snapshot
    secret = create_key(env)
    for mode in ("cold", "warm"):
        port = free_port()
        server, warmed, started = _serve(env, port, warm=mode == "warm")
        try:
            if mode == "warm":
                if not warmed.wait(timeout=300):
                    raise SystemExit("the worker never reported the snapshot warm")
                ready = time.perf_counter() - started
                print(f"warm: worker started and warmed the snapshot in {ready:.1f} s")
            first, size, candidates = _request(port, secret, snapshot_id)
            again = [_request(port, secret, snapshot_id)[0] for _ in range(5)]
        finally:
            server.terminate()
            server.wait(timeout=60)
        print(
            f"{mode}: first request {first:.0f} ms; then median {statistics.median(again):.0f} ms, "
            f"max {max(again):.0f} ms ({candidates} candidates, response {size / 1e6:.1f} MB)"
        )


if __name__ == "__main__":
    main()
