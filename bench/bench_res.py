"""NodeResourcesFit and NodeResourcesBalancedAllocation per cycle of the drain's recreated
pods on the bench cluster: PreFilter, Filter, PreScore and Score node by node (``filter`` /
``score``, as before issue 27) and all nodes at once (``filter_nodes`` / ``score_nodes``),
back to back on the same cycles, their answers compared.

    python -m bench.bench_res --body cluster5000.msgpack [--drain 50] [--cycles 200]

The cycles follow a queue run as the drain makes it: the drained nodes cordoned (left out
of Filter, as NodeUnschedulable rejects them), each recreated pod filtered over the other
nodes, scored over those Fit passes, then bound to the node with the best sum of the two
scores: that node's NodeInfo is replaced by a new one holding the pod (a queue step), so
each cycle's node lists differ from the last one's as in the queue. Reported per cycle:
median and min-max, wall and process CPU time, of each phase and of their total.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from bench.bench_drain import drained
from service.engine.scheduler.framework import CycleState, NodeInfo, pod_info
from service.engine.scheduler.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
)
from service.engine.scheduler.plugins.noderesources.fit import NodeResourcesFit
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS

PHASES = ("prefilter", "filter", "prescore", "score fit", "score balanced")


class _Clock:
    """Wall and CPU time per phase, per cycle."""

    def __init__(self) -> None:
        self.wall: dict[str, list[float]] = {p: [] for p in (*PHASES, "total")}
        self.cpu: dict[str, list[float]] = {p: [] for p in (*PHASES, "total")}
        self._cycle: dict[str, tuple[float, float]] = {}

    def run(self, phase: str, fn, *args):
        wall, cpu = time.perf_counter(), time.process_time()
        out = fn(*args)
        self._cycle[phase] = (time.perf_counter() - wall, time.process_time() - cpu)
        return out

    def end_cycle(self) -> None:
        for phase, (wall, cpu) in self._cycle.items():
            self.wall[phase].append(wall)
            self.cpu[phase].append(cpu)
        self.wall["total"].append(sum(w for w, _ in self._cycle.values()))
        self.cpu["total"].append(sum(c for _, c in self._cycle.values()))
        self._cycle = {}

    def report(self, title: str) -> None:
        print(f"{title}: per cycle, ms: median (min-max) wall | CPU")
        for phase in (*PHASES, "total"):
            w, c = self.wall[phase], self.cpu[phase]
            print(f"  {phase:15s} {_ms(w)} | {_ms(c)}")


def _ms(values: list[float]) -> str:
    return (f"{statistics.median(values) * 1000:7.3f} "
            f"({min(values) * 1000:.3f}-{max(values) * 1000:.3f})")  # fmt: skip


def _cycle(fit, balanced, pod, view, passing, clock: _Clock, batch: bool):
    """One cycle of the two plugins; returns (statuses, fit scores, balanced scores)."""
    state = CycleState(pod, view, DEFAULT_SETTINGS)
    clock.run("prefilter", fit.pre_filter, state, passing)
    if batch:
        statuses = clock.run("filter", fit.filter_nodes, state, passing)
    else:
        statuses = clock.run("filter", lambda: [fit.filter(state, ni, ni) for ni in passing])
    feasible = [ni for ni, s in zip(passing, statuses, strict=True) if s is None]

    def pre_score():
        fit.pre_score(state, feasible)
        return balanced.pre_score(state, feasible)

    skip = clock.run("prescore", pre_score).is_skip
    if batch:
        fit_scores = clock.run("score fit", fit.score_nodes, state, feasible)
        bal = [] if skip else clock.run("score balanced", balanced.score_nodes, state, feasible)
    else:
        fit_scores = clock.run("score fit", lambda: [fit.score(state, ni, ni) for ni in feasible])
        bal = [] if skip else clock.run(
            "score balanced", lambda: [balanced.score(state, ni, ni) for ni in feasible]
        )  # fmt: skip
    clock.end_cycle()
    return statuses, feasible, fit_scores, bal


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_res")
    parser.add_argument("--body", type=str, required=True, help="a cluster .msgpack")
    parser.add_argument("--drain", type=int, default=50)
    parser.add_argument("--cycles", type=int, default=200)
    args = parser.parse_args(argv)

    cluster, plan = drained(Path(args.body), args.drain)
    view = scheduler_view(cluster, DEFAULT_SETTINGS, whole_pods=True)
    pods = plan.recreated[: args.cycles]
    cordoned = set(plan.cordoned)
    nodes = list(view.nodes)
    fit = NodeResourcesFit(settings=DEFAULT_SETTINGS)
    balanced = NodeResourcesBalancedAllocation(settings=DEFAULT_SETTINGS)
    print(f"{len(nodes)} nodes, {len(cordoned)} cordoned, {len(pods)} cycles")

    per_node, batch = _Clock(), _Clock()
    unschedulable = 0
    started = time.perf_counter()
    for pod in pods:
        passing = [ni for ni in nodes if ni.name not in cordoned]
        expected = _cycle(fit, balanced, pod, view, passing, per_node, batch=False)
        got = _cycle(fit, balanced, pod, view, passing, batch, batch=True)
        if got != expected:
            raise SystemExit(f"batch differs from per node for {pod.namespace}/{pod.name}")
        _, feasible, fit_scores, bal = expected
        if not feasible:
            unschedulable += 1
            continue
        totals = [f + b for f, b in zip(fit_scores, bal or [0] * len(feasible), strict=True)]
        best = feasible[totals.index(max(totals))]
        bound = pod_info(pod, DEFAULT_SETTINGS)
        nodes[best.index] = NodeInfo(best.node, best.index, [*best.pods, bound])
    print(f"{len(pods) - unschedulable} bound, {unschedulable} unschedulable; answers equal; "
          f"{time.perf_counter() - started:.1f} s")  # fmt: skip
    per_node.report("node by node (filter / score)")
    batch.report("all nodes at once (filter_nodes / score_nodes)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
