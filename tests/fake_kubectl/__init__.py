"""The fake kubectl (examples/kubectl/kubectl) on PATH, serving recorded answers (see the
script's header)."""

from __future__ import annotations

from pathlib import Path

import orjson

BIN_DIR = Path(__file__).resolve().parents[2] / "examples" / "kubectl"


STORAGE = {
    "PersistentVolume",
    "PersistentVolumeClaim",
    "StorageClass",
    "CSINode",
    "CSIDriver",
    "CSIStorageCapacity",
    "VolumeAttachment",
    "ResourceClaim",
    "ResourceClaimTemplate",
    "DeviceClass",
    "ResourceSlice",
}


def record(directory: Path, objects: dict, summary: dict, configz: dict) -> Path:
    """Lay out the answers the script serves: the object List (the required kinds in
    objects.json, the storage and resource.k8s.io kinds in storage.json, as the two listings
    print them), and one
    Summary and configz answered for every node without answers of its own."""
    (directory / "nodes").mkdir(parents=True, exist_ok=True)
    items = objects.get("items", [])
    storage = [i for i in items if i.get("kind") in STORAGE]
    required = {**objects, "items": [i for i in items if i.get("kind") not in STORAGE]}
    (directory / "objects.json").write_bytes(orjson.dumps(required))
    if storage:
        (directory / "storage.json").write_bytes(orjson.dumps({**objects, "items": storage}))
    (directory / "default.summary").write_bytes(orjson.dumps(summary))
    (directory / "default.configz").write_bytes(orjson.dumps({"kubeletconfig": configz}))
    return directory


def node_answer(directory: Path, node: str, what: str, content: bytes | str) -> None:
    """A node's own answer: ``summary``, ``configz``, ``sleep`` (seconds) or ``fail``."""
    path = directory / "nodes" / f"{node}.{what}"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
