"""The cluster a request names, resolved the one way for the API, replay and the CLI.

A decision request names its cluster by ``snapshotId`` (a snapshot stored in the database)
or gives it inline (``snapshot``: a List or an envelope; for the CLI a file). A stored
snapshot is read from the process's ClusterCache, else decoded from the store (restoring
the stored scheduler view for the kinds that decide on it alone); an inline one is parsed as
a ``POST /v1/snapshots`` body is. The time a clock kind falls back to when neither the
request nor the snapshot gives one is resolved here too (``stored_time``).
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

import orjson

from service.decisions.base import DecisionInputError, DecisionKind
from service.engine.objects import Cluster
from service.ingest.body import ParsedSnapshot, parse_snapshot
from service.ingest.errors import IngestError
from service.store import records
from service.store import snapshots as store
from service.store.db import Database


class SnapshotNotFound(DecisionInputError):
    """``snapshotId`` names no stored snapshot."""

    def __init__(self, snapshot_id: str) -> None:
        super().__init__("snapshotId", "no stored snapshot has this id")
        self.snapshot_id = snapshot_id


@dataclass(frozen=True)
class SnapshotReference:
    """What a request says of its cluster: a stored snapshot's id, or an inline body (its
    bytes and content type). ``field``: the request field an inline body's errors are placed
    under ("" for a file given on the command line)."""

    snapshot_id: str | None = None
    data: bytes | None = None
    content_type: str = "application/json"
    field: str = "snapshot"

    @classmethod
    def of_request(cls, body: dict) -> SnapshotReference:
        """What a decision request body names (``check_snapshot_reference`` has passed)."""
        if body.get("snapshotId") is not None:
            return cls(snapshot_id=body["snapshotId"])
        return cls(data=orjson.dumps(body["snapshot"]))


@dataclass(frozen=True)
class NamedCluster:
    """The resolved cluster: ``snapshot_id`` when it is stored, ``inline`` (the parsed body,
    to be stored with the decision) when it was given inline."""

    cluster: Cluster
    snapshot_id: str | None = None
    inline: ParsedSnapshot | None = None


def parse_snapshot_body(data: bytes, content_type: str) -> ParsedSnapshot:
    """Parse a snapshot body with the collector paused (millions of short-lived objects):
    the one parse of ``POST /v1/snapshots`` and of inline snapshots."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return parse_snapshot(data, content_type=content_type)
    finally:
        if collecting:
            gc.enable()


def resolve_cluster(
    reference: SnapshotReference,
    *,
    db: Database | None,
    cache: store.ClusterCache,
    scheduler: bool = False,
    on_read: Callable[[store.ClusterCache, str], None] | None = None,
) -> NamedCluster:
    """The cluster ``reference`` names. A stored snapshot comes from ``cache``, else from
    ``db`` (and is cached; ``scheduler``: the caller decides on the scheduler's view alone,
    ``DecisionKind.scheduler``, restored from its stored form); ``on_read`` is told of each read of a stored snapshot before it
    is looked up (the API counts cache hits and misses). Raises SnapshotNotFound, or an
    IngestError naming the inline body's fields."""
    snapshot_id = reference.snapshot_id
    if snapshot_id is not None:
        if on_read is not None:
            on_read(cache, snapshot_id)
        cluster = cache.get(snapshot_id)
        if cluster is None and db is not None:
            with db.session() as session:
                cluster = store.load_cluster(session, cache, snapshot_id, scheduler=scheduler)
        if cluster is None:
            raise SnapshotNotFound(snapshot_id)
        return NamedCluster(cluster, snapshot_id=snapshot_id)
    try:
        parsed = parse_snapshot_body(reference.data or b"", reference.content_type)
    except IngestError as exc:
        raise exc.prefixed(reference.field) from None
    return NamedCluster(Cluster(parsed.snapshot), inline=parsed)


def needs_stored_time(kind: DecisionKind, cluster: Cluster, params: dict) -> bool:
    """Whether ``now`` falls back to the snapshot's stored time (no ``now``, no capturedAt)."""
    return kind.clock and params.get("now") is None and cluster.snapshot.captured_at is None


def stored_time(
    db: Database | None, kind: DecisionKind, named: NamedCluster, params: dict
) -> datetime | None:
    """When the snapshot was stored, if ``now`` falls back to it (an inline snapshot: now,
    as it is stored with the decision; no database, as the offline CLI: None)."""
    if not needs_stored_time(kind, named.cluster, params):
        return None
    if named.snapshot_id is None:
        return datetime.now(UTC)
    if db is None:
        return None
    with db.session() as session:
        return records.as_utc(store.get_summary(session, named.snapshot_id).created_at)
