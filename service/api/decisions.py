"""POST /v1/decisions/<kind>: compute, record and return one decision."""

from __future__ import annotations

import logging

from flask import Blueprint, current_app, g, url_for

from service.api.errors import ApiError
from service.api.metrics import DECISIONS, count_cache, decision_outcome
from service.api.requests import json_or_yaml_body
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
from service.ingest import wire
from service.ingest.errors import IngestError
from service.ingest.kube import convert_object
from service.ingest.names import metadata_errors
from service.store import records
from service.store import snapshots as store

bp = Blueprint("decisions", __name__, url_prefix="/v1/decisions")
log = logging.getLogger("verdict.decisions")


def _kind(name: str):
    kind = KINDS.get(name)
    if kind is None or name == "prune":
        raise ApiError(404, f"no decision kind {name!r}; known: {', '.join(sorted(KINDS))}")
    return kind


def _named_cluster(body: dict, kind) -> NamedCluster:
    """The cluster the request names; an unknown snapshotId is a 422 naming it."""
    try:
        return resolve_cluster(
            SnapshotReference.of_request(body),
            db=current_app.extensions["verdict.db"],
            cache=current_app.extensions["verdict.cache"],
            scheduler=kind.scheduler,
            on_read=count_cache,
        )
    except SnapshotNotFound as exc:
        raise ApiError(
            422, f"no snapshot {exc.snapshot_id}", [{"path": exc.path, "message": exc.message}]
        ) from None


def check_pod_metadata(body: dict) -> None:
    """The request's pod named and labelled as the API server allows (its name and
    namespace become the record's subjects)."""
    pod = body.get("pod")
    if isinstance(pod, dict) and isinstance(pod.get("metadata"), dict):
        metadata = convert_object(pod["metadata"], wire.Metadata, "pod.metadata")
        if errors := metadata_errors("Pod", metadata, "pod", namespaced=True):
            raise IngestError(errors)


def record_decision(kind_name: str, body: dict):
    kind = _kind(kind_name)
    check_snapshot_reference(body)
    check_pod_metadata(body)
    named = _named_cluster(body, kind)
    params = decision_params(body)
    db = current_app.extensions["verdict.db"]
    outcome = compute(kind, named.cluster, params, stored_at=stored_time(db, kind, named, params))
    snapshot_id = named.snapshot_id
    with db.session(write=True) as session:
        if named.inline is not None:
            snapshot_id = store.save_parsed(
                session,
                named.inline,
                key_id=g.get("key_id"),
                cache=current_app.extensions["verdict.cache"],
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
    body = json_or_yaml_body()
    row = record_decision(kind_name, body)
    response = negotiated(records.to_json(row), 201)
    response.headers["X-Decision-ID"] = row.id
    response.headers["Location"] = url_for("history.get_decision", decision_id=row.id)
    return response
