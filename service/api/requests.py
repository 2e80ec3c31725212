"""Reading request bodies and query strings safely (bounded depth, clear errors)."""

from __future__ import annotations

import base64
import mmap
from datetime import UTC, datetime

import orjson
from flask import current_app, request

from service.api.errors import ApiError
from service.api.load import hold_large_body_slot
from service.ingest.body import YAML_TYPES, reject_duplicate_keys, yaml_as_json
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


def content_encoding(accepted: tuple[str, ...] = ("identity",)) -> str:
    """The body's content coding, lower-cased (codings are case-insensitive, RFC 9110
    section 8.4.1; no header means identity): 415 for one not in ``accepted``, and for an
    empty header, which names no coding at all."""
    raw = request.headers.get("Content-Encoding")
    encoding = "identity" if raw is None else raw.strip().lower()
    if encoding not in accepted:
        shown = encoding[:40] or "(empty)"
        raise ApiError(
            415,
            f"unsupported Content-Encoding {shown}: this route takes {' or '.join(accepted)}",
            [{"path": "Content-Encoding", "message": f"must be {' or '.join(accepted)}"}],
        )
    return encoding


def reject_content_encoding() -> None:
    """A body sent compressed where the route reads it as it is: 415 (gzip is taken by
    ``POST /v1/snapshots`` alone)."""
    content_encoding()


def _large_body_past(size: int) -> None:
    if size > current_app.config["VERDICT"].LARGE_BODY_BYTES:
        hold_large_body_slot()


def json_body(*, yaml: bool = False) -> dict:
    """The body as a JSON object (or, with ``yaml``, a YAML mapping read as its JSON form,
    ``ingest.yaml_json``): bounded in size as it streams, chunked or not, and in depth
    (orjson's 1024 levels; YAML's the same), so deep or huge bodies are a 400 or 413."""
    content_type = (request.mimetype or "application/json").lower()
    is_yaml = yaml and content_type in YAML_TYPES
    is_json = content_type in ("application/json", "application/problem+json")
    if not (is_yaml or is_json or content_type.endswith("+json")):
        wanted = "application/json or application/yaml" if yaml else "application/json"
        raise ApiError(415, f"expected {wanted}, got {content_type}")
    reject_content_encoding()
    # Past the large-body size the body is spooled to a file and read mapped, as snapshot
    # bodies are: a body refused at the limit never sat in the worker's memory.
    settings = current_app.config["VERDICT"]
    data = read_body(MAX_JSON_BYTES, spool_over=settings.LARGE_BODY_BYTES)
    if is_yaml:
        data = yaml_as_json(
            data,
            limit=MAX_JSON_BYTES,
            on_grow=_large_body_past,
            max_nodes=settings.MAX_YAML_NODES,
        )
    # The C scan first: it builds nothing, and refuses an array of millions of items
    # before orjson would hold an object for each.
    reject_duplicate_keys(data)  # and NUL characters
    try:
        body = orjson.loads(memoryview(data)) if data else None
    except orjson.JSONDecodeError as exc:
        raise ApiError(
            400, f"invalid JSON: {exc}", [{"path": "body", "message": str(exc)}]
        ) from None
    if not isinstance(body, dict):
        what = "a mapping" if is_yaml else "a JSON object"
        raise ApiError(400, f"expected {what}", [{"path": "body", "message": f"expected {what}"}])
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


MAX_POSITION = 2**63 - 1  # the databases' BIGINT: a larger number never reaches them


def position(text: str) -> int | None:
    """A sequence number or an offset written in ASCII digits, up to MAX_POSITION; None for
    anything else (``int`` would take '²'-like digits, signs, spaces and underscores)."""
    if not (text.isascii() and text.isdigit()) or len(text) > 19:
        return None
    value = int(text)
    return value if value <= MAX_POSITION else None


def int_cursor() -> int | None:
    """A cursor that carries a position (a sequence number or an offset)."""
    cursor = decode_cursor()
    if cursor is None:
        return None
    value = position(cursor)
    if value is None:
        raise invalid_cursor()
    return value


TIME_HINT = (
    "write an RFC 3339 time such as 2026-11-20T10:00:00Z (in a URL, %2B for a '+' offset: "
    "2026-11-20T11:00:00%2B01:00) or a date such as 2026-11-20 (midnight UTC)"
)


def in_utc(moment: datetime) -> datetime | None:
    """``moment`` (with an offset) as a UTC instant, None when that instant lies outside
    the years 1-9999 (``9999-12-31T23:59:59-14:00``) and no database could hold it."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return None


def time_arg(name: str) -> datetime | None:
    """A query time: RFC 3339 with an offset, or a date (midnight UTC). A malformed one says
    how to write it; a '+' sent unescaped arrives as a space, which the message points at.
    One whose instant is out of range (years 1-9999 in UTC) is a 400 naming it too."""
    raw = request.args.get(name)
    if raw is None:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        moment = None
    if moment is not None and len(raw) == 10:  # a date
        return moment.replace(tzinfo=UTC)
    if moment is not None and moment.tzinfo is not None and in_utc(moment) is None:
        problem = "out of range: its instant in UTC is past the year 9999 or before the year 1"
        raise ApiError(400, f"{name}: {problem}", [{"path": name, "message": problem}])
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
