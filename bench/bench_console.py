"""The auditors' console and signed checkpoints at scale (issue 16): N records in PostgreSQL.

    python -m bench.bench_console --records 1000000 \
        --database-url postgresql+psycopg://postgres@127.0.0.1:5432/verdict_console

1. Loads the chain exactly as bench.bench_history does (drop/recreate the database, COPY N
   hashed records with their subjects, ANALYZE); ``--skip-load`` reuses a loaded database.
2. Measures server time through the real Flask app (test client in-process, development mode
   on loopback, so no sign-in round trip): p50/p99 of ``/console/decisions`` with each filter
   and a deep keyset page, and of ``/console/decisions/{id}`` for random records.
3. Signs a checkpoint at the head with a fresh Ed25519 key and times
   ``GET /v1/audit/verify?checkpoint=`` over the whole chain (records/s).

Targets: decisions page p99 < 100 ms, one decision's page p99 < 150 ms, checkpoint
verification > 50,000 records/s.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from datetime import timedelta
from urllib.parse import quote

import orjson
from sqlalchemy import text
from sqlalchemy.engine import make_url

from bench.bench_history import LOOPBACK, _machine, _pct, _verdict, load, recreate_database
from service.app import create_app
from service.extensions import extensions
from service.store import checkpoints, records
from service.store.db import normalize_url

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/verdict_console"
TARGET_LIST_MS = 100.0
TARGET_DECISION_MS = 150.0
TARGET_VERIFY_RPS = 50_000


class ConsoleBench:
    def __init__(self, url: str, requests: int, seed: int) -> None:
        self.requests = requests
        self.rng = random.Random(f"bench-console-{seed}")
        self.app = create_app(
            {
                "DATABASE_URL": url,
                "AUTH_ENABLED": False,
                "LOG_LEVEL": "WARNING",
                "CHECKPOINT_KEY": checkpoints.generate_pem(),
            }
        )
        self.client = self.app.test_client()
        with extensions(self.app).db.engine.connect() as conn:
            self.count, self.min_seq, self.max_seq, self.first_at, self.last_at = conn.execute(
                text(
                    "SELECT count(*), min(seq), max(seq), min(created_at), max(created_at) FROM decisions"
                )
            ).one()
            sample = "TABLESAMPLE BERNOULLI (5)" if self.count > 50_000 else ""
            self.ids = (
                conn.execute(text(f"SELECT id FROM decisions {sample} LIMIT 5000")).scalars().all()
            )
            self.pods = conn.execute(
                text(
                    f"SELECT value FROM decision_subjects {sample} WHERE subject = 'pod' LIMIT 2000"
                )
            ).scalars().all() or ["default/none"]
            self.nodes = conn.execute(
                text(
                    f"SELECT value FROM decision_subjects {sample} WHERE subject = 'node' LIMIT 2000"
                )
            ).scalars().all() or ["none"]

    def get(self, path: str):
        return self.client.get(path, environ_base=LOOPBACK)

    def list_paths(self) -> dict[str, Callable[[], str]]:
        rng = self.rng
        span = (self.last_at - self.first_at).total_seconds()
        deep = max(self.min_seq + 1, self.min_seq + (self.max_seq - self.min_seq) // 100)

        def window() -> str:
            since = self.first_at + timedelta(seconds=rng.random() * max(span - 3600, 0))
            until = since + timedelta(hours=1)
            return (
                f"/console/decisions?since={quote(records.iso(since))}"
                f"&until={quote(records.iso(until))}"
            )

        return {
            "newest page": lambda: "/console/decisions",
            "pod=<ns/name>": lambda: (
                f"/console/decisions?pod={quote(rng.choice(self.pods), safe='')}"
            ),
            "nodeName=<node>": lambda: (
                f"/console/decisions?nodeName={quote(rng.choice(self.nodes))}"
            ),
            "kind=eviction": lambda: "/console/decisions?kind=eviction",
            "since..until (1 h)": window,
            "deep page (oldest 1%)": lambda: (
                f"/console/decisions?before={rng.randrange(self.min_seq + 1, deep + 1)}"
            ),
        }

    def measure(self, make_path: Callable[[], str]) -> dict:
        for _ in range(3):
            self.get(make_path())
        samples = []
        for _ in range(self.requests):
            path = make_path()
            t0 = time.perf_counter()
            response = self.get(path)
            response.get_data()
            samples.append((time.perf_counter() - t0) * 1000)
            if response.status_code != 200:
                raise SystemExit(
                    f"{path}: HTTP {response.status_code} {response.get_data()[:300]!r}"
                )
        return {"p50": _pct(samples, 50), "p99": _pct(samples, 99), "max": max(samples)}

    def measure_plain_verify(self) -> float:
        t0 = time.perf_counter()
        body = orjson.loads(self.get("/v1/audit/verify").get_data())
        return body["records"] / (time.perf_counter() - t0)

    def measure_checkpoint_verify(self) -> dict:
        checkpoint = orjson.loads(self.get("/v1/audit/checkpoint").get_data())
        path = f"/v1/audit/verify?checkpoint={quote(orjson.dumps(checkpoint).decode(), safe='')}"
        t0 = time.perf_counter()
        response = self.get(path)
        elapsed = time.perf_counter() - t0
        if response.status_code != 200:
            raise SystemExit(f"verify: HTTP {response.status_code} {response.get_data()[:300]!r}")
        body = orjson.loads(response.get_data())
        return {"seconds": elapsed, "rps": body["records"] / elapsed, **body}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=100, help="requests per page kind")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-load", action="store_true", help="measure the existing database")
    args = parser.parse_args()
    url = normalize_url(args.database_url)
    for line in _machine(url):
        print(line)
    if not args.skip_load:
        t0 = time.perf_counter()
        recreate_database(url)
        load(url, args.records, args.batch, args.seed)
        print(
            f"loaded {args.records:,} records into {make_url(url).database} in "
            f"{time.perf_counter() - t0:.1f} s"
        )
    bench = ConsoleBench(url, args.requests, args.seed)
    print(f"records: {bench.count:,}")
    misses = []
    print(
        f"\n/console/decisions, {args.requests} requests each (target p99 < {TARGET_LIST_MS:.0f} ms):"
    )
    for label, make_path in bench.list_paths().items():
        result = bench.measure(make_path)
        ok = result["p99"] < TARGET_LIST_MS
        misses += [] if ok else [label]
        print(
            f"  {_verdict(ok)} {label:<24} p50 {result['p50']:7.1f} ms  p99 {result['p99']:7.1f} ms"
            f"  max {result['max']:7.1f} ms"
        )
    result = bench.measure(lambda: f"/console/decisions/{bench.rng.choice(bench.ids)}")
    ok = result["p99"] < TARGET_DECISION_MS
    misses += [] if ok else ["decision page"]
    print(
        f"\n/console/decisions/<id> (target p99 < {TARGET_DECISION_MS:.0f} ms):\n  {_verdict(ok)} "
        f"p50 {result['p50']:7.1f} ms  p99 {result['p99']:7.1f} ms  max {result['max']:7.1f} ms"
    )
    plain = bench.measure_plain_verify()  # also warms the table into the cache
    verify = bench.measure_checkpoint_verify()
    fast = verify["rps"] >= TARGET_VERIFY_RPS
    misses += [] if fast else ["checkpoint verify"]
    print(
        f"\nGET /v1/audit/verify?checkpoint=: ok={verify['ok']} "
        f"extendsCheckpoint={verify['extendsCheckpoint']} records={verify['records']:,} in "
        f"{verify['seconds']:.2f} s = {verify['rps']:,.0f} records/s "
        f"[{_verdict(fast)} target >= {TARGET_VERIFY_RPS:,}/s]; plain verify just before: "
        f"{plain:,.0f} records/s"
    )
    if not (verify["ok"] and verify["extendsCheckpoint"]):
        raise SystemExit("verification against the head's checkpoint did not succeed")
    print(f"\ntargets missed: {', '.join(misses) if misses else 'none'}")


if __name__ == "__main__":
    main()
