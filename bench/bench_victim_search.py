"""Time of the kubelet's victim search alone (``get_pods_to_preempt``) on bench_admission's
critical cases, optionally beside other versions of the module, called in turn in one
process on the same inputs.

python -m bench.bench_victim_search [--against OLD_PREEMPTION.py ...] [--batches 15]

Each version runs ``--batches`` batches of 100 calls with the garbage collector off, taking
turns; the lowest and the median batch are reported, per call. Another version is a copy
of ``service/engine/kubelet/preemption.py`` from an earlier commit, e.g.
``git show 2db0076:service/engine/kubelet/preemption.py > /tmp/756.py``. Every version
must choose the same victims, or the comparison stops.
"""

from __future__ import annotations

import argparse
import gc
import importlib.util
import statistics
import sys
import time
from pathlib import Path

from bench.bench_admission import _pod, _share, distinct_node
from bench.generate import generate
from service.decisions import KINDS
from service.decisions.admission import other_pods_on
from service.engine.kubelet import preemption
from service.engine.kubelet.admission import PodAdmitAttributes, general_filter
from service.engine.objects import Cluster
from service.engine.quantity import wrap_int64
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects


def _load(path: str):
    """Another version of the preemption module, imported from its file."""
    name = f"bench_version_{len(sys.modules)}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _inputs(cluster: Cluster, node_name: str, requests: dict) -> tuple:
    """What the critical pod admission handler passes to get_pods_to_preempt."""
    loaded = KINDS["admission"].schema().load({"nodeName": node_name, "pod": _pod(requests, True)})
    pod = loaded["pod"]
    others = other_pods_on(cluster, node_name, pod)
    reasons = general_filter(
        PodAdmitAttributes(pod, cluster.node(node_name), others, settings=DEFAULT_SETTINGS)
    )
    requirements = [
        (r.resource, wrap_int64(r.insufficient_amount)) for r in reasons if r.is_resource
    ]
    return pod, others, requirements


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--against", nargs="*", default=[])
    parser.add_argument("--batches", type=int, default=15)
    args = parser.parse_args()
    versions = {"this": preemption} | {Path(p).name: _load(p) for p in args.against}
    env = generate(20, 2200, 1, stats=False)
    cluster = Cluster(snapshot_from_objects(env["objects"]["items"]))
    node = max(cluster.snapshot.nodes, key=lambda n: len(cluster.pods_on(n.name)))
    distinct, name = distinct_node()
    cases = {
        "critical, preempts": _inputs(cluster, node.name, {"cpu": "8", "memory": "16Gi"}),
        "critical, evicts most (worst)": _inputs(cluster, node.name, _share(node, 0.99, 0.95)),
        "distinct requests, evicts most": _inputs(
            distinct, name, _share(distinct.node(name), 0.75, 0.75)
        ),
    }
    for label, (pod, others, requirements) in cases.items():
        chosen = {
            key: [
                p.key
                for p in module.get_pods_to_preempt(
                    pod, others, requirements, settings=DEFAULT_SETTINGS
                )
            ]
            for key, module in versions.items()
        }
        if len({tuple(v) for v in chosen.values()}) != 1:
            raise SystemExit(f"{label}: the versions choose different victims")
        batches: dict[str, list[float]] = {key: [] for key in versions}
        for _ in range(args.batches):
            for key, module in versions.items():
                search = module.get_pods_to_preempt
                gc.disable()
                started = time.perf_counter()
                for _ in range(100):
                    search(pod, others, requirements)
                batches[key].append((time.perf_counter() - started) * 10)  # ms per call
                gc.enable()
        print(
            f"{label} ({len(chosen['this'])} victims): "
            + ", ".join(
                f"{key} {min(times):.3f} / {statistics.median(times):.3f} ms"
                for key, times in batches.items()
            )
        )


if __name__ == "__main__":
    main()
