"""Reading a snapshot body: gzip, YAML or JSON, List or envelope, with hard limits.

JSON is decoded by msgspec into sparse structs item by item (see ``wire``), so memory holds
the body bytes and the normalized objects, never a full Python tree of the dump.
"""

from __future__ import annotations

import json
import mmap
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

import msgspec

from service.engine.objects import Snapshot
from service.ingest import wire
from service.ingest.errors import MAX_REPORTED_ERRORS, FieldError, IngestError
from service.ingest.json_shape import MAX_ITEMS, check_shape
from service.ingest.kube import SnapshotBuilder, decode_json
from service.ingest.names import label_errors
from service.ingest.spool import FileMapping, Spool
from service.ingest.yaml_json import MAX_EVENTS, yaml_to_json

try:  # the C half (repeated keys, NUL, page release), built at install where a C compiler is
    from service.ingest._body import first_problem as _first_problem
    from service.ingest._body import release_start as _release_start
    from service.ingest._body import release_stop as _release_stop
except ImportError:  # pragma: no cover - installed without a C compiler
    _first_problem = _release_start = _release_stop = None
# Whether the C half is built: without it, large bodies are read about 10 times slower.
NATIVE = _first_problem is not None

YAML_TYPES = ("application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml")


@dataclass
class ParsedSnapshot:
    snapshot: Snapshot
    name: str | None = None
    cluster: str | None = None
    labels: dict[str, str] = field(default_factory=dict)
    captured_at: datetime | None = None


# The JSON a YAML snapshot given outside the API (the CLI's files) may become; the API
# counts it against VERDICT_MAX_BODY_BYTES instead.
YAML_JSON_LIMIT = 1 << 30
GUNZIP_PIECE = 1 << 20  # output per step
GUNZIP_INPUT = 1 << 16  # input per step (the unconsumed tail is copied at every step)
SPOOL_BYTES = 16 << 20  # inflated output past this goes to a temporary file, not memory


@contextmanager
def released(data) -> Iterator[None]:
    """While the block reads ``data``, a spooled body's pages are dropped from the worker's
    resident set every 2 ms (``_body.release_start``) and mapped back from the page
    cache when read again. Mapped file pages count in the resident size (VmHWM) until
    unmapped, and each pass over a body (the key scan, msgspec's, each item's) touches all
    of them: without this a 300 MiB body whose normalized form is empty peaked at 395 MiB.
    Only for a ``FileMapping`` (anonymous memory would read back as zeros), and only with
    the C extension: otherwise nothing is dropped."""
    handle = None
    if _release_start is not None and isinstance(data, FileMapping):
        try:
            handle = _release_start(data)
        except OSError:  # no thread to be had: parse anyway, with the pages resident
            handle = None
    if handle is None:
        yield
        return
    try:
        yield
    finally:
        _release_stop(handle)


def gunzip(
    data: bytes | bytearray, limit: int, on_grow=None, spool_over: int = SPOOL_BYTES
) -> bytearray | mmap.mmap:
    """Inflate a gzip body piece by piece, stopping (413) as soon as the output passes
    ``limit``: a bomb never inflates further than the limit. ``on_grow(size)`` is told the
    output size after each piece (the API holds a large-body slot with it).

    Output past ``spool_over`` bytes is written to an unlinked temporary file instead of
    memory, and returned mapped read-only: a bomb's output never enters the worker's memory
    (it is dropped with the file at the 413), and an accepted body is read from the page
    cache, which the kernel can reclaim, rather than from a buffer of the process."""
    inflater = zlib.decompressobj(wbits=31)
    size = 0

    def inflate(chunk, out: Spool) -> None:
        nonlocal size
        while True:
            piece = inflater.decompress(chunk, GUNZIP_PIECE)
            size += len(piece)
            if size > limit:
                raise IngestError.one(
                    "body",
                    f"body exceeds the limit of {limit} bytes after decompression",
                    status=413,
                )
            out.write(piece)
            if on_grow is not None:
                on_grow(size)
            chunk = inflater.unconsumed_tail
            if inflater.eof or (not chunk and len(piece) < GUNZIP_PIECE):
                return

    with released(data), Spool(spool_over) as out:
        view = memoryview(data)
        try:
            for offset in range(0, len(view), GUNZIP_INPUT):
                inflate(view[offset : offset + GUNZIP_INPUT], out)
                if inflater.eof:
                    break
        except zlib.error as exc:
            raise IngestError.one("body", f"invalid gzip data: {exc}", status=400) from None
        finally:
            view.release()
        if not inflater.eof:
            raise IngestError.one("body", "truncated gzip data", status=400)
        return out.result()


