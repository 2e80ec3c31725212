"""Signed checkpoints: the chain's size and head, signed with an Ed25519 key kept outside the
database, so that someone who can rewrite every record (and recompute every hash) is caught by
any checkpoint taken before the rewrite.

The signed bytes are the canonical text (``canonical_text``): six lines, each ``name value``,
UTF-8, every line ending in ``\\n``::

    verdict-checkpoint v1
    size <head sequence number>
    headId <id of the head record, empty for an empty chain>
    headHash <hash of the head record>
    time <RFC 3339, UTC, microseconds, Z>
    keyId <key id>
"""

from __future__ import annotations

import base64
import binascii
import fcntl
import hashlib
import logging
import os
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store import records
from service.store.models import GENESIS_HASH, AuditState, DecisionRow

log = logging.getLogger("verdict.checkpoints")
FIELDS = ("size", "headHash", "headId", "time", "keyId", "signature")
LOG_NAME = "checkpoints.jsonl"


class CheckpointError(Exception):
    """Bad checkpoint input or configuration: an HTTP status, a message, the field at fault."""

    def __init__(self, status: int, detail: str, path: str = "checkpoint"):
        super().__init__(detail)
        self.status, self.detail, self.path = status, detail, path


# ------------------------------------------------------------------------- keys


def key_id(public: Ed25519PublicKey) -> str:
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "ed25519:" + hashlib.sha256(raw).hexdigest()[:16]


def public_pem(public: Ed25519PublicKey) -> str:
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    ).decode()


def generate_pem() -> str:
    """A new private key as unencrypted PKCS#8 PEM (what `verdict audit keygen` writes)."""
    return (
        Ed25519PrivateKey.generate()
        .private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        .decode()
    )


