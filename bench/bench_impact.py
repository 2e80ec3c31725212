"""POST /v1/impact over a stored history of placement and admission decisions on PostgreSQL.

    python -m bench.bench_impact --records 100000 \
        --database-url postgresql+psycopg://postgres@127.0.0.1:5432/verdict_impact

1. Empties the database's tables (``--skip-load`` keeps them) and migrates it.
2. Stores ``--snapshots`` generated clusters (``bench.generate``, seeds 1..S, ``--nodes`` and
   ``--pods`` each), then records ``--records`` decisions decided under Kubernetes 1.37 by the
   real code (``decisions.run.compute``, ``records.append``), half placements of new pods,
   half admissions of new pods on random nodes; one pod in five asks for pod-level resources,
   which NodeResourcesFit scores by its containers before 1.37 (docs/releases.md), so some
   placements change under ``--to`` (1.36 by default; under 1.35 and earlier every
   placement changes, as BalancedAllocation scores differently before 1.36).
3. Measures through the real Flask app (test client, auth off, loopback) the impact of
   replaying the whole history under ``--to``: ``POST /v1/impact`` page after page (``--limit``
   decisions each) to the last cursor. Prints decisions examined per second and the
   worker's resident memory after each page (it must stay flat: one page is held at a time).

``--profile`` runs cProfile over the first ``--profile-pages`` pages instead and prints the
top functions; ``--per-page R`` runs those pages R times and prints the best and median page.
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import random
import statistics
import time
import uuid
from datetime import UTC, datetime

from sqlalchemy import insert, text

from bench.generate.envelope import iter_chunks
from service.app import create_app
from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.objects import Cluster
from service.engine.version import ENGINE_VERSION
from service.ingest.body import parse_snapshot
from service.store import migrate, records
from service.store import snapshots as store
from service.store.db import Database
from service.store.models import AuditState, DecisionRow, DecisionSubject

DEFAULT_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/verdict_impact"
LOOPBACK = {"REMOTE_ADDR": "127.0.0.1"}
TARGET_PER_SECOND = 2_000
BATCH = 2_000
RECORD_COLUMNS = tuple(c.name for c in DecisionRow.__table__.columns)


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _empty(db: Database) -> None:
    migrate.upgrade(db.url)
    with db.engine.begin() as conn:
        conn.execute(text("TRUNCATE decision_subjects, decisions, audit_state, snapshots CASCADE"))


def _snapshot(db: Database, nodes: int, pods: int, seed: int) -> tuple[str, Cluster]:
    data = b"".join(
        iter_chunks(
            nodes,
            pods,
            seed,
            stats=False,
            list_only=False,
            captured_at="2026-11-20T10:00:00Z",
            volumes=False,
        )
    )
    parsed = parse_snapshot(data, content_type="application/json")
    cluster = Cluster(parsed.snapshot)
    with db.session(write=True) as session:
        row = store.save(
            session,
            parsed.snapshot,
            name=f"bench seed {seed}",
            cluster="bench",
            labels={},
            key_id=None,
            in_memory=cluster,
        )
        return row.id, cluster


def _pod(rng: random.Random, i: int) -> dict:
    cpu, memory = rng.randint(1, 20) * 50, rng.randint(1, 16) * 64
    spec: dict = {
        "containers": [
            {
                "name": "app",
                "image": "registry.example/app:1",
                "resources": {"requests": {"cpu": f"{cpu}m", "memory": f"{memory}Mi"}},
            }
        ]
    }
    if rng.random() < 0.2:
        spec["resources"] = {"requests": {"cpu": f"{cpu * 4}m", "memory": f"{memory}Mi"}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": f"bench-{i}", "namespace": f"team-{i % 40}", "uid": f"uid-{i}"},
        "spec": spec,
    }


def _decided(clusters, count: int):
    """``count`` decisions, decided by the real code: (kind, snapshot id, Outcome)."""
    rng = random.Random(26)
    for i in range(count):
        snapshot_id, cluster = clusters[i % len(clusters)]
        params: dict = {"pod": _pod(rng, i), "kubernetesVersion": "1.37"}
        kind = KINDS["placement" if i % 2 else "admission"]
        if kind.name == "admission":
            params["nodeName"] = rng.choice(cluster.nodes).name
        yield kind.name, snapshot_id, compute(kind, cluster, params)


def load(db: Database, count: int, nodes: int, pods: int, snapshots: int) -> None:
    """The records as ``records.append`` writes them (the same JSON text, the chain hashed
    with ``records.content_hash``), inserted in batches for speed; then the chain's head."""
    _empty(db)
    clusters = [_snapshot(db, nodes, pods, seed) for seed in range(1, snapshots + 1)]
    started = time.perf_counter()
    prev, seq, rows, subjects = records.GENESIS_HASH, 0, [], []
    before_head = prev
    table, subject_table = DecisionRow.__table__, DecisionSubject.__table__

    def flush() -> None:
        with db.session(write=True) as session:
            session.execute(insert(table), rows)
            session.execute(insert(subject_table), subjects)
        rows.clear()
        subjects.clear()

    for kind, snapshot_id, outcome in _decided(clusters, count):
        seq += 1
        record = records.StoredRecord(
            seq=seq,
            id=str(uuid.uuid4()),
            kind=kind,
            snapshot_id=snapshot_id,
            created_at=datetime.now(UTC),
            engine_version=ENGINE_VERSION,
            key_id=None,
            request={"snapshotId": snapshot_id, **outcome.request},
            result=outcome.result,
            prev_hash=prev,
            record_hash="",
        )
        before_head = prev
        record.record_hash = prev = records.content_hash(prev, record)
        rows.append({name: getattr(record, name) for name in RECORD_COLUMNS})
        subjects.extend(
            {"decision_seq": seq, "subject": subject, "value": value}
            for subject, values in (
                ("node", outcome.subjects.node_names),
                ("pod", outcome.subjects.pods),
            )
            for value in dict.fromkeys(values)
        )
        if len(rows) == BATCH:
            flush()
        if seq % 10_000 == 0 or seq == count:
            rate = seq / (time.perf_counter() - started)
            print(f"  decided and stored {seq:,} decisions ({rate:,.0f}/s)", flush=True)
    if rows:
        flush()
    with db.session(write=True) as session:
        session.execute(
            insert(AuditState.__table__).values(
                id=1,
                anchor_hash=records.GENESIS_HASH,
                anchor_seq=0,
                note="",
                head_seq=seq,
                head_hash=prev,
                head_prev_hash=before_head,
            )
        )
        session.execute(text("ANALYZE"))


