"""Decision history at scale: a valid hash chain of N records in PostgreSQL, read through HTTP.

    python -m bench.bench_history --records 1000000 \
        --database-url postgresql+psycopg://postgres@127.0.0.1:5432/verdict_history

1. Drops and recreates the database (from the ``test`` database, AUTOCOMMIT), then
   ``migrate.upgrade``.
2. Loads N decision records with COPY, in batches: one node and one pod subject each, created
   over 90 days (non-decreasing with ``seq``, as ``append`` writes them), the chain hashed with
   ``records.content_hash`` exactly as ``append`` does; then ANALYZE.
3. Measures through the real Flask app (test client, auth off, loopback): p50/p99 of filtered
   pages (pod, nodeName, kind, since/until, deep cursor), ``GET /v1/audit/verify`` over the whole
   chain and ``GET /v1/decisions/export`` streamed to the end, against the targets below.

``--skip-load`` measures an already loaded database. ``--profile`` adds cProfile of one verify,
one export and one page of each kind, and EXPLAIN ANALYZE of the SQL those pages run.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import platform
import pstats
import random
import statistics
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from urllib.parse import quote

import orjson
import psycopg
from sqlalchemy import create_engine, event, text
from sqlalchemy.engine import make_url

from service.api.requests import encode_cursor
from service.app import create_app
from service.engine.version import ENGINE_VERSION
from service.extensions import extensions
from service.store import migrate, records
from service.store.db import normalize_url

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/verdict_history"
KINDS = ("admission", "eviction", "preemption", "placement", "node-eviction-rate")
NODES = 5_000
PODS = 150_000
NAMESPACES = 300
SPAN = timedelta(days=90)
START = datetime(2026, 8, 1, tzinfo=UTC)
LOOPBACK = {"REMOTE_ADDR": "127.0.0.1"}

TARGET_PAGE_MS = 50.0
TARGET_VERIFY_RPS = 50_000
TARGET_EXPORT_RPS = 20_000

DECISION_COLUMNS = (
    "seq",
    "id",
    "kind",
    "snapshot_id",
    "created_at",
    "engine_version",
    "key_id",
    "request",
    "result",
    "prev_hash",
    "record_hash",
)


# --------------------------------------------------------------------------- database


def _psycopg_conninfo(url: str) -> str:
    """A libpq URI for psycopg.connect from a SQLAlchemy URL."""
    return make_url(normalize_url(url)).set(drivername="postgresql").render_as_string(False)


def recreate_database(url: str) -> None:
    target = make_url(normalize_url(url))
    name = target.database
    if not name or not name.replace("_", "").isalnum():
        raise SystemExit(f"refusing to recreate database {name!r}")
    admin = create_engine(target.set(database="test"), isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
            conn.execute(text(f'CREATE DATABASE "{name}"'))
    finally:
        admin.dispose()
    migrate.upgrade(str(target.render_as_string(False)))


# --------------------------------------------------------------------------- synthetic data


class _Record:
    """The attributes ``records.content_hash`` reads from a DecisionRow."""

    __slots__ = (
        "created_at",
        "engine_version",
        "id",
        "key_id",
        "kind",
        "request",
        "result",
        "seq",
        "snapshot_id",
    )


def _node_names(rng: random.Random) -> list[str]:
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c", "us-east-1a", "us-east-1b", "us-east-1d"]
    names: set[str] = set()
    out = []
    while len(out) < NODES:
        zone = rng.choice(zones)
        region = zone[:-1]
        name = (
            f"ip-10-{rng.randrange(256)}-{rng.randrange(256)}-{rng.randrange(1, 255)}"
            f".{region}.compute.internal"
        )
        if name not in names:
            names.add(name)
            out.append(name)
    return out


def _pod_keys(rng: random.Random) -> list[str]:
    teams = ["payments", "search", "ads", "ml", "infra", "web", "data", "auth", "media", "ops"]
    namespaces = [f"{rng.choice(teams)}-{i:03d}" for i in range(NAMESPACES)]
    workloads = ["api", "worker", "frontend", "cache", "indexer", "consumer", "cron", "proxy"]
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    keys: set[str] = set()
    out = []
    while len(out) < PODS:
        ns = rng.choice(namespaces)
        template = "".join(rng.choice(alphabet) for _ in range(10))
        suffix = "".join(rng.choice(alphabet) for _ in range(5))
        key = f"{ns}/{rng.choice(workloads)}-{template}-{suffix}"
        if key not in keys:
            keys.add(key)
            out.append(key)
    return out


class Generator:
    """Deterministic records: realistic request/result bodies of about 1 KB."""

    def __init__(self, total: int, seed: int) -> None:
        self.total = total
        self.head = (0, records.GENESIS_HASH, records.GENESIS_HASH)
        self.rng = random.Random(f"bench-history-{seed}")
        self.nodes = _node_names(self.rng)
        self.pods = _pod_keys(self.rng)
        self.snapshots = [
            str(uuid.UUID(int=self.rng.getrandbits(128), version=4)) for _ in range(40)
        ]
        self.keys = [str(uuid.UUID(int=self.rng.getrandbits(128), version=4)) for _ in range(6)]
        self.step_us = SPAN / timedelta(microseconds=1) / max(total, 1)

    def _pod(self, key: str) -> dict:
        rng = self.rng
        ns, name = key.split("/")
        app = name.rsplit("-", 2)[0]
        cpu = rng.choice((100, 250, 500, 1000, 2000))
        mem = rng.choice((128, 256, 512, 1024, 2048, 4096))
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": ns,
                "labels": {"app": app, "pod-template-hash": name.rsplit("-", 2)[1]},
                "ownerReferences": [
                    {
                        "apiVersion": "apps/v1",
                        "kind": "ReplicaSet",
                        "name": name.rsplit("-", 1)[0],
                        "controller": True,
                    }
                ],
            },
            "spec": {
                "priorityClassName": rng.choice(("default", "high", "batch-low")),
                "containers": [
                    {
                        "name": app,
                        "image": f"registry.example.com/{ns}/{app}:1.{rng.randrange(40)}.0",
                        "resources": {
                            "requests": {"cpu": f"{cpu}m", "memory": f"{mem}Mi"},
                            "limits": {"cpu": f"{cpu * 2}m", "memory": f"{mem}Mi"},
                        },
                    }
                ],
                "tolerations": [
                    {
                        "key": "node.kubernetes.io/not-ready",
                        "operator": "Exists",
                        "effect": "NoExecute",
                        "tolerationSeconds": 300,
                    }
                ],
            },
        }

    def _node_usage(self, node: str) -> dict:
        rng = self.rng
        return {
            "name": node,
            "allocatable": {"cpu": "7910m", "memory": "30310Mi", "pods": "110"},
            "requested": {
                "cpu": f"{rng.randrange(500, 7900)}m",
                "memory": f"{rng.randrange(1024, 30000)}Mi",
                "pods": str(rng.randrange(5, 110)),
            },
        }

    def bodies(self, kind: str, node: str, pod: str) -> tuple[dict, dict]:
        rng = self.rng
        snapshot = rng.choice(self.snapshots)
        ns, name = pod.split("/")
        if kind == "admission":
            admitted = rng.random() < 0.8
            request = {"snapshotId": snapshot, "nodeName": node, "pod": self._pod(pod)}
            result = {
                "admitted": admitted,
                "reasons": [] if admitted else [{"reason": "OutOfmemory", "resource": "memory"}],
                "node": self._node_usage(node),
                "preemption": None,
            }
        elif kind == "eviction":
            observed = rng.randrange(50, 4000)
            request = {
                "snapshotId": snapshot,
                "nodeName": node,
                "config": {
                    "evictionHard": "memory.available<100Mi,nodefs.available<10%",
                    "evictionSoft": "memory.available<500Mi",
                    "evictionSoftGracePeriod": "memory.available=1m30s",
                },
            }
            result = {
                "node": node,
                "signals": [
                    {
                        "signal": "memory.available",
                        "observed": f"{observed}Mi",
                        "threshold": "100Mi",
                        "pressure": observed < 100,
                    },
                    {
                        "signal": "nodefs.available",
                        "observed": f"{rng.randrange(1, 90)}%",
                        "threshold": "10%",
                        "pressure": False,
                    },
                    {
                        "signal": "imagefs.available",
                        "observed": f"{rng.randrange(1, 90)}%",
                        "threshold": "15%",
                        "pressure": False,
                    },
                ],
                "conditions": {"MemoryPressure": observed < 100, "DiskPressure": False},
                "evictions": [
                    {
                        "namespace": ns,
                        "name": name,
                        "reason": "Evicted",
                        "message": f"The node was low on resource: memory. Container {name} "
                        f"was using {rng.randrange(100, 4000)}Mi, request is 512Mi.",
                        "rank": 1,
                        "qosClass": rng.choice(("BestEffort", "Burstable")),
                    }
                ],
            }
        elif kind == "preemption":
            request = {"snapshotId": snapshot, "pod": self._pod(pod)}
            result = {
                "nominatedNode": node,
                "victims": [
                    {
                        "namespace": ns,
                        "name": f"batch-{rng.randrange(10**6)}",
                        "priority": rng.choice((0, 100, 1000)),
                    }
                    for _ in range(rng.randrange(1, 4))
                ],
                "pdbViolations": 0,
                "candidatesConsidered": rng.randrange(1, 500),
            }
        elif kind == "placement":
            request = {"snapshotId": snapshot, "pod": self._pod(pod)}
            result = {
                "node": node,
                "feasibleNodes": rng.randrange(1, NODES),
                "scores": [
                    {
                        "node": node if i == 0 else rng.choice(self.nodes),
                        "score": rng.randrange(100, 400),
                        "plugins": {
                            "NodeResourcesFit": rng.randrange(100),
                            "NodeAffinity": 0,
                            "TaintToleration": 100,
                            "PodTopologySpread": rng.randrange(200),
                        },
                    }
                    for i in range(3)
                ],
            }
        else:  # node-eviction-rate
            zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
            request = {
                "snapshotId": snapshot,
                "config": {
                    "evictionRate": 0.1,
                    "secondaryEvictionRate": 0.01,
                    "unhealthyZoneThreshold": 0.55,
                    "largeClusterSizeThreshold": 50,
                },
            }
            result = {
                "zones": [
                    {
                        "zone": zone,
                        "state": "Normal" if i else rng.choice(("Normal", "PartialDisruption")),
                        "nodes": rng.randrange(500, 2000),
                        "notReady": rng.randrange(0, 20),
                        "rate": 0.1 if i else rng.choice((0.1, 0.01)),
                    }
                    for i, zone in enumerate(zones)
                ],
                "notReadyNodes": [node, *(rng.choice(self.nodes) for _ in range(rng.randrange(4)))],
                "podsToEvict": [pod],
                "fractionNotReady": round(rng.random() * 0.05, 6),
            }
        return request, result

    def batches(self, size: int) -> Iterator[tuple[list[tuple], list[tuple]]]:
        """(decision rows, subject rows) for COPY, the chain hashed as ``append`` does."""
        rng = self.rng
        prev_hash = records.GENESIS_HASH
        for first in range(1, self.total + 1, size):
            decisions, subjects = [], []
            for seq in range(first, min(first + size, self.total + 1)):
                row = _Record()
                row.seq = seq
                row.id = str(uuid.UUID(int=rng.getrandbits(128), version=4))
                row.kind = KINDS[(seq - 1) % len(KINDS)]
                row.snapshot_id = None
                # Non-decreasing in seq (live records can be a few ms out of order: see records.prune).
                offset = (seq - 1) * self.step_us + rng.random() * self.step_us
                row.created_at = START + timedelta(microseconds=int(offset))
                row.engine_version = ENGINE_VERSION
                row.key_id = rng.choice(self.keys) if rng.random() < 0.9 else None
                node, pod = rng.choice(self.nodes), rng.choice(self.pods)
                row.request, row.result = self.bodies(row.kind, node, pod)
                record_hash = records.content_hash(prev_hash, row)
                decisions.append(
                    (
                        row.seq,
                        row.id,
                        row.kind,
                        row.snapshot_id,
                        row.created_at,
                        row.engine_version,
                        row.key_id,
                        orjson.dumps(row.request).decode(),
                        orjson.dumps(row.result).decode(),
                        prev_hash,
                        record_hash,
                    )
                )
                subjects.append((seq, "node", node))
                subjects.append((seq, "pod", pod))
                self.head = (seq, record_hash, prev_hash)
                prev_hash = record_hash
            yield decisions, subjects


def load(url: str, total: int, batch: int, seed: int) -> dict:
    generator = Generator(total, seed)
    columns = ", ".join(DECISION_COLUMNS)
    generate_s = copy_s = 0.0
    body_bytes = 0
    started = time.perf_counter()
    with psycopg.connect(_psycopg_conninfo(url)) as conn:
        conn.execute("SET synchronous_commit = off")
        batches = generator.batches(batch)
        while True:
            t0 = time.perf_counter()
            chunk = next(batches, None)
            t1 = time.perf_counter()
            generate_s += t1 - t0
            if chunk is None:
                break
            decisions, subjects = chunk
            body_bytes += sum(len(d[7]) + len(d[8]) for d in decisions)
            with conn.cursor() as cur:
                with cur.copy(f"COPY decisions ({columns}) FROM STDIN") as copy:
                    for row in decisions:
                        copy.write_row(row)
                with cur.copy(
                    "COPY decision_subjects (decision_seq, subject, value) FROM STDIN"
                ) as copy:
                    for row in subjects:
                        copy.write_row(row)
            conn.commit()
            copy_s += time.perf_counter() - t1
        # The chain's head, as append keeps it (verify checks the newest record against it).
        seq, record_hash, prev_hash = generator.head
        conn.execute(
            "UPDATE audit_state SET head_seq = %s, head_hash = %s, head_prev_hash = %s WHERE id = 1",
            (seq, record_hash, prev_hash),
        )
        conn.commit()
        insert_s = time.perf_counter() - started
        t0 = time.perf_counter()
        conn.autocommit = True
        conn.execute("VACUUM (ANALYZE) decisions")
        conn.execute("VACUUM (ANALYZE) decision_subjects")
        analyze_s = time.perf_counter() - t0
    return {
        "insert_s": insert_s,
        "generate_s": generate_s,
        "copy_s": copy_s,
        "analyze_s": analyze_s,
        "avg_body_bytes": body_bytes / max(total, 1),
    }


# --------------------------------------------------------------------------- measuring


def _pct(samples: list[float], q: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[q - 1]


class Bench:
    def __init__(self, url: str, requests: int, seed: int) -> None:
        self.url = url
        self.requests = requests
        self.rng = random.Random(f"bench-history-queries-{seed}")
        self.app = create_app({"DATABASE_URL": url, "AUTH_ENABLED": False, "LOG_LEVEL": "WARNING"})
        self.client = self.app.test_client()
        self.db = extensions(self.app).db
        with self.db.engine.connect() as conn:
            self.count, self.min_seq, self.max_seq, self.first_at, self.last_at = conn.execute(
                text(
                    "SELECT count(*), min(seq), max(seq), min(created_at), max(created_at) FROM decisions"
                )
            ).one()
            # Subjects that exist, so every filtered page has something to return.
            self.pod_values = conn.execute(
                text(
                    "SELECT value FROM decision_subjects TABLESAMPLE BERNOULLI (5) "
                    "WHERE subject = 'pod' LIMIT 2000"
                )
            ).scalars().all() or ["default/none"]
            self.node_values = conn.execute(
                text(
                    "SELECT value FROM decision_subjects TABLESAMPLE BERNOULLI (5) "
                    "WHERE subject = 'node' LIMIT 2000"
                )
            ).scalars().all() or ["none"]

    def get(self, path: str, **kwargs):
        return self.client.get(path, environ_base=LOOPBACK, **kwargs)

    def page_paths(self) -> dict[str, Callable[[], str]]:
        rng = self.rng
        span = (self.last_at - self.first_at).total_seconds()
        deep = max(self.min_seq + 1, self.min_seq + (self.max_seq - self.min_seq) // 100)

        def window() -> str:
            since = self.first_at + timedelta(seconds=rng.random() * max(span - 3600, 0))
            until = since + timedelta(hours=1)
            return (
                f"/v1/decisions?since={quote(records.iso(since))}"
                f"&until={quote(records.iso(until))}&limit=50"
            )

        def cursor(kind: str = "") -> str:
            before = rng.randrange(self.min_seq + 1, deep + 1)
            return f"/v1/decisions?limit=50{kind}&cursor={encode_cursor(str(before))}"

        return {
            "pod=<ns/name>&limit=50": lambda: (
                f"/v1/decisions?pod={quote(rng.choice(self.pod_values), safe='')}&limit=50"
            ),
            "nodeName=<node>&limit=50": lambda: (
                f"/v1/decisions?nodeName={quote(rng.choice(self.node_values))}&limit=50"
            ),
            "kind=eviction&limit=50": lambda: "/v1/decisions?kind=eviction&limit=50",
            "since=..&until=.. (1 h)": window,
            "deep cursor (oldest 1%)": cursor,
            "kind=eviction + deep cursor": lambda: cursor("&kind=eviction"),
        }

    def measure_page(self, make_path: Callable[[], str]) -> dict:
        for _ in range(3):  # warm-up: connection pool, first-request setup
            self.get(make_path())
        samples, items = [], 0
        for _ in range(self.requests):
            path = make_path()
            t0 = time.perf_counter()
            response = self.get(path)
            body = response.get_data()
            samples.append((time.perf_counter() - t0) * 1000)
            if response.status_code != 200:
                raise SystemExit(f"{path}: HTTP {response.status_code} {body[:300]!r}")
            items += len(orjson.loads(body)["items"])
        return {
            "p50": _pct(samples, 50),
            "p99": _pct(samples, 99),
            "max": max(samples),
            "avg_items": items / self.requests,
        }

    def measure_verify(self) -> dict:
        t0 = time.perf_counter()
        response = self.get("/v1/audit/verify")
        elapsed = time.perf_counter() - t0
        if response.status_code != 200:
            raise SystemExit(f"verify: HTTP {response.status_code} {response.get_data()[:300]!r}")
        body = orjson.loads(response.get_data())
        return {"seconds": elapsed, "rps": body["records"] / elapsed, **body}

    def measure_export(self) -> dict:
        t0 = time.perf_counter()
        response = self.get("/v1/decisions/export", buffered=False)
        if response.status_code != 200:
            raise SystemExit(f"export: HTTP {response.status_code}")
        lines = size = 0
        first = last = b""
        pending = b""
        try:
            for chunk in response.response:
                lines += chunk.count(b"\n")
                size += len(chunk)
                pending += chunk
                if b"\n" in pending:
                    head, _, pending = pending.rpartition(b"\n")
                    last = head.rsplit(b"\n", 1)[-1]
                    if not first:
                        first = head.split(b"\n", 1)[0]
        finally:
            response.close()
        elapsed = time.perf_counter() - t0
        return {
            "seconds": elapsed,
            "lines": lines,
            "bytes": size,
            "rps": lines / elapsed,
            "first_seq": orjson.loads(first)["sequence"] if first else None,
            "last_seq": orjson.loads(last)["sequence"] if last else None,
        }

    # ----------------------------------------------------------------------- profiling

    def profile(self, label: str, call: Callable[[], object], top: int = 25) -> None:
        profiler = cProfile.Profile()
        t0 = time.perf_counter()
        profiler.enable()
        call()
        profiler.disable()
        elapsed = time.perf_counter() - t0
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out).strip_dirs()
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(top)
        print(f"\n===== cProfile: {label} ({elapsed:.2f} s under the profiler) =====")
        print(out.getvalue())

    def explain(self, label: str, path: str) -> None:
        """EXPLAIN ANALYZE the statements the app actually runs for ``path``."""
        captured: list[tuple[str, object]] = []

        def capture(_conn, _cursor, statement, parameters, _context, _many):
            captured.append((statement, parameters))

        event.listen(self.db.engine, "before_cursor_execute", capture)
        try:
            self.get(path)
        finally:
            event.remove(self.db.engine, "before_cursor_execute", capture)
        print(f"\n===== EXPLAIN ANALYZE: {label}\n{path}")
        with self.db.engine.connect() as conn:
            for statement, parameters in captured:
                if not statement.lstrip().upper().startswith("SELECT"):
                    continue
                plan = conn.exec_driver_sql(
                    "EXPLAIN (ANALYZE, BUFFERS) " + statement, parameters
                ).scalars()
                print("\n".join(plan))


# --------------------------------------------------------------------------- main


def _machine(url: str) -> list[str]:
    admin = make_url(url).set(database="test").render_as_string(False)
    with psycopg.connect(_psycopg_conninfo(admin)) as conn:
        version = conn.execute("SHOW server_version").fetchone()[0]
        shared = conn.execute("SHOW shared_buffers").fetchone()[0]
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = f"{int(f.readline().split()[1]) / 1024**2:.1f} GiB RAM"
    except OSError:
        pass
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return [
        f"machine: {os.cpu_count()} cores ({cpu}), {mem}, {platform.system()} {platform.release()}",
        f"python: {platform.python_implementation()} {platform.python_version()}",
        f"postgresql: {version} (shared_buffers {shared}), same host over TCP",
    ]


def _verdict(ok: bool) -> str:
    return "OK  " if ok else "MISS"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--records", type=int, default=1_000_000)
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--batch", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=100, help="requests per page query")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-load", action="store_true", help="measure the existing database")
    parser.add_argument("--profile", action="store_true", help="cProfile + EXPLAIN ANALYZE")
    args = parser.parse_args()
    url = normalize_url(args.database_url)

    for line in _machine(url):
        print(line)
    if not args.skip_load:
        t0 = time.perf_counter()
        recreate_database(url)
        print(
            f"recreated {make_url(url).database} + migrate.upgrade: {time.perf_counter() - t0:.1f} s"
        )
        stats = load(url, args.records, args.batch, args.seed)
        print(
            f"records: {args.records:,} (avg request+result JSON {stats['avg_body_bytes']:.0f} B, "
            f"{2 * args.records:,} subjects)"
        )
        print(
            f"insert: {stats['insert_s']:.1f} s ({args.records / stats['insert_s']:,.0f} records/s; "
            f"generate+hash {stats['generate_s']:.1f} s, COPY {stats['copy_s']:.1f} s), "
            f"VACUUM ANALYZE {stats['analyze_s']:.1f} s"
        )

    bench = Bench(url, args.requests, args.seed)
    if args.skip_load:
        print(f"records: {bench.count:,} (existing database)")
    expected = args.records if not args.skip_load else bench.count
    if bench.count != expected:
        raise SystemExit(f"expected {expected} records, found {bench.count}")

    print(
        f"\nGET /v1/decisions, {args.requests} requests each (Flask test client, "
        f"target p99 < {TARGET_PAGE_MS:.0f} ms):"
    )
    misses = []
    for label, make_path in bench.page_paths().items():
        result = bench.measure_page(make_path)
        ok = result["p99"] < TARGET_PAGE_MS
        if not ok:
            misses.append(label)
        print(
            f"  {_verdict(ok)} {label:<30} p50 {result['p50']:7.1f} ms  p99 {result['p99']:7.1f} ms"
            f"  max {result['max']:7.1f} ms  items/page {result['avg_items']:.1f}"
        )

    verify = bench.measure_verify()
    ok = verify["ok"] is True and verify["records"] == expected
    fast = verify["rps"] >= TARGET_VERIFY_RPS
    print(
        f"\nGET /v1/audit/verify: ok={verify['ok']} records={verify['records']:,} "
        f"firstBadId={verify['firstBadId']} in {verify['seconds']:.1f} s = "
        f"{verify['rps']:,.0f} records/s  [{_verdict(fast)} target >= {TARGET_VERIFY_RPS:,}/s]"
    )
    if not ok:
        raise SystemExit("verify did not report ok=true over every record")
    if not fast:
        misses.append("verify")

    export = bench.measure_export()
    fast = export["rps"] >= TARGET_EXPORT_RPS
    print(
        f"GET /v1/decisions/export: {export['lines']:,} lines, {export['bytes'] / 2**20:,.0f} MiB "
        f"(sequence {export['first_seq']}..{export['last_seq']}) in {export['seconds']:.1f} s = "
        f"{export['rps']:,.0f} records/s  [{_verdict(fast)} target >= {TARGET_EXPORT_RPS:,}/s]"
    )
    if export["lines"] != expected:
        raise SystemExit(f"export streamed {export['lines']} lines, expected {expected}")
    if not fast:
        misses.append("export")
    print(f"\ntargets missed: {', '.join(misses) if misses else 'none'}")

    if args.profile:
        for label, make_path in bench.page_paths().items():
            bench.explain(label, make_path())
        paths = bench.page_paths()
        bench.profile(
            "20 x GET /v1/decisions?pod=..",
            lambda: [bench.get(paths["pod=<ns/name>&limit=50"]()) for _ in range(20)],
        )
        bench.profile("GET /v1/audit/verify", lambda: bench.get("/v1/audit/verify"))
        bench.profile("GET /v1/decisions/export", bench.measure_export)
    bench.db.dispose()


if __name__ == "__main__":
    main()
