"""bench/generate/cli.py: ``python -m bench.generate`` prints the envelope, the bare List or
the envelope without stats, and rejects bad arguments with exit status 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from bench.generate import DEFAULT_CAPTURED_AT, iter_chunks, main
from tests.bench.generate.helpers import (
    ROOT,
)


def test_cli_prints_the_envelope_and_a_bare_list() -> None:
    def run(*args: str) -> bytes:
        return subprocess.run(
            [sys.executable, "-m", "bench.generate", "--nodes", "8", "--pods", "120", *args],
            cwd=ROOT,
            check=True,
            capture_output=True,
        ).stdout

    envelope = run("--seed", "3")
    assert envelope == b"".join(iter_chunks(8, 120, 3))
    assert envelope.endswith(b"}\n")
    doc = json.loads(envelope)
    assert doc["name"] == "synthetic-8n-120p-s3"
    assert doc["cluster"] == "synthetic"
    assert doc["labels"] == {"generator": "bench.generate"}
    assert doc["capturedAt"] == DEFAULT_CAPTURED_AT
    assert doc["stats"]

    listing = json.loads(run("--seed", "3", "--list"))
    assert listing["apiVersion"] == "v1"
    assert listing["kind"] == "List"
    assert listing["metadata"] == {"resourceVersion": ""}
    assert set(listing) == {"apiVersion", "kind", "metadata", "items"}
    assert listing["items"] == doc["objects"]["items"]

    no_stats = json.loads(run("--seed", "3", "--no-stats"))
    assert "stats" not in no_stats
    assert no_stats["objects"] == doc["objects"]


def test_main_rejects_bad_arguments(capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (
        ["--nodes", "0", "--pods", "1"],
        ["--nodes", "1", "--pods", "-1"],
        ["--nodes", "1", "--pods", "1", "--captured-at", "yesterday"],
    ):
        with pytest.raises(SystemExit) as exc:
            main(argv)
        assert exc.value.code == 2
    capsys.readouterr()
