"""Replay: a stored decision recomputed with the running engine, for the API and the console.

The record's stored request is decided again on its snapshot, resolved as any request's
(``cluster.resolve_cluster``) and with the same fallback time; ``diff.py`` beside it lists
where the replayed result differs from the stored one.
"""

from __future__ import annotations

from collections.abc import Callable

from service.decisions.cluster import SnapshotReference, resolve_cluster, stored_time
from service.decisions.diff import differences
from service.decisions.kinds import KINDS
from service.decisions.run import compute, decision_params
from service.store.db import Database
from service.store.snapshots import ClusterCache


class NotReplayable(Exception):
    """The record's kind is not a decision this engine computes (a prune), or it names no
    snapshot."""


def replay_record(
    db: Database,
    cache: ClusterCache,
    row,
    on_read: Callable[[ClusterCache, str], None] | None = None,
) -> dict:
    """Recompute the stored decision ``row`` and compare: the replay report."""
    kind = KINDS.get(row.kind)
    if kind is None or row.snapshot_id is None:
        raise NotReplayable(f"decisions of kind {row.kind!r} cannot be replayed")
    named = resolve_cluster(
        SnapshotReference(snapshot_id=row.snapshot_id),
        db=db,
        cache=cache,
        scheduler=kind.scheduler,
        on_read=on_read,
    )
    params = decision_params(row.request)
    outcome = compute(kind, named.cluster, params, stored_at=stored_time(db, kind, named, params))
    diffs = differences(row.result, outcome.result)
    return {
        "id": row.id,
        "matches": not diffs,
        "storedEngineVersion": row.engine_version,
        "stored": row.result,
        "replayed": outcome.result,
        "differences": diffs,
    }
