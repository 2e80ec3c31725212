"""Where the test suite finds Kubernetes' own code compiled as command-line oracles.

One setting names the folder: ``VERDICT_ORACLE_DIR`` (``.ci/run`` unpacks the oracles there;
docs/ORACLES.md says how to build them from Kubernetes' source). A test that needs an oracle
absent from that folder, or runs without the setting, is skipped with the reason.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ORACLE_DIR_SETTING = "VERDICT_ORACLE_DIR"
SEEDS_SETTING = "VERDICT_ORACLE_SEEDS"


def oracle_path(name: str) -> Path | None:
    """The oracle binary ``name`` (``verdict-oracle``, ``verdict-oracle-1.34``,
    ``kubelet-oracle``, ...) in the configured folder, or None when it is not there."""
    folder = os.environ.get(ORACLE_DIR_SETTING)
    if not folder:
        return None
    path = Path(folder) / name
    return path if path.exists() else None


def needs(name: str) -> pytest.MarkDecorator:
    """Skip unless the oracle ``name`` is in the configured folder."""
    return pytest.mark.skipif(
        oracle_path(name) is None,
        reason=f"oracle {name} not found: set {ORACLE_DIR_SETTING} to the oracles' folder",
    )


def seeds(count: int, start: int = 0) -> range:
    """The seeds a differential test runs: ``count`` of them from ``start`` (what CI runs),
    or as many as ``VERDICT_ORACLE_SEEDS`` says, to widen a local run
    (``VERDICT_ORACLE_SEEDS=2000``)."""
    wanted = os.environ.get(SEEDS_SETTING)
    return range(start, start + (int(wanted) if wanted else count))


def run_json(name: str, case: dict, *args: str, timeout: int = 120) -> dict:
    """The answer of oracle ``name`` for ``case``: JSON on stdin, JSON on stdout; any exit
    but 0 is an error carrying the oracle's stderr."""
    done = subprocess.run(
        [str(oracle_path(name) or name), *args],
        input=json.dumps(case),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"{name} exited {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)
