"""Console routes. Every page reads through the same store functions as the JSON API."""

from __future__ import annotations

import ipaddress
from datetime import datetime

import orjson
from flask import (
    Blueprint,
    current_app,
    g,
    redirect,
    render_template,
    request,
    session,
    url_for,
)
from flask_wtf.csrf import CSRFError
from marshmallow import ValidationError
from sqlalchemy import select

from service.api.errors import ApiError, flatten_messages
from service.api.metrics import count_cache
from service.api.requests import in_utc, position
from service.console import csrf, explain, setup
from service.decisions import KINDS
from service.decisions.base import DecisionInputError
from service.decisions.cluster import SnapshotReference, resolve_cluster
from service.decisions.impact import ImpactRequestSchema, impact_page, subject
from service.decisions.replay import ChangeSchema, NotReplayable, replay_record
from service.engine.summary import node_view, pod_view
from service.engine.version import DEFAULT_SETTINGS, KNOWN_VERSIONS
from service.extensions import extensions
from service.store import checkpoints, keys, records
from service.store import snapshots as store
from service.store.models import ApiKey, AuditState, SnapshotRow

bp = Blueprint(
    "console",
    __name__,
    url_prefix="/console",
    template_folder="templates",
    static_folder="static",
    static_url_path="/static",
)
bp.record_once(setup)

PAGE_SIZE = 50
OPEN_ENDPOINTS = {"console.sign_in", "console.static"}


