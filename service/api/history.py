"""Decision history for auditors: list, read, replay, export NDJSON (verify: api/audit.py)."""

from __future__ import annotations

import uuid

import orjson
from flask import Blueprint, Response, request, stream_with_context

from service.api.errors import ApiError
from service.api.metrics import count_cache
from service.api.requests import (
    check_args,
    encode_cursor,
    int_cursor,
    json_body,
    limit_arg,
    time_arg,
)
from service.api.responses import json_response, negotiated
from service.decisions import KINDS
from service.decisions.replay import Change, ChangeSchema, NotReplayable, replay_record
from service.extensions import extensions
from service.store import records

bp = Blueprint("history", __name__)


def _db():
    return extensions().db


LIST_PARAMETERS = {
    "kind",
    "snapshotId",
    "nodeName",
    "pod",
    "keyId",
    "since",
    "until",
    "limit",
    "cursor",
}


UUID_PARAMETERS = ("snapshotId",)


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


def _check_list_parameters() -> None:
    """Unknown filters and unknown kinds are 400 (API 1.1): a misspelt filter must not
    silently list everything."""
    unknown = sorted(set(request.args) - LIST_PARAMETERS)
    if unknown:
        raise ApiError(
            400,
            f"unknown filter {unknown[0]!r}",
            [{"path": name, "message": "unknown filter"} for name in unknown],
        )
    for name in UUID_PARAMETERS:
        value = request.args.get(name)
        if value is not None and not _is_uuid(value):
            raise ApiError(400, f"{name} must be a UUID", [{"path": name, "message": "not a UUID"}])
    kind = request.args.get("kind")
    if kind is not None and kind not in KINDS and kind != records.PRUNE_KIND:
        raise ApiError(
            400,
            f"unknown kind {kind!r}",
            [{"path": "kind", "message": f"expected one of {', '.join([*KINDS, 'prune'])}"}],
        )


@bp.get("/v1/decisions")
def list_decisions():
    _check_list_parameters()
    limit = limit_arg()
    pod = request.args.get("pod")
    if pod is not None and pod.count("/") != 1:
        raise ApiError(
            400,
            "pod filter is namespace/name",
            [{"path": "pod", "message": "expected namespace/name"}],
        )
    before = int_cursor()
    filters = records.Filters(
        kind=request.args.get("kind"),
        snapshot_id=request.args.get("snapshotId"),
        node_name=request.args.get("nodeName"),
        pod=pod,
        key_id=request.args.get("keyId"),
        since=time_arg("since"),
        until=time_arg("until"),
    )
    with _db().session() as session:
        rows = records.page(session, filters, limit + 1, before)
    items = [records.to_json(r) for r in rows[:limit]]
    next_cursor = encode_cursor(str(rows[limit - 1].seq)) if len(rows) > limit else None
    return json_response({"items": items, "nextCursor": next_cursor})


def _record_or_404(session, decision_id: str):
    row = records.get(session, decision_id)
    if row is None:
        raise ApiError(404, f"no decision {decision_id}", [{"path": "id", "message": "not found"}])
    return row


@bp.get("/v1/decisions/<decision_id>")
def get_decision(decision_id: str):
    with _db().session() as session:
        row = _record_or_404(session, decision_id)
    response = negotiated(records.to_json(row))
    response.headers["ETag"] = f'"{row.record_hash}"'
    return response


def replay_or_409(row, change: Change | None = None) -> dict:
    """The replay report of ``row`` (``decisions.replay``) under ``change``; a record that
    cannot be replayed (a prune) is a 409. Shared by the API and the console."""
    try:
        return replay_record(_db(), extensions().cache, row, on_read=count_cache, change=change)
    except NotReplayable as exc:
        raise ApiError(409, str(exc)) from None


def _has_body() -> bool:
    return (
        bool(request.content_length)
        or "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    )


@bp.post("/v1/decisions/<decision_id>/replay")
def replay(decision_id: str):
    """Without a body, the stored request as it was; with one, under the change it names
    (API 1.2)."""
    change = ChangeSchema().load(json_body(yaml=True)) if _has_body() else None
    with _db().session() as session:
        row = _record_or_404(session, decision_id)
    return json_response(replay_or_409(row, change))


@bp.get("/v1/decisions/export")
def export():
    check_args({"since"})
    since = time_arg("since")
    db = _db()

    def lines():
        with db.session() as session:
            for row in records.iterate(session, since):
                yield orjson.dumps(records.to_json(row)) + b"\n"

    return Response(stream_with_context(lines()), mimetype="application/x-ndjson")
