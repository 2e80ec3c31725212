"""Capacity (issue 27) beside the real kube-scheduler one cycle at a time, on the same kubectl
List, the same machine, one run: how many replicas of a 500m / 1Gi template with zone spread
(ScheduleAnyway) fit, answered by Verdict's incremental cycles, by Verdict's full cycles
(a few replicas, timed per replica), and by kube-scheduler v1.35.4: the oracle's timing mode
(``verdict-oracle --time``, full default profile, every node filtered and scored) times one
cycle of the same pod on the same List, and the real scheduler's answer costs one such
cycle per replica (its cache update between cycles is not counted: a lower bound).

    python -m bench.generate --nodes 500 --pods 15000 --seed 1 --list > list.json
    python -m bench.bench_capacity_oracle --list list.json [--max-replicas N]
        [--full-replicas 20] [--repeat 7]
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from bench.bench_oracle import ORACLE
from service.engine.objects import Cluster
from service.engine.scheduler.capacity import capacity
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.body import parse_snapshot
from service.ingest.kube import pod_from_object

TEMPLATE = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {
        "name": "capacity",
        "namespace": "default",
        "uid": "bench-capacity",
        "labels": {"app": "capacity"},
    },
    "spec": {
        "schedulerName": DEFAULT_SCHEDULER_NAME,
        "priority": 0,
        "containers": [
            {
                "name": "c",
                "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
            }
        ],
        "topologySpreadConstraints": [
            {
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": {"app": "capacity"}},
            }
        ],
    },
    "status": {"phase": "Pending"},
}


def _capacity(cluster: Cluster, max_replicas: int | None, incremental: bool):
    gc.collect()
    started = time.perf_counter()
    run = capacity(
        cluster,
        [pod_from_object(TEMPLATE)],
        profiles={DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)},
        settings=DEFAULT_SETTINGS,
        max_replicas=max_replicas,
        incremental=incremental,
    )
    return time.perf_counter() - started, run


def _oracle(listing: Path, repeat: int) -> list[float]:
    """The oracle's placement times (ms) of the template on the List."""
    with tempfile.TemporaryDirectory() as tmp:
        pod_file = Path(tmp, "pod.json")
        pod_file.write_text(json.dumps(TEMPLATE))
        done = subprocess.run(
            [str(ORACLE), "--time", str(listing), "--pod", str(pod_file),
             "--repeat", str(repeat), "--profile", "full"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
    report = json.loads(done.stdout)
    print("oracle:", json.dumps({k: v for k, v in report.items() if not isinstance(v, dict)}))
    return report["placementMs"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_capacity_oracle")
    parser.add_argument("--list", type=Path, required=True, help="a kubectl List (JSON)")
    parser.add_argument("--max-replicas", type=int, default=None)
    parser.add_argument("--full-replicas", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)

    cluster = Cluster(parse_snapshot(args.list.read_bytes()).snapshot)
    scheduler_view(cluster, DEFAULT_SETTINGS, whole_pods=True)
    print(f"{len(cluster.snapshot.nodes)} nodes, {len(cluster.snapshot.pods)} pods")
    seconds, run = _capacity(cluster, args.max_replicas, True)
    (t,) = run.templates
    print(
        f"Verdict incremental: {t.replicas} replicas in {seconds:.2f} s "
        f"({seconds / max(t.replicas, 1) * 1000:.2f} ms per replica, {run.incremental} "
        f"incremental); stop {t.stop}: {t.message[:200]}"
    )
    full_seconds, full = _capacity(cluster, args.full_replicas, False)
    per_full = full_seconds / max(full.templates[0].replicas, 1) * 1000
    same = full.placements == run.placements[: len(full.placements)]
    print(
        f"Verdict full cycles: {full.templates[0].replicas} replicas in {full_seconds:.2f} s "
        f"({per_full:.1f} ms per replica); same placements as the incremental run: {same}"
    )
    times = _oracle(args.list, args.repeat)
    cycle = statistics.median(times)
    real = cycle * t.replicas / 1000
    print(
        f"kube-scheduler: one cycle {cycle:.1f} ms [{min(times):.1f}-{max(times):.1f}]; "
        f"{t.replicas} cycles = {real:.1f} s; ratio (scheduler / Verdict incremental) "
        f"{real / seconds:.2f}; Verdict full cycle / scheduler cycle {per_full / cycle:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
