"""Drain benchmark: ``kubectl drain`` of 50 nodes on the large synthetic cluster, their pods
through the filters and the Eviction API, and the recreated pods through the scheduling
queue on the cordoned cluster (engine time, the snapshot already decoded).

    python -m bench.bench_drain --nodes 5000 --pods 150000 [--drain 50] [--repeat 3]
    python -m bench.bench_drain --body cluster5000.msgpack --repeat 3 --steps 10
    python -m bench.bench_drain --body cluster5000.msgpack --repeat 3 --to-end

Target (issue 27): under 5 s. The drained nodes are the first ``--drain`` workers in
snapshot order, drained as a maintenance would (``ignoreDaemonSets``,
``deleteEmptyDirData``, ``force``, ``ignoreErrors``). The snapshot's scheduler view is
built once before the runs (the snapshot cache keeps it, as for every decision) and the
decoded snapshot is frozen out of the collector's sight (``gc.freeze``, as
store/snapshots.py's cache does). Reported per run: ``drain_nodes``; the queue's setup
(the drained nodes cordoned and the evicted pods deleted on the snapshot's view; with
``--old-setup`` also the view of the cordoned cluster built anew, as before issue 27's
drain work); ``--steps N`` queue cycles and the time per cycle; ``--to-end``: the whole
queue run, every recreated pod, and drain + queue together (the whole drain); ``--whole``:
``decisions.drain.decide`` (the answer's JSON included). With ``--to-end`` the recreated
pods' templates are counted (pods alike but for name and uid: their per-node verdicts and
scores are kept between cycles).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import msgspec

from bench.bench_scheduler import _cluster
from service.decisions import drain as drain_kind
from service.engine.drain import drain_nodes
from service.engine.objects import Cluster
from service.engine.scheduler.framework import FiltersNodes, ScoresNodes
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.queue import run_queue
from service.engine.scheduler.snapshot import scheduler_view
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


def drained(body: Path, drain: int):
    """The bench cluster read from ``body`` (its scheduler view built once and frozen out of
    the collector's sight, as the snapshot cache keeps it) and the plan of draining its
    first ``drain`` workers: what the plugin benchmarks time the recreated pods on."""
    cluster = _cluster(0, 0, 1, body)
    cluster.pods_by_node  # noqa: B018 - built once per snapshot, as the cache keeps it
    scheduler_view(cluster, DEFAULT_SETTINGS, whole_pods=True)
    gc.freeze()
    names = _workers(cluster, drain)
    options = drain_kind.drain_options(_request(names)["options"])
    return cluster, drain_nodes(cluster, names, options, created_at=datetime.now(UTC))


def filtered(plugin, state, nodes) -> list:
    """The plugin's Filter on every node, at once where it can (FiltersNodes)."""
    if isinstance(plugin, FiltersNodes):
        return plugin.filter_nodes(state, nodes)
    return [plugin.filter(state, ni, ni) for ni in nodes]


def scored(plugin, state, nodes) -> list[int]:
    """The plugin's Score on every node, at once where it can (ScoresNodes)."""
    if isinstance(plugin, ScoresNodes):
        return plugin.score_nodes(state, nodes)
    return [plugin.score(state, ni, ni) for ni in nodes]


def _request(nodes: list[str]) -> dict:
    loaded = drain_kind.DrainRequestSchema().load({"nodes": nodes, "options": OPTIONS})
    loaded["settings"] = DEFAULT_SETTINGS
    return loaded


def _queue(cluster: Cluster, plan, max_steps: int | None):
    """The drain's queue run as decisions.drain.decide runs it."""
    return run_queue(
        cluster,
        plan.recreated,
        profiles={DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)},
        settings=DEFAULT_SETTINGS,
        cordoned=plan.cordoned,
        deleted=plan.deleted,
        **({} if max_steps is None else {"max_steps": max_steps}),
    )


def template_key(pod) -> bytes:
    """What makes two pods one template: every field but name and uid."""
    return msgspec.msgpack.encode(msgspec.structs.replace(pod, name="", uid=""))