class _Duplicate(Exception):
    """Raised inside the JSON scanner at the first object with a repeated key."""


def _no_repeats(pairs: list) -> None:
    if len(pairs) != len(dict(pairs)):
        raise _Duplicate


class _Pairs(list):
    """A JSON object kept as its (key, value) pairs, to find where a key repeats."""


def _first_path(value, path: str, bad_key, bad_string=None) -> str | None:
    """The path of the first key under ``value`` (pairs from ``_Pairs``) for which
    ``bad_key(key, keys seen before it in its object)`` holds, or of the first string for
    which ``bad_string`` holds."""
    if isinstance(value, str):
        return path if bad_string is not None and bad_string(value) else None
    if isinstance(value, _Pairs):
        seen: set[str] = set()
        for key, item in value:
            here = f"{path}.{key}" if path else key
            if bad_key(key, seen):
                return here
            seen.add(key)
            found = _first_path(item, here, bad_key, bad_string)
            if found:
                return found
    elif isinstance(value, list):
        for i, item in enumerate(value):
            found = _first_path(item, f"{path}[{i}]", bad_key, bad_string)
            if found:
                return found
    return None


def _repeated(key: str, seen: set[str]) -> bool:
    return key in seen


def _has_nul(text: str, _seen: object = None) -> bool:
    return "\x00" in text


def _duplicate_error(path: str) -> IngestError:
    return IngestError.one(
        path, "duplicate field: the key appears twice in one object (strict decoding)", status=400
    )


def _too_many_items_error(path: str) -> IngestError:
    return IngestError.one(path, f"more than {MAX_ITEMS} items", status=413)


def _too_many_keys_error(path: str) -> IngestError:
    """What the C scanner holds is bounded (its MAX_LIVE_KEYS, MAX_LIVE_KEY_BYTES); no
    Kubernetes object comes near (the API server takes requests of up to 3 MiB)."""
    return IngestError.one(
        path,
        "object too large: over 1048576 keys (or 64 MiB of escaped keys) open at once",
        status=413,
    )


def _format_path(parts: list) -> str:
    path = ""
    for part in parts:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else part
    return path


def reject_duplicate_keys(data: bytes | bytearray | str) -> None:
    """A JSON body repeating a key in one object is a 400 naming that key's path; so is a
    NUL character in any string (``reject_nul``), when no key repeats.

    The API server's strict decoding (sigs.k8s.io/json, fieldValidation=Strict) refuses a
    duplicate field rather than letting the last one win silently. The C scanner of
    ``_body`` reads the bytes once without building anything (about 0.7 s for the
    759 MB, 150,000-pod List here) and names the first repeated key's path itself. Without
    it (no C compiler at install), the C scanner's bounds are checked first without building
    anything (``json_shape``: arrays past MAX_ITEMS, objects past its keys, nesting), then the
    stdlib scanner checks each object (about 7 s for the same List, plus as much for the
    bounds) and only a body that has a repeat is parsed again, keeping pairs, to name the
    path. Malformed JSON is left to the decoder that
    follows, which names what is wrong with it.
    """
    if _first_problem is not None and not isinstance(data, str):
        try:
            found = _first_problem(data)
        except ValueError:
            # Not JSON as the scanner reads it, and it reads more than msgspec and orjson
            # accept (numbers and strings unchecked, nesting to 1024): the decoder that
            # follows refuses the body and names why. No stdlib rescan, which would cost a
            # copy of the body and seconds on a large one.
            return
        else:
            if found is None:
                return
            kind, parts = found
            path = _format_path(parts) or "body"
            if kind == "duplicate":
                raise _duplicate_error(path)
            if kind == "too_many_keys":
                raise _too_many_keys_error(path)
            if kind == "too_many_items":
                raise _too_many_items_error(path)
            raise _nul_error(path)
    check_shape(data)  # the C scanner's bounds (items, keys, depth), before json.loads builds
    path = python_duplicate_path(data)
    if path is not None:
        raise _duplicate_error(path or "body")
    reject_nul(data)


