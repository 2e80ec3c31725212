"""PodTopologySpread micro-benchmark: its whole per-cycle cost (PreFilter, Filter, PreScore,
Score, NormalizeScore) for the drain's recreated pods on the cordoned bench cluster.

    python -m bench.bench_pts --body cluster5000.msgpack [--drain 50] [--pods 150] [--repeat 3]

The drain of ``--drain`` nodes is planned as bench_drain plans it; ``--pods`` of its recreated
pods (spread evenly over them) are taken in order, each on the view the queue would give it
(a successor view per step: each pod is bound, after its cycle, to the node PodTopologySpread
scores best among those the other filters pass, so the next pod sees a new view as in a
queue run). The other filters' verdicts are computed untimed; only PodTopologySpread's
extension points are timed: PreFilter over every node, Filter over the nodes the other
filters pass (``filter_nodes`` where the plugin has it), PreScore over the feasible nodes,
Score (``score_nodes`` where it has it) and NormalizeScore. Reported per phase and in total:
median, min and max per cycle over the pods (wall, ms), the mean, and the mean after the
first cycle (which builds the view's label index, shared with InterPodAffinity); ``cpu`` is
the CPU time (time.process_time) of the timed part.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from pathlib import Path

from bench import bench_drain as bd
from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.profile import default_profile
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import as_scheduler_sees
from service.engine.version import DEFAULT_SETTINGS

PHASES = ("pre_filter", "filter", "pre_score", "score", "normalize")
NAME = "PodTopologySpread"


def _feasible_without(fwk: Framework, state: CycleState, nodes) -> list:
    """The nodes every filter but PodTopologySpread passes (untimed)."""
    others = state.copy(filters=[f for f in state.filters if f[0] != NAME])
    return [ni for ni in nodes if fwk.run_filter_plugins(others, ni).is_success]


def _cycle(plugin, fwk: Framework, view, pod, times: dict[str, list[float]]):
    """One pod's PodTopologySpread extension points, timed; the node it scores best."""
    settings = DEFAULT_SETTINGS
    state = fwk.cycle_state(pod, view)  # every PreFilter (PodTopologySpread's again below)
    others = _feasible_without(fwk, state, view.nodes)
    state = CycleState(pod, view, settings)
    clock = time.perf_counter
    c0 = time.process_time()
    t0 = clock()
    _, status = plugin.pre_filter(state, view.nodes)
    t1 = clock()
    feasible = others
    if not status.is_skip:
        verdicts = bd.filtered(plugin, state, others)
        feasible = [ni for ni, v in zip(others, verdicts, strict=True) if v is None]
    t2 = clock()
    scored = None
    if feasible:
        status = plugin.pre_score(state, feasible)
        t3 = clock()
        if not status.is_skip:
            raw = bd.scored(plugin, state, feasible)
            t4 = clock()
            scored = list(raw)
            plugin.normalize_score(state, feasible, scored)
        else:
            t4 = clock()
        t5 = clock()
    else:
        t3 = t4 = t5 = t2
    for phase, spent in zip(PHASES, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
        times[phase].append(spent * 1000)
    times["total"].append((t5 - t0) * 1000)
    times["cpu"].append((time.process_time() - c0) * 1000)
    if not feasible:
        return None
    if scored is None:
        return feasible[0].name
    best = max(range(len(feasible)), key=lambda i: (scored[i], -i))
    return feasible[best].name


def run_once(cluster, plan, count: int) -> dict[str, list[float]]:
    work = WorkingCluster(cluster, DEFAULT_SETTINGS, cordoned=plan.cordoned, deleted=plan.deleted)
    fwk = Framework(default_profile(DEFAULT_SETTINGS), DEFAULT_SETTINGS)
    plugin = next(p for p in fwk.pre_filter_plugins if p.name == NAME)
    pods = list(plan.recreated)
    step = max(1, len(pods) // count)
    chosen = pods[::step][:count]
    times: dict[str, list[float]] = {phase: [] for phase in (*PHASES, "total", "cpu")}
    for pod in chosen:
        seen = as_scheduler_sees(pod, DEFAULT_SETTINGS)
        gc.disable()
        node = _cycle(plugin, fwk, work.view, seen, times)
        gc.enable()
        if node is not None:
            work.bind(pod, node)
    return times


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--body", type=Path, required=True)
    parser.add_argument("--drain", type=int, default=50)
    parser.add_argument("--pods", type=int, default=150)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)
    cluster, plan = bd.drained(args.body, args.drain)
    print(f"recreated pods: {len(plan.recreated)}; timed: {args.pods} per run")
    totals = []
    for run in range(args.repeat):
        times = run_once(cluster, plan, args.pods)
        line = []
        for phase in (*PHASES, "total", "cpu"):
            values = times[phase]
            line.append(
                f"{phase} {statistics.median(values):.3f} "
                f"[{min(values):.3f}-{max(values):.3f}] mean {statistics.fmean(values):.3f} "
                f"(after the first {statistics.fmean(values[1:] or values):.3f})"
            )
        totals.append(statistics.fmean(times["total"]))
        print(f"run {run + 1} (ms per cycle, median [min-max] mean): " + "; ".join(line))
    print(f"mean total per cycle over runs: {statistics.median(totals):.3f} ms "
          f"[{min(totals):.3f}-{max(totals):.3f}]")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
