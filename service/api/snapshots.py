"""/v1/snapshots: ingest a cluster's state, list and read it back, delete it."""

from __future__ import annotations

import time
from datetime import datetime

from flask import Blueprint, Response, current_app, g, request, url_for
from sqlalchemy import and_, or_, select

from service.api.errors import ApiError
from service.api.load import hold_large_body_slot
from service.api.metrics import INGEST_BYTES, INGEST_SECONDS, count_cache
from service.api.requests import (
    check_args,
    content_encoding,
    decode_cursor,
    encode_cursor,
    in_utc,
    int_cursor,
    invalid_cursor,
    limit_arg,
    read_body,
)
from service.api.responses import json_response
from service.decisions.cluster import (
    SnapshotNotFound,
    SnapshotReference,
    parse_snapshot_body,
    resolve_cluster,
)
from service.engine.objects import Cluster, Snapshot
from service.engine.summary import node_view, pod_view
from service.engine.version import DEFAULT_SETTINGS
from service.extensions import extensions
from service.ingest.body import YAML_TYPES, gunzip, yaml_as_json
from service.store import snapshots as store
from service.store.models import SnapshotRow
from service.store.records import as_utc, iso

bp = Blueprint("snapshots", __name__, url_prefix="/v1/snapshots")
ACCEPTED_TYPES = ("application/json", *YAML_TYPES)


def summary_json(row) -> dict:
    return {
        "id": row.id,
        "name": row.name,
        "cluster": row.cluster,
        "labels": row.labels or {},
        "createdAt": iso(row.created_at),
        "capturedAt": iso(row.captured_at),
        "digest": row.digest,
        "counts": row.counts,
        "ignored": row.ignored or {},
    }


def read_snapshot_body() -> tuple[bytes, str]:
    """The body, decompressed and bounded by the configured limit."""
    limit = current_app.config["VERDICT"].MAX_BODY_BYTES
    content_type = (request.mimetype or "application/json").lower()
    if content_type not in ACCEPTED_TYPES:
        raise ApiError(415, f"expected application/json or application/yaml, got {content_type}")
    encoding = content_encoding(("gzip", "identity"))
    large = current_app.config["VERDICT"].LARGE_BODY_BYTES
    # Past the large-body size, the body (and its inflated form) is spooled to a temporary
    # file and read mapped: the worker's own memory holds the normalized snapshot, not it.
    data = read_body(limit, spool_over=large)
    if encoding == "gzip":
        data = gunzip(
            data,
            limit,
            on_grow=lambda size: size > large and hold_large_body_slot(),
            spool_over=large,
        )
    INGEST_BYTES.observe(len(data))
    if content_type in YAML_TYPES:  # read as its JSON form, counted as JSON is
        data = yaml_as_json(
            data,
            limit=limit,
            on_grow=lambda size: size > large and hold_large_body_slot(),
            max_nodes=current_app.config["VERDICT"].MAX_YAML_NODES,
        )
        content_type = "application/json"
    return data, content_type


@bp.post("")
def create_snapshot():
    started = time.perf_counter()
    # No local keeps the body: it can be freed as soon as parsing is done.
    parsed = parse_snapshot_body(*read_snapshot_body())
    with extensions().db.session(write=True) as session:
        row = store.save_parsed(session, parsed, key_id=g.get("key_id"), cache=extensions().cache)
    INGEST_SECONDS.observe(time.perf_counter() - started)
    g.snapshot_id = row.id
    extensions().preloader.nudge(row.id)
    response = json_response(summary_json(row), 201)
    response.headers["Location"] = url_for("snapshots.get_snapshot", snapshot_id=row.id)
    response.headers["ETag"] = f'"{row.digest}"'
    return response


@bp.get("")
def list_snapshots():
    check_args({"cluster", "label", "limit", "cursor"})
    limit = limit_arg()
    cluster = request.args.get("cluster")
    wanted_labels = {}
    for item in request.args.getlist("label"):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ApiError(
                400,
                "label filters are key=value",
                [{"path": "label", "message": f"not key=value: {item!r}"}],
            )
        wanted_labels[key] = value
    cursor = decode_cursor()
    query = select(*store.summary_columns())
    if cluster:
        query = query.where(SnapshotRow.cluster == cluster)
    if cursor:
        stamp, _, last_id = cursor.partition("|")
        try:
            stamped = datetime.fromisoformat(stamp)
        except ValueError:
            raise invalid_cursor() from None
        moment = in_utc(stamped) if stamped.tzinfo is not None else None
        if moment is None:
            raise invalid_cursor()
        query = query.where(
            or_(
                SnapshotRow.created_at < moment,
                and_(SnapshotRow.created_at == moment, SnapshotRow.id < last_id),
            )
        )
    query = query.order_by(SnapshotRow.created_at.desc(), SnapshotRow.id.desc())
    items, last = [], None
    db = extensions().db
    with db.session() as session:
        # Label filters are applied here rather than in SQL (JSON operators differ per
        # database); snapshots are few, so scanning their summaries is cheap.
        for row in session.execute(query.execution_options(yield_per=200)):
            if any((row.labels or {}).get(k) != v for k, v in wanted_labels.items()):
                continue
            if len(items) == limit:
                break
            items.append(summary_json(row))
            last = row
        else:
            last = None if len(items) < limit else last
    next_cursor = None
    if last is not None and len(items) == limit:
        next_cursor = encode_cursor(f"{as_utc(last.created_at).isoformat()}|{last.id}")
    return json_response({"items": items, "nextCursor": next_cursor})


