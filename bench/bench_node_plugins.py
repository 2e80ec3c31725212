"""The node-local plugins, one drain cycle at a time: the cost per cycle of each extension
point of TaintToleration, NodeAffinity, NodeUnschedulable, NodeName, NodePorts,
ImageLocality and of the volume and DRA plugins, for the pods a drain recreates.

    python -m bench.bench_node_plugins --body cluster5000.msgpack [--pods 300] [--repeat 3]
        [--check]

The cluster is the drain's (bench_drain: the first 50 workers cordoned, their pods
evicted); the recreated pods go through the cycles in queue order, each bound to its first
feasible node in between (so that each cycle reads a new view sharing the unchanged nodes,
as a queue run does). Per pod and plugin: PreFilter, Filter over the nodes still passing
(the plugins in the profile's order; a batch, ``filter_nodes``, where the plugin has one,
else node by node), PreScore, Score over the nodes passing these filters (``score_nodes``
where the plugin has one) and NormalizeScore. Each run goes through the same pods again: the
first run meets every pod for the first time, the later ones repeat them (what a plugin
memoizes per pod then helps). Reported per run: the mean cost per cycle of each plugin's
points, and the total, wall and CPU (time.process_time); the median and min-max over runs.
Runs unchanged against a tree without the batches (the per-node forms are timed then).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import time
from collections import defaultdict
from pathlib import Path

from bench.bench_drain import drained
from service.engine.scheduler.framework import SKIP
from service.engine.scheduler.profile import default_profile
from service.engine.scheduler.queue import WorkingCluster, queue_order
from service.engine.scheduler.runtime import framework_for
from service.engine.scheduler.snapshot import as_scheduler_sees
from service.engine.version import DEFAULT_SETTINGS

PLUGINS = (
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "VolumeRestrictions",
    "NodeVolumeLimits",
    "VolumeBinding",
    "VolumeZone",
    "DynamicResources",
    "ImageLocality",
)


class Clock:
    """Wall and CPU seconds per (plugin, point), summed over the cycles of a run."""

    def __init__(self) -> None:
        self.wall: dict[tuple[str, str], float] = defaultdict(float)
        self.cpu: dict[tuple[str, str], float] = defaultdict(float)

    def run(self, plugin: str, point: str, fn, *args):
        w, c = time.perf_counter(), time.process_time()
        out = fn(*args)
        self.wall[plugin, point] += time.perf_counter() - w
        self.cpu[plugin, point] += time.process_time() - c
        return out


def _filter(plugin, state, nodes):
    batch = getattr(plugin, "filter_nodes", None)
    if batch is not None:
        return batch(state, nodes)
    return [plugin.filter(state, ni, ni) for ni in nodes]


def _score(plugin, state, nodes):
    batch = getattr(plugin, "score_nodes", None)
    if batch is not None:
        return batch(state, nodes)
    return [plugin.score(state, ni, ni) for ni in nodes]


def _check(plugin, state, nodes) -> None:
    """The batches equal the per-node forms on these nodes (``--check``)."""
    if hasattr(plugin, "filter_nodes"):
        want = [plugin.filter(state, ni, ni) for ni in nodes]
        assert plugin.filter_nodes(state, nodes) == want, plugin.name
    if hasattr(plugin, "score_nodes"):
        want = [plugin.score(state, ni, ni) for ni in nodes]
        assert plugin.score_nodes(state, nodes) == want, plugin.name


def one_cycle(fwk, work: WorkingCluster, pod, clock: Clock, check: bool = False) -> str | None:
    """The plugins' points for ``pod`` on the working cluster's view; the first node passing
    every filter timed (None: none). ``check``: each batch is also held to its per-node
    form (untimed)."""
    view = work.view
    state = fwk.cycle_state(pod, view)  # every PreFilter, untimed: timed again below
    mine = set(PLUGINS)
    for plugin in fwk.pre_filter_plugins:
        if plugin.name in mine:
            clock.run(plugin.name, "PreFilter", plugin.pre_filter, state, view.nodes)
    if state.prefilter_status is not None:
        return None
    nodes = view.nodes
    if state.node_names is not None:
        nodes = [ni for ni in nodes if ni.name in state.node_names]
    running = {name for name, _ in state.filters}
    for plugin in fwk.filter_plugins:
        if plugin.name not in mine or plugin.name not in running:
            continue
        if check:
            _check(plugin, state, nodes)
        statuses = clock.run(plugin.name, "Filter", _filter, plugin, state, nodes)
        nodes = [ni for ni, s in zip(nodes, statuses, strict=True) if s is None]
    if not nodes:
        return None
    for plugin in fwk.pre_score_plugins:
        if plugin.name in mine:
            status = clock.run(plugin.name, "PreScore", plugin.pre_score, state, nodes)
            if status.code == SKIP:
                state.skip_score.add(plugin.name)
    for plugin, _ in fwk.score_plugins:
        if plugin.name not in mine or plugin.name in state.skip_score:
            continue
        if check:
            _check(plugin, state, nodes)
        scores = clock.run(plugin.name, "Score", _score, plugin, state, nodes)
        normalize = getattr(plugin, "normalize_score", None)
        if normalize is not None:
            clock.run(plugin.name, "NormalizeScore", normalize, state, nodes, list(scores))
    return nodes[0].name


def one_run(cluster, plan, pods, fwk, check: bool = False) -> tuple[Clock, int]:
    work = WorkingCluster(cluster, DEFAULT_SETTINGS, cordoned=plan.cordoned, deleted=plan.deleted)
    clock = Clock()
    cycles = 0
    for pod in pods:
        node = one_cycle(fwk, work, pod, clock, check)
        cycles += 1
        if node is not None:
            work.bind(pod, node)
    return clock, cycles


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_node_plugins")
    parser.add_argument("--body", type=str, required=True, help="a cluster .msgpack")
    parser.add_argument("--drain", type=int, default=50)
    parser.add_argument("--pods", type=int, default=0, help="the first N pods (0: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--check", action="store_true", help="hold batches to per-node forms")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    cluster, plan = drained(Path(args.body), args.drain)
    recreated = [plan.recreated[i] for i in queue_order(plan.recreated)]
    if args.pods:
        recreated = recreated[: args.pods]
    pods = [as_scheduler_sees(p, DEFAULT_SETTINGS) for p in recreated]
    fwk = framework_for(default_profile(DEFAULT_SETTINGS), DEFAULT_SETTINGS)
    print(f"cluster: {len(cluster.nodes)} nodes, {cluster.pod_count} pods; {len(pods)} "
          f"recreated pods; set up in {time.perf_counter() - started:.1f} s")  # fmt: skip
    runs: list[tuple[Clock, int]] = []
    for i in range(args.repeat):
        gc.collect()
        clock, cycles = one_run(cluster, plan, pods, fwk, args.check)
        runs.append((clock, cycles))
        total = sum(clock.wall.values()) / cycles * 1e3
        cpu = sum(clock.cpu.values()) / cycles * 1e3
        print(f"run {i + 1}: {total:.3f} ms per cycle wall, {cpu:.3f} ms CPU")
    keys = sorted({k for clock, _ in runs for k in clock.wall}, key=lambda k: (
        PLUGINS.index(k[0]), k[1]))  # fmt: skip
    print(f"\nper cycle, µs (median over the {len(runs)} runs [min-max]; run 1 = first time)")
    print(f"{'plugin':20s} {'point':15s} {'run 1':>9s} {'wall':>24s} {'CPU':>9s}")
    for key in keys:
        walls = [clock.wall[key] / n * 1e6 for clock, n in runs]
        cpus = [clock.cpu[key] / n * 1e6 for clock, n in runs]
        later = walls[1:] or walls
        print(f"{key[0]:20s} {key[1]:15s} {walls[0]:9.1f} {statistics.median(later):9.1f} "
              f"[{min(later):6.1f}-{max(later):6.1f}] {statistics.median(cpus):9.1f}")  # fmt: skip
    walls = [sum(clock.wall.values()) / n * 1e6 for clock, n in runs]
    cpus = [sum(clock.cpu.values()) / n * 1e6 for clock, n in runs]
    later = walls[1:] or walls
    print(f"{'total':36s} {walls[0]:9.1f} {statistics.median(later):9.1f} "
          f"[{min(later):6.1f}-{max(later):6.1f}] {statistics.median(cpus):9.1f}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
