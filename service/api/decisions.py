"""POST /v1/decisions/<kind>: compute, record and return one decision."""

from __future__ import annotations

import logging

import orjson
from flask import Blueprint, current_app, g, url_for

from service.api import snapshots as snapshot_api
from service.api.errors import ApiError
from service.api.metrics import DECISIONS
from service.api.requests import json_body
from service.api.responses import json_response
from service.decisions import KINDS
from service.decisions.run import check_snapshot_reference, compute, decision_params
from service.engine.objects import Cluster
from service.engine.version import ENGINE_VERSION
from service.ingest.errors import IngestError
from service.store import records
from service.store import snapshots as store

bp = Blueprint("decisions", __name__, url_prefix="/v1/decisions")
log = logging.getLogger("verdict.decisions")


def _kind(name: str):
    kind = KINDS.get(name)
    if kind is None or name == "prune":
        raise ApiError(404, f"no decision kind {name!r}; known: {', '.join(sorted(KINDS))}")
    return kind


def _cluster_for(body: dict, kind):
    """(cluster, parsed inline snapshot or None, stored snapshot id or None)."""
    if body.get("snapshotId") is not None:
        db, cache = current_app.extensions["verdict.db"], current_app.extensions["verdict.cache"]
        cluster = cache.get(body["snapshotId"])
        if cluster is None:
            with db.session() as session:
                cluster = store.load_cluster(
                    session, cache, body["snapshotId"], scheduler=kind.scheduler
                )
        if cluster is None:
            raise ApiError(
                422,
                f"no snapshot {body['snapshotId']}",
                [{"path": "snapshotId", "message": "no stored snapshot has this id"}],
            )
        return cluster, None, body["snapshotId"]
    try:
        parsed = snapshot_api.parse(orjson.dumps(body["snapshot"]), "application/json")
    except IngestError as exc:
        raise exc.prefixed("snapshot") from None
    return Cluster(parsed.snapshot), parsed, None


def record_decision(kind_name: str, body: dict):
    kind = _kind(kind_name)
    check_snapshot_reference(body)
    cluster, inline, snapshot_id = _cluster_for(body, kind)
    outcome = compute(kind, cluster, decision_params(body))
    with current_app.extensions["verdict.db"].session(write=True) as session:
        if inline is not None:
            snapshot_id = snapshot_api.save(session, inline, cluster).id
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
    DECISIONS.labels(kind=kind.name).inc()
    g.decision_id, g.snapshot_id = row.id, snapshot_id
    return row


@bp.post("/<kind_name>")
def create_decision(kind_name: str):
    body = json_body()
    row = record_decision(kind_name, body)
    response = json_response(records.to_json(row), 201)
    response.headers["X-Decision-ID"] = row.id
    response.headers["Location"] = url_for("history.get_decision", decision_id=row.id)
    return response
