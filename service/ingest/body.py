"""Reading a snapshot body: gzip, YAML or JSON, List or envelope, with hard limits.

JSON is decoded by msgspec into sparse structs item by item (see ``wire``), so memory holds
the body bytes and the normalized objects, never a full Python tree of the dump.
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass, field
from datetime import datetime

import msgspec
import orjson
import yaml

from service.engine.objects import Snapshot
from service.ingest import wire
from service.ingest.errors import FieldError, IngestError
from service.ingest.kube import SnapshotBuilder, decode_json

YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")
# kubectl never prints YAML anchors or aliases; refusing them rules out alias bombs.
_YAML_ANCHOR = re.compile(rb"(?:^|[\s\[\{,:\-])&[^\s\[\]\{\},]+")


@dataclass
class ParsedSnapshot:
    snapshot: Snapshot
    name: str | None = None
    cluster: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    captured_at: datetime | None = None


def gunzip(data: bytes, limit: int) -> bytes:
    """Decompress a gzip body, refusing more than ``limit`` bytes of output or a cut stream."""
    inflater = zlib.decompressobj(wbits=31)
    data = bytes(data) if not isinstance(data, bytes) else data
    try:
        out = inflater.decompress(data, limit + 1)
    except zlib.error as exc:
        raise IngestError.one("body", f"invalid gzip data: {exc}", status=400) from None
    if len(out) > limit:
        raise IngestError.one(
            "body", f"body exceeds the limit of {limit} bytes after decompression", status=413
        )
    if not inflater.eof:
        raise IngestError.one("body", "truncated gzip data", status=400)
    return out


def yaml_to_json(data: bytes) -> bytes:
    if _YAML_ANCHOR.search(data):
        raise IngestError.one("body", "YAML anchors and aliases are not supported", status=400)
    try:
        docs = [d for d in yaml.load_all(data, Loader=yaml.CSafeLoader) if d is not None]
    except yaml.YAMLError as exc:
        raise IngestError.one("body", f"invalid YAML: {exc}", status=400) from None
    except RecursionError:
        raise IngestError.one("body", "YAML nested too deeply", status=400) from None
    document = docs[0] if len(docs) == 1 else docs
    try:
        return orjson.dumps(document)
    except (orjson.JSONEncodeError, TypeError) as exc:
        raise IngestError.one(
            "body", f"YAML value not representable as JSON: {exc}", status=400
        ) from None


def _objects(builder: SnapshotBuilder, raw: msgspec.Raw, prefix: str) -> None:
    text = memoryview(raw)[:64].tobytes().lstrip()
    if text.startswith(b"["):
        items = decode_json(raw, list[msgspec.Raw], prefix)
        item_prefix = prefix
    else:
        listing = decode_json(raw, wire.KubeList, prefix)
        if listing.items is None:
            # A single object rather than a List.
            builder.add_json_item(raw, prefix)
            return
        items, item_prefix = listing.items, f"{prefix}.items"
    for i, item in enumerate(items):
        builder.add_json_item(item, f"{item_prefix}[{i}]")


def parse_snapshot(data: bytes, *, content_type: str = "application/json") -> ParsedSnapshot:
    """A POST /v1/snapshots body (already decompressed) → the normalized snapshot."""
    if content_type.split(";")[0].strip().lower() in YAML_TYPES:
        data = yaml_to_json(bytes(data))
    stripped = bytes(data[:64]).lstrip()
    if not stripped:
        raise IngestError.one("body", "empty body", status=400)
    builder = SnapshotBuilder()
    if stripped.startswith(b"["):
        _objects(builder, msgspec.Raw(data), "")
        return ParsedSnapshot(snapshot=builder.build())
    envelope = decode_json(data, wire.Envelope, "")
    if envelope.items is not None:
        for i, item in enumerate(envelope.items):
            builder.add_json_item(item, f"items[{i}]")
    elif envelope.objects:
        _objects(builder, envelope.objects, "objects")
    elif envelope.kind:
        builder.add_json_item(msgspec.Raw(data), "")
    else:
        raise IngestError.one(
            "objects", "expected a Kubernetes List, or an envelope with 'objects'"
        )
    for name, raw in (envelope.stats or {}).items():
        try:
            builder.add_stats(name, decode_json(raw, wire.Summary, f"stats.{name}"))
        except IngestError as exc:
            builder.errors.extend(exc.errors)
    if not isinstance(envelope.labels, dict | None):
        builder.errors.append(FieldError("labels", "expected a map of strings"))
    return ParsedSnapshot(
        snapshot=builder.build(envelope.captured_at),
        name=envelope.name,
        cluster=envelope.cluster,
        labels=envelope.labels or {},
        captured_at=envelope.captured_at,
    )
