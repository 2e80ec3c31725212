"""service/ingest/wire.py: the wire structs' msgspec type information is built at import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Sixteen threads build a Decoder of the wire Pod at once, right after the import, and use
# it: the first use of a type in several threads at once is what crashed msgspec 0.22.
_RACE = """
import threading, msgspec
from service.ingest import wire
barrier = threading.Barrier(16)
def first_use():
    barrier.wait()
    msgspec.json.Decoder(wire.Pod).decode(b'{"metadata": {"name": "x"}, "spec": {}}')
    msgspec.convert({"nodeSelectorTerms": []}, wire.NodeSelector)
threads = [threading.Thread(target=first_use) for _ in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def test_threads_using_the_wire_types_first_at_once_do_not_crash() -> None:
    """Without the import-time preparation, 8 threads crashed about 1 run in 8 (SIGSEGV):
    twelve runs of sixteen threads all exit cleanly."""
    runs = [
        subprocess.Popen([sys.executable, "-c", _RACE], cwd=ROOT, stderr=subprocess.PIPE)
        for _ in range(12)
    ]
    codes = [(run.wait(timeout=120), run.stderr.read().decode()[-500:]) for run in runs]
    assert codes == [(0, "")] * 12