class ConsoleError(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def _db():
    return extensions().db


def _loopback() -> bool:
    try:
        return ipaddress.ip_address(request.remote_addr or "").is_loopback
    except ValueError:
        return False


@bp.before_request
def _guard():
    """CSRF on every POST, then the session: a key that is still valid, else sign-in."""
    if request.method == "POST":
        csrf.protect()
    g.viewer = None
    if not current_app.config["VERDICT"].AUTH_ENABLED:
        if not _loopback():
            raise ConsoleError(403, "Development mode (auth off) serves loopback clients only.")
        g.viewer = {"name": "development mode", "role": "admin", "id": None}
        return None
    key_id = session.get("key_id")
    if key_id:
        with _db().session() as db_session:
            key = db_session.get(ApiKey, key_id)
            if key is not None and key.revoked_at is None:
                g.viewer = {"name": key.name or key.id, "role": key.role, "id": key.id}
        if g.viewer is None:
            session.clear()
    if g.viewer is None and request.endpoint not in OPEN_ENDPOINTS:
        return redirect(url_for("console.sign_in", next=request.full_path))
    return None


@bp.errorhandler(ConsoleError)
def _console_error(exc: ConsoleError):
    return render_template("error.html", status=exc.status, message=exc.message), exc.status


@bp.errorhandler(ApiError)
def _api_error(exc: ApiError):
    return render_template("error.html", status=exc.status, message=exc.detail), exc.status


@bp.errorhandler(CSRFError)
def _csrf_error(exc: CSRFError):
    message = f"This form has expired or did not come from this console ({exc.description}). "
    message += "Reload the page and try again."
    return render_template("error.html", status=400, message=message), 400


@bp.after_request
def _headers(response):
    response.headers.setdefault(
        "Content-Security-Policy",
        "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        "script-src 'none'; frame-ancestors 'self'; form-action 'self'",
    )
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if request.endpoint != "console.static":
        response.headers["Cache-Control"] = "no-store"
    return response


# ---------------------------------------------------------------- sign-in


def _safe_next(target: str | None) -> str:
    if target and target.startswith("/console") and not target.startswith("//"):
        return target
    return url_for("console.decisions")


@bp.route("/sign-in", methods=["GET", "POST"])
def sign_in():
    error = None
    if request.method == "POST":
        secret = (request.form.get("api_key") or "").strip()
        with _db().session() as db_session:
            key = keys.find(db_session, secret) if secret else None
            found = (key.id, key.role) if key is not None else None
        if found is None:
            error = "That API key is not valid or has been revoked."
        else:
            session.clear()
            session.permanent = True
            session["key_id"], session["role"] = found
            return redirect(_safe_next(request.form.get("next")))
    status = 401 if error else 200
    return render_template("sign_in.html", error=error, next=request.values.get("next")), status


@bp.post("/sign-out")
def sign_out():
    session.clear()
    return redirect(url_for("console.sign_in"))


@bp.get("/")
def index():
    return redirect(url_for("console.decisions"))


# ---------------------------------------------------------------- decisions


FILTERS = ("kind", "snapshotId", "nodeName", "pod", "keyId", "since", "until")


def _time_filter(name: str) -> datetime | None:
    text = (request.args.get(name) or "").strip()
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ConsoleError(400, f"{name}: not a time (e.g. 2026-11-20T10:00:00Z)") from None
    if moment.tzinfo is not None and in_utc(moment) is None:
        raise ConsoleError(400, f"{name}: out of range (its instant in UTC is past the year 9999)")
    return records.as_utc(moment)


def _filters() -> records.Filters:
    pod = (request.args.get("pod") or "").strip() or None
    if pod is not None and pod.count("/") != 1:
        raise ConsoleError(400, "pod: expected namespace/name")
    kind = request.args.get("kind") or None
    if kind is not None and kind not in KINDS and kind != records.PRUNE_KIND:
        raise ConsoleError(400, f"kind: unknown kind {kind!r}")
    return records.Filters(
        kind=kind,
        snapshot_id=(request.args.get("snapshotId") or "").strip() or None,
        node_name=(request.args.get("nodeName") or "").strip() or None,
        pod=pod,
        key_id=(request.args.get("keyId") or "").strip() or None,
        since=_time_filter("since"),
        until=_time_filter("until"),
    )


@bp.get("/decisions")
def decisions():
    filters = _filters()
    before = request.args.get("before")
    seq = position(before) if before else None
    if before is not None and seq is None:
        raise ConsoleError(400, "before: not a page this console made")
    with _db().session() as db_session:
        rows = records.page(db_session, filters, PAGE_SIZE + 1, seq)
        named = keys.callers(db_session, [r.key_id for r in rows[:PAGE_SIZE]])
    items = [
        {
            "id": r.id,
            "kind": r.kind,
            "createdAt": records.iso(r.created_at),
            "snapshotId": r.snapshot_id,
            "keyId": r.key_id,
            "caller": _caller(named.get(r.key_id), r.key_id),
            "summary": explain.summary(r.kind, r.result),
            "subject": subject(r.kind, r.request or {}),
        }
        for r in rows[:PAGE_SIZE]
    ]
    args = {k: request.args[k] for k in FILTERS if request.args.get(k)}
    older = (
        url_for("console.decisions", **args, before=rows[PAGE_SIZE - 1].seq)
        if len(rows) > PAGE_SIZE
        else None
    )
    return render_template(
        "decisions.html",
        items=items,
        args=args,
        kinds=[*KINDS, records.PRUNE_KIND],
        older=older,
        first_page=before is None,
    )


def _caller(key: ApiKey | None, key_id: str | None) -> str:
    """Who made a record, as a person reads it: the key's name and role (its id when the key
    has no name); "development mode" for records made with auth off."""
    if key_id is None:
        return "development mode (no key)"
    if key is None:
        return f"key {key_id} (deleted)"
    revoked = ", revoked" if key.revoked_at else ""
    return f"{key.name or key.id} ({key.role}{revoked})"


def _record(decision_id: str):
    with _db().session() as db_session:
        row = records.get(db_session, decision_id)
        if row is None:
            raise ConsoleError(404, f"There is no decision {decision_id}.")
        caller = _caller(keys.callers(db_session, [row.key_id]).get(row.key_id), row.key_id)
    return row, caller


def _pretty(value) -> str:
    return orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS).decode()


