"""Capacity benchmark (issue 27): how many replicas of a 500m / 1Gi template with zone spread
(ScheduleAnyway) fit on the generated 5,000-node / 150,000-pod cluster, each replica placed
by a scheduling cycle on the state the earlier ones left: incremental (only what a bind
changes recomputed, engine/scheduler/incremental.py, by groups of nodes where
score_groups.py applies) or, with ``--full``, a full cycle.

    python -m bench.bench_capacity [--nodes 5000 --pods 150000] [--body snapshot.msgpack]
        [--save snapshot.msgpack] [--max-replicas N] [--repeat 3] [--full]

Prints the replicas, the stop reason, the wall time, the time per replica, and the view
building paid once per Cluster (as bench_scheduler reports it). Compare with the real
scheduler one cycle at a time: ``verdict-oracle --time`` on the same cluster gives its cycle
time for the same pod (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import gc
import time
from pathlib import Path

import msgspec

from bench.bench_scheduler import _cluster
from service.engine.objects import (
    Cluster,
    Container,
    LabelSelector,
    Pod,
    TopologySpreadConstraint,
)
from service.engine.scheduler.capacity import capacity
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS

GI = 1024**3

TEMPLATE = Pod(
    namespace="bench",
    name="capacity",
    uid="bench-capacity",
    priority=0,
    labels={"app": "capacity"},
    containers=(Container(name="c", requests={"cpu": 500, "memory": GI}),),
    topology_spread_constraints=(
        TopologySpreadConstraint(
            max_skew=1,
            topology_key="topology.kubernetes.io/zone",
            when_unsatisfiable="ScheduleAnyway",
            label_selector=LabelSelector(match_labels={"app": "capacity"}),
        ),
    ),
)


def run(
    cluster: Cluster, max_replicas: int | None, incremental: bool = True
) -> tuple[float, object]:
    """One capacity run: (seconds, the run)."""
    gc.collect()
    started = time.perf_counter()
    answer = capacity(
        cluster,
        [TEMPLATE],
        profiles={DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)},
        settings=DEFAULT_SETTINGS,
        max_replicas=max_replicas,
        incremental=incremental,
    )
    return time.perf_counter() - started, answer


def _estimate(cluster: Cluster, view) -> int:
    """What fits by cpu, memory and pod count on the nodes the first replica may use: the
    order of magnitude of the answer, for extrapolating a run stopped early."""
    from service.engine.scheduler.placement import place

    first = place(cluster, TEMPLATE, settings=DEFAULT_SETTINGS)
    total = 0
    for entry in first.nodes:
        if not entry.feasible:
            continue
        ni = view.by_name[entry.node_name]
        free_cpu = ni.allocatable.get("cpu", 0) - ni.requested.get("cpu", 0)
        free_mem = ni.allocatable.get("memory", 0) - ni.requested.get("memory", 0)
        total += max(0, min(free_cpu // 500, free_mem // GI, ni.allowed_pods - ni.pod_count))
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_capacity")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--body", type=Path, help="a generated envelope or a .msgpack Snapshot")
    parser.add_argument("--save", type=Path, help="write the Snapshot as msgpack, for --body")
    parser.add_argument("--max-replicas", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument(
        "--full", action="store_true", help="a full cycle per replica (no incremental cache)"
    )
    args = parser.parse_args(argv)

    started = time.perf_counter()
    cluster = _cluster(args.nodes, args.pods, args.seed, args.body)
    print(
        f"snapshot: {len(cluster.snapshot.nodes)} nodes, {len(cluster.snapshot.pods)} pods "
        f"(loaded in {time.perf_counter() - started:.1f} s)"
    )
    if args.save:
        args.save.write_bytes(msgspec.msgpack.encode(cluster.snapshot))
        print(f"saved {args.save}")
    started = time.perf_counter()
    view = scheduler_view(cluster, DEFAULT_SETTINGS, whole_pods=True)
    print(f"scheduler view (once per Cluster): {(time.perf_counter() - started) * 1000:.0f} ms")
    print(f"replicas that would fit by resources alone: about {_estimate(cluster, view)}")
    for _ in range(args.repeat):
        cpu = time.process_time()
        seconds, answer = run(cluster, args.max_replicas, not args.full)
        cpu = time.process_time() - cpu  # this process's CPU time: what a quiet machine gives
        (t,) = answer.templates
        per = seconds / max(t.replicas, 1) * 1000
        print(
            f"{t.replicas} replicas in {seconds:.2f} s, CPU {cpu:.2f} s "
            f"({per:.2f} ms per replica; "
            f"{answer.incremental} decided incrementally, {answer.grouped} of them by groups, "
            f"{answer.ties} with ties); "
            f"stop: {t.stop}: {t.message[:160]}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
