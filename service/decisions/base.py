"""The contract every decision kind fulfils (``DecisionKind``), the errors it may raise, and
what the kinds share in deciding and rendering: the time a decision is made at
(``resolve_now``), the sentence naming what was not modelled, and a scheduling cycle's
error."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from marshmallow import Schema

from service.engine.objects import Cluster
from service.engine.scheduler.runtime import CycleError


class DecisionInputError(Exception):
    """The request is well-formed but does not fit the snapshot (unknown node, no stats...).

    Answered as 422 problem+json naming ``path`` (a dotted field path of the request body).
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.message = message


@dataclass(frozen=True)
class Subjects:
    """What a decision is about, indexed for the history filters (?nodeName=, ?pod=)."""

    node_names: list[str] = field(default_factory=list)
    pods: list[str] = field(default_factory=list)  # "namespace/name"


@dataclass(frozen=True)
class DecisionKind:
    name: str  # the URL segment: POST /v1/decisions/<name>
    schema: type[Schema]  # the request body minus snapshotId/snapshot
    decide: Callable[[Cluster, dict], dict]  # (cluster, loaded request) -> JSON-ready result
    subjects: Callable[[dict, dict], Subjects]  # (loaded request, result) -> subjects
    # Decides on the scheduler's view alone: a stored snapshot's view is restored from its
    # stored form, the pods decoded only if read (store.snapshots.load_cluster).
    scheduler: bool = False
    # Decides as of a time (``now``): the API then resolves the snapshot's stored time, which
    # ``now`` falls back to (``resolve_now``).
    clock: bool = False


# Where a decision's time came from (the result's ``nowSource``).
NOW_SOURCES = ("request", "capturedAt", "createdAt")


def resolve_now(cluster: Cluster, request: dict) -> tuple[datetime, str]:
    """The time to decide at and where it came from: the request's ``now``, else the
    snapshot's ``capturedAt``, else when the snapshot was stored (``storedAt``, set by
    ``run.compute``)."""
    for key, source in (("now", "request"), ("storedAt", "createdAt")):
        if key == "storedAt" and cluster.snapshot.captured_at is not None:
            moment, source = cluster.snapshot.captured_at, "capturedAt"
            break
        moment = request.get(key)
        if moment is not None:
            break
    else:
        raise DecisionInputError(
            "now", "required: the snapshot has no capturedAt and no stored time to default to"
        )
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)), source


def not_modelled_sentence(not_modelled: tuple[str, ...] | list[str]) -> str:
    if not not_modelled:
        return ""
    return (
        f" Not evaluated: {', '.join(not_modelled)} (filters Verdict does not model); "
        "the result assumes they pass."
    )


def cycle_error_json(error: CycleError | None) -> dict | None:
    """The ``cycleError`` of a scheduler result: the error that failed the cycle, with the
    extension point, plugin and node it came from."""
    if error is None:
        return None
    return {
        "extensionPoint": error.extension_point,
        "plugin": error.plugin,
        "nodeName": error.node_name,
        "message": error.message,
    }
