"""Peak memory of a real `verdict serve` worker under hostile bodies (issue 14).

    python -m bench.bench_body_memory [--chunked-mib 300] [--bomb-mib 10] [--repeat 1]
        [--list list.json]

Starts one gunicorn worker on SQLite with the default limits (1 GiB body, 16 MiB large-body
threshold, one large-body slot), then sends, each to a fresh server:

* a chunked body of ``--chunked-mib`` MiB (a List padded with whitespace, accepted);
* a gzip bomb: ``--bomb-mib`` MiB of gzip that inflates past the 1 GiB limit (413);
* three such bombs at once;
* with ``--list``, that file (a kubectl List, e.g. from ``bench.generate --list``), chunked.

and prints the worker's peak resident memory (VmHWM) after each, and the peak of its
anonymous memory (RssAnon, sampled every 5 ms). For the List it also prints the size of its
normalized form: what a process holding only the parsed snapshot grew by (RssAnon), the
"normalized form" of issue 14's target (a worker under 300 MiB plus the largest accepted
body's normalized form).
"""

from __future__ import annotations

import argparse
import gzip
import http.client
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from bench.common import VERDICT, free_port, wait_healthy

MIB = 1024 * 1024


def _worker_pid(master: int) -> int:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return int(children[0])


def _peak_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError("no VmHWM")


def _anon_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("RssAnon:"):
            return int(line.split()[1]) / 1024
    return 0.0


class _AnonPeak(threading.Thread):
    """Samples the worker's RssAnon until stopped; ``peak`` is the largest seen."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak, self.done = pid, 0.0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.005):
            try:
                self.peak = max(self.peak, _anon_mib(self.pid))
            except OSError:
                return


_NORMALIZED = """
import gc, sys
from service.ingest.body import parse_snapshot
from service.ingest.spool import Spool

def anon():
    status = open("/proc/self/status").read()
    return int(status.split("RssAnon:")[1].split()[0]) / 1024

with Spool(0) as spool, open(sys.argv[1], "rb") as source:
    while piece := source.read(1 << 20):
        spool.write(piece)
    mapped = spool.result()
gc.collect()
before = anon()
gc.disable()
parsed = parse_snapshot(mapped)
del mapped
gc.enable()
gc.collect()
print(anon() - before)
"""


def _normalized_mib(path: Path) -> float:
    """RssAnon growth of a process that parses ``path`` and keeps only the result."""
    out = subprocess.run(
        [sys.executable, "-c", _NORMALIZED, str(path)], capture_output=True, text=True, check=True
    )
    return float(out.stdout.split()[-1])


def _file_chunks(path: Path):
    with path.open("rb") as source:
        while piece := source.read(MIB):
            yield piece


def _post(port: int, body, headers: dict) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        conn.request("POST", "/v1/snapshots", body=body, headers=headers, encode_chunked=True)
        response = conn.getresponse()
        response.read()
        return response.status
    except OSError:
        return -1
    finally:
        conn.close()


def _serve(workdir: Path):
    port = free_port()
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(workdir),
        "VERDICT_LOG_LEVEL": "ERROR",
        "VERDICT_AUTH_ENABLED": "false",
        "VERDICT_PRELOAD_SNAPSHOTS": "0",
    }
    server = subprocess.Popen(
        [VERDICT, "serve", "--port", str(port), "--workers", "1"],
        env=env,
        stderr=subprocess.DEVNULL,
    )
    wait_healthy(port)
    return server, port


def _run(name: str, send) -> None:
    with tempfile.TemporaryDirectory(prefix="verdict-mem-") as workdir:
        server, port = _serve(Path(workdir))
        try:
            worker = _worker_pid(server.pid)
            baseline = _peak_mib(worker)
            sampler = _AnonPeak(worker)
            sampler.start()
            statuses = send(port)
            peak = _peak_mib(worker)
            sampler.done.set()
            sampler.join()
        finally:
            server.terminate()
            server.wait(timeout=60)
    print(
        f"{name}: statuses {statuses}; worker peak {peak:.0f} MiB (at start {baseline:.0f}),"
        f" anonymous peak {sampler.peak:.0f} MiB"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunked-mib", type=int, default=300)
    parser.add_argument("--bomb-mib", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--list", type=Path, help="a List to send chunked (accepted)")
    args = parser.parse_args()
    json_headers = {"Content-Type": "application/json"}
    gzip_headers = {**json_headers, "Content-Encoding": "gzip"}

    def chunks():
        yield b'{"kind": "List", "items": []'
        pad = b" " * MIB
        for _ in range(args.chunked_mib):
            yield pad
        yield b"}"

    for _ in range(args.repeat):
        _run(f"chunked {args.chunked_mib} MiB", lambda port: [_post(port, chunks(), json_headers)])

    if args.list:
        size = args.list.stat().st_size / MIB
        for _ in range(args.repeat):
            _run(
                f"List {size:.0f} MiB chunked",
                lambda port: [_post(port, _file_chunks(args.list), json_headers)],
            )
        print(f"List {size:.0f} MiB: normalized form {_normalized_mib(args.list):.0f} MiB")

    # Level-9 gzip of whitespace inflates about 1000:1.
    bomb = gzip.compress(b" " * (args.bomb_mib * 1000 * MIB), compresslevel=9)
    print(f"bomb: {len(bomb) / MIB:.1f} MiB of gzip, {args.bomb_mib * 1000} MiB inflated")
    for _ in range(args.repeat):
        _run("gzip bomb", lambda port: [_post(port, [bomb], gzip_headers)])

    def three(port):
        out = []
        threads = [
            threading.Thread(target=lambda: out.append(_post(port, [bomb], gzip_headers)))
            for _ in range(3)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return sorted(out)

    for _ in range(args.repeat):
        _run("three gzip bombs at once", three)


if __name__ == "__main__":
    main()
