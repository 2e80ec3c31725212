"""Engine time of one admission decision on the fullest node of a synthetic cluster.

python -m bench.bench_admission [--nodes 20 --pods 2200]
"""

from __future__ import annotations

import argparse
import statistics
import time

from bench.generate import generate
from service.decisions import load_kinds
from service.decisions.run import compute
from service.engine.objects import Cluster
from service.ingest.kube import snapshot_from_objects


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, default=20)
    parser.add_argument("--pods", type=int, default=2200)
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    env = generate(args.nodes, args.pods, 1, stats=False)
    cluster = Cluster(snapshot_from_objects(env["objects"]["items"]))
    node = max(cluster.snapshot.nodes, key=lambda n: len(cluster.pods_on(n.name)))
    kind = load_kinds()["admission"]
    cases = {
        "fits": {"cpu": "10m", "memory": "16Mi"},
        "critical, preempts": {"cpu": "8", "memory": "16Gi"},
    }
    print(f"node {node.name}: {len(cluster.pods_on(node.name))} pods")
    for label, requests in cases.items():
        pod = {
            "metadata": {"name": "bench", "namespace": "default"},
            "spec": {
                "priority": 2000001000 if "critical" in label else 0,
                "containers": [{"name": "c", "resources": {"requests": requests}}],
            },
        }
        loaded = kind.schema().load({"nodeName": node.name, "pod": pod})
        samples = []
        for _ in range(args.runs):
            started = time.perf_counter()
            result = kind.decide(cluster, loaded)
            samples.append((time.perf_counter() - started) * 1000)
        samples.sort()
        victims = len((result.get("preemption") or {}).get("victims", []))
        print(
            f"{label}: admitted={result['admitted']} victims={victims} "
            f"median {statistics.median(samples):.3f} ms, p99 {samples[int(len(samples) * 0.99)]:.3f} ms"
        )
    # The whole decision including request validation and pod decoding.
    started = time.perf_counter()
    for _ in range(500):
        compute(kind, cluster, {"nodeName": node.name, "pod": pod})
    print(f"validate + decide: {(time.perf_counter() - started) / 500 * 1000:.3f} ms per decision")


if __name__ == "__main__":
    main()
