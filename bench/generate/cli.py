"""``python -m bench.generate``: the command line, writing the output to stdout as it is made."""

from __future__ import annotations

import argparse
import sys

from bench.generate.common import DEFAULT_CAPTURED_AT, MAX_NODES, parse_time
from bench.generate.envelope import iter_chunks


def main(argv: list[str] | None = None) -> int:
    """Parse and check the flags, then stream the output to stdout; exit 2 on bad flags
    (argparse), 1 when the reader goes away."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.generate",
        description="Print a deterministic synthetic cluster snapshot (Verdict envelope) as JSON.",
    )
    parser.add_argument("--nodes", type=int, required=True, help="number of nodes")
    parser.add_argument("--pods", type=int, required=True, help="number of pods")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument(
        "--list", action="store_true", help="print only the kubectl List (no envelope, no stats)"
    )
    parser.add_argument("--no-stats", action="store_true", help="leave out the Summary API stats")
    parser.add_argument(
        "--volumes", action="store_true", help="StatefulSets claiming zonal volumes, CSINodes"
    )
    parser.add_argument(
        "--captured-at",
        default=DEFAULT_CAPTURED_AT,
        help=f"snapshot time, RFC 3339 (default {DEFAULT_CAPTURED_AT})",
    )
    args = parser.parse_args(argv)
    try:
        parse_time(args.captured_at)
    except ValueError:
        parser.error(f"--captured-at: not an RFC 3339 time: {args.captured_at!r}")
    if not 1 <= args.nodes <= MAX_NODES:
        parser.error(f"--nodes must be between 1 and {MAX_NODES}")
    if args.pods < 0:
        parser.error("--pods must not be negative")
    out = sys.stdout.buffer
    try:
        for chunk in iter_chunks(
            args.nodes,
            args.pods,
            args.seed,
            stats=not args.no_stats,
            list_only=args.list,
            captured_at=args.captured_at,
            volumes=args.volumes,
        ):
            out.write(chunk)
        out.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `| head`); do not print a traceback.
        sys.stderr.close()
        return 1
    return 0
