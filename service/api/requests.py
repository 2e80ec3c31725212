"""Reading request bodies and query strings safely (bounded depth, clear errors)."""

from __future__ import annotations

import base64
import mmap
from datetime import UTC, datetime

import orjson
from flask import current_app, request

from service.api.errors import ApiError
from service.api.load import hold_large_body_slot
from service.ingest.body import YAML_TYPES, reject_duplicate_keys, yaml_to_json
from service.ingest.spool import Spool

DEFAULT_LIMIT = 50
MAX_LIMIT = 1000
MAX_JSON_BYTES = 64 * 1024 * 1024  # decision bodies; snapshot bodies have their own limit
CHUNK = 1 << 20


def read_body(limit: int, spool_over: int | None = None) -> bytearray | mmap.mmap:
    """The request body, counted as it streams (Content-Length or chunked): 413 as soon as
    it passes ``limit``, one buffer and no second copy, and a large-body slot held once it
    passes LARGE_BODY_BYTES (503 when the worker has none free).

    With ``spool_over``, a body past that many bytes is written as it streams to an
    unlinked temporary file (in TMPDIR) and returned mapped read-only: it is then read from
    the page cache, which the kernel can reclaim, not held in the worker's own memory."""
    length = request.content_length
    if length is not None and length > limit:
        raise ApiError(413, f"body exceeds the limit of {limit} bytes")
    large = current_app.config["VERDICT"].LARGE_BODY_BYTES
    if length is not None and length > large:
        hold_large_body_slot()
    stream = request.stream
    if length is not None and (spool_over is None or length <= spool_over):
        buffer = bytearray(length)
        view, filled = memoryview(buffer), 0
        while filled < length:
            chunk = stream.read(min(CHUNK, length - filled))
            if not chunk:
                raise ApiError(400, "body shorter than its Content-Length")
            view[filled : filled + len(chunk)] = chunk
            filled += len(chunk)
        return buffer
    size = 0
    with Spool(spool_over) as spool:
        while chunk := stream.read(CHUNK):
            size += len(chunk)
            if size > limit:
                raise ApiError(413, f"body exceeds the limit of {limit} bytes")
            if size > large:
                hold_large_body_slot()
            spool.write(chunk)
        if length is not None and size < length:
            raise ApiError(400, "body shorter than its Content-Length")
        return spool.result()


def json_body() -> dict:
    """The body as a JSON object. orjson bounds nesting (1024), so deep bodies are a 400."""
    content_type = (request.mimetype or "application/json").lower()
    if content_type not in (
        "application/json",
        "application/problem+json",
    ) and not content_type.endswith("+json"):
        raise ApiError(415, f"expected application/json, got {content_type}")
    data = bytes(read_body(MAX_JSON_BYTES))
    try:
        body = orjson.loads(data) if data else None
    except orjson.JSONDecodeError as exc:
        raise ApiError(
            400, f"invalid JSON: {exc}", [{"path": "body", "message": str(exc)}]
        ) from None
    if not isinstance(body, dict):
        raise ApiError(
            400, "expected a JSON object", [{"path": "body", "message": "expected a JSON object"}]
        )
    reject_duplicate_keys(data)  # and NUL characters
    return body


def json_or_yaml_body() -> dict:
    """A body that is JSON, or YAML (read as snapshots are: no anchors, bounded size): the
    decision, replay and impact requests."""
    mimetype = (request.mimetype or "application/json").lower()
    if mimetype not in YAML_TYPES:
        if mimetype != "application/json" and not mimetype.endswith("+json"):
            raise ApiError(415, f"expected application/json or application/yaml, got {mimetype}")
        return json_body()
    if request.content_length and request.content_length > MAX_JSON_BYTES:
        raise ApiError(413, f"body exceeds {MAX_JSON_BYTES} bytes")
    body = orjson.loads(yaml_to_json(request.get_data(cache=True)))
    if not isinstance(body, dict):
        raise ApiError(
            400, "expected a mapping", [{"path": "body", "message": "expected a mapping"}]
        )
    return body


def reject_nul_in_query() -> None:
    """Before every request: a NUL in the path or a query parameter is a 400 naming it (the
    databases disagree on NUL, and no id, name or cursor holds one)."""
    if "\x00" in request.path:
        raise ApiError(400, "the path must not contain NUL", [{"path": "path", "message": "NUL"}])
    for name, value in request.args.items(multi=True):
        if "\x00" in name or "\x00" in value:
            raise ApiError(
                400,
                f"query parameter {name[:80]!r} must not contain NUL",
                [{"path": name[:80], "message": "must not contain a NUL character"}],
            )


def limit_arg() -> int:
    raw = request.args.get("limit")
    if raw is None:
        return DEFAULT_LIMIT
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if not 1 <= value <= MAX_LIMIT:
        raise ApiError(
            400,
            f"limit must be an integer from 1 to {MAX_LIMIT}",
            [{"path": "limit", "message": "out of range"}],
        )
    return value


def encode_cursor(value: str) -> str:
    return base64.urlsafe_b64encode(value.encode()).decode().rstrip("=")


def decode_cursor() -> str | None:
    raw = request.args.get("cursor")
    if not raw:
        return None
    try:
        # validate=True: the lenient decoder silently drops stray characters.
        decoded = base64.b64decode(
            raw + "=" * (-len(raw) % 4), altchars=b"-_", validate=True
        ).decode()
    except (ValueError, UnicodeDecodeError):
        raise invalid_cursor() from None
    if not decoded:
        raise invalid_cursor()
    return decoded


def invalid_cursor() -> ApiError:
    return ApiError(
        400, "invalid cursor", [{"path": "cursor", "message": "not a cursor this API issued"}]
    )


def int_cursor() -> int | None:
    """A cursor that carries a position (a sequence number or an offset)."""
    cursor = decode_cursor()
    if cursor is None:
        return None
    try:
        position = int(cursor)
    except ValueError:
        raise invalid_cursor() from None
    if position < 0:
        raise invalid_cursor()
    return position


TIME_HINT = (
    "write an RFC 3339 time such as 2026-11-20T10:00:00Z (in a URL, %2B for a '+' offset: "
    "2026-11-20T11:00:00%2B01:00) or a date such as 2026-11-20 (midnight UTC)"
)


def time_arg(name: str) -> datetime | None:
    """A query time: RFC 3339 with an offset, or a date (midnight UTC). A malformed one says
    how to write it; a '+' sent unescaped arrives as a space, which the message points at."""
    raw = request.args.get(name)
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is not None and len(raw) == 10:  # a date
        return moment.replace(tzinfo=UTC)
    if moment is None or moment.tzinfo is None:
        problem = "not an RFC 3339 time" if moment is None else "missing time zone"
        if " " in raw:
            problem += " (a '+' in a URL arrives as a space: send %2B)"
        raise ApiError(
            400,
            f"{name}: {problem}; {TIME_HINT}",
            [{"path": name, "message": f"{problem}; {TIME_HINT}"}],
        )
    return moment


def check_args(allowed: frozenset[str] | set[str]) -> None:
    """A query parameter the route does not take is a 400 naming it: a misspelt filter must
    not silently answer everything."""
    unknown = sorted(set(request.args) - set(allowed))
    if unknown:
        raise ApiError(
            400,
            f"unknown query parameter {unknown[0]!r}; this route takes "
            + ", ".join(sorted(allowed)),
            [{"path": name, "message": "unknown query parameter"} for name in unknown],
        )
