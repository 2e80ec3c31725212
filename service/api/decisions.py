"""POST /v1/decisions/<kind>: compute, record and return one decision."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import orjson
import yaml
from flask import Blueprint, Response, current_app, g, request, url_for

from service.api import snapshots as snapshot_api
from service.api.errors import ApiError
from service.api.metrics import DECISIONS, count_cache, decision_outcome
from service.api.requests import MAX_JSON_BYTES, json_body
from service.api.responses import json_response
from service.decisions import KINDS
from service.decisions.run import (
    check_snapshot_reference,
    compute,
    decision_params,
    needs_stored_time,
)
from service.engine.objects import Cluster
from service.engine.version import ENGINE_VERSION
from service.ingest import wire
from service.ingest.body import YAML_TYPES, yaml_to_json
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


def _cluster_for(body: dict, kind):
    """(cluster, parsed inline snapshot or None, stored snapshot id or None)."""
    if body.get("snapshotId") is not None:
        db, cache = current_app.extensions["verdict.db"], current_app.extensions["verdict.cache"]
        count_cache(cache, body["snapshotId"])
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


def check_pod_metadata(body: dict) -> None:
    """The request's pod named and labelled as the API server allows (its name and
    namespace become the record's subjects)."""
    pod = body.get("pod")
    if isinstance(pod, dict) and isinstance(pod.get("metadata"), dict):
        metadata = convert_object(pod["metadata"], wire.Metadata, "pod.metadata")
        if errors := metadata_errors("Pod", metadata, "pod", namespaced=True):
            raise IngestError(errors)


def stored_time(kind, cluster: Cluster, params: dict, snapshot_id: str | None) -> datetime | None:
    """When the snapshot was stored, if ``now`` falls back to it (an inline snapshot: now,
    as it is stored with the decision)."""
    if not needs_stored_time(kind, cluster, params):
        return None
    if snapshot_id is None:
        return datetime.now(UTC)
    with current_app.extensions["verdict.db"].session() as session:
        return records.as_utc(store.get_summary(session, snapshot_id).created_at)


def record_decision(kind_name: str, body: dict):
    kind = _kind(kind_name)
    check_snapshot_reference(body)
    check_pod_metadata(body)
    cluster, inline, snapshot_id = _cluster_for(body, kind)
    params = decision_params(body)
    outcome = compute(
        kind, cluster, params, stored_at=stored_time(kind, cluster, params, snapshot_id)
    )
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
    DECISIONS.labels(kind=kind.name, outcome=decision_outcome(kind.name, outcome.result)).inc()
    g.decision_id, g.snapshot_id = row.id, snapshot_id
    return row


def decision_body() -> dict:
    """The request body: JSON, or YAML (read as snapshots are: no anchors, bounded size)."""
    if (request.mimetype or "").lower() not in YAML_TYPES:
        return json_body()
    if request.content_length and request.content_length > MAX_JSON_BYTES:
        raise ApiError(413, f"body exceeds {MAX_JSON_BYTES} bytes")
    body = orjson.loads(yaml_to_json(request.get_data(cache=True)))
    if not isinstance(body, dict):
        raise ApiError(
            400, "expected a mapping", [{"path": "body", "message": "expected a mapping"}]
        )
    return body


def negotiated(payload, status: int):
    """JSON, or YAML when the client prefers it (``Accept: application/yaml``)."""
    best = request.accept_mimetypes.best_match(["application/json", "application/yaml"])
    if best == "application/yaml":
        text = yaml.safe_dump(payload, sort_keys=False, allow_unicode=True)
        return Response(text, status=status, mimetype="application/yaml")
    return json_response(payload, status)


@bp.post("/<kind_name>")
def create_decision(kind_name: str):
    body = decision_body()
    row = record_decision(kind_name, body)
    response = negotiated(records.to_json(row), 201)
    response.headers["X-Decision-ID"] = row.id
    response.headers["Location"] = url_for("history.get_decision", decision_id=row.id)
    return response
