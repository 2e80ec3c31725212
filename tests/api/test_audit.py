"""Signed checkpoints over HTTP (api/audit.py): a rewrite of records (hashes and head
recomputed) is caught by any earlier checkpoint, given or kept in the service's log, and the
service refuses to sign over it; reading a checkpoint keeps nothing; bad checkpoints are 4xx
naming the problem."""

from __future__ import annotations

import base64
import urllib.parse
from datetime import UTC, datetime

import orjson
import pytest
from sqlalchemy import update

from service.app import create_app
from service.store import checkpoints, keys, records
from service.store.models import AuditState, DecisionRow
from tests.conftest import Api
from tests.store.helpers import append_record


@pytest.fixture
def pem() -> str:
    return checkpoints.generate_pem()


@pytest.fixture
def signed(app, pem, tmp_path, database_url):
    """The app with a checkpoint key (inline) and a checkpoint log in tmp_path."""
    application = create_app(
        {
            "DATABASE_URL": database_url,
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path),
            "LOG_LEVEL": "WARNING",
            "CHECKPOINT_KEY": pem,
        }
    )
    yield application
    application.extensions["verdict.db"].dispose()


@pytest.fixture
def audit_api(signed) -> Api:
    secrets = {}
    with signed.extensions["verdict.db"].session(write=True) as session:
        for role in keys.ROLES:
            secrets[role] = keys.create(session, role, f"cp-{role}")[1]
    return Api(signed.test_client(), secrets)


def _append(app, n: int, start: int = 0):
    with app.extensions["verdict.db"].session(write=True) as session:
        return [append_record(session, i).id for i in range(start, start + n)]


def _keep(app) -> dict:
    """A checkpoint signed into the service's log, as the interval signer does."""
    return app.extensions["verdict.checkpoint_signer"].tick()


def _logged(app) -> list[dict]:
    public = app.extensions["verdict.checkpoint_key"].public_key()
    return checkpoints.read_log(app.config["VERDICT"].CHECKPOINT_DIR, public)


def _verify(api, cp, **kw):
    query = urllib.parse.quote(cp if isinstance(cp, str) else orjson.dumps(cp).decode())
    return api.get(f"/v1/audit/verify?checkpoint={query}", role="read", **kw)


def _rewrite_everything(app) -> None:
    _rewrite_tail(app, 1)


def _rewrite_tail(app, first: int) -> None:
    """What a database administrator could do: change every record from ``first`` on,
    recompute every hash and the recorded head."""
    with app.extensions["verdict.db"].session(write=True) as session:
        prev = records.GENESIS_HASH
        for row in session.query(DecisionRow).order_by(DecisionRow.seq):
            if row.seq < first:
                prev = row.record_hash
                continue
            row.result = {"admitted": False}
            row.prev_hash = prev
            row.record_hash = records.content_hash(prev, row)
            prev = row.record_hash
        state = session.get(AuditState, 1)
        state.head_hash, state.head_prev_hash = prev, row.prev_hash


def test_checkpoint_is_signed_over_the_canonical_text(signed, audit_api, pem):
    ids = _append(signed, 3)
    cp = audit_api.get("/v1/audit/checkpoint", role="read").json
    assert cp["size"] == 3 and cp["headId"] == ids[-1]
    public = checkpoints.parse_private_pem(pem, "test").public_key()
    public.verify(base64.b64decode(cp["signature"]), checkpoints.canonical_text(cp))
    key = audit_api.get("/v1/audit/public-key", role="read").json
    assert key["keyId"] == cp["keyId"] == checkpoints.key_id(public)
    assert key["publicKey"].startswith("-----BEGIN PUBLIC KEY-----")
    assert _verify(audit_api, cp).json == {
        "ok": True,
        "records": 3,
        "firstBadId": None,
        "extendsCheckpoint": True,
        "checkpointsChecked": 1,
        "brokenCheckpoint": None,
    }
    _append(signed, 2, start=3)  # a longer chain still extends it
    assert _verify(audit_api, cp).json["extendsCheckpoint"] is True


def test_rewriting_every_record_is_caught_by_an_earlier_checkpoint(signed, audit_api):
    first = _append(signed, 1)
    _keep(signed)  # kept in the log at size 1
    _append(signed, 4, start=1)
    later = audit_api.get("/v1/audit/checkpoint", role="read").json  # size 5, an auditor's
    _append(signed, 2, start=5)
    _rewrite_everything(signed)
    against = _verify(audit_api, later).json
    assert against["extendsCheckpoint"] is False and against["ok"] is False
    assert against["firstBadId"] == first[0]  # the earliest checkpoint it breaks is at 1
    assert against["brokenCheckpoint"]["size"] == 1 and against["checkpointsChecked"] == 2