@bp.get("/decisions/<decision_id>")
def decision(decision_id: str):
    row, caller = _record(decision_id)
    result, req = row.result or {}, row.request or {}
    values = {
        "record": records.to_json(row),
        "caller": caller,
        "result": result,
        "req": req,
        "kubernetes_version": req.get("kubernetesVersion") or result.get("kubernetesVersion"),
        "request_json": _pretty({k: v for k, v in req.items() if k != "snapshot"}),
        "pod_name": explain.pod_name,
        "zone_label": explain.zone_label,
        "replayable": row.kind in KINDS and row.snapshot_id is not None,
        "versions": KNOWN_VERSIONS,
    }
    try:
        return render_template(
            "decision.html", extra=explain.context(row.kind, result, req), known=True, **values
        )
    except (AttributeError, TypeError, KeyError, ValueError):
        # A result shape this console does not know (another engine version): shown as stored.
        current_app.logger.warning("decision %s: result shape not understood", row.id)
        return render_template(
            "decision.html", extra={}, known=False, result_json=_pretty(result), **values
        )


@bp.route("/decisions/<decision_id>/replay", methods=["GET", "POST"])
def replay(decision_id: str):
    """The side-by-side replay: as stored (the decision page's button), or under another
    release (``?kubernetesVersion=``, the impact page's links; it changes nothing)."""
    with _db().session() as db_session:
        row = records.get(db_session, decision_id)
        if row is None:
            raise ConsoleError(404, f"There is no decision {decision_id}.")
    version = request.values.get("kubernetesVersion") or None
    try:
        change = ChangeSchema().load({"kubernetesVersion": version})
        outcome = replay_record(_db(), extensions().cache, row, on_read=count_cache, change=change)
    except NotReplayable as exc:
        raise ApiError(409, str(exc)) from None
    except (ValidationError, DecisionInputError) as exc:
        raise ConsoleError(422, f"This decision cannot be replayed so: {_reason(exc)}") from None
    return render_template(
        "replay.html",
        record=records.to_json(row),
        outcome=outcome,
        stored_json=_pretty(outcome["stored"]),
        replayed_json=_pretty(outcome["replayed"]),
        show=_show,
        engine=(
            f"Under Kubernetes {version}, the running engine"
            if "kubernetesVersion" in outcome["changed"]
            else "The running engine"
        ),
    )


def _show(value) -> str:
    if value is None:
        return "(absent)"
    return value if isinstance(value, str) else orjson.dumps(value).decode()


# ---------------------------------------------------------------- impact


IMPACT_PAGE_SIZE = 200
IMPACT_FILTERS = ("kind", "snapshotId", "nodeName", "pod", "since", "until")


@bp.get("/impact")
def impact():
    """What a release would decide differently over the stored history (POST /v1/impact as a
    page): the counts, and each change linked to its decision and its side-by-side replay."""
    args = {k: request.args[k].strip() for k in ("to", *IMPACT_FILTERS) if request.args.get(k)}
    values = {"args": args, "versions": KNOWN_VERSIONS, "kinds": list(KINDS), "answer": None}
    if "to" not in args:
        return render_template("impact.html", **values)
    body = {
        "kubernetesVersion": args["to"],
        "filter": {k: args[k] for k in IMPACT_FILTERS if k in args},
        "limit": IMPACT_PAGE_SIZE,
    }
    if request.args.get("cursor"):
        body["cursor"] = request.args["cursor"]
    try:
        query = ImpactRequestSchema().load(body)
        answer = impact_page(_db(), extensions().cache, query, on_read=count_cache)
    except (ValidationError, DecisionInputError) as exc:
        return render_template("impact.html", error=_reason(exc), **values), 422
    more = (
        url_for("console.impact", **args, cursor=answer["nextCursor"])
        if answer["nextCursor"]
        else None
    )
    values.update(answer=answer, more=more, first_page="cursor" not in body)
    return render_template("impact.html", **values)


