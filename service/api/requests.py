"""Reading request bodies and query strings safely (bounded depth, clear errors)."""

from __future__ import annotations

import base64
from datetime import datetime

import orjson
from flask import request

from service.api.errors import ApiError

DEFAULT_LIMIT = 50
MAX_LIMIT = 1000
MAX_JSON_BYTES = 64 * 1024 * 1024  # decision bodies; snapshot bodies have their own limit


def json_body() -> dict:
    """The body as a JSON object. orjson bounds nesting (1024), so deep bodies are a 400."""
    content_type = (request.mimetype or "application/json").lower()
    if content_type not in (
        "application/json",
        "application/problem+json",
    ) and not content_type.endswith("+json"):
        raise ApiError(415, f"expected application/json, got {content_type}")
    if request.content_length and request.content_length > MAX_JSON_BYTES:
        raise ApiError(413, f"body exceeds {MAX_JSON_BYTES} bytes")
    data = request.get_data(cache=True)
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
    return body


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


def time_arg(name: str) -> datetime | None:
    raw = request.args.get(name)
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        raise ApiError(
            400,
            f"{name} must be an RFC 3339 time",
            [{"path": name, "message": "not an RFC 3339 time"}],
        ) from None
    if moment.tzinfo is None:
        raise ApiError(
            400,
            f"{name} needs a time zone offset",
            [{"path": name, "message": "missing time zone"}],
        )
    return moment
