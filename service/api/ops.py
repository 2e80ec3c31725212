"""Liveness, readiness and metrics."""

from __future__ import annotations

from flask import Blueprint
from sqlalchemy import text

from service.api.errors import problem
from service.api.metrics import exposition
from service.api.responses import json_response
from service.extensions import extensions
from service.store import migrate

bp = Blueprint("ops", __name__)


@bp.get("/healthz")
def healthz():
    """The process is up; never touches the database."""
    return json_response({"status": "ok"})


@bp.get("/readyz")
def readyz():
    db = extensions().db
    try:
        with db.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        current = migrate.is_current(db)
    except Exception as exc:  # any database failure means not ready
        return problem(503, f"database unreachable: {exc.__class__.__name__}")
    if not current:
        return problem(503, "database migrations are not at head; run `verdict db upgrade`")
    return json_response({"status": "ok", "database": "ok"})


@bp.get("/metrics")
def metrics():
    return exposition()
