"""Eviction benchmark (target: one eviction pass on a 110-pod node < 2 ms of engine time).

Builds a synthetic cluster with bench.generate, takes its fullest node (110 pods, kubelet
Summary attached) and times, per scenario:

* engine — ``service.engine.kubelet.eviction.synchronize`` alone (config parsed once), the
  number the target is about;
* decision — the whole decision kind (schema load, config parsing, allocatable, the pass and
  rendering the contract's result with a PodRef per ranked pod), as the HTTP layer calls it.

Scenarios: memory pressure (hard memory.available just above the observed value: full
memory ranking and a victim), disk pressure (nodefs.available: disk ranking over rootfs, logs
and local volumes), and no pressure (the kubelet's default thresholds).

    python -m bench.bench_eviction [--iterations 2000] [--seed 1]
"""

from __future__ import annotations

import argparse
import platform
import sys
from datetime import datetime

from bench.common import time_calls
from bench.generate import DEFAULT_CAPTURED_AT, generate
from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.kubelet.eviction import make_signal_observations, synchronize
from service.engine.kubelet.eviction_config import build_eviction_config
from service.engine.objects import Cluster
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects


def _cluster(nodes: int, pods: int, seed: int) -> tuple[Cluster, str]:
    envelope = generate(nodes, pods, seed)
    captured = datetime.fromisoformat(DEFAULT_CAPTURED_AT.replace("Z", "+00:00"))
    snapshot = snapshot_from_objects(envelope["objects"]["items"], envelope["stats"], captured)
    cluster = Cluster(snapshot)
    with_stats = [n.name for n in snapshot.nodes if n.name in snapshot.stats]
    fullest = max(with_stats, key=lambda name: len(cluster.pods_on(name)))
    return cluster, fullest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_eviction")
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    cluster, node = _cluster(3, 300, args.seed)
    pods = cluster.pods_on(node)
    stats = cluster.snapshot.stats[node]
    now = cluster.snapshot.captured_at
    observed = make_signal_observations(stats)
    memory = observed["memory.available"].available
    nodefs = observed["nodefs.available"].available
    scenarios = {
        "memory pressure": {"evictionHard": {"memory.available": str(memory + 1024 * 1024)}},
        "disk pressure": {
            "evictionHard": {"nodefs.available": str(nodefs + 1024 * 1024)},
            "filesystemLayout": "dedicatedImageFs",
        },
        "no pressure (defaults)": {},
    }

    print(f"python {platform.python_version()} on {platform.machine()}, {platform.system()}")
    print(f"node {node}: {len(pods)} pods, {len(stats.pods)} with stats; {args.iterations} runs")
    print(f"{'scenario':24} {'layer':9} {'median ms':>10} {'p95 ms':>8} {'mean ms':>8}  outcome")
    kind = KINDS["eviction"]
    for name, config in scenarios.items():
        parsed = build_eviction_config(config)
        evaluation = synchronize(pods, stats, parsed, now, settings=DEFAULT_SETTINGS)
        victim = evaluation.victim.pod.name if evaluation.victim else None
        outcome = f"starved={evaluation.starved_resource} ranked={len(evaluation.ranking)} victim={victim}"
        engine = time_calls(
            lambda p=parsed: synchronize(pods, stats, p, now, settings=DEFAULT_SETTINGS),
            args.iterations,
        )
        params = {"nodeName": node, "config": config}
        decision = time_calls(lambda p=params: compute(kind, cluster, p), args.iterations)
        for layer, (median, p95, mean) in (("engine", engine), ("decision", decision)):
            print(f"{name:24} {layer:9} {median:10.3f} {p95:8.3f} {mean:8.3f}  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
