"""The repository stands on its own: nothing in it points at files a clone does not have
(the commission's spec and API notes, a sibling `shared` folder, this machine's paths).

CI's own script (.ci/run) is the one exception: it names where CI keeps the built oracles,
and hands them to the tests through VERDICT_ORACLE_DIR (docs/ORACLES.md)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
FOREIGN = re.compile(r"\bspec/[\w-]+\.md|\bAPI\.md\b|\.\./shared\b|/work/")
EXEMPT = {".ci/run", "tests/test_standalone.py"}


def _tracked() -> list[str]:
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    return [name for name in listed.split("\0") if name and name not in EXEMPT]


def test_no_file_points_outside_the_repository():
    found = []
    for name in _tracked():
        path = REPO / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        for number, line in enumerate(text.splitlines(), 1):
            if FOREIGN.search(line):
                found.append(f"{name}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)
