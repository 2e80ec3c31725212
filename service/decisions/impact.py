"""Impact: what a change (another Kubernetes release, the cluster's scheduler configuration,
the kubelet's configuration) would have decided differently over the stored history.

Each stored decision the filter matches is replayed under the change (``replay.py``) and
compared with its stored result; a page of ``limit`` decisions at a time, newest first, with
a keyset cursor bound to the query, so that memory stays flat however long the history is.
A decision that cannot be decided under the change (the release cannot read its request, a
field the release refuses) is counted as failed with the reason; nothing is stored.
"""

from __future__ import annotations

import base64
import hashlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import orjson
from marshmallow import ValidationError, fields, post_load, validate, validates_schema

from service.decisions.base import DecisionInputError, DecisionKind
from service.decisions.cooperative import Cooperative
from service.decisions.diff import differences
from service.decisions.eviction import ConfigSchema
from service.decisions.kinds import KINDS
from service.decisions.replay import Change, NotReplayable, decide_again
from service.decisions.run import kubernetes_version
from service.decisions.schemas import StrictSchema, time_field
from service.engine.version import DEFAULT_KUBERNETES_VERSION, settings_for
from service.ingest.errors import IngestError
from service.ingest.kubescheduler_config import SchedulerConfigError, scheduler_profiles
from service.store import records
from service.store.db import Database, strict_json
from service.store.snapshots import ClusterCache

log = logging.getLogger("verdict.impact")

DEFAULT_LIMIT = 1000
MAX_LIMIT = 1000
# A page stops early once it has replayed for this long (a history of large preemptions):
# its nextCursor continues after the last decision examined, so no request nears the
# server's worker timeout.
PAGE_SECONDS = 60.0
# Differences listed per changed decision (the rest are counted in moreDifferences).
CHANGE_DIFFERENCES = 20
# The kinds whose request ``config`` is a KubeletConfiguration (node-eviction-rate's is the
# node lifecycle controller's flags).
KUBELET_CONFIGURATION_KINDS = frozenset({"eviction"})
CHANGE_FIELDS = ("kubernetesVersion", "schedulerConfiguration", "kubeletConfiguration")


class NothingMatches(DecisionInputError):
    """The first page found no stored decision the filter matches: a 422, since an answer of
    zero changes would read as "the change is safe" when nothing was examined."""

    def __init__(self) -> None:
        super().__init__(
            "filter",
            "no stored decision matches the filter, so nothing could be examined; widen the "
            "filter (kind, snapshotId, nodeName, pod, since, until)",
        )


class FilterSchema(StrictSchema):
    kind = fields.String(load_default=None, validate=validate.OneOf(list(KINDS)))
    snapshotId = fields.UUID(load_default=None)
    nodeName = fields.String(load_default=None, validate=validate.Length(min=1))
    pod = fields.String(
        load_default=None,
        validate=validate.Regexp(r"^[^/]+/[^/]+$", error="expected namespace/name"),
    )
    since = time_field(load_default=None)
    until = time_field(load_default=None)

    @validates_schema
    def _window(self, data: dict, **kwargs) -> None:
        since, until = data.get("since"), data.get("until")
        if since is not None and until is not None and until <= since:
            raise ValidationError({"until": ["must be later than since"]})


@dataclass(frozen=True)
class ImpactQuery:
    """One impact request: the change, the filter over the history, and the page."""

    kubernetes_version: str | None = None
    scheduler_configuration: Any = None
    kubelet_configuration: dict | None = None
    filters: records.Filters = field(default_factory=records.Filters)
    limit: int = DEFAULT_LIMIT
    before_seq: int | None = None

    def change_for(self, kind: DecisionKind) -> Change:
        """The change as it applies to decisions of ``kind``: each part replaces the request
        field the kind reads (a kind that reads none is replayed under the release alone)."""
        kubelet = kind.name in KUBELET_CONFIGURATION_KINDS
        return Change(
            kubernetes_version=self.kubernetes_version,
            scheduler_configuration=self.scheduler_configuration,
            config=self.kubelet_configuration if kubelet else None,
        )

    def fingerprint(self) -> str:
        """What a cursor is bound to: the change and the filter (not the page size)."""
        f = self.filters
        content = {
            "change": [
                self.kubernetes_version,
                self.scheduler_configuration,
                self.kubelet_configuration,
            ],
            "filter": [
                f.kind,
                f.snapshot_id,
                f.node_name,
                f.pod,
                records.iso(f.since),
                records.iso(f.until),
            ],
        }
        digest = hashlib.sha256(orjson.dumps(content, option=orjson.OPT_SORT_KEYS))
        return digest.hexdigest()[:16]

    def cursor_after(self, seq: int) -> str:
        raw = f"{seq}.{self.fingerprint()}".encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _cursor_position(cursor: str, query: ImpactQuery) -> int:
    """The sequence number a cursor continues before; a cursor this query did not issue
    (malformed, or from another change or filter) is a 422 naming ``cursor``."""
    try:
        text = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        seq_text, fingerprint = text.split(".")
        seq = int(seq_text)
    except ValueError:
        raise ValidationError({"cursor": ["not a cursor this API issued"]}) from None
    if fingerprint != query.fingerprint():
        raise ValidationError(
            {
                "cursor": [
                    "this cursor belongs to another impact query: send the same change and "
                    "filter as the request that returned it, or leave cursor out"
                ]
            }
        )
    if seq < 1:
        raise ValidationError({"cursor": ["not a cursor this API issued"]})
    return seq


