"""Verdict's scheduler engine beside the real kube-scheduler (v1.35.4's framework, the
oracle's timing mode), on the same kubectl List, the same pods, the same machine, one run.

    python -m bench.bench_oracle --list cluster-list.json [--repeat 7]
    python -m bench.generate --nodes 5000 --pods 150000 --seed 1 --list > cluster-list.json

Both sides: the full default profile, every node filtered and scored, every potential node a
preemption candidate (minCandidateNodesPercentage 100). The placement pod asks 500m / 1Gi,
tolerates the cluster's dedicated taints, prefers a zone and runs an image most nodes hold
(so that TaintToleration, NodeAffinity and ImageLocality all score); the preemptor asks
100m / 128Mi and host port 9100 at priority 1,000,000 (every node runs node-exporter on it).
Verdict runs with kubernetesVersion 1.35, as the oracle. Times are engine times (the
snapshot already loaded); the oracle prints its own.

A second pair of pods is a new replica of a generated Deployment whose pods spread over zones
(DoNotSchedule) and hosts (ScheduleAnyway), with preferred anti-affinity on the hostname
added: owned by its ReplicaSet, selected by its Service, so that PodTopologySpread and
InterPodAffinity filter and score against the workload's pods; its preemptor variant also
asks host port 9100 at priority 1,000,000. The oracle runs once per pair (``--repeat`` for
the first, ``--replica-repeat`` for the second). ``--memory`` prints the resident memory of
this process at the end, holding the decoded snapshot, its scheduler view and the indexes
the decisions built (the List's bytes released).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.scheduler.preemption import preempt
from service.engine.scheduler.profile import DefaultPreemptionArgs
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS, settings_for
from service.ingest.body import parse_snapshot
from service.ingest.kube import pod_from_object

# The scheduler oracle in the folder VERDICT_ORACLE_DIR names (docs/ORACLES.md), as the tests
# find it; VERDICT_ORACLE names the binary itself instead.
ORACLE = Path(
    os.environ.get("VERDICT_ORACLE")
    or Path(os.environ.get("VERDICT_ORACLE_DIR", ".")) / "verdict-oracle"
)
SETTINGS = settings_for("1.35")


def _common_image(items: list[dict]) -> str:
    """The image the most nodes report (ImageLocality then scores on most nodes)."""
    counts: Counter[str] = Counter()
    for item in items:
        if item.get("kind") == "Node":
            for image in item.get("status", {}).get("images") or ():
                names = image.get("names") or []
                if names:
                    counts[names[-1]] += 1
    return counts.most_common(2)[-1][0] if counts else "registry.k8s.io/pause:3.10"


def _pods(image: str) -> tuple[dict, dict]:
    placement = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bench-pending", "namespace": "bench", "uid": "bench-pending"},
        "spec": {
            "priority": 0,
            "containers": [
                {
                    "name": "c",
                    "image": image,
                    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                }
            ],
            "tolerations": [{"key": "dedicated", "operator": "Exists"}],
            "affinity": {
                "nodeAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 50,
                            "preference": {
                                "matchExpressions": [
                                    {
                                        "key": "topology.kubernetes.io/zone",
                                        "operator": "In",
                                        "values": ["eu-west-1a"],
                                    }
                                ]
                            },
                        }
                    ]
                }
            },
        },
        "status": {"phase": "Pending"},
    }
    preemptor = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "bench-preemptor", "namespace": "bench", "uid": "bench-preemptor"},
        "spec": {
            "priority": 1_000_000,
            "containers": [
                {
                    "name": "c",
                    "image": "registry.k8s.io/pause:3.10",
                    "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
                    "ports": [{"containerPort": 9100, "hostPort": 9100}],
                }
            ],
        },
        "status": {"phase": "Pending"},
    }
    return placement, preemptor


def _replica(items: list[dict]) -> tuple[dict, dict] | None:
    """A new replica of the first Deployment whose pods carry a DoNotSchedule zone spread and a
    ScheduleAnyway hostname spread, and its preemptor variant (host port 9100, priority 1e6)."""
    for item in items:
        spec = item.get("spec") or {}
        constraints = spec.get("topologySpreadConstraints") or []
        owners = item["metadata"].get("ownerReferences") or []
        if (
            item.get("kind") == "Pod"
            and spec.get("nodeName")
            and len(constraints) == 2
            and owners
            and owners[0]["kind"] == "ReplicaSet"
        ):
            break
    else:
        return None
    meta = item["metadata"]
    app = meta["labels"]["app.kubernetes.io/name"]
    affinity = dict(spec.get("affinity") or {})
    affinity["podAntiAffinity"] = {
        "preferredDuringSchedulingIgnoredDuringExecution": [
            {
                "weight": 100,
                "podAffinityTerm": {
                    "labelSelector": {"matchLabels": {"app.kubernetes.io/name": app}},
                    "topologyKey": "kubernetes.io/hostname",
                },
            }
        ]
    }
    requests = spec["containers"][0].get("resources", {}).get("requests") or {}

    def pod(name: str, priority: int, ports: list) -> dict:
        container = {"name": "c", "image": spec["containers"][0]["image"]}
        container["resources"] = {"requests": requests}
        if ports:
            container["ports"] = ports
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": meta["namespace"],
                "uid": name,
                "labels": meta["labels"],
                "ownerReferences": meta["ownerReferences"],
            },
            "spec": {
                "priority": priority,
                "containers": [container],
                "tolerations": spec.get("tolerations") or [],
                "affinity": affinity,
                "topologySpreadConstraints": constraints,
            },
            "status": {"phase": "Pending"},
        }

    return (
        pod("bench-replica", 0, []),
        pod("bench-replica-preemptor", 1_000_000, [{"containerPort": 9100, "hostPort": 9100}]),
    )


def _rss_mib() -> float:
    """This process's resident memory (VmRSS), in MiB."""
    status = Path("/proc/self/status").read_text()
    return int(re.search(r"VmRSS:\s+(\d+) kB", status).group(1)) / 1024