def _templates(pods) -> str:
    """How many templates the recreated pods make, and how many pods share one."""
    counts = Counter(template_key(p) for p in pods)
    shared = sum(n for n in counts.values() if n > 1)
    return (f"{len(pods)} recreated pods of {len(counts)} templates; {shared} pods in the "
            f"{sum(n > 1 for n in counts.values())} templates of two pods or more")  # fmt: skip


_CPU: list[float] = []  # the process CPU time of each _timed call, in order


def _timed(fn, *args, **kwargs) -> tuple[float, object]:
    """(wall seconds, result); the call's process CPU time is appended to ``_CPU`` (what a
    quiet machine would show when other processes share the cores)."""
    gc.collect()
    started, cpu = time.perf_counter(), time.process_time()
    out = fn(*args, **kwargs)
    _CPU.append(time.process_time() - cpu)
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
    parser.add_argument("--steps", type=int, default=20, help="queue cycles timed (0: none)")
    parser.add_argument("--to-end", action="store_true", help="time the whole queue run")
    parser.add_argument("--old-setup", action="store_true", help="also time the old setup")
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
    took, _ = _timed(scheduler_view, cluster, DEFAULT_SETTINGS, whole_pods=True)
    print(f"the snapshot's scheduler view (once per snapshot): {took:.2f} s")
    gc.freeze()
    nodes = _workers(cluster, args.drain)
    request = _request(nodes)
    options = drain_kind.drain_options(request["options"])
    rows: dict[str, list[float]] = {"drain_nodes": [], "queue setup": []}
    if args.old_setup:
        rows["old queue setup (a view of the cordoned cluster built anew)"] = []
    if args.steps:
        rows[f"queue, {args.steps} cycles"] = []
        rows["per cycle"] = []
        rows["per cycle, CPU"] = []
    if args.to_end:
        rows["queue to the end"] = []
        rows["the whole drain (drain_nodes + queue to the end)"] = []
    if args.whole:
        rows["decide (whole)"] = []
    run = None
    for _ in range(args.repeat):
        took, plan = _timed(
            lambda: drain_nodes(cluster, nodes, options, created_at=datetime.now(UTC))
        )
        rows["drain_nodes"].append(took)
        setup, _ = _timed(_queue, cluster, plan, 0)
        setup_cpu = _CPU[-1]
        rows["queue setup"].append(setup)
        if args.old_setup:
            took, _ = _timed(scheduler_view, plan.cluster, DEFAULT_SETTINGS, whole_pods=True)
            rows["old queue setup (a view of the cordoned cluster built anew)"].append(took)
        if args.steps:
            took, run = _timed(_queue, cluster, plan, args.steps)
            rows[f"queue, {args.steps} cycles"].append(took)
            rows["per cycle"].append((took - setup) / max(1, len(run.steps)))
            rows["per cycle, CPU"].append((_CPU[-1] - setup_cpu) / max(1, len(run.steps)))
        if args.to_end:
            took, run = _timed(_queue, cluster, plan, None)
            rows["queue to the end"].append(took)
            rows["the whole drain (drain_nodes + queue to the end)"].append(
                rows["drain_nodes"][-1] + took
            )
            print(f"  run to the end: {took:.1f} s, {len(run.steps)} cycles "
                  f"({took / max(1, len(run.steps)) * 1000:.0f} ms each), {run.counts()}",
                  flush=True)  # fmt: skip
        if args.whole:
            took, _ = _timed(drain_kind.decide, cluster, request)
            rows["decide (whole)"].append(took)
    outcomes = Counter(f.outcome for n in plan.nodes for f in n.pods)
    print(f"drain of {len(nodes)} nodes: {dict(outcomes)}; {_templates(plan.recreated)}")
    if run is not None:
        print(f"queue run of {len(run.steps)} cycle(s): {run.counts()}")
    for label, times in rows.items():
        print(f"{label}: median {statistics.median(times):.3f} s, "
              f"min {min(times):.3f} s, max {max(times):.3f} s")  # fmt: skip
    if args.steps and not args.to_end:
        per = statistics.median(rows["per cycle"])
        total = statistics.median(rows["drain_nodes"]) + statistics.median(
            rows["queue setup"]) + per * len(plan.recreated)  # fmt: skip
        print(f"whole drain estimated: {total:.1f} s ({len(plan.recreated)} cycles at "
              f"{per:.3f} s)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
