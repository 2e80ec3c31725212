"""JSON logs (python-json-logger), every line carrying the request, decision and snapshot ids
where there are some, gunicorn's own error and access logs included.

Within a request, ``RequestIds`` adds ``requestId``, ``decisionId`` and ``snapshotId`` to any
``verdict.*`` line. The access line is gunicorn's under `verdict serve` (``GunicornLogger``,
which reads the ids the app leaves in the WSGI environ); under any other server the app
writes it itself (logger ``verdict.access``).
"""

from __future__ import annotations

import logging
import time
import uuid

from flask import Flask, g, has_request_context, request
from gunicorn.glogging import Logger as _GunicornLogger
from pythonjsonlogger.json import JsonFormatter

from service.api.errors import ApiError

log = logging.getLogger("verdict.access")

# Where the app leaves a request's ids for gunicorn's access line.
ENVIRON_KEY = "verdict.ids"
# Set in the WSGI environ by `verdict serve`: gunicorn writes the access line.
GUNICORN_ACCESS_LOG = "verdict.gunicorn_access_log"


def formatter() -> JsonFormatter:
    return JsonFormatter(
        "%(levelname)s %(name)s %(message)s",
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",  # ISO 8601, UTC
    )


def _ids() -> dict:
    """The current request's ids (those it has)."""
    ids = {"requestId": g.get("request_id"), "decisionId": g.get("decision_id")}
    ids["snapshotId"] = g.get("snapshot_id")
    return {k: v for k, v in ids.items() if v}


class RequestIds(logging.Filter):
    """Adds the current request's ids to a log record (outside a request: nothing)."""

    def filter(self, record: logging.LogRecord) -> bool:
        if has_request_context():
            for key, value in _ids().items():
                if not hasattr(record, key):
                    setattr(record, key, value)
        return True


def configure(level: str) -> None:
    root = logging.getLogger("verdict")
    if not any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(formatter())
        handler.addFilter(RequestIds())
        root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False


# openapi.yaml's maxLength for X-Request-ID: a longer one is refused, not cut.
MAX_REQUEST_ID = 200


def with_gunicorn_access_log(app):
    """The WSGI app, telling the Flask app that gunicorn writes the access lines."""

    def wsgi(environ, start_response):
        environ[GUNICORN_ACCESS_LOG] = True
        return app(environ, start_response)

    return wsgi


class GunicornLogger(_GunicornLogger):
    """gunicorn's logs as JSON: its error log, and one access line per request with the
    request, decision and snapshot ids."""

    def setup(self, cfg) -> None:
        super().setup(cfg)
        for handler in (*self.error_log.handlers, *self.access_log.handlers):
            handler.setFormatter(formatter())

    def access(self, resp, req, environ, request_time) -> None:
        if not self.access_log_enabled:
            return
        status = resp.status.split(None, 1)[0] if isinstance(resp.status, str) else resp.status
        fields = {
            "method": environ.get("REQUEST_METHOD"),
            "path": environ.get("PATH_INFO"),
            "query": environ.get("QUERY_STRING") or None,
            "status": int(status),
            "bytes": getattr(resp, "sent", None),
            "durationMs": round(request_time.total_seconds() * 1000, 2),
            "remoteAddr": environ.get("REMOTE_ADDR"),
            "userAgent": environ.get("HTTP_USER_AGENT"),
            **environ.get(ENVIRON_KEY, {}),
        }
        self.access_log.info("request", extra={k: v for k, v in fields.items() if v is not None})


def register(app: Flask) -> None:
    @app.before_request
    def _request_id():
        incoming = request.headers.get("X-Request-ID", "")
        if len(incoming) > MAX_REQUEST_ID:
            g.request_id = str(uuid.uuid4())
            raise ApiError(
                400,
                f"X-Request-ID must be at most {MAX_REQUEST_ID} characters",
                [{"path": "X-Request-ID", "message": f"longer than {MAX_REQUEST_ID}"}],
            )
        g.request_id = incoming or str(uuid.uuid4())

    @app.after_request
    def _log(response):
        response.headers["X-Request-ID"] = g.get("request_id", "")
        ids = _ids()
        request.environ[ENVIRON_KEY] = ids
        if request.environ.get(GUNICORN_ACCESS_LOG):
            return response  # gunicorn writes the access line, with these ids
        fields = {
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "durationMs": round(
                (time.perf_counter() - g.get("started", time.perf_counter())) * 1000, 2
            ),
        }
        log.info("request", extra=fields)
        return response