def _pages(client, body: dict, pages: int | None = None):
    """Each page's (answer, seconds) to the last cursor (or ``pages`` pages)."""
    cursor, seen = None, 0
    while pages is None or seen < pages:
        request = {**body, **({"cursor": cursor} if cursor else {})}
        started = time.perf_counter()
        response = client.post("/v1/impact", json=request, environ_base=LOOPBACK)
        elapsed = time.perf_counter() - started
        assert response.status_code == 200, response.get_data(as_text=True)[:500]
        answer = response.json
        yield answer, elapsed
        seen += 1
        cursor = answer["nextCursor"]
        if cursor is None:
            return


def measure(client, body: dict) -> None:
    totals = {"examined": 0, "changed": 0, "failed": 0}
    rss, seconds, first_page = [], 0.0, None
    cpu = time.process_time()
    for answer, elapsed in _pages(client, body):
        seconds += elapsed
        for key in totals:
            totals[key] += answer[key]
        rss.append(_rss_mib())
        if first_page is None:
            first_page = elapsed
    cpu = time.process_time() - cpu
    rate = totals["examined"] / seconds
    print(
        f"examined {totals['examined']:,} in {seconds:.1f} s: {rate:,.0f} decisions/s "
        f"(target {TARGET_PER_SECOND:,}: {'met' if rate >= TARGET_PER_SECOND else 'MISSED'}); "
        f"changed {totals['changed']:,}, failed {totals['failed']:,}; "
        f"first page {first_page:.2f} s; {totals['examined'] / cpu:,.0f} decisions per "
        f"second of the worker's CPU time ({cpu:.1f} s)"
    )
    quarter = max(len(rss) // 4, 1)
    print(
        f"worker RSS after each page: first {rss[0]:.0f} MiB, after a quarter "
        f"{rss[quarter - 1]:.0f} MiB, min {min(rss):.0f}, max {max(rss):.0f}, "
        f"last {rss[-1]:.0f} MiB over {len(rss)} pages"
    )


def per_page(client, body: dict, pages: int, rounds: int) -> None:
    """The first ``pages`` pages, ``rounds`` times over: the best and median page as
    decisions per second, wall and the worker's CPU. On a shared machine the best page of
    each of two alternated processes compares code better than whole runs do."""
    walls, cpus = [], []
    examined, wall_total, cpu_total = 0, 0.0, 0.0
    for _ in range(rounds):
        cpu = time.process_time()
        for answer, elapsed in _pages(client, body, pages):
            spent = time.process_time() - cpu
            walls.append(answer["examined"] / elapsed)
            cpus.append(answer["examined"] / spent)
            examined, wall_total, cpu_total = (
                examined + answer["examined"],
                wall_total + elapsed,
                cpu_total + spent,
            )
            cpu = time.process_time()
    print(
        f"{len(walls)} pages: wall best {max(walls):,.0f}/s, median {statistics.median(walls):,.0f}/s; "
        f"per CPU second best {max(cpus):,.0f}, median {statistics.median(cpus):,.0f}; "
        f"all pages {examined / wall_total:,.0f}/s wall, {examined / cpu_total:,.0f} per CPU second"
    )


def profile(client, body: dict, pages: int) -> None:
    profiler = cProfile.Profile()
    profiler.enable()
    for _ in _pages(client, body, pages):
        pass
    profiler.disable()
    pstats.Stats(profiler).sort_stats("cumulative").print_stats(40)
    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_impact")
    parser.add_argument("--database-url", default=DEFAULT_URL)
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--pods", type=int, default=400)
    parser.add_argument("--snapshots", type=int, default=4)
    parser.add_argument("--limit", type=int, default=1000)
    parser.add_argument("--to", default="1.36", help="the release replayed under")
    parser.add_argument("--skip-load", action="store_true")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--profile-pages", type=int, default=3)
    parser.add_argument(
        "--per-page",
        type=int,
        metavar="ROUNDS",
        help="the first --profile-pages pages ROUNDS times: best and median page",
    )
    args = parser.parse_args(argv)
    print(
        f"{datetime.now().isoformat(timespec='seconds')} {platform.node()} "
        f"{os.cpu_count()} cpu, load {os.getloadavg()[0]:.2f}; "
        f"{args.records:,} records, {args.snapshots} snapshots of {args.nodes} nodes and "
        f"{args.pods} pods"
    )
    db = Database(args.database_url)
    if not args.skip_load:
        load(db, args.records, args.nodes, args.pods, args.snapshots)
    db.dispose()
    app = create_app(
        {
            "DATABASE_URL": args.database_url,
            "AUTH_ENABLED": False,
            "LOG_LEVEL": "WARNING",
            "PRELOAD_SNAPSHOTS": 0,
        }
    )
    client = app.test_client()
    body = {"kubernetesVersion": args.to, "limit": args.limit}
    if args.profile:
        profile(client, body, args.profile_pages)
    elif args.per_page:
        per_page(client, body, args.profile_pages, args.per_page)
    else:
        measure(client, body)
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
