"""The volume plugins at scale: Verdict's scheduler engine for pods that claim volumes, on
a cluster from ``python -m bench.generate --nodes 5000 --pods 150000 --seed 1 --list
--volumes``.

    python -m bench.bench_volumes --list cluster-vol.json [--repeat 5]

The placement pod is a StatefulSet replica coming back to its bound zonal volume (a claim
of the List, so VolumeBinding and VolumeZone keep one zone and NodeVolumeLimits counts every
node's attached volumes); the preemptor asks host port 9100 at priority 1,000,000, as
bench_oracle's, and claims another bound volume, so that every dry run reads the node's pods
through the volume filters. Both sides run the full default profile, every node filtered
and scored, every potential node a candidate. The oracle's timing mode loads only Nodes,
Pods and PodDisruptionBudgets from the List, so it cannot time these pods (it answers
"persistentvolumeclaim ... not found"); bench_oracle.py times the pods without volumes on
the same cluster beside it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from bench.bench_oracle import SETTINGS, _row, _timed
from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.scheduler.preemption import preempt
from service.engine.scheduler.profile import DefaultPreemptionArgs
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.body import parse_snapshot
from service.ingest.kube import pod_from_object


def _pods(claims: list[dict]) -> tuple[dict, dict]:
    """The replica (first claim) and the preemptor (second claim, same namespace)."""
    first, second = claims[0]["metadata"], claims[1]["metadata"]

    def pod(name: str, claim: dict, priority: int, requests: dict, ports: list) -> dict:
        container = {"name": "c", "image": "registry.k8s.io/pause:3.10"}
        container["resources"] = {"requests": requests}
        if ports:
            container["ports"] = ports
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": claim["namespace"], "uid": name},
            "spec": {
                "priority": priority,
                "containers": [container],
                "tolerations": [{"key": "dedicated", "operator": "Exists"}],
                "volumes": [
                    {"name": "data", "persistentVolumeClaim": {"claimName": claim["name"]}}
                ],
            },
            "status": {"phase": "Pending"},
        }

    replica = pod("bench-replica", first, 0, {"cpu": "500m", "memory": "1Gi"}, [])
    preemptor = pod(
        "bench-volume-preemptor",
        second,
        1_000_000,
        {"cpu": "100m", "memory": "128Mi"},
        [{"containerPort": 9100, "hostPort": 9100}],
    )
    return replica, preemptor


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_volumes")
    parser.add_argument("--list", type=Path, required=True, help="a kubectl List (JSON)")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)

    data = args.list.read_bytes()
    items = json.loads(data)["items"]
    claims = [i for i in items if i["kind"] == "PersistentVolumeClaim"]
    namespace = claims[0]["metadata"]["namespace"]
    claims = [c for c in claims if c["metadata"]["namespace"] == namespace]
    replica_pod, preemptor_pod = _pods(claims)
    del items
    started = time.perf_counter()
    cluster = Cluster(parse_snapshot(data).snapshot)
    scheduler_view(cluster, whole_pods=True, settings=DEFAULT_SETTINGS)
    snapshot = cluster.snapshot
    print(
        f"Verdict: {len(snapshot.nodes)} nodes, {len(snapshot.pods)} pods, "
        f"{len(snapshot.persistent_volumes)} volumes, {len(snapshot.csi_nodes)} CSINodes, "
        f"loaded and viewed in {time.perf_counter() - started:.1f} s"
    )
    replica, preemptor = pod_from_object(replica_pod), pod_from_object(preemptor_pod)
    every = DefaultPreemptionArgs(100, 100)
    preempt(cluster, preemptor, args=every, settings=SETTINGS)  # builds the per-node indexes
    place_times, outcome = _timed(lambda: place(cluster, replica, settings=SETTINGS), args.repeat)
    preempt_times, out = _timed(
        lambda: preempt(cluster, preemptor, args=every, settings=SETTINGS), args.repeat
    )
    feasible = [n for n in outcome.nodes if n.feasible]
    print(f"Verdict placement: {len(feasible)} feasible, selected {outcome.selected_node}")
    print(f"Verdict preemption: {len(out.candidates)} candidates, chose {out.nominated_node_name}")

    print(_row("placement, a replica", place_times, None))
    print(_row("preemption, with a claim", preempt_times, None))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
