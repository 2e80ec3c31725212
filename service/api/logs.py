"""Structured JSON access logs carrying request, decision and snapshot ids."""

from __future__ import annotations

import logging
import uuid

import orjson
from flask import Flask, g, request

log = logging.getLogger("verdict.access")


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry = {"level": record.levelname, "logger": record.name, "message": record.getMessage()}
        entry.update(getattr(record, "fields", {}))
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry).decode()


def configure(level: str) -> None:
    root = logging.getLogger("verdict")
    if not any(isinstance(h.formatter, JsonFormatter) for h in root.handlers):
        handler = logging.StreamHandler()
        handler.setFormatter(JsonFormatter())
        root.addHandler(handler)
    root.setLevel(level)
    root.propagate = False


def register(app: Flask) -> None:
    @app.before_request
    def _request_id():
        incoming = request.headers.get("X-Request-ID", "")
        g.request_id = incoming[:200] if incoming else str(uuid.uuid4())

    @app.after_request
    def _log(response):
        response.headers["X-Request-ID"] = g.get("request_id", "")
        fields = {
            "requestId": g.get("request_id"),
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "durationMs": round(g.get("elapsed", 0.0) * 1000, 2),
        }
        if g.get("decision_id"):
            fields["decisionId"] = g.decision_id
        if g.get("snapshot_id"):
            fields["snapshotId"] = g.snapshot_id
        log.info("request", extra={"fields": fields})
        return response
