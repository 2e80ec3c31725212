"""POST /v1/decisions/<kind>: compute, record and return one decision."""

from __future__ import annotations

import logging

from flask import Blueprint, g, url_for

from service.api.errors import ApiError
from service.api.metrics import DECISIONS, count_cache, decision_outcome
from service.api.requests import json_body
from service.api.responses import negotiated
from service.decisions import KINDS
from service.decisions.cluster import (
    NamedCluster,
    SnapshotNotFound,
    SnapshotReference,
    resolve_cluster,
    stored_time,
)
from service.decisions.run import check_snapshot_reference, compute, decision_params
from service.engine.version import ENGINE_VERSION
from service.extensions import extensions
from service.store import records
from service.store import snapshots as store

bp = Blueprint("decisions", __name__, url_prefix="/v1/decisions")
log = logging.getLogger("verdict.decisions")


def _kind(name: str):
    kind = KINDS.get(name)
    if kind is None:
        raise ApiError(404, f"no decision kind {name!r}; known: {', '.join(sorted(KINDS))}")
    return kind


def _named_cluster(body: dict, kind) -> NamedCluster:
    """The cluster the request names; an unknown snapshotId is a 422 naming it."""
    try:
        return resolve_cluster(
            SnapshotReference.of_request(body),
            db=extensions().db,
            cache=extensions().cache,
            scheduler=kind.scheduler,
            on_read=count_cache,
        )
    except SnapshotNotFound as exc:
        raise ApiError(
            422, f"no snapshot {exc.snapshot_id}", [{"path": exc.path, "message": exc.message}]
        ) from None


def record_decision(kind_name: str, body: dict):
    kind = _kind(kind_name)
    check_snapshot_reference(body)
    named = _named_cluster(body, kind)
    params = decision_params(body)
    db = extensions().db
    outcome = compute(kind, named.cluster, params, stored_at=stored_time(db, kind, named, params))
    snapshot_id = named.snapshot_id
    with db.session(write=True) as session:
        if named.inline is not None:
            snapshot_id = store.save_parsed(
                session,
                named.inline,
                key_id=g.get("key_id"),
                cache=extensions().cache,
                cluster=named.cluster,
            ).id
        row = records.append(
            session,
            kind=kind.name,
            snapshot_id=snapshot_id,
            key_id=g.get("key_id"),
            request={"snapshotId": snapshot_id, **outcome.request},
            result=outcome.result,
            engine_version=ENGINE_VERSION,
            node_names=outcome.subjects.node_names,
            pods=outcome.subjects.pods,
        )
    DECISIONS.labels(kind=kind.name, outcome=decision_outcome(kind.name, outcome.result)).inc()
    g.decision_id, g.snapshot_id = row.id, snapshot_id
    return row


@bp.post("/<kind_name>")
def create_decision(kind_name: str):
    body = json_body(yaml=True)
    row = record_decision(kind_name, body)
    response = negotiated(records.to_json(row), 201)
    response.headers["X-Decision-ID"] = row.id
    response.headers["Location"] = url_for("history.get_decision", decision_id=row.id)
    return response
