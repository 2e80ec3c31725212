"""What each hostile input of issue 24 (items 1-4 and 6) costs a real `verdict serve` worker.

    python -m bench.bench_hostile_bodies [--repeat 3] [--database-url URL] [--only NAME]
        [--without-c]

Each input is sent to a fresh server (one gunicorn worker, the default limits, auth off so
that the console signs a loopback client in): the answer's status, the worker's growth
(its peak resident size, VmHWM, after the request, less its resident size before it), its
CPU time (user + system, /proc/<pid>/stat) spent on the request, and whether the same
worker is still there after it. Targets: a 4xx, under 64 MiB, under 1 s.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import gzip
import http.client
import os
import statistics
import subprocess
import tempfile
from collections.abc import Iterable
from pathlib import Path

from bench.common import VERDICT, free_port, wait_healthy

MIB = 1024 * 1024


def _anchor_bomb(line_break: str) -> bytes:
    """Nine levels of aliases, each nine times the last, with no ASCII whitespace before
    each ``&`` (libyaml breaks lines at U+2028 and U+0085 too)."""
    lines = ["l0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, 9):
        lines.append(f"l{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return line_break.join(lines).encode()


def _deep(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def _list_of(count: int) -> bytes:
    return b"kind: List\nitems:\n" + b"- a\n" * count


def _chunked_yaml(mib: int) -> Iterable[bytes]:
    yield b"nodeName: n1\npod: [" + b" " * MIB
    for _ in range(mib):
        yield b"0, " * (MIB // 3)
    yield b"]\n"


def _json_list_of(count: int) -> bytes:
    return b'{"kind": "List", "items": [' + b"0," * (count - 1) + b"0]}"


def _in_chunks(data: bytes, size: int = MIB):
    """A body sent chunked (no Content-Length), in pieces of ``size``."""
    return lambda: (data[i : i + size] for i in range(0, len(data), size))


def _chunked_json(mib: int) -> Iterable[bytes]:
    yield b'{"nodeName": "n1", "pod": [' + b" " * MIB
    for _ in range(mib):
        yield b"0, " * (MIB // 3)
    yield b"0]}"


def _exactly(chunks: Iterable[bytes], size: int) -> Iterable[bytes]:
    """``chunks`` cut or padded with spaces to ``size`` bytes (for a Content-Length)."""
    sent = 0
    for chunk in chunks:
        chunk = chunk[: size - sent]
        sent += len(chunk)
        yield chunk
    while sent < size:
        pad = min(MIB, size - sent)
        sent += pad
        yield b" " * pad


def _bad_utf8_list() -> bytes:
    return (
        b'{"kind": "List", "items": [{"kind": "Node", "apiVersion": "v1", '
        b'"metadata": {"name": "n\xff1"}}]}'
    )


def _cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")


YAML = {"Content-Type": "application/yaml"}
JSON = {"Content-Type": "application/json"}

# name -> (method, path, headers, body or a function giving chunks)
CASES: dict[str, tuple[str, str, dict, object]] = {
    "1 anchors after U+2028 (snapshot)": ("POST", "/v1/snapshots", YAML, _anchor_bomb("\u2028")),
    "1 anchors after U+0085 (decision)": (
        "POST",
        "/v1/decisions/admission",
        YAML,
        _anchor_bomb("\u0085"),
    ),
    "2 YAML 30,000 deep (snapshot)": ("POST", "/v1/snapshots", YAML, _deep(30_000)),
    "2 YAML 30,000 deep (decision)": ("POST", "/v1/decisions/admission", YAML, _deep(30_000)),
    "2 JSON 30,000 deep (snapshot)": ("POST", "/v1/snapshots", JSON, _deep(30_000)),
    "2 JSON 30,000 deep (decision)": ("POST", "/v1/decisions/admission", JSON, _deep(30_000)),
    "3 gzip of a 16 MiB YAML list (snapshot)": (
        "POST",
        "/v1/snapshots",
        {**YAML, "Content-Encoding": "gzip"},
        gzip.compress(_list_of(4 * MIB), compresslevel=9),
    ),
    "4 chunked 200 MiB YAML (decision)": (
        "POST",
        "/v1/decisions/admission",
        YAML,
        lambda: _chunked_yaml(200),
    ),
    "3 chunked 16 MiB YAML list, 4 Mi items (snapshot)": (
        "POST",
        "/v1/snapshots",
        YAML,
        _in_chunks(_list_of(4 * MIB)),
    ),
    "3 JSON List of 5 M tiny items, 10 MB (snapshot)": (
        "POST",
        "/v1/snapshots",
        JSON,
        _json_list_of(5_000_000),
    ),
    "3 gzip of that JSON List (snapshot)": (
        "POST",
        "/v1/snapshots",
        {**JSON, "Content-Encoding": "gzip"},
        gzip.compress(_json_list_of(5_000_000), compresslevel=9),
    ),
    "3 that JSON List chunked (snapshot)": (
        "POST",
        "/v1/snapshots",
        JSON,
        _in_chunks(_json_list_of(5_000_000)),
    ),
    "3 JSON List of 5 M tiny items (decision)": (
        "POST",
        "/v1/decisions/admission",
        JSON,
        b'{"nodeName": "n1", "pod": ' + _json_list_of(5_000_000) + b"}",
    ),
    "4 chunked 200 MiB JSON (decision)": (
        "POST",
        "/v1/decisions/admission",
        JSON,
        lambda: _chunked_json(200),
    ),
    "4 200 MiB YAML with Content-Length (decision)": (
        "POST",
        "/v1/decisions/admission",
        {**YAML, "Content-Length": str(200 * MIB + 2 * MIB)},
        lambda: _exactly(_chunked_yaml(200), 200 * MIB + 2 * MIB),
    ),
    "4 chunked 200 MiB YAML (snapshot)": (
        "POST",
        "/v1/snapshots",
        YAML,
        lambda: _chunked_yaml(200),
    ),
    "10 gzip decision body": (
        "POST",
        "/v1/decisions/admission",
        {**JSON, "Content-Encoding": "gzip"},
        gzip.compress(b'{"nodeName": "n1"}'),
    ),
    "6 invalid UTF-8 in a List item's name": ("POST", "/v1/snapshots", JSON, _bad_utf8_list()),
    "6 cursor 2^63": ("GET", f"/v1/decisions?cursor={_cursor(str(2**63))}", {}, None),
    "6 console before=%C2%B2": ("GET", "/console/decisions?before=%C2%B2", {}, None),
    "6 console before of 23 digits": (
        "GET",
        "/console/decisions?before=12345678901234567890123",
        {},
        None,
    ),
    "6 console since=9999-12-31T23:59:59-14:00": (
        "GET",
        "/console/decisions?since=9999-12-31T23:59:59-14:00",
        {},
        None,
    ),
}


def _status_kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field}")


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _workers(master: int) -> list[int]:
    return [int(p) for p in Path(f"/proc/{master}/task/{master}/children").read_text().split()]


def _send(port: int, method: str, path: str, headers: dict, body) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        chunks = body() if callable(body) else body
        # The server may answer (413) and close before the body is all sent.
        with contextlib.suppress(OSError):
            conn.request(
                method,
                path,
                body=chunks,
                headers=headers,
                encode_chunked=callable(body) and "Content-Length" not in headers,
            )
        response = conn.getresponse()
        response.read()
        return response.status
    except OSError:
        return -1
    finally:
        conn.close()


def _measure(env: dict, case: tuple[str, str, dict, object]) -> tuple[int, float, float, bool]:
    """(status, growth MiB, CPU s, same worker alive) for one case on a fresh server."""
    port = free_port()
    server = subprocess.Popen(
        [VERDICT, "serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "1"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_healthy(port, 60)
        _send(port, "GET", "/console/decisions", {}, None)  # the console's imports, warmed
        (worker,) = _workers(server.pid)
        before_rss, before_cpu = _status_kib(worker, "VmRSS"), _cpu_seconds(worker)
        status = _send(port, *case)
        cpu = _cpu_seconds(worker) - before_cpu
        growth = (_status_kib(worker, "VmHWM") - before_rss) / 1024
        alive = _workers(server.pid) == [worker]
        return status, growth, cpu, alive
    finally:
        server.terminate()
        server.wait(30)


def _spread(values: list[float], unit: str, digits: int) -> str:
    if len(values) == 1:
        return f"{values[0]:.{digits}f} {unit}"
    return (
        f"{statistics.median(values):.{digits}f} {unit} "
        f"({min(values):.{digits}f}-{max(values):.{digits}f})"
    )


# With --without-c, the server starts with this as its sitecustomize: the two C readers
# cannot be imported, as on an install built without a C compiler and a PyYAML without
# libyaml (body.py then checks json_shape's bounds, yaml_json uses PyYAML's own parser).
WITHOUT_C = """
import sys


