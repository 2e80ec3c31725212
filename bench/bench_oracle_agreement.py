"""Agreement of Verdict with each release's real kube-scheduler over many random clusters
(the generators of the differential tests, tests/engine/scheduler/random_clusters.py): per
release and family, how many cases agree on every node's verdict, scores, the selected node
within the top set, and preemption's candidates, victims and nominated node among the ties.

    VERDICT_ORACLE_DIR=... python -m bench.bench_oracle_agreement --releases 1.32,1.33 \
        --start 20000 --seeds 60

Not timed; it prints the first disagreements of each family and the agreement figures.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

from tests.engine.scheduler.oracle import (
    RELEASES,
    placement_differences,
    preemption_differences,
)
from tests.engine.scheduler.random_clusters import random_case, random_workload_case

Check = Callable[[int, str], list[str]]

FAMILIES: dict[str, Check] = {
    "placement": lambda s, v: placement_differences(random_case(s, "placement"), v),
    "preemption": lambda s, v: preemption_differences(random_case(s, "preemption"), v),
    "spread-placement": lambda s, v: placement_differences(
        random_case(s, "placement", spread=True), v
    ),
    "spread-preemption": lambda s, v: preemption_differences(
        random_case(s, "preemption", spread=True), v
    ),
    "workload-placement": lambda s, v: placement_differences(
        random_workload_case(s, "placement"), v
    ),
    "workload-preemption": lambda s, v: preemption_differences(
        random_workload_case(s, "preemption"), v
    ),
    "restricted-placement": lambda s, v: placement_differences(
        random_case(s, "placement"), v, "restricted"
    ),
    "restricted-preemption": lambda s, v: preemption_differences(
        random_case(s, "preemption"), v, "restricted"
    ),
    "volumes-placement": lambda s, v: placement_differences(
        random_case(s, "placement", volumes=True), v
    ),
    "volumes-preemption": lambda s, v: preemption_differences(
        random_case(s, "preemption", volumes=True), v
    ),
}


def agreement(version: str, start: int, count: int, show: int = 3) -> tuple[int, int]:
    """(agreeing, examined) over every family for ``version``; prints per family."""
    agree = total = 0
    for family, check in FAMILIES.items():
        bad = 0
        for seed in range(start, start + count):
            differences = check(seed, version)
            if differences:
                bad += 1
                if bad <= show:
                    print(f"  {version} {family} seed {seed}: {differences[:3]}", flush=True)
        print(f"{version} {family}: {count - bad}/{count} agree", flush=True)
        agree += count - bad
        total += count
    return agree, total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--releases", default=",".join(RELEASES))
    parser.add_argument("--start", type=int, default=20000)
    parser.add_argument("--seeds", type=int, default=60, help="seeds per family")
    args = parser.parse_args()
    for version in args.releases.split(","):
        began = time.monotonic()
        agree, total = agreement(version, args.start, args.seeds)
        print(
            f"{version}: {agree}/{total} agree ({100 * agree / total:.2f} %), "
            f"{time.monotonic() - began:.0f} s",
            flush=True,
        )


if __name__ == "__main__":
    main()