def _loadable(data):
    """What json.loads takes: a mapped body (see ``gunzip``) as bytes."""
    return data if isinstance(data, bytes | bytearray | str) else bytes(data)


def python_duplicate_path(data: bytes | bytearray | str) -> str | None:
    """The stdlib scanner's answer: the first repeated key's path, or None (also for text
    that is not JSON, left to the decoder)."""
    data = _loadable(data)
    try:
        json.loads(data, object_pairs_hook=_no_repeats)
    except _Duplicate:
        tree = json.loads(data, object_pairs_hook=_Pairs)
        return _first_path(tree, "", _repeated) or ""
    except RecursionError:
        raise IngestError.one("body", "JSON nested too deeply", status=400) from None
    except ValueError:  # not JSON (or numbers past int() limits): the decoder reports it
        return None
    return None


def _nul_error(path: str) -> IngestError:
    return IngestError.one(path, "must not contain a NUL character", status=400)


def reject_nul(data: bytes | bytearray | str) -> None:
    """A NUL character in any string of a JSON body is a 400 naming its path (the stdlib
    way; ``reject_duplicate_keys`` does it in its C scan).

    PostgreSQL cannot hold NUL in text, SQLite can: refusing it before anything is stored
    makes both databases answer the same, and no Kubernetes name or label may hold one.
    Only a body that spells ``\u0000`` somewhere is parsed again to find it.
    """
    needle = "\\u0000" if isinstance(data, str) else b"\\u0000"
    if data.find(needle) == -1:  # (an mmap's ``in`` only looks for one byte)
        return
    try:
        tree = json.loads(_loadable(data), object_pairs_hook=_Pairs)
    except (ValueError, RecursionError):  # the decoder that follows reports it
        return
    path = _first_path(tree, "", _has_nul, _has_nul)
    if path is not None:
        raise _nul_error(path or "body")


def yaml_as_json(data, *, limit: int, on_grow=None, max_nodes: int = MAX_EVENTS):
    """A YAML body as JSON text (``yaml_json.yaml_to_json``), its JSON counted against
    ``limit`` and spooled past SPOOL_BYTES as gzip's output is, its events (nodes) against
    ``max_nodes``; a spooled input's pages are dropped as it is read (``released``)."""
    with released(data):
        return yaml_to_json(
            data, limit=limit, on_grow=on_grow, spool_over=SPOOL_BYTES, max_events=max_nodes
        )


def _objects(builder: SnapshotBuilder, raw: msgspec.Raw, prefix: str) -> None:
    text = memoryview(raw)[:64].tobytes().lstrip()
    if text.startswith(b"["):
        items = decode_json(raw, list[msgspec.Raw], prefix)
        item_prefix = prefix
    else:
        listing = decode_json(raw, wire.KubeList, prefix)
        if listing.items is None and listing.kind.endswith("List"):
            # `items: null` or no items: a List must carry an array (as the openapi says).
            path = f"{prefix}.items" if prefix else "items"
            raise IngestError.one(path, "a List needs an array of items")
        if listing.items is None:
            # A single object rather than a List.
            builder.add_json_item(raw, prefix)
            return
        items, item_prefix = listing.items, f"{prefix}.items"
    _add_items(builder, items, item_prefix)