def write_new_key(path: Path) -> str:
    """Write a new private key to ``path`` (mode 0600) and return its PEM; FileExistsError when
    the file is there. The file appears whole or not at all (written aside, then linked), so
    that processes starting together never read half a key."""
    pem = generate_pem()
    path.parent.mkdir(parents=True, exist_ok=True)
    aside = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
    fd = os.open(aside, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(pem)
        os.link(aside, path)
    finally:
        aside.unlink(missing_ok=True)
    return pem


def parse_private_pem(text: str, origin: str) -> Ed25519PrivateKey:
    """Strict: one unencrypted PKCS#8 PEM holding an Ed25519 key, else a ValueError naming
    ``origin`` (the setting it came from)."""
    try:
        key = serialization.load_pem_private_key(text.strip().encode() + b"\n", password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{origin}: not an unencrypted PEM private key ({exc})") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise ValueError(f"{origin}: the key is not Ed25519")
    return key


def load_signing_key(settings) -> Ed25519PrivateKey | None:
    """The key from VERDICT_CHECKPOINT_KEY_FILE or VERDICT_CHECKPOINT_KEY (not both); None
    when neither is set. A set but unusable key fails the start, it is never ignored."""
    inline, path = settings.CHECKPOINT_KEY, settings.CHECKPOINT_KEY_FILE
    if inline and path:
        raise ValueError("set VERDICT_CHECKPOINT_KEY or VERDICT_CHECKPOINT_KEY_FILE, not both")
    if path:
        try:
            text = Path(path).read_text()
        except OSError as exc:
            raise ValueError(f"VERDICT_CHECKPOINT_KEY_FILE: cannot read {path}: {exc}") from None
        return parse_private_pem(text, "VERDICT_CHECKPOINT_KEY_FILE")
    if inline:
        return parse_private_pem(inline, "VERDICT_CHECKPOINT_KEY")
    return None


# ------------------------------------------------------------------- signing


def canonical_text(cp: dict) -> bytes:
    return (
        "verdict-checkpoint v1\n"
        f"size {cp['size']}\n"
        f"headId {cp['headId']}\n"
        f"headHash {cp['headHash']}\n"
        f"time {cp['time']}\n"
        f"keyId {cp['keyId']}\n"
    ).encode()


def head(session: Session) -> tuple[int, str, str]:
    """(size, head id, head hash) as recorded in audit_state row 1."""
    state = session.get(AuditState, 1)
    if state is None or state.head_seq == 0:
        return 0, "", GENESIS_HASH
    head_id = session.scalar(select(DecisionRow.id).where(DecisionRow.seq == state.head_seq))
    return state.head_seq, head_id or "", state.head_hash


def sign(session: Session, key: Ed25519PrivateKey) -> dict:
    size, head_id, head_hash = head(session)
    cp = {
        "size": size,
        "headHash": head_hash,
        "headId": head_id,
        "time": records.iso(datetime.now(UTC)),
        "keyId": key_id(key.public_key()),
    }
    cp["signature"] = base64.b64encode(key.sign(canonical_text(cp))).decode()
    return cp


# ------------------------------------------------------------------ parsing


def parse(text: str | bytes) -> dict:
    """A checkpoint from its JSON: every field present with its type, nothing else."""
    try:
        cp = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise CheckpointError(400, f"checkpoint is not valid JSON: {exc}") from None
    if not isinstance(cp, dict):
        raise CheckpointError(422, "checkpoint must be a JSON object")
    for name in FIELDS:
        if name not in cp:
            raise CheckpointError(422, f"checkpoint.{name} is missing", f"checkpoint.{name}")
    unknown = sorted(set(cp) - set(FIELDS))
    if unknown:
        raise CheckpointError(
            422, f"unknown field checkpoint.{unknown[0]}", f"checkpoint.{unknown[0]}"
        )
    size = cp["size"]
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise CheckpointError(
            422, "checkpoint.size must be a non-negative integer", "checkpoint.size"
        )
    for name in FIELDS[1:]:
        if not isinstance(cp[name], str):
            raise CheckpointError(422, f"checkpoint.{name} must be a string", f"checkpoint.{name}")
    return cp


def check_signature(cp: dict, public: Ed25519PublicKey) -> None:
    ours = key_id(public)
    if cp["keyId"] != ours:
        raise CheckpointError(
            422,
            f"checkpoint was signed by key {cp['keyId']}, this service's key is {ours}",
            "checkpoint.keyId",
        )
    try:
        signature = base64.b64decode(cp["signature"], validate=True)
        public.verify(signature, canonical_text(cp))
    except (binascii.Error, ValueError, InvalidSignature):
        raise CheckpointError(
            422,
            "checkpoint signature does not verify with this service's key",
            "checkpoint.signature",
        ) from None


# --------------------------------------------------------------- verifying


@dataclass
class Extension:
    ok: bool
    records: int
    first_bad_id: str | None
    extends: bool


def verify_against(
    session: Session, cp: dict, public: Ed25519PublicKey, log_dir: str | None = None
) -> Extension:
    """Does today's chain extend ``cp``: is the record at ``cp.size`` the one it names, with
    the hash it names? The whole chain is walked as plain verify does. Every checkpoint kept in
    the log (signed by the same key, no larger than ``cp``) is checked on the way too, so the
    first record that differs is located to the earliest checkpoint it breaks."""
    check_signature(cp, public)
    state = session.get(AuditState, 1)
    head_seq = state.head_seq if state else 0
    anchor_seq = state.anchor_seq if state else 0
    if cp["size"] > head_seq:
        raise CheckpointError(
            409,
            f"checkpoint.size {cp['size']} is beyond the chain's head {head_seq}: records were "
            "cut off, or the checkpoint belongs to another chain",
            "checkpoint.size",
        )
    if 0 < cp["size"] < anchor_seq:
        raise CheckpointError(
            409,
            f"checkpoint.size {cp['size']} lies in the pruned prefix (records up to "
            f"{anchor_seq} were pruned): it can no longer be checked",
            "checkpoint.size",
        )
    committed = {
        c["size"]: c for c in read_log(log_dir, public) if anchor_seq < c["size"] < cp["size"]
    }
    committed[cp["size"]] = cp
    anchor_hash = state.anchor_hash if state else GENESIS_HASH
    anchor_cp = committed.get(anchor_seq)  # a checkpoint at the anchor itself
    if anchor_cp is not None and anchor_cp["headHash"] != anchor_hash:
        return Extension(False, 0, None, False)
    heads = {size: (c["headId"], c["headHash"]) for size, c in committed.items()}
    outcome = records.verify(session, heads)
    return Extension(outcome.ok, outcome.records, outcome.first_bad_id, outcome.intact)


# ------------------------------------------------------- the checkpoint log


_log_lock = threading.Lock()


def log_path(log_dir: str) -> Path:
    return Path(log_dir) / LOG_NAME


def append_log(log_dir: str | None, cp: dict) -> bool:
    """Keep ``cp`` in the log (one JSON line per checkpoint) unless the newest kept one has the
    same size. A file lock makes this safe across gunicorn workers."""
    if not log_dir:
        return False
    path = log_path(log_dir)
    path.parent.mkdir(parents=True, exist_ok=True)
    with _log_lock, open(path, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        handle.seek(0)
        last = None
        for line in handle:
            if line.strip():
                last = line
        if last is not None:
            try:
                if orjson.loads(last).get("size") == cp["size"]:
                    return False
            except orjson.JSONDecodeError:
                pass
        handle.seek(0, 2)
        handle.write(orjson.dumps(cp) + b"\n")
        handle.flush()
    return True


def read_log(log_dir: str | None, public: Ed25519PublicKey) -> list[dict]:
    """The kept checkpoints whose signature verifies with ``public``; others are skipped."""
    if not log_dir or not log_path(log_dir).exists():
        return []
    kept = []
    for line in log_path(log_dir).read_bytes().splitlines():
        try:
            cp = parse(line)
            check_signature(cp, public)
        except CheckpointError:
            continue
        kept.append(cp)
    return kept


def latest(log_dir: str | None, public: Ed25519PublicKey) -> dict | None:
    kept = read_log(log_dir, public)
    return kept[-1] if kept else None


class IntervalSigner:
    """Signs a checkpoint every ``interval`` seconds into the log (skipped while the chain's
    head has not moved). One per worker; the log's lock and size check make them agree."""

    def __init__(self, db, key: Ed25519PrivateKey, interval: int, log_dir: str) -> None:
        self.db, self.key, self.interval, self.log_dir = db, key, interval, log_dir
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self.interval <= 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="verdict-checkpoint", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def tick(self) -> dict:
        with self.db.session() as session:
            cp = sign(session, self.key)
        append_log(self.log_dir, cp)
        return cp

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.tick()
            except Exception:  # keep signing after a database hiccup
                log.exception("interval checkpoint failed")