class _Absent:
    def find_spec(self, name, path=None, target=None):
        if name in ("service.ingest._body", "yaml._yaml"):
            raise ImportError(name + " hidden by bench_hostile_bodies --without-c")
        return None


sys.meta_path.insert(0, _Absent())
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--database-url", default="", help="default: SQLite in a temp folder")
    parser.add_argument("--only", default="", help="run the cases whose name holds this")
    parser.add_argument(
        "--without-c",
        action="store_true",
        help="serve as an install without the C body scanner and without libyaml does",
    )
    args = parser.parse_args()
    shim = tempfile.mkdtemp(prefix="verdict-without-c-") if args.without_c else ""
    if shim:
        Path(shim, "sitecustomize.py").write_text(WITHOUT_C)
    print("| input | status | worker growth | CPU | worker alive |")
    print("|---|---|---|---|---|")
    for name, case in CASES.items():
        if args.only not in name:
            continue
        runs = []
        for _ in range(args.repeat):
            with tempfile.TemporaryDirectory() as home:
                env = {
                    **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
                    "VERDICT_INSTANCE_PATH": home,
                    "VERDICT_AUTH_ENABLED": "false",
                    "VERDICT_LOG_LEVEL": "ERROR",
                    "VERDICT_PRELOAD_SNAPSHOTS": "0",
                }
                if args.database_url:
                    env["VERDICT_DATABASE_URL"] = args.database_url
                if shim:
                    env["PYTHONPATH"] = os.pathsep.join(filter(None, [shim, env.get("PYTHONPATH")]))
                runs.append(_measure(env, case))
        statuses = sorted({r[0] for r in runs})
        print(
            f"| {name} | {', '.join(map(str, statuses))} "
            f"| {_spread([r[1] for r in runs], 'MiB', 1)} "
            f"| {_spread([r[2] for r in runs], 's', 2)} "
            f"| {'yes' if all(r[3] for r in runs) else 'NO'} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