def test_plain_verify_checks_every_checkpoint_in_the_log(signed, audit_api):
    """Issue 24: the administrator rewrites the tail and its head; plain verify says which
    checkpoint of the service's own log the chain no longer extends."""
    ids = _append(signed, 2)
    early = _keep(signed)  # size 2
    ids += _append(signed, 3, start=2)
    late = _keep(signed)  # size 5
    ids += _append(signed, 2, start=5)
    assert audit_api.get("/v1/audit/verify", role="read").json == {
        "ok": True,
        "records": 7,
        "firstBadId": None,
        "checkpointsChecked": 2,
        "brokenCheckpoint": None,
    }
    _rewrite_tail(signed, 4)  # between the two checkpoints
    plain = audit_api.get("/v1/audit/verify", role="read").json
    assert plain["ok"] is False and plain["brokenCheckpoint"] == late
    assert plain["firstBadId"] == ids[4]  # the record at the broken checkpoint's size
    _rewrite_tail(signed, 2)  # now the earlier one too
    plain = audit_api.get("/v1/audit/verify", role="read").json
    assert plain["brokenCheckpoint"] == early and plain["firstBadId"] == ids[1]


def test_records_cut_off_behind_a_kept_checkpoint_fail_plain_verify(signed, audit_api):
    _append(signed, 2)
    cp = _keep(signed)
    _append(signed, 2, start=2)
    with signed.extensions["verdict.db"].session(write=True) as session:
        session.query(DecisionRow).filter(DecisionRow.seq >= 2).delete()
        row = session.get(DecisionRow, 1)
        session.execute(update(AuditState).values(head_seq=1, head_hash=row.record_hash))
    plain = audit_api.get("/v1/audit/verify", role="read").json
    assert plain == {
        "ok": False,
        "records": 1,
        "firstBadId": None,
        "checkpointsChecked": 1,
        "brokenCheckpoint": cp,
    }
    response = audit_api.get("/v1/audit/checkpoint", role="read")
    assert response.status_code == 409 and "records were cut off" in response.json["detail"]


def test_the_service_refuses_to_sign_over_a_chain_its_log_contradicts(
    signed, audit_api, caplog, database_url, monkeypatch, tmp_path, capsys, pem
):
    _append(signed, 3)
    _keep(signed)
    _append(signed, 2, start=3)
    _rewrite_tail(signed, 2)
    response = audit_api.get("/v1/audit/checkpoint", role="read")
    assert response.status_code == 409
    assert response.headers["Content-Type"] == "application/problem+json"
    assert "refusing to sign" in response.json["detail"]
    assert "size 3" in response.json["detail"]
    assert any("refusing to sign" in r.getMessage() for r in caplog.records)
    with pytest.raises(checkpoints.CheckpointError):
        _keep(signed)  # the interval signer refuses too, and keeps nothing
    assert [c["size"] for c in _logged(signed)] == [3]
    from service.cli import main

    monkeypatch.setenv("VERDICT_DATABASE_URL", database_url)
    monkeypatch.setenv("VERDICT_CHECKPOINT_KEY", pem)
    monkeypatch.setenv("VERDICT_CHECKPOINT_DIR", signed.config["VERDICT"].CHECKPOINT_DIR)
    assert main(["audit", "checkpoint"]) == 1
    assert main(["audit", "verify"]) == 1
    out = capsys.readouterr()
    assert "refusing to sign" in out.err and '"brokenCheckpoint"' in out.out


def test_reading_a_checkpoint_writes_nothing(signed, audit_api):
    _append(signed, 2)
    for role in ("read", "admin"):
        assert audit_api.get("/v1/audit/checkpoint", role=role).status_code == 200
    assert _logged(signed) == []
    assert not checkpoints.log_path(signed.config["VERDICT"].CHECKPOINT_DIR).exists()


def test_without_the_log_the_checkpoints_own_head_is_named(signed, audit_api, tmp_path):
    ids = _append(signed, 3)
    cp = audit_api.get("/v1/audit/checkpoint", role="read").json
    _rewrite_everything(signed)
    assert _verify(audit_api, cp).json["firstBadId"] == ids[-1]