def _add_items(builder: SnapshotBuilder, items: list[msgspec.Raw], prefix: str) -> None:
    """Each item into ``builder``, stopping once it holds as many errors as an answer
    reports: a list of millions of bad items costs no more than its first ones."""
    for i, item in enumerate(items):
        builder.add_json_item(item, f"{prefix}[{i}]")
        if len(builder.errors) >= MAX_REPORTED_ERRORS:
            return


# Longest snapshot name and cluster the database columns hold (store/models.py).
MAX_SNAPSHOT_NAME = 500
MAX_CLUSTER_NAME = 200


def _envelope_errors(envelope: wire.Envelope) -> list[FieldError]:
    """The envelope's own fields: lengths the columns hold, labels as Kubernetes labels."""
    errors = []
    if envelope.name is not None and len(envelope.name) > MAX_SNAPSHOT_NAME:
        errors.append(FieldError("name", f"must be no more than {MAX_SNAPSHOT_NAME} characters"))
    if envelope.cluster is not None and len(envelope.cluster) > MAX_CLUSTER_NAME:
        errors.append(FieldError("cluster", f"must be no more than {MAX_CLUSTER_NAME} characters"))
    if isinstance(envelope.labels, dict):
        errors.extend(label_errors(envelope.labels, "labels"))
    if envelope.captured_at is not None:
        try:  # stored and compared in UTC (store/db.py), kept as a UTC timestamp in msgpack
            envelope.captured_at.astimezone(UTC)
        except OverflowError:
            errors.append(FieldError("capturedAt", "is outside the years 1 to 9999 in UTC"))
    return errors


def parse_snapshot(data: bytes, *, content_type: str = "application/json") -> ParsedSnapshot:
    """A POST /v1/snapshots body (already decompressed) → the normalized snapshot. A spooled
    body's pages are dropped as it is read (``released``): the worker's peak holds the
    normalized snapshot and a few MiB of the body, not the body."""
    if content_type.split(";")[0].strip().lower() in YAML_TYPES:
        data = yaml_as_json(data, limit=YAML_JSON_LIMIT)
    with released(data):
        return _parse_snapshot(data)


def _parse_snapshot(data) -> ParsedSnapshot:
    reject_duplicate_keys(data)  # and NUL characters
    stripped = bytes(data[:64]).lstrip()
    if not stripped:
        raise IngestError.one("body", "empty body", status=400)
    builder = SnapshotBuilder()
    if stripped.startswith(b"["):
        _objects(builder, msgspec.Raw(data), "")
        return ParsedSnapshot(snapshot=builder.build())
    envelope = decode_json(data, wire.Envelope, "")
    if envelope.items is not None:
        _add_items(builder, envelope.items, "items")
    elif envelope.objects:
        _objects(builder, envelope.objects, "objects")
    elif envelope.kind.endswith("List"):
        # `items: null` or no items: a List must carry an array (as the openapi says).
        raise IngestError.one("items", "a List needs an array of items")
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
    for name, raw in (envelope.kubelet_configs or {}).items():
        try:
            builder.add_kubelet_config(name, decode_json(raw, dict, f"kubeletConfigs.{name}"))
        except IngestError as exc:
            builder.errors.extend(exc.errors)
    if not isinstance(envelope.labels, dict | None):
        builder.errors.append(FieldError("labels", "expected a map of strings"))
    builder.errors.extend(_envelope_errors(envelope))
    return ParsedSnapshot(
        snapshot=builder.build(envelope.captured_at),
        name=envelope.name,
        cluster=envelope.cluster,
        labels=envelope.labels or {},
        captured_at=envelope.captured_at,
    )
