"""The fake kubectl (examples/kubectl/kubectl) on PATH, serving recorded answers (see the
script's header)."""

from __future__ import annotations

from pathlib import Path

import orjson

BIN_DIR = Path(__file__).resolve().parents[2] / "examples" / "kubectl"


def record(directory: Path, objects: dict, summary: dict, configz: dict) -> Path:
    """Lay out the answers the script serves: the object List, and one Summary and configz
    answered for every node without answers of its own."""
    (directory / "nodes").mkdir(parents=True, exist_ok=True)
    (directory / "objects.json").write_bytes(orjson.dumps(objects))
    (directory / "default.summary").write_bytes(orjson.dumps(summary))
    (directory / "default.configz").write_bytes(orjson.dumps({"kubeletconfig": configz}))
    return directory


def node_answer(directory: Path, node: str, what: str, content: bytes | str) -> None:
    """A node's own answer: ``summary``, ``configz``, ``sleep`` (seconds) or ``fail``."""
    path = directory / "nodes" / f"{node}.{what}"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