class ImpactRequestSchema(StrictSchema):
    """``POST /v1/impact``'s body. The change is checked whole before any decision is
    replayed: an unknown release, a scheduler or kubelet configuration Verdict refuses are
    422s naming the field."""

    kubernetesVersion = fields.String(load_default=None)
    schedulerConfiguration = fields.Raw(load_default=None)
    kubeletConfiguration = fields.Dict(keys=fields.String(), load_default=None)
    filter = fields.Nested(FilterSchema, load_default=dict)
    limit = fields.Integer(
        load_default=DEFAULT_LIMIT, strict=True, validate=validate.Range(min=1, max=MAX_LIMIT)
    )
    cursor = fields.String(load_default=None)

    @validates_schema
    def _change(self, data: dict, **kwargs) -> None:
        if all(data.get(name) is None for name in CHANGE_FIELDS):
            raise ValidationError(
                {
                    "kubernetesVersion": [
                        "name a change: kubernetesVersion, "
                        "schedulerConfiguration or kubeletConfiguration"
                    ]
                }
            )
        if data.get("kubernetesVersion") is not None:
            kubernetes_version(data)
        if data.get("schedulerConfiguration") is not None:
            try:
                scheduler_profiles(
                    data["schedulerConfiguration"],
                    settings_for(data.get("kubernetesVersion") or DEFAULT_KUBERNETES_VERSION),
                )
            except SchedulerConfigError as exc:
                raise ValidationError({path: [message] for path, message in exc.errors}) from None
        if data.get("kubeletConfiguration") is not None:
            try:
                ConfigSchema().load(data["kubeletConfiguration"])
            except ValidationError as exc:
                raise ValidationError({"kubeletConfiguration": exc.messages}) from None

    @post_load
    def _query(self, data: dict, **kwargs) -> ImpactQuery:
        f = data["filter"]
        query = ImpactQuery(
            kubernetes_version=data["kubernetesVersion"],
            scheduler_configuration=data["schedulerConfiguration"],
            kubelet_configuration=data["kubeletConfiguration"],
            filters=records.Filters(
                kind=f.get("kind"),
                snapshot_id=str(f["snapshotId"]) if f.get("snapshotId") else None,
                node_name=f.get("nodeName"),
                pod=f.get("pod"),
                since=f.get("since"),
                until=f.get("until"),
            ),
            limit=data["limit"],
        )
        if data["cursor"] is None:
            return query
        return replace(query, before_seq=_cursor_position(data["cursor"], query))


def count_matching(db: Database, query: ImpactQuery) -> int:
    """How many stored decisions the query's filter matches (all pages)."""
    with db.session() as session:
        return records.count(session, query.filters, list(KINDS))


def impact_page(
    db: Database,
    cache: ClusterCache,
    query: ImpactQuery,
    *,
    on_read: Callable[[ClusterCache, str], None] | None = None,
) -> dict:
    """One page of the impact answer (API 1.2): the counts of this page, the changed and
    the failed decisions, and ``nextCursor``. Raises NothingMatches on a first page that
    finds nothing."""
    with db.session() as session:
        rows = records.replay_page(
            session, query.filters, list(KINDS), query.limit + 1, query.before_seq
        )
    if not rows and query.before_seq is None:
        raise NothingMatches()
    page = Page()
    deadline = time.monotonic() + PAGE_SECONDS
    cooperative = Cooperative()
    examined = rows[: query.limit]
    for i, row in enumerate(examined):
        page.examine(db, cache, query, row, on_read)
        cooperative()
        if time.monotonic() > deadline and i + 1 < len(rows):
            return page.answer(query.cursor_after(row.seq))  # the rest on the next page
    more = len(rows) > query.limit
    return page.answer(query.cursor_after(examined[-1].seq) if more else None)