def _timed(fn, repeat: int) -> tuple[list[float], object]:
    times, result = [], None
    for _ in range(repeat):
        gc.collect()
        gc.disable()
        started = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - started) * 1000)
        gc.enable()
    return times, result


def _row(label: str, verdict: list[float], oracle: list[float] | None) -> str:
    v = statistics.median(verdict)
    text = f"{label:<28} Verdict {v:7.1f} ms [{min(verdict):.1f}–{max(verdict):.1f}]"
    if oracle:
        o = statistics.median(oracle)
        text += f"   oracle {o:7.1f} ms [{min(oracle):.1f}–{max(oracle):.1f}]   ratio {v / o:.2f}"
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_oracle")
    parser.add_argument("--list", type=Path, required=True, help="a kubectl List (JSON)")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--replica-repeat", type=int, default=3)
    parser.add_argument("--memory", action="store_true", help="print the resident memory")
    args = parser.parse_args(argv)

    data = args.list.read_bytes()
    items = json.loads(data)["items"]
    pairs = {"": _pods(_common_image(items))}
    replica = _replica(items)
    if replica is not None:
        pairs["replica "] = replica
    del items
    started = time.perf_counter()
    cluster = Cluster(parse_snapshot(data).snapshot)
    del data
    scheduler_view(cluster, settings=DEFAULT_SETTINGS)
    print(
        f"Verdict: {len(cluster.snapshot.nodes)} nodes, {len(cluster.snapshot.pods)} pods, "
        f"loaded and viewed in {time.perf_counter() - started:.1f} s"
    )
    every = DefaultPreemptionArgs(100, 100)
    rows = []
    for label, (placement_pod, preemptor_pod) in pairs.items():
        repeat = args.repeat if not label else args.replica_repeat
        pending, preemptor = pod_from_object(placement_pod), pod_from_object(preemptor_pod)
        preempt(cluster, preemptor, args=every, settings=SETTINGS)  # builds the indexes
        place_times, outcome = _timed(
            lambda p=pending: place(cluster, p, settings=SETTINGS), repeat
        )
        preempt_times, out = _timed(
            lambda p=preemptor: preempt(cluster, p, args=every, settings=SETTINGS), repeat
        )
        feasible = [n for n in outcome.nodes if n.feasible]
        print(
            f"Verdict {label}placement: {len(feasible)} feasible, selected "
            f"{outcome.selected_node}, plugins scored: {', '.join(outcome.weights)}"
        )
        print(
            f"Verdict {label}preemption: {len(out.candidates)} candidates, "
            f"chose {out.nominated_node_name}"
        )
        oracle_place = oracle_preempt = None
        if ORACLE.exists():
            report = _run_oracle(args.list, placement_pod, preemptor_pod, repeat)
            oracle_place, oracle_preempt = _oracle_times(report)
            theirs = report["placement"]
            print(
                f"oracle {label}placement: {theirs['feasible']} feasible, best "
                f"{theirs['maxSet']}; Verdict's choice among them: "
                f"{outcome.selected_node in theirs['maxSet']}"
            )
            print(
                f"oracle {label}preemption: {report['preemption']['candidates']} candidates, "
                f"chose {report['preemption']['chosen']}"
            )
        else:
            print(f"oracle: not found at {ORACLE}")
        rows.append(_row(f"{label}placement (full profile)", place_times, oracle_place))
        rows.append(_row(f"{label}preemption (every node)", preempt_times, oracle_preempt))
    print("\n".join(rows))
    if args.memory:
        gc.collect()
        print(f"Verdict resident memory, snapshot, view and indexes held: {_rss_mib():.0f} MiB")
    return 0


def _run_oracle(listing: Path, placement_pod: dict, preemptor_pod: dict, repeat: int) -> dict:
    """The oracle's timing mode on the same List and pods (full default profile)."""
    with tempfile.TemporaryDirectory() as tmp:
        pod_file, preemptor_file = Path(tmp, "pod.json"), Path(tmp, "preemptor.json")
        pod_file.write_text(json.dumps(placement_pod))
        preemptor_file.write_text(json.dumps(preemptor_pod))
        done = subprocess.run(
            [
                str(ORACLE),
                "--time",
                str(listing),
                "--pod",
                str(pod_file),
                "--preemptor",
                str(preemptor_file),
                "--repeat",
                str(repeat),
                "--profile",
                "full",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
    report = json.loads(done.stdout)
    print(
        "oracle:",
        json.dumps({k: v for k, v in report.items() if not isinstance(v, list | dict)}),
    )
    return report


def _oracle_times(report: dict) -> tuple[list[float], list[float]]:
    """The oracle's per-repeat times in ms (its timing mode's placementMs, preemptionMs)."""
    return report["placementMs"], report["preemptionMs"]


if __name__ == "__main__":
    sys.exit(main())
