"""InterPodAffinity micro-benchmark (issue 27): the plugin's whole per-cycle cost for the
drain's recreated pods on the bench cluster, phase by phase.

    python -m bench.bench_ipa --body cluster5000.msgpack [--drain 50] [--pods 300] [--repeat 3]

The drain of ``--drain`` workers is planned as bench_drain plans it, and the queue's first
view is taken (the drained nodes cordoned, the evicted pods gone: WorkingCluster). For each
of the first ``--pods`` recreated pods (all with 0), on that view, a new CycleState and:
PreFilter; Filter over every node (``filter_nodes`` where the plugin has it, else node by
node; not run when PreFilter skips); PreScore over the nodes Filter passed; Score over them
(``score_nodes`` where the plugin has it; not run when PreScore skips); NormalizeScore. The
view's groups of the existing pods' terms are built once before the timed runs (the queue
carries them from step to step). Reported per phase: the mean per pod, wall and CPU
(``time.process_time``), median and min-max over ``--repeat`` runs; and a digest of every
answer (statuses and scores), equal before and after a change that keeps the answers.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import statistics
import sys
import time
from pathlib import Path

from bench.bench_drain import drained, filtered, scored
from service.engine.scheduler.framework import CycleState
from service.engine.scheduler.profile import default_profile
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.runtime import framework_for
from service.engine.scheduler.snapshot import as_scheduler_sees
from service.engine.version import DEFAULT_SETTINGS

PHASES = ("PreFilter", "Filter", "PreScore", "Score", "NormalizeScore")


def _plugin(name: str = "InterPodAffinity"):
    fwk = framework_for(default_profile(DEFAULT_SETTINGS), DEFAULT_SETTINGS)
    for plugin in fwk.pre_filter_plugins:
        if plugin.name == name:
            return plugin
    raise SystemExit(f"{name} is not in the default profile")


def _cycle(plugin, view, pod, clock, spent: dict[str, float], digest) -> None:
    """One pod's cycle through the plugin's extension points, each phase's time added to
    ``spent`` and each answer to ``digest`` (outside the timed spans)."""
    nodes = view.nodes
    t = clock()
    state = CycleState(pod, view, DEFAULT_SETTINGS)
    _, status = plugin.pre_filter(state, nodes)
    spent["PreFilter"] += clock() - t
    digest.update(status.code.encode())
    feasible = list(nodes)
    if not status.is_skip:
        t = clock()
        verdicts = filtered(plugin, state, nodes)
        spent["Filter"] += clock() - t
        feasible = [ni for ni, v in zip(nodes, verdicts, strict=True) if v is None]
        digest.update(repr([(v.code, v.reasons) for v in verdicts if v is not None]).encode())
        digest.update(repr(len(feasible)).encode())
    t = clock()
    status = plugin.pre_score(state, feasible)
    spent["PreScore"] += clock() - t
    digest.update(status.code.encode())
    if status.is_skip or not feasible:
        return
    t = clock()
    scores = scored(plugin, state, feasible)
    spent["Score"] += clock() - t
    digest.update(repr(scores).encode())
    t = clock()
    plugin.normalize_score(state, feasible, scores)
    spent["NormalizeScore"] += clock() - t
    digest.update(repr(scores).encode())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_ipa")
    parser.add_argument("--body", type=str, required=True, help="a cluster .msgpack or JSON")
    parser.add_argument("--drain", type=int, default=50)
    parser.add_argument("--pods", type=int, default=0, help="recreated pods timed (0: all)")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    cluster, plan = drained(Path(args.body), args.drain)
    working = WorkingCluster(
        cluster, DEFAULT_SETTINGS, cordoned=plan.cordoned, deleted=plan.deleted
    )
    view = working.view
    pods = [as_scheduler_sees(p, DEFAULT_SETTINGS) for p in plan.recreated]
    if args.pods:
        pods = pods[: args.pods]
    with_terms = sum(
        bool(p.pod_affinity_required or p.pod_anti_affinity_required
             or p.pod_affinity_preferred or p.pod_anti_affinity_preferred)
        for p in pods
    )  # fmt: skip
    print(f"{len(view.nodes)} nodes; {len(pods)} recreated pods timed, {with_terms} with terms")
    plugin = _plugin()
    _cycle(plugin, view, pods[0], time.perf_counter, dict.fromkeys(PHASES, 0.0), hashlib.md5())

    wall: dict[str, list[float]] = {p: [] for p in (*PHASES, "total")}
    cpu: dict[str, list[float]] = {p: [] for p in (*PHASES, "total")}
    digests = set()
    for _ in range(args.repeat):
        for clock, rows in ((time.perf_counter, wall), (time.process_time, cpu)):
            spent = dict.fromkeys(PHASES, 0.0)
            digest = hashlib.md5()
            gc.collect()
            each = []
            for pod in pods:
                before = sum(spent.values())
                _cycle(plugin, view, pod, clock, spent, digest)
                each.append((sum(spent.values()) - before) * 1000)
            rows["pods"] = each
            digests.add(digest.hexdigest())
            for phase, took in spent.items():
                rows[phase].append(took / len(pods) * 1000)
            rows["total"].append(sum(spent.values()) / len(pods) * 1000)
    for label, rows in (("wall", wall), ("CPU", cpu)):
        print(f"per pod, {label} (ms): median [min-max] over {args.repeat} runs")
        each = sorted(rows.pop("pods"))
        print(f"  one pod (last run): median {statistics.median(each):.3f}, 90% "
              f"{each[len(each) * 9 // 10]:.3f}, 99% {each[len(each) * 99 // 100]:.3f}, "
              f"max {each[-1]:.3f}")  # fmt: skip
        for phase, times in rows.items():
            print(f"  {phase:15} {statistics.median(times):8.3f} "
                  f"[{min(times):.3f}-{max(times):.3f}]")  # fmt: skip
    print("answers digest:", " ".join(sorted(digests)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