def _summary_or_404(session, snapshot_id: str):
    row = store.get_summary(session, snapshot_id)
    if row is None:
        raise ApiError(404, f"no snapshot {snapshot_id}", [{"path": "id", "message": "not found"}])
    g.snapshot_id = snapshot_id  # for the log lines
    return row


def _with_etag(payload: dict, digest: str, suffix: str = "") -> Response:
    tag = f'"{digest}{suffix}"'
    if request.if_none_match.contains(f"{digest}{suffix}"):
        response = Response(status=304)
    else:
        response = json_response(payload)
    response.headers["ETag"] = tag
    return response


@bp.get("/<snapshot_id>")
def get_snapshot(snapshot_id: str):
    with extensions().db.session() as session:
        row = _summary_or_404(session, snapshot_id)
    return _with_etag(summary_json(row), row.digest)


def load_cluster(snapshot_id: str, path: str = "snapshotId") -> Cluster:
    try:
        return resolve_cluster(
            SnapshotReference(snapshot_id=snapshot_id),
            db=extensions().db,
            cache=extensions().cache,
            on_read=count_cache,
        ).cluster
    except SnapshotNotFound:
        raise ApiError(
            404, f"no snapshot {snapshot_id}", [{"path": path, "message": "not found"}]
        ) from None


def _offset_page(items: list, limit: int) -> tuple[list, str | None]:
    start = int_cursor() or 0
    chunk = items[start : start + limit]
    more = start + limit < len(items)
    return chunk, encode_cursor(str(start + limit)) if more else None


@bp.get("/<snapshot_id>/nodes")
def list_nodes(snapshot_id: str):
    check_args({"limit", "cursor"})
    limit = limit_arg()
    with extensions().db.session() as session:
        row = _summary_or_404(session, snapshot_id)
    cluster = load_cluster(snapshot_id, "id")
    nodes, next_cursor = _offset_page(list(cluster.nodes), limit)
    payload = {
        "items": [node_view(cluster, n, settings=DEFAULT_SETTINGS) for n in nodes],
        "nextCursor": next_cursor,
    }
    return _with_etag(payload, row.digest, f"/nodes?{request.query_string.decode()}")


def _node_filter() -> str | None:
    """``nodeName``, the name every other route uses, or ``node`` (API 1.0's spelling)."""
    given = {request.args[k] for k in ("node", "nodeName") if k in request.args}
    if len(given) > 1:
        raise ApiError(
            400,
            "node and nodeName name different nodes",
            [{"path": "nodeName", "message": "give one of node or nodeName"}],
        )
    return given.pop() if given else None


@bp.get("/<snapshot_id>/pods")
def list_pods(snapshot_id: str):
    check_args({"node", "nodeName", "namespace", "limit", "cursor"})
    limit = limit_arg()
    node_name = _node_filter()
    namespace = request.args.get("namespace")
    with extensions().db.session() as session:
        row = _summary_or_404(session, snapshot_id)
    cluster = load_cluster(snapshot_id, "id")
    snapshot: Snapshot = cluster.snapshot
    pods = cluster.pods_on(node_name) if node_name else snapshot.pods
    if namespace:
        pods = [p for p in pods if p.namespace == namespace]
    chunk, next_cursor = _offset_page(list(pods), limit)
    items = [pod_view(p, cluster.node(p.node_name), settings=DEFAULT_SETTINGS) for p in chunk]
    return _with_etag(
        {"items": items, "nextCursor": next_cursor},
        row.digest,
        f"/pods?{request.query_string.decode()}",
    )


@bp.delete("/<snapshot_id>")
def delete_snapshot(snapshot_id: str):
    db = extensions().db
    with db.session(write=True) as session:
        _summary_or_404(session, snapshot_id)
        if store.is_referenced(session, snapshot_id):
            raise ApiError(409, "recorded decisions refer to this snapshot; it cannot be deleted")
        session.query(SnapshotRow).filter(SnapshotRow.id == snapshot_id).delete()
    extensions().cache.drop(snapshot_id)
    return Response(status=204)