@dataclass
class Page:
    """The counts and entries of one page, as decisions are examined."""

    examined: int = 0
    changed: int = 0
    failed: int = 0
    by_kind: dict[str, dict[str, int]] = field(default_factory=dict)
    changes: list[dict] = field(default_factory=list)
    failures: list[dict] = field(default_factory=list)

    def examine(self, db, cache, query: ImpactQuery, row, on_read) -> None:
        counts = self.by_kind.setdefault(row.kind, {"examined": 0, "changed": 0, "failed": 0})
        self.examined += 1
        counts["examined"] += 1
        try:
            result, _ = decide_again(
                db, cache, row, query.change_for(KINDS[row.kind]), strict=False, on_read=on_read
            )
        except Exception as exc:
            self.failed += 1
            counts["failed"] += 1
            self.failures.append({"decisionId": row.id, "kind": row.kind, "reason": _reason(exc)})
            return
        stored = orjson.loads(row.result_text)
        # equal as values (orjson's parse, compared in C): unchanged, as the walk below
        # would find (it too takes 1, 1.0 and true alike)
        if stored == result:
            return
        found = differences(stored, result)
        if not found:  # the same values written otherwise (1 and 1.0)
            return
        if not _texts_differ(found) and strict_json(result) == row.result_text:
            return  # the same JSON text (a tuple where the stored result has a list)
        self.changed += 1
        counts["changed"] += 1
        self.changes.append(change_entry(row, stored, result, found))

    def answer(self, next_cursor: str | None) -> dict:
        return {
            "examined": self.examined,
            "unchanged": self.examined - self.changed - self.failed,
            "changed": self.changed,
            "failed": self.failed,
            "byKind": self.by_kind,
            "changes": self.changes,
            "failures": self.failures,
            "nextCursor": next_cursor,
        }


# Values whose JSON text differs whenever two of the same type differ.
_DISTINCT_TEXT = (int, str, bool)


def _texts_differ(found: list[dict]) -> bool:
    """Whether the stored and replayed JSON texts surely differ, so that the replayed result
    need not be encoded to compare them: a difference between two ints, strings or booleans
    is a place where the stored text (``stored``'s source) holds another value."""
    return any(
        type(d["stored"]) is type(d["replayed"]) and type(d["stored"]) in _DISTINCT_TEXT
        for d in found
    )


