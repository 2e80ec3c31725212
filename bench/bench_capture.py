"""`verdict capture` of a large cluster from the fake kubectl (tests/fake_kubectl).

    python -m bench.bench_capture --nodes 5000 --pods 150000 --repeat 3

The recorded answers come from bench.generate (the List, and each node's Summary; every node
answers the same configz) and are written once under --dir. Each run is a real
`verdict capture --output` subprocess; reported: wall time, the peak RSS of the capture
process (getrusage of children: the fake kubectl's shell processes are a few MiB) and the
size of the gzipped envelope. Targets (issue 15): under 60 s and under 1 GiB.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path

import orjson

from bench import generate
from bench.common import VERDICT
from tests.fake_kubectl import BIN_DIR

CONFIGZ = {
    "kind": "KubeletConfiguration",
    "apiVersion": "kubelet.config.k8s.io/v1beta1",
    "evictionHard": {"memory.available": "100Mi"},
    "kubeReserved": {"memory": "1465Mi"},
    "maxPods": 110,
}


def record(directory: Path, nodes: int, pods: int, seed: int) -> Path:
    """The fake kubectl's answers for this cluster, written once (reused when present)."""
    done = directory / "done"
    if done.exists():
        return directory
    (directory / "nodes").mkdir(parents=True, exist_ok=True)
    with (directory / "objects.json").open("wb") as out:
        for chunk in generate.iter_chunks(nodes, pods, seed, list_only=True):
            out.write(chunk)
    for name, summary in generate.iter_stats(nodes, pods, seed):
        (directory / "nodes" / f"{name}.summary").write_bytes(orjson.dumps(summary))
    # Nodes the generator leaves without stats (unreachable kubelets) fail as kubectl does.
    (directory / "default.summary").write_text("")
    (directory / "default.configz").write_bytes(orjson.dumps({"kubeletconfig": CONFIGZ}))
    done.touch()
    return directory


def run_once(answers: Path, output: Path, parallel: int) -> tuple[float, int, str]:
    env = {
        **os.environ,
        "FAKE_KUBECTL_DIR": str(answers),
        "PATH": f"{BIN_DIR}{os.pathsep}{os.environ['PATH']}",
    }
    env.pop("KUBECONFIG", None)
    start = time.perf_counter()
    done = subprocess.run(
        [VERDICT, "capture", "--output", str(output), "--parallel", str(parallel)],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    elapsed = time.perf_counter() - start
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return elapsed, peak_kib, done.stderr.strip().splitlines()[-1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.bench_capture")
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--parallel", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--dir", type=Path, default=Path("/tmp/verdict-bench-capture"))
    args = parser.parse_args(argv)
    answers = record(
        args.dir / f"{args.nodes}n-{args.pods}p-s{args.seed}", args.nodes, args.pods, args.seed
    )
    listing = (answers / "objects.json").stat().st_size
    print(f"List {listing / 2**20:.0f} MiB, {args.nodes} nodes, parallel {args.parallel}")
    times = []
    for i in range(args.repeat):
        output = args.dir / "capture.json.gz"
        elapsed, peak_kib, summary = run_once(answers, output, args.parallel)
        times.append(elapsed)
        print(
            f"run {i + 1}: {elapsed:.1f} s, peak RSS so far {peak_kib / 1024:.0f} MiB, "
            f"output {output.stat().st_size / 2**20:.0f} MiB gzipped; {summary}"
        )
    print(
        f"wall: median {statistics.median(times):.1f} s, min {min(times):.1f}, max {max(times):.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
