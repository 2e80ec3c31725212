"""RFC 9457 problem+json for every error: one handler owns the shape."""

from __future__ import annotations

import logging

import orjson
from flask import Flask, Response, request
from marshmallow import ValidationError
from werkzeug.exceptions import HTTPException

from service.decisions.base import DecisionInputError
from service.ingest.errors import IngestError
from service.store.records import UnrepresentableRecord

log = logging.getLogger("verdict.errors")
PROBLEM_JSON = "application/problem+json"

TITLES = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    422: "Unprocessable Content",
    500: "Internal Server Error",
    503: "Service Unavailable",
    507: "Insufficient Storage",
}


class ApiError(Exception):
    def __init__(self, status: int, detail: str, errors: list[dict] | None = None, *, headers=None):
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.errors = errors or []
        self.headers = headers or {}


def problem(status: int, detail: str, errors: list[dict] | None = None, headers=None) -> Response:
    body = {
        "type": f"https://verdict.dev/problems/{status}",
        "title": TITLES.get(status, "Error"),
        "status": status,
        "detail": detail,
        "errors": errors or [],
    }
    response = Response(orjson.dumps(body), status=status, mimetype=PROBLEM_JSON)
    for key, value in (headers or {}).items():
        response.headers[key] = value
    return response


def flatten_messages(messages, prefix: str = "") -> list[dict]:
    """marshmallow's nested {field: [msg]} → [{"path": "a.b[0].c", "message": ...}]."""
    out: list[dict] = []
    if isinstance(messages, dict):
        for key, value in messages.items():
            if isinstance(key, int):
                path = f"{prefix}[{key}]"
            elif key == "_schema":
                path = prefix
            else:
                path = f"{prefix}.{key}" if prefix else str(key)
            out.extend(flatten_messages(value, path))
    elif isinstance(messages, list) and all(isinstance(m, str) for m in messages):
        out.extend({"path": prefix, "message": m} for m in messages)
    elif isinstance(messages, list):
        for item in messages:
            out.extend(flatten_messages(item, prefix))
    else:
        out.append({"path": prefix, "message": str(messages)})
    return out


def _summary(errors: list[dict]) -> str:
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{first['path'] or 'body'}: {first['message']}{more}"


def register(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def _api_error(exc: ApiError):
        return problem(exc.status, exc.detail, exc.errors, exc.headers)

    @app.errorhandler(IngestError)
    def _ingest_error(exc: IngestError):
        errors = [{"path": e.path, "message": e.message} for e in exc.errors]
        return problem(exc.status, _summary(errors), errors)

    @app.errorhandler(ValidationError)
    def _validation_error(exc: ValidationError):
        errors = flatten_messages(exc.messages)
        return problem(422, _summary(errors), errors)

    @app.errorhandler(DecisionInputError)
    def _decision_input(exc: DecisionInputError):
        errors = [{"path": exc.path, "message": exc.message}]
        return problem(422, _summary(errors), errors)

    @app.errorhandler(UnrepresentableRecord)
    def _unrepresentable(exc: UnrepresentableRecord):
        message = f"an amount in this decision leaves the 64-bit range ({exc})"
        return problem(422, f"result: {message}", [{"path": "result", "message": message}])

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        # Keep what the exception says in its headers (Allow on a 405), not its content type.
        headers = {k: v for k, v in exc.get_headers() if k.lower() != "content-type"}
        return problem(exc.code or 500, exc.description or TITLES.get(exc.code, ""), None, headers)

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unhandled error on %s %s", request.method, request.path)
        return problem(500, "internal error; this is a bug in Verdict")
