"""Scheduler engine benchmark: placement scoring and DefaultPreemption on a large synthetic
snapshot (engine time, snapshot already loaded).

    python -m bench.bench_scheduler --nodes 5000 --pods 150000 [--body cluster.json]

Targets: preemption for one pending pod with every node a candidate < 300 ms; placement of
one pod over 5,000 nodes < 100 ms. Reported separately: building the per-Cluster scheduler
view (NodeInfo aggregates over every pod), paid once per Cluster and cached.

The preemptor wants host port 9100 (every generated node runs node-exporter on it, at a lower
priority), so every schedulable node is Unschedulable for it and becomes a candidate with one
victim; with the default arguments the dry run stops after 10% of the potential nodes, with
``minCandidateNodesPercentage=100`` it evaluates every one of them.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

import msgspec
import orjson

from service.engine.objects import Cluster, Container, ContainerPort, Pod, Snapshot
from service.engine.scheduler.placement import place
from service.engine.scheduler.preemption import preempt
from service.engine.scheduler.profile import DefaultPreemptionArgs as PreemptionArgs
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects
from service.store import snapshots as store
from service.store.scheduler_view import restore

GI = 1024**3


def _cluster(nodes: int, pods: int, seed: int, body: Path | None) -> Cluster:
    if body is not None and body.suffix == ".msgpack":
        return Cluster(msgspec.msgpack.decode(body.read_bytes(), type=Snapshot))
    if body is not None:
        env = orjson.loads(body.read_bytes())
    else:
        from bench.generate import generate

        env = generate(nodes, pods, seed, stats=False)
    objects = env["objects"]
    items = objects["items"] if isinstance(objects, dict) else objects
    return Cluster(snapshot_from_objects(items, env.get("stats")))


def _timed(fn, repeat: int) -> tuple[float, float, object]:
    """(median ms, min ms, last result) over ``repeat`` runs with the collector paused."""
    times = []
    result = None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
        gc.enable()
    return statistics.median(times), min(times), result


def _stored_view(cluster: Cluster) -> None:
    """The scheduler view's stored form: writing it (on ingest), and restoring it (the first
    scheduler decision in a process that has not decoded the snapshot)."""
    started = time.perf_counter()
    blob = store.encode_view(cluster)
    encoded = (time.perf_counter() - started) * 1000
    gc.disable()
    started = time.perf_counter()
    stored = store.decode_view(blob)
    decoded = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    restore(stored)
    restored = (time.perf_counter() - started) * 1000
    gc.enable()
    print(
        f"stored scheduler view: {len(blob) / 1e6:.1f} MB; written in {encoded:.0f} ms; "
        f"read back in {decoded:.0f} ms (decompress + decode), restored in {restored:.0f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_scheduler")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--body",
        type=Path,
        help="a generated envelope (JSON), or a msgpack-encoded Snapshot (.msgpack)",
    )
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)

    started = time.perf_counter()
    cluster = _cluster(args.nodes, args.pods, args.seed, args.body)
    print(
        f"snapshot: {len(cluster.snapshot.nodes)} nodes, {len(cluster.snapshot.pods)} pods "
        f"(loaded in {time.perf_counter() - started:.1f} s)"
    )
    started = time.perf_counter()
    scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    print(f"scheduler view (once per Cluster): {(time.perf_counter() - started) * 1000:.0f} ms")
    _stored_view(cluster)

    pending = Pod(
        namespace="bench",
        name="pending",
        uid="bench-pending",
        priority=0,
        containers=(Container(name="c", requests={"cpu": 500, "memory": GI}),),
    )
    median, best, outcome = _timed(
        lambda: place(cluster, pending, settings=DEFAULT_SETTINGS), args.repeat
    )
    feasible = sum(1 for n in outcome.nodes if n.feasible)
    print(
        f"placement: median {median:.1f} ms, min {best:.1f} ms "
        f"({feasible} feasible of {len(outcome.nodes)}, selected {outcome.selected_node})"
    )

    preemptor = Pod(
        namespace="bench",
        name="preemptor",
        uid="bench-preemptor",
        priority=1_000_000,
        containers=(
            Container(
                name="c",
                requests={"cpu": 100, "memory": 128 * 1024 * 1024},
                ports=(ContainerPort(container_port=9100, host_port=9100),),
            ),
        ),
    )
    started = time.perf_counter()
    preempt(cluster, preemptor, args=PreemptionArgs(100, 100), settings=DEFAULT_SETTINGS)
    print(
        "preemption, first call (builds the per-node importance order, prefix sums and PDB "
        f"matches once per Cluster): {(time.perf_counter() - started) * 1000:.0f} ms"
    )
    for label, pargs in (
        ("default args (10% / 100)", PreemptionArgs()),
        ("every potential node (100% / 100)", PreemptionArgs(100, 100)),
    ):
        median, best, out = _timed(
            lambda pargs=pargs: preempt(cluster, preemptor, args=pargs, settings=DEFAULT_SETTINGS),
            args.repeat,
        )
        print(
            f"preemption, {label}: median {median:.1f} ms, min {best:.1f} ms "
            f"({len(out.potential_nodes)} potential nodes, {len(out.candidates)} candidates, "
            f"chose {out.nominated_node_name} with {len(out.victims)} victim(s))"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
