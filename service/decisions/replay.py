"""Replay: a stored decision recomputed with the running engine, for the API, the console and
impact (``impact.py``).

The record's stored request is decided again on its snapshot, resolved as any request's
(``cluster.resolve_cluster``) and with the same fallback time; ``diff.py`` beside it lists
where the replayed result differs from the stored one. A ``Change`` replaces parts of the
stored request first (another Kubernetes release, the cluster's scheduler configuration, a
kind's ``config``), so that a replay answers "what would this change have decided?".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from marshmallow import fields, post_load, validates_schema

from service.decisions.base import DecisionInputError, DecisionKind
from service.decisions.cluster import SnapshotReference, resolve_cluster, stored_time
from service.decisions.diff import differences
from service.decisions.kinds import KINDS
from service.decisions.run import (
    VERSION_FIELD,
    compute,
    decision_params,
    kubernetes_version,
    reads,
)
from service.decisions.schemas import StrictSchema
from service.decisions.simulation import SimulationLimits
from service.engine.version import DEFAULT_KUBERNETES_VERSION
from service.store.db import Database
from service.store.snapshots import ClusterCache


class NotReplayable(Exception):
    """The record's kind is not a decision this engine computes (a prune), or it names no
    snapshot."""


SCHEDULER_CONFIGURATION = "schedulerConfiguration"
CONFIG = "config"
# The legacy scoring object, which a schedulerConfiguration replaces (both given is a 422).
SCORING = "scoring"


@dataclass(frozen=True)
class Change:
    """What a replay puts in place of the stored request's fields; None keeps the stored one.

    ``config`` is the ``config`` field of the kinds that have one (eviction: the kubelet's
    configuration; node-eviction-rate: the controller's flags)."""

    kubernetes_version: str | None = None
    scheduler_configuration: Any = None
    config: dict | None = None

    def fields(self) -> dict[str, Any]:
        """The replaced request fields, by their request names."""
        given = {
            VERSION_FIELD: self.kubernetes_version,
            SCHEDULER_CONFIGURATION: self.scheduler_configuration,
            CONFIG: self.config,
        }
        return {name: value for name, value in given.items() if value is not None}


def changed_request(
    kind: DecisionKind, params: dict, change: Change, *, strict: bool
) -> tuple[dict, dict]:
    """The stored request ``params`` with ``change`` applied, and what was replaced
    (``{field: {"stored", "replayed"}}``, only fields whose value differs).

    ``strict``: a change the kind does not read (a scheduler configuration for an admission)
    is a DecisionInputError naming the field (a replay); otherwise it is left out for this
    kind (impact, over records of every kind)."""
    out, changed = dict(params), {}
    for name, value in change.fields().items():
        if name != VERSION_FIELD and not reads(kind, name):
            if strict:
                raise DecisionInputError(
                    name, f"{kind.name} decisions do not read {name}; nothing to replace"
                )
            continue
        stored = params.get(name, DEFAULT_KUBERNETES_VERSION if name == VERSION_FIELD else None)
        if stored != value:
            changed[name] = {"stored": stored, "replayed": value}
        out[name] = value
        if name == SCHEDULER_CONFIGURATION and out.pop(SCORING, None) is not None:
            changed[SCORING] = {"stored": params[SCORING], "replayed": None}
    return out, changed


@dataclass(frozen=True)
class Replayed:
    """A stored decision decided again: the result, what the change replaced, and where the
    result differs from the stored one."""

    result: dict
    changed: dict
    differences: list[dict]


def decide_again(
    db: Database | None,
    cache: ClusterCache,
    row,
    change: Change | None = None,
    *,
    strict: bool = True,
    on_read: Callable[[ClusterCache, str], None] | None = None,
    limits: SimulationLimits | None = None,
) -> tuple[dict, dict]:
    """The result of the stored request of ``row`` (a record: kind, snapshot_id, request)
    decided again with ``change`` applied, and what the change replaced. Raises
    NotReplayable, and the errors of a request (marshmallow's ValidationError,
    DecisionInputError) when the changed request cannot be decided: naming the field, as for
    a new decision."""
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
    params, changed = changed_request(
        kind, decision_params(row.request), change or Change(), strict=strict
    )
    outcome = compute(
        kind,
        named.cluster,
        params,
        stored_at=stored_time(db, kind, named, params),
        limits=limits,
    )
    return outcome.result, changed


def replay_decision(
    db: Database | None,
    cache: ClusterCache,
    row,
    change: Change | None = None,
    *,
    strict: bool = True,
    on_read: Callable[[ClusterCache, str], None] | None = None,
    limits: SimulationLimits | None = None,
) -> Replayed:
    """``decide_again``, compared with the stored result."""
    result, changed = decide_again(
        db, cache, row, change, strict=strict, on_read=on_read, limits=limits
    )
    return Replayed(result, changed, differences(row.result, result))


def replay_record(
    db: Database,
    cache: ClusterCache,
    row,
    on_read: Callable[[ClusterCache, str], None] | None = None,
    change: Change | None = None,
    limits: SimulationLimits | None = None,
) -> dict:
    """Recompute the stored decision ``row``, with ``change`` applied, and compare: the
    replay report."""
    replayed = replay_decision(db, cache, row, change, on_read=on_read, limits=limits)
    return {
        "id": row.id,
        "matches": not replayed.differences,
        "storedEngineVersion": row.engine_version,
        "changed": replayed.changed,
        "stored": row.result,
        "replayed": replayed.result,
        "differences": replayed.differences,
    }


class ChangeSchema(StrictSchema):
    """A replay's body: ``{"kubernetesVersion", "schedulerConfiguration", "config"}``, each
    optional. The release is checked here (a 422 naming it before any work); the
    configurations are checked as the replayed request's own fields, by the kind's schema
    under the release the replay decides as."""

    kubernetesVersion = fields.String(load_default=None)
    schedulerConfiguration = fields.Raw(load_default=None)
    config = fields.Dict(keys=fields.String(), load_default=None)

    @validates_schema
    def _release(self, data: dict, **kwargs) -> None:
        if data.get("kubernetesVersion") is not None:
            kubernetes_version(data)

    @post_load
    def _change(self, data: dict, **kwargs) -> Change:
        return Change(
            kubernetes_version=data["kubernetesVersion"],
            scheduler_configuration=data["schedulerConfiguration"],
            config=data["config"],
        )
