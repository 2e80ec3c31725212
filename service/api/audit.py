"""Signed checkpoints over HTTP: sign one (kept nowhere), the public key, verify the chain
against the checkpoint log and a given checkpoint."""

from __future__ import annotations

from flask import Blueprint, Flask, current_app, request

from service.api.errors import ApiError
from service.api.responses import json_response
from service.store import checkpoints, records

bp = Blueprint("audit", __name__)


def register(app: Flask) -> None:
    """Load the signing key (a bad key stops the start) and prepare the interval signer, which
    `verdict serve` starts in each worker."""
    settings = app.config["VERDICT"]
    if settings.CHECKPOINT_INTERVAL < 0:
        raise ValueError("VERDICT_CHECKPOINT_INTERVAL: must be 0 (off) or a number of seconds")
    key = checkpoints.load_signing_key(settings)
    app.extensions["verdict.checkpoint_key"] = key
    if key is not None:
        app.extensions["verdict.checkpoint_signer"] = checkpoints.IntervalSigner(
            app.extensions["verdict.db"], key, settings.CHECKPOINT_INTERVAL, settings.CHECKPOINT_DIR
        )
    app.register_blueprint(bp)


def signing_key():
    key = current_app.extensions.get("verdict.checkpoint_key")
    if key is None:
        raise ApiError(
            503,
            "no checkpoint key is configured (VERDICT_CHECKPOINT_KEY_FILE or "
            "VERDICT_CHECKPOINT_KEY; `verdict audit keygen` makes one)",
        )
    return key


def log_dir() -> str:
    return current_app.config["VERDICT"].CHECKPOINT_DIR


def sign_now() -> dict:
    """Sign the current head, unless the chain contradicts the checkpoint log (409). Nothing
    is written: the log is kept by the interval signer and `verdict audit checkpoint`."""
    key = signing_key()
    try:
        with current_app.extensions["verdict.db"].session() as session:
            return checkpoints.sign(session, key, log_dir())
    except checkpoints.CheckpointError as exc:
        raise _problem(exc) from None


def _problem(exc: checkpoints.CheckpointError) -> ApiError:
    return ApiError(exc.status, exc.detail, [{"path": exc.path, "message": exc.detail}])


def verify_with(checkpoint_text: str | None) -> dict:
    """Verify the chain against every checkpoint in the log, and the given one if any
    (raises ApiError on bad input). Without a key there is no log to check: plain verify."""
    db = current_app.extensions["verdict.db"]
    key = current_app.extensions.get("verdict.checkpoint_key")
    if checkpoint_text is None and key is None:
        with db.session() as session:
            outcome = records.verify(session)
        return {"ok": outcome.ok, "records": outcome.records, "firstBadId": outcome.first_bad_id}
    public = signing_key().public_key()
    try:
        cp = None if checkpoint_text is None else checkpoints.parse(checkpoint_text)
        with db.session() as session:
            outcome = checkpoints.verify_against(session, cp, public, log_dir())
    except checkpoints.CheckpointError as exc:
        raise _problem(exc) from None
    return outcome.to_json()


@bp.get("/v1/audit/checkpoint")
def checkpoint():
    return json_response(sign_now())


@bp.get("/v1/audit/public-key")
def public_key():
    public = signing_key().public_key()
    return json_response(
        {"keyId": checkpoints.key_id(public), "publicKey": checkpoints.public_pem(public)}
    )


@bp.get("/v1/audit/verify")
def verify():
    # An empty ?checkpoint= is no checkpoint, as every other empty query parameter.
    return json_response(verify_with(request.args.get("checkpoint") or None))