def _reason(exc: Exception) -> str:
    if isinstance(exc, DecisionInputError):
        return f"{exc.path}: {exc.message}"
    return "; ".join(f"{e['path']}: {e['message']}" for e in flatten_messages(exc.messages))


# ---------------------------------------------------------------- snapshots


@bp.get("/snapshots")
def snapshots():
    query = select(*store.summary_columns()).order_by(
        SnapshotRow.created_at.desc(), SnapshotRow.id.desc()
    )
    with _db().session() as db_session:
        rows = db_session.execute(query.limit(200)).all()
    return render_template("snapshots.html", rows=rows, iso=records.iso)


def _cluster(snapshot_id: str):
    with _db().session() as db_session:
        row = store.get_summary(db_session, snapshot_id)
        if row is None:
            raise ConsoleError(404, f"There is no snapshot {snapshot_id}.")
    named = resolve_cluster(
        SnapshotReference(snapshot_id=row.id),
        db=_db(),
        cache=extensions().cache,
    )
    return row, named.cluster


@bp.get("/snapshots/<snapshot_id>")
def snapshot(snapshot_id: str):
    row, cluster = _cluster(snapshot_id)
    nodes = [node_view(cluster, n, settings=DEFAULT_SETTINGS) for n in cluster.nodes]
    return render_template("snapshot.html", row=row, nodes=nodes, iso=records.iso)


@bp.get("/snapshots/<snapshot_id>/nodes/<node_name>")
def snapshot_node(snapshot_id: str, node_name: str):
    row, cluster = _cluster(snapshot_id)
    node = cluster.node(node_name)
    if node is None:
        raise ConsoleError(404, f"Snapshot {snapshot_id} has no node {node_name}.")
    pods = [pod_view(p, node, settings=DEFAULT_SETTINGS) for p in cluster.pods_on(node_name)]
    return render_template(
        "node.html", row=row, node=node_view(cluster, node, settings=DEFAULT_SETTINGS), pods=pods
    )


# ---------------------------------------------------------------- the chain


def _chain_state() -> dict:
    key = extensions().checkpoint_key
    with _db().session() as db_session:
        state = db_session.get(AuditState, 1)
        size, head_id, head_hash = checkpoints.head(db_session)
    public = key.public_key() if key is not None else None
    latest = (
        checkpoints.latest(current_app.config["VERDICT"].CHECKPOINT_DIR, public) if public else None
    )
    return {
        "size": size,
        "headId": head_id,
        "headHash": head_hash,
        "anchorSeq": state.anchor_seq if state else 0,
        "keyId": checkpoints.key_id(public) if public else None,
        "latest": _pretty(latest) if latest else None,
    }


@bp.get("/chain")
def chain():
    return render_template("chain.html", state=_chain_state(), outcome=None, signed=None)


@bp.post("/chain/verify")
def chain_verify():
    from service.api.audit import verify_with

    text = (request.form.get("checkpoint") or "").strip()
    upload = request.files.get("checkpoint_file")
    if upload is not None and upload.filename:
        text = upload.read(1 << 20).decode("utf-8", "replace").strip()
    try:
        outcome = verify_with(text or None)
    except ApiError as exc:
        return (
            render_template(
                "chain.html",
                state=_chain_state(),
                outcome=None,
                signed=None,
                error=exc.detail,
                pasted=text,
            ),
            exc.status,
        )
    return render_template(
        "chain.html", state=_chain_state(), outcome=outcome, signed=None, pasted=text
    )


@bp.post("/chain/checkpoint")
def chain_checkpoint():
    from service.api.audit import sign_now

    try:
        signed = _pretty(sign_now())
    except ApiError as exc:  # the chain contradicts the checkpoint log
        page = render_template(
            "chain.html",
            state=_chain_state(),
            outcome=None,
            signed=None,
            error=exc.detail,
            refused=True,
        )
        return page, exc.status
    return render_template("chain.html", state=_chain_state(), outcome=None, signed=signed)
