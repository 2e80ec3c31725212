"""The README's first hour from a fresh clone, timed: `git clone`, then the install block and
the first `bash` block of README.md's "Your first hour" section, run as written (the port a
free one in place of 8080, the instance folder a new one, as on a first start), up to the
eviction answer.

    python -m bench.bench_first_hour [--runs 3] [--repo .]

Prints one JSON line per run (clone, install, serve-to-answer and total seconds) and the
load average before each; results go in bench/RESULTS.md ("First hour").
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import resource
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def first_hour_blocks(readme: str) -> tuple[str, str]:
    """(install, first bash block) of the README's "Your first hour" section."""
    section = readme.split("\n## Your first hour", 1)[1].split("\n## ", 1)[0]
    blocks = FENCE.findall(section)
    install = next(body for language, body in blocks if language == "sh")
    first = next(body for language, body in blocks if language == "bash")
    return install, first


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def load() -> str:
    """The 1, 5 and 15 minute load averages."""
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def children_cpu() -> float:
    """CPU seconds (user and system) of the waited-for children so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(script: str, cwd: Path, env: dict, expect: str = "") -> tuple[float, float]:
    """(wall seconds, CPU seconds of the processes it waited for) of ``script`` in bash; its
    process group (the server it starts) stopped after. The CPU of a server left running in
    the background is not counted: only what the script waited for."""
    cpu = children_cpu()
    start = time.monotonic()
    process = subprocess.Popen(
        ["bash", "-c", "set -eo pipefail\n" + script],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = process.communicate(timeout=600)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    elapsed = time.monotonic() - start
    if process.returncode != 0:
        raise SystemExit(f"failed ({process.returncode}): {err[-2000:]}")
    if expect not in out:
        raise SystemExit(f"{expect!r} not in the output: {out[-2000:]}")
    return elapsed, children_cpu() - cpu


def one_run(repo: Path) -> dict:
    with tempfile.TemporaryDirectory(prefix="verdict-first-hour-") as tmp:
        root = Path(tmp)
        port = free_port()
        env = {**os.environ, "VERDICT_PORT": str(port), "VERDICT_INSTANCE_PATH": str(root / "home")}
        env.pop("VERDICT_DATABASE_URL", None)
        env.pop("VIRTUAL_ENV", None)
        before = load()
        start = time.monotonic()
        subprocess.run(["git", "clone", "--quiet", str(repo), str(root / "verdict")], check=True)
        clone = time.monotonic() - start
        install, first = first_hour_blocks((root / "verdict" / "README.md").read_text())
        install_s, install_cpu = timed(install, root / "verdict", env)
        script = first.replace("127.0.0.1:8080", f"127.0.0.1:{port}")
        answer_s, answer_cpu = timed(
            script, root / "verdict", env, expect='"nodeConditions":["MemoryPressure"]'
        )
        return {
            "load_before": before,
            "clone_s": round(clone, 1),
            "install_s": round(install_s, 1),
            "install_cpu_s": round(install_cpu, 1),
            "serve_to_answer_s": round(answer_s, 1),
            "serve_to_answer_cpu_s": round(answer_cpu, 1),
            "total_s": round(clone + install_s + answer_s, 1),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--repo", default=str(Path(__file__).resolve().parents[1]))
    args = parser.parse_args()
    for _ in range(args.runs):
        print(json.dumps(one_run(Path(args.repo))), flush=True)


if __name__ == "__main__":
    main()