def _reason(exc: Exception) -> str:
    """Why a decision could not be replayed, in words naming the request field."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{path}: {message}" for path, message in _flat(exc.messages))
    if isinstance(exc, DecisionInputError):
        return f"{exc.path}: {exc.message}"
    if isinstance(exc, IngestError):
        return "; ".join(f"{e.path}: {e.message}" for e in exc.errors)
    if isinstance(exc, NotReplayable):
        return str(exc)
    log.exception("impact: replaying a decision failed unexpectedly")
    return f"internal error while replaying ({type(exc).__name__}); this is a bug in Verdict"


def _flat(messages, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(messages, dict):
        out = []
        for key, value in messages.items():
            path = (
                f"{prefix}[{key}]"
                if isinstance(key, int)
                else (prefix if key == "_schema" else f"{prefix}.{key}" if prefix else str(key))
            )
            out.extend(_flat(value, path))
        return out
    if isinstance(messages, list):
        return [pair for item in messages for pair in _flat(item, prefix)]
    return [(prefix or "request", str(messages))]


def change_entry(row, stored: dict, replayed: dict, differences: list[dict]) -> dict:
    entry = {
        "decisionId": row.id,
        "kind": row.kind,
        "subject": subject(row.kind, row.request),
        "summary": summary(row.kind, stored, replayed, differences),
        "differences": differences[:CHANGE_DIFFERENCES],
    }
    if len(differences) > CHANGE_DIFFERENCES:
        entry["moreDifferences"] = len(differences) - CHANGE_DIFFERENCES
    return entry


# ------------------------------------------------------------------ what a person reads


def subject(kind: str, request: dict) -> str:
    """What the decision was about: the pod (and its node), the node, or the zones."""
    pod = request.get("pod")
    metadata = pod.get("metadata") if isinstance(pod, dict) else None
    parts = []
    if isinstance(metadata, dict) and metadata.get("name"):
        parts.append(f"{metadata.get('namespace') or 'default'}/{metadata['name']}")
    node = request.get("nodeName")
    if node:
        parts.append(f"on {node}" if parts else f"node {node}")
    if not parts and kind == "node-eviction-rate":
        parts.append("every zone")
    return " ".join(parts)


def _name(ref: dict | None) -> str:
    if not ref:
        return "none"
    namespace = ref.get("namespace") or "default"
    return ref["name"] if namespace == "default" else f"{namespace}/{ref['name']}"


def _names(refs: list[dict] | None) -> str:
    return "[" + ", ".join(_name(r) for r in refs or ()) + "]"


def _arrow(what: str, stored, replayed) -> str:
    return f"{what} {stored} → {replayed}"


def _by(items: list[dict] | None, key: str) -> dict:
    return {item[key]: item for item in items or ()}


def _differing(stored: dict, replayed: dict, keys: tuple[str, ...]) -> list[str]:
    """The names (present in either) whose entries differ in one of ``keys``."""
    names = list(stored) + [n for n in replayed if n not in stored]
    return [
        n
        for n in names
        if any((stored.get(n) or {}).get(k) != (replayed.get(n) or {}).get(k) for k in keys)
    ]


def _placement(stored: dict, replayed: dict) -> list[str]:
    out = []
    if stored.get("selectedNode") != replayed.get("selectedNode"):
        out.append(
            _arrow(
                "selected node",
                stored.get("selectedNode") or "none",
                replayed.get("selectedNode") or "none",
            )
        )
    a, b = _by(stored.get("nodes"), "nodeName"), _by(replayed.get("nodes"), "nodeName")
    feasible_a = sum(1 for n in a.values() if n.get("feasible"))
    feasible_b = sum(1 for n in b.values() if n.get("feasible"))
    if feasible_a != feasible_b:
        out.append(_arrow("feasible nodes", feasible_a, feasible_b))
    reasons = _differing(a, b, ("reasons",))
    if len(reasons) == 1 and feasible_a == feasible_b:
        n = reasons[0]
        out.append(
            f"reasons on {n}: {(a.get(n) or {}).get('reasons')} → {(b.get(n) or {}).get('reasons')}"
        )
    elif reasons:
        out.append(f"reasons changed on {len(reasons)} node(s)")
    scores = _differing(a, b, ("scores", "total"))
    if scores:
        out.append(f"scores changed on {len(scores)} node(s)")
    return out


def _preemption(stored: dict, replayed: dict) -> list[str]:
    out = []
    if stored.get("eligible") != replayed.get("eligible"):
        word = {True: "eligible", False: "not eligible"}
        out.append(f"{word.get(stored.get('eligible'))} → {word.get(replayed.get('eligible'))}")
    if stored.get("nominatedNodeName") != replayed.get("nominatedNodeName"):
        out.append(
            _arrow(
                "nominated node",
                stored.get("nominatedNodeName") or "none",
                replayed.get("nominatedNodeName") or "none",
            )
        )
    if _victim_keys(stored.get("victims")) != _victim_keys(replayed.get("victims")):
        out.append(
            _arrow("victims", _names(stored.get("victims")), _names(replayed.get("victims")))
        )
    candidates = (len(stored.get("candidates") or ()), len(replayed.get("candidates") or ()))
    if candidates[0] != candidates[1]:
        out.append(_arrow("candidates", *candidates))
    statuses = _differing(stored.get("nodes") or {}, replayed.get("nodes") or {}, ("status",))
    if statuses:
        out.append(f"node status changed on {len(statuses)} node(s)")
    elif _differing(stored.get("nodes") or {}, replayed.get("nodes") or {}, ("reasons",)):
        out.append("node reasons changed")
    return out


def _victim_keys(refs: list[dict] | None) -> list[tuple]:
    return [(r.get("namespace"), r.get("name")) for r in refs or ()]


def _admission_word(result: dict) -> str:
    if result.get("admitted"):
        return "admitted"
    reason = result.get("kubeletReason")
    if not reason and result.get("reasons"):
        reason = result["reasons"][0].get("reason")
    return f"rejected ({reason})" if reason else "rejected"


def _admission(stored: dict, replayed: dict) -> list[str]:
    out = []
    a, b = _admission_word(stored), _admission_word(replayed)
    if a != b:
        out.append(f"{a} → {b}")
    victims_a = (stored.get("preemption") or {}).get("victims")
    victims_b = (replayed.get("preemption") or {}).get("victims")
    if _victim_keys(victims_a) != _victim_keys(victims_b):
        out.append(_arrow("victims", _names(victims_a), _names(victims_b)))
    if not out and stored.get("reasons") != replayed.get("reasons"):
        out.append("reasons changed")
    return out


def _eviction(stored: dict, replayed: dict) -> list[str]:
    out = []
    if _victim_keys([stored["victim"]] if stored.get("victim") else []) != _victim_keys(
        [replayed["victim"]] if replayed.get("victim") else []
    ):
        out.append(
            _arrow("eviction victim", _name(stored.get("victim")), _name(replayed.get("victim")))
        )
    if stored.get("nodeConditions") != replayed.get("nodeConditions"):
        out.append(
            _arrow(
                "conditions",
                "[" + ", ".join(stored.get("nodeConditions") or ()) + "]",
                "[" + ", ".join(replayed.get("nodeConditions") or ()) + "]",
            )
        )
    met_a = [t.get("signal") for t in stored.get("thresholdsMet") or ()]
    met_b = [t.get("signal") for t in replayed.get("thresholdsMet") or ()]
    if met_a != met_b:
        out.append(
            _arrow("thresholds met", "[" + ", ".join(met_a) + "]", "[" + ", ".join(met_b) + "]")
        )
    if not out and stored.get("ranking") != replayed.get("ranking"):
        out.append("ranking changed")
    return out


def _node_eviction_rate(stored: dict, replayed: dict) -> list[str]:
    out = []
    a, b = _by(stored.get("zones"), "key"), _by(replayed.get("zones"), "key")
    for key in list(a) + [k for k in b if k not in a]:
        za, zb = a.get(key) or {}, b.get(key) or {}
        label = (za or zb).get("zone") or key
        if za.get("evictionRate") != zb.get("evictionRate"):
            out.append(_arrow(f"zone {label} rate", za.get("evictionRate"), zb.get("evictionRate")))
        if za.get("state") != zb.get("state"):
            out.append(_arrow(f"zone {label}", za.get("state"), zb.get("state")))
    nodes = _differing(
        _by(stored.get("nodes"), "nodeName"),
        _by(replayed.get("nodes"), "nodeName"),
        ("taint", "taintedAt"),
    )
    if nodes:
        out.append(f"taints changed on {len(nodes)} node(s)")
    pods_a = [
        (p["pod"].get("namespace"), p["pod"].get("name"), p.get("evictAt"))
        for p in stored.get("pods") or ()
    ]
    pods_b = [
        (p["pod"].get("namespace"), p["pod"].get("name"), p.get("evictAt"))
        for p in replayed.get("pods") or ()
    ]
    if pods_a != pods_b:
        changed = len(set(pods_a) ^ set(pods_b))
        out.append(f"eviction times changed for {max(changed // 2, 1)} pod(s)")
    return out


SUMMARIES: dict[str, Callable[[dict, dict], list[str]]] = {
    "admission": _admission,
    "eviction": _eviction,
    "node-eviction-rate": _node_eviction_rate,
    "placement": _placement,
    "preemption": _preemption,
}
SUMMARY_PARTS = 3


def summary(kind: str, stored: dict, replayed: dict, differences: list[dict]) -> str:
    """What changed, as a person says it ("selected node n3 → n7"); for a change no reading
    covers (a message reworded), the paths that differ."""
    reading = SUMMARIES.get(kind)
    try:
        parts = reading(stored, replayed) if reading else []
    except (AttributeError, KeyError, TypeError):  # a result stored in another shape
        parts = []
    if not parts:
        paths = dict.fromkeys(_top_path(d["path"]) for d in differences)
        parts = [f"{', '.join(list(paths)[:SUMMARY_PARTS])} changed"]
    more = f"; and {len(parts) - SUMMARY_PARTS} more" if len(parts) > SUMMARY_PARTS else ""
    return "; ".join(parts[:SUMMARY_PARTS]) + more


def _top_path(path: str) -> str:
    """``result.nodes[3].reasons[0]`` → ``nodes``: the result field a difference is in."""
    rest = path.removeprefix("result.")
    return rest.split(".")[0].split("[")[0]