def test_bad_checkpoints_are_4xx_naming_the_problem(signed, audit_api):
    _append(signed, 2)
    cp = audit_api.get("/v1/audit/checkpoint", role="read").json
    forged = dict(cp, headHash="0" * 64)
    response = _verify(audit_api, forged)
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "checkpoint.signature"
    other_key = checkpoints.parse_private_pem(checkpoints.generate_pem(), "t")
    foreign = dict(cp, keyId=checkpoints.key_id(other_key.public_key()))
    foreign["signature"] = base64.b64encode(
        other_key.sign(checkpoints.canonical_text(foreign))
    ).decode()
    response = _verify(audit_api, foreign)
    assert response.status_code == 422 and "signed by key" in response.json["detail"]
    assert _verify(audit_api, "{not json").status_code == 400
    response = _verify(audit_api, {k: v for k, v in cp.items() if k != "size"})
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "checkpoint.size"
    # A checkpoint beyond the chain: records cut off the end (or another chain).
    _append(signed, 1, start=2)
    beyond = audit_api.get("/v1/audit/checkpoint", role="read").json
    with signed.extensions["verdict.db"].session(write=True) as session:
        session.query(DecisionRow).filter(DecisionRow.seq == 3).delete()
        session.execute(update(AuditState).values(head_seq=2, head_hash=cp["headHash"]))
    response = _verify(audit_api, beyond)
    assert response.status_code == 409 and "beyond the chain" in response.json["detail"]


def test_no_key_configured_is_503(api):
    assert api.get("/v1/audit/checkpoint", role="read").status_code == 503


def _backdate(app) -> None:
    """Make every record look written in 2020, rebuilding the hashes as if written then
    (records already backdated keep their hash)."""
    with app.extensions["verdict.db"].session(write=True) as session:
        session.execute(update(DecisionRow).values(created_at=datetime(2020, 1, 1, tzinfo=UTC)))
    _rewrite_hashes_only(app)


def test_a_checkpoint_taken_before_a_prune(signed, audit_api):
    _append(signed, 1)
    _backdate(signed)
    in_prefix = audit_api.get("/v1/audit/checkpoint", role="read").json  # size 1
    _append(signed, 1, start=1)
    _backdate(signed)
    at_anchor = audit_api.get("/v1/audit/checkpoint", role="read").json  # size 2
    _append(signed, 2, start=2)
    beyond = audit_api.get("/v1/audit/checkpoint", role="read").json  # size 4
    with signed.extensions["verdict.db"].session(write=True) as session:
        records.prune(session, datetime(2021, 1, 1, tzinfo=UTC), "test")  # records 1 and 2
    assert _verify(audit_api, beyond).json == {
        "ok": True,
        "records": 3,  # two kept plus the prune record
        "firstBadId": None,
        "extendsCheckpoint": True,
        "checkpointsChecked": 1,
        "brokenCheckpoint": None,
    }
    assert _verify(audit_api, at_anchor).json["extendsCheckpoint"] is True
    response = _verify(audit_api, in_prefix)
    assert response.status_code == 409 and "pruned" in response.json["detail"]


def _rewrite_hashes_only(app) -> None:
    with app.extensions["verdict.db"].session(write=True) as session:
        prev = records.GENESIS_HASH
        for row in session.query(DecisionRow).order_by(DecisionRow.seq):
            row.prev_hash = prev
            row.record_hash = records.content_hash(prev, row)
            prev = row.record_hash
        state = session.get(AuditState, 1)
        state.head_hash, state.head_prev_hash = prev, row.prev_hash


def test_a_bad_key_setting_stops_the_start(database_url, tmp_path):
    with pytest.raises(ValueError, match="VERDICT_CHECKPOINT_KEY"):
        create_app(
            {"DATABASE_URL": database_url, "INSTANCE_PATH": str(tmp_path), "CHECKPOINT_KEY": "x"}
        )
    path = tmp_path / "missing.pem"
    with pytest.raises(ValueError, match="cannot read"):
        create_app(
            {
                "DATABASE_URL": database_url,
                "INSTANCE_PATH": str(tmp_path),
                "CHECKPOINT_KEY_FILE": str(path),
            }
        )


def test_interval_signer_keeps_one_checkpoint_per_head(signed):
    signer = signed.extensions["verdict.checkpoint_signer"]
    _append(signed, 1)
    signer.tick()
    signer.tick()  # the head has not moved: not kept twice
    _append(signed, 1, start=1)
    signer.tick()
    public = signed.extensions["verdict.checkpoint_key"].public_key()
    kept = checkpoints.read_log(signer.log_dir, public)
    assert [c["size"] for c in kept] == [1, 2]
