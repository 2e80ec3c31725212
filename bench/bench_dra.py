"""DynamicResources at scale: a 2-GPU pod placed on a 1,000-node cluster with 8 GPUs per
node (one ResourceSlice each), half of them allocated to claims of running pods.

    python -m bench.bench_dra [--nodes 1000] [--repeat 7]

The claim asks two devices of a class selecting the GPU driver, with a selector on the
model and a memory quantity comparison; every node is filtered and scored (full default
profile, v1.35), so the allocator runs on every node. Timed: the first placement on a fresh
Cluster (the scheduler view and the DRA manager built, every selector evaluated) and the
next ones (the view kept, as a stored snapshot's is), wall and process CPU time (the
machine is shared: CPU time is what the placement costs). verdict-oracle's timing mode ignores
DRA objects, so there is no oracle time beside it (bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.version import settings_for
from service.ingest.body import parse_snapshot
from service.ingest.kube import pod_from_object

GPU = "gpu.example.com"
SETTINGS = settings_for("1.35")


def cluster_objects(nodes: int, gpus: int = 8) -> list[dict]:
    """Nodes with ``gpus`` GPUs each, the first half of them held by a running pod's claim."""
    objects: list[dict] = [
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": "gpu"},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]},
        }
    ]
    for i in range(nodes):
        name = f"node-{i:04}"
        alloc = {"cpu": "64", "memory": "512Gi", "pods": "110"}
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
                "status": {"capacity": alloc, "allocatable": alloc},
            }
        )
        devices = [
            {
                "name": f"gpu-{j}",
                "attributes": {
                    "model": {"string": "h100"},
                    "index": {"int": j},
                    "driverVersion": {"version": "550.54.15"},
                },
                "capacity": {"memory": {"value": "80Gi"}},
            }
            for j in range(gpus)
        ]
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceSlice",
                "metadata": {"name": f"{name}-gpu"},
                "spec": {
                    "driver": GPU,
                    "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                    "nodeName": name,
                    "devices": devices,
                },
            }
        )
        held = [
            {"request": "gpus", "driver": GPU, "pool": name, "device": f"gpu-{j}"}
            for j in range(gpus // 2)
        ]
        claim = f"{name}-training"
        objects.append(
            {
                "apiVersion": "resource.k8s.io/v1",
                "kind": "ResourceClaim",
                "metadata": {"name": claim, "namespace": "default", "uid": f"uid-{claim}"},
                "spec": {
                    "devices": {
                        "requests": [
                            {
                                "name": "gpus",
                                "exactly": {"deviceClassName": "gpu", "count": len(held)},
                            }
                        ]
                    }
                },
                "status": {
                    "allocation": {"devices": {"results": held}},
                    "reservedFor": [{"resource": "pods", "name": claim, "uid": f"uid-{claim}"}],
                },
            }
        )
        objects.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": claim, "namespace": "default", "uid": f"uid-{claim}"},
                "spec": {
                    "nodeName": name,
                    "priority": 0,
                    "containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "8", "memory": "64Gi"}}}
                    ],
                    "resourceClaims": [{"name": "gpus", "resourceClaimName": claim}],
                },
                "status": {"phase": "Running", "startTime": "2026-11-20T00:00:00Z"},
            }
        )
    objects.append(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {"name": "bench-2gpu", "namespace": "default", "uid": "uid-bench-2gpu"},
            "spec": {
                "devices": {
                    "requests": [
                        {
                            "name": "gpus",
                            "exactly": {
                                "deviceClassName": "gpu",
                                "count": 2,
                                "selectors": [
                                    {
                                        "cel": {
                                            "expression": f'device.attributes["{GPU}"].model == "h100" && '
                                            f'device.capacity["{GPU}"].memory.compareTo(quantity("40Gi")) >= 0'
                                        }
                                    }
                                ],
                            },
                        }
                    ]
                }
            },
        }
    )
    return objects


POD = {
    "apiVersion": "v1",
    "kind": "Pod",
    "metadata": {"name": "bench-2gpu", "namespace": "default", "uid": "uid-bench-pod"},
    "spec": {
        "priority": 0,
        "containers": [{"name": "c", "resources": {"requests": {"cpu": "4", "memory": "16Gi"}}}],
        "resourceClaims": [{"name": "gpus", "resourceClaimName": "bench-2gpu"}],
    },
    "status": {"phase": "Pending"},
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_dra")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    body = json.dumps({"apiVersion": "v1", "kind": "List", "items": cluster_objects(args.nodes)})
    snapshot = parse_snapshot(body.encode()).snapshot
    pod = pod_from_object(POD)
    first, first_cpu, warm, warm_cpu = [], [], [], []
    for _ in range(args.repeat):
        cluster = Cluster(snapshot)
        start, cpu = time.perf_counter(), time.process_time()
        out = place(cluster, pod, settings=SETTINGS)
        first.append((time.perf_counter() - start) * 1000)
        first_cpu.append((time.process_time() - cpu) * 1000)
        start, cpu = time.perf_counter(), time.process_time()
        again = place(cluster, pod, settings=SETTINGS)
        warm.append((time.perf_counter() - start) * 1000)
        warm_cpu.append((time.process_time() - cpu) * 1000)
        assert again.selected_node == out.selected_node
    chosen = next(n for n in out.nodes if n.node_name == out.selected_node)
    print(
        json.dumps(
            {
                "nodes": args.nodes,
                "feasible": sum(n.feasible for n in out.nodes),
                "selected": out.selected_node,
                "allocation": {
                    c: [d.device for d in ds] for c, ds in (chosen.allocation or {}).items()
                },
                "first_ms": [round(t, 1) for t in first],
                "first_median_ms": round(statistics.median(first), 1),
                "first_cpu_median_ms": round(statistics.median(first_cpu), 1),
                "warm_ms": [round(t, 1) for t in warm],
                "warm_median_ms": round(statistics.median(warm), 1),
                "warm_cpu_median_ms": round(statistics.median(warm_cpu), 1),
            }
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
