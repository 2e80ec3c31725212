"""Node lifecycle benchmark (target: the whole node-eviction-rate decision on a 5,000-node /
150,000-pod snapshot with 10% of the nodes unhealthy across zones < 500 ms of engine time).

Builds a synthetic cluster with bench.generate and makes every tenth node unhealthy before
ingesting it: alternately the kubelet reports Ready=False, or the node went silent (Ready
heartbeat and Lease renewTime ten minutes before capturedAt). The unhealthy nodes fall in
every zone, so zones stay Normal and each drains its queue at 0.1 nodes/s. ``now`` is the
snapshot's capturedAt. Times, per configuration:

* engine — ``node_eviction_rate(cluster, now, config)``, the number the target is about
  (the Cluster's lazy indexes, shared by all decisions on a cached snapshot, are built
  once before timing);
* decision — the whole decision kind as the HTTP layer calls it (schema load, config
  parsing, the engine, PodRefs).

    python -m bench.bench_nodelifecycle [--nodes 5000] [--pods 150000] [--iterations 10]
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from datetime import UTC, datetime, timedelta

from bench.common import time_calls
from bench.generate import DEFAULT_CAPTURED_AT, generate
from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.nodelifecycle.decision import node_eviction_rate
from service.engine.objects import Cluster
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _make_unhealthy(items: list[dict], captured: datetime, every: int) -> int:
    """Every ``every``-th node: Ready=False (odd ones) or silent for 10 minutes (even ones)."""
    old = captured - timedelta(minutes=10)
    silent: set[str] = set()
    count = 0
    nodes = [item for item in items if item["kind"] == "Node"]
    for index, node in enumerate(nodes):
        if index % every:
            continue
        count += 1
        conditions = node.setdefault("status", {}).setdefault("conditions", [])
        ready = next((c for c in conditions if c["type"] == "Ready"), None)
        if ready is None:
            ready = {"type": "Ready"}
            conditions.append(ready)
        if count % 2:
            ready.update(
                status="False",
                reason="KubeletNotReady",
                lastHeartbeatTime=_rfc3339(captured),
                lastTransitionTime=_rfc3339(captured - timedelta(seconds=30)),
            )
        else:
            ready.update(status="True", lastHeartbeatTime=_rfc3339(old))
            silent.add(node["metadata"]["name"])
    for item in items:
        if item["kind"] == "Lease" and item["metadata"]["name"] in silent:
            item["spec"]["renewTime"] = _rfc3339(old).replace("Z", ".000000Z")
    return count


def _cluster(nodes: int, pods: int, seed: int, every: int) -> tuple[Cluster, int]:
    envelope = generate(nodes, pods, seed, stats=False)
    captured = datetime.fromisoformat(DEFAULT_CAPTURED_AT.replace("Z", "+00:00"))
    items = envelope["objects"]["items"]
    unhealthy = _make_unhealthy(items, captured, every)
    cluster = Cluster(snapshot_from_objects(items, None, captured))
    # The lazy indexes every decision on a cached snapshot shares.
    _ = cluster.nodes_by_name, cluster.pods_by_node, cluster.leases_by_node
    return cluster, unhealthy


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_nodelifecycle")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--every", type=int, default=10, help="every n-th node is unhealthy")
    args = parser.parse_args(argv)

    built = time.perf_counter()
    cluster, unhealthy = _cluster(args.nodes, args.pods, args.seed, args.every)
    built = time.perf_counter() - built
    now = cluster.snapshot.captured_at or datetime.now(UTC)
    kind = KINDS["node-eviction-rate"]
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(
        f"cluster: {len(cluster.snapshot.nodes)} nodes, {len(cluster.snapshot.pods)} pods, "
        f"{unhealthy} unhealthy nodes (built in {built:.1f} s)"
    )
    scenarios = {
        "taint": {},
        "taint + applyDefaultTolerations": {"applyDefaultTolerations": True},
        "legacy": {"mode": "legacy"},
    }
    for name, config in scenarios.items():
        result = node_eviction_rate(cluster, now, config, settings=DEFAULT_SETTINGS)
        evicted = sum(1 for p in result["pods"] if p["evictAt"] is not None)
        tainted = sum(1 for n in result["nodes"] if n["taint"] is not None)
        engine = time_calls(
            lambda config=config: node_eviction_rate(
                cluster, now, config, settings=DEFAULT_SETTINGS
            ),
            args.iterations,
        )
        decision = time_calls(
            lambda config=config: compute(kind, cluster, {"config": config}), args.iterations
        )
        print(
            f"{name}: {len(result['zones'])} zones, {tainted} nodes to taint, "
            f"{len(result['pods'])} pods listed, {evicted} evicted"
        )
        print("  engine   median {:7.1f} ms  p95 {:7.1f} ms  mean {:7.1f} ms".format(*engine))
        print("  decision median {:7.1f} ms  p95 {:7.1f} ms  mean {:7.1f} ms".format(*decision))
    return 0


if __name__ == "__main__":
    sys.exit(main())
