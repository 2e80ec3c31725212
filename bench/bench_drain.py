"""Drain benchmark: ``kubectl drain`` of 50 nodes on the large synthetic cluster, their pods
through the filters and the Eviction API, and the recreated pods through the scheduling
queue on the cordoned cluster (engine time, the snapshot already decoded).

    python -m bench.bench_drain --nodes 5000 --pods 150000 [--drain 50] [--repeat 3]

Target (issue 27): under 5 s. The drained nodes are the first ``--drain`` workers in
snapshot order, drained as a maintenance would (``ignoreDaemonSets``,
``deleteEmptyDirData``, ``force``, ``ignoreErrors``). Reported per run: the whole decision
(``decisions.drain.decide``: filters, evictions, the cordoned cluster, the queue, the JSON
answer) and its two halves.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from datetime import UTC, datetime

from bench.bench_scheduler import _cluster
from service.decisions import drain as drain_kind
from service.engine.drain import drain_nodes
from service.engine.objects import Cluster
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.queue import run_queue
from service.engine.version import DEFAULT_SETTINGS

OPTIONS = {
    "ignoreDaemonSets": True,
    "deleteEmptyDirData": True,
    "force": True,
    "ignoreErrors": True,
}


def _workers(cluster: Cluster, count: int) -> list[str]:
    """The first ``count`` schedulable nodes without a control-plane role, in snapshot order."""
    out = []
    for node in cluster.nodes:
        if node.unschedulable or "node-role.kubernetes.io/control-plane" in node.labels:
            continue
        out.append(node.name)
        if len(out) == count:
            break
    return out


def _request(nodes: list[str]) -> dict:
    loaded = drain_kind.DrainRequestSchema().load({"nodes": nodes, "options": OPTIONS})
    loaded["settings"] = DEFAULT_SETTINGS
    return loaded


def _queue(plan, max_steps: int):
    return run_queue(
        plan.cluster,
        plan.recreated,
        profiles={DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)},
        settings=DEFAULT_SETTINGS,
        max_steps=max_steps,
    )


def _timed(fn, *args, **kwargs) -> tuple[float, object]:
    gc.collect()
    started = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - started, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_drain")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--body", type=str, default=None, help="a cluster JSON or .msgpack")
    parser.add_argument("--save", type=str, default=None, help="keep the cluster as .msgpack")
    parser.add_argument("--drain", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--steps", type=int, default=20, help="queue cycles timed (0: every recreated pod)"
    )
    parser.add_argument("--whole", action="store_true", help="also time decide() whole")
    args = parser.parse_args(argv)
    from pathlib import Path

    import msgspec

    started = time.perf_counter()
    cluster = _cluster(args.nodes, args.pods, args.seed, Path(args.body) if args.body else None)
    if args.save:
        Path(args.save).write_bytes(msgspec.msgpack.encode(cluster.snapshot))
    cluster.pods_by_node  # noqa: B018 - built once per snapshot, as the cache keeps it
    print(f"cluster: {len(cluster.nodes)} nodes, {cluster.pod_count} pods, "
          f"loaded in {time.perf_counter() - started:.1f} s")  # fmt: skip
    nodes = _workers(cluster, args.drain)
    request = _request(nodes)
    options = drain_kind.drain_options(request["options"])
    rows: dict[str, list[float]] = {"drain_nodes": [], "queue setup (view of the cordoned "
                                    "cluster)": [], "queue cycles": [], "per cycle": []}  # fmt: skip
    if args.whole:
        rows["decide (whole)"] = []
    for _ in range(args.repeat):
        took, plan = _timed(
            lambda: drain_nodes(cluster, nodes, options, created_at=datetime.now(UTC))
        )
        rows["drain_nodes"].append(took)
        took, _ = _timed(_queue, plan, 0)
        rows["queue setup (view of the cordoned cluster)"].append(took)
        steps = args.steps or len(plan.recreated)
        took, run = _timed(_queue, plan, steps)
        rows["queue cycles"].append(took)
        rows["per cycle"].append((took - rows["queue setup (view of the cordoned cluster)"][-1])
                                 / max(1, len(run.steps)))  # fmt: skip
        if args.whole:
            took, _ = _timed(drain_kind.decide, cluster, request)
            rows["decide (whole)"].append(took)
    outcomes = Counter(f.outcome for n in plan.nodes for f in n.pods)
    print(f"drain of {len(nodes)} nodes: {dict(outcomes)}, {len(plan.recreated)} recreated; "
          f"queue run of {len(run.steps)} cycle(s): {run.counts()}")  # fmt: skip
    for label, times in rows.items():
        print(f"{label}: median {statistics.median(times):.3f} s, "
              f"min {min(times):.3f} s, max {max(times):.3f} s")  # fmt: skip
    per = statistics.median(rows["per cycle"])
    setup = statistics.median(rows["queue setup (view of the cordoned cluster)"])
    total = statistics.median(rows["drain_nodes"]) + setup + per * len(plan.recreated)
    print(f"whole drain estimated: {total:.1f} s ({len(plan.recreated)} cycles at {per:.3f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
