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
import threading
from collections.abc import Iterator
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


def sign(session: Session, key: Ed25519PrivateKey, log_dir: str | None) -> dict:
    """A checkpoint of the chain's head, once the chain is seen to extend the newest
    checkpoint in the log (``refuse_contradiction``): the service never vouches for a chain
    that its own log says was rewritten."""
    refuse_contradiction(session, key.public_key(), log_dir)
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


def refuse_contradiction(session: Session, public: Ed25519PublicKey, log_dir: str | None):
    """Raise a 409 CheckpointError (and log it) unless today's chain extends the newest
    checkpoint kept in the log: the record at its size is the one it names, with the hash it
    names, and every record after it checks and links up to the recorded head.

    Only the records since that checkpoint are walked: each kept checkpoint was signed after
    the same check against the one before it. A checkpoint inside a pruned prefix can no
    longer be checked and is passed over."""
    newest = latest(log_dir, public)
    if newest is None or newest["size"] == 0:
        return
    state = session.get(AuditState, 1)
    head_seq = state.head_seq if state else 0
    anchor_seq = state.anchor_seq if state else 0
    size = newest["size"]
    if size < anchor_seq:
        return
    if size > head_seq:
        problem = f"the chain's head {head_seq} is behind it: records were cut off"
    elif size == anchor_seq:
        ok = state.anchor_hash == newest["headHash"]
        problem = None if ok else "the prune anchor's hash differs from its head hash"
    else:
        expected = {size: (newest["headId"], newest["headHash"])}
        outcome = records.verify(session, expected, start_after=size - 1)
        problem = None if outcome.ok else _what_differs(outcome, size)
    if problem is None:
        return
    detail = (
        f"refusing to sign: the chain contradicts the checkpoint log's newest checkpoint "
        f"(size {size}, signed {newest['time']}): {problem}. Run `verdict audit verify`."
    )
    log.error("%s", detail)
    raise CheckpointError(409, detail, "chain")


def _what_differs(outcome, size: int) -> str:
    if outcome.first_bad_id is None:
        return "records were cut off the end"
    if outcome.checked_through < size:
        return f"the record at its size is not the one it signed (found {outcome.first_bad_id})"
    return f"record {outcome.first_bad_id} after it does not check"


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
    extends: bool | None  # None: no checkpoint was given
    checked: int  # checkpoints checked (the given one and the log's)
    broken: dict | None  # the earliest of them that the chain no longer extends

    def to_json(self) -> dict:
        """The answer of `GET /v1/audit/verify` and `verdict audit verify`."""
        out = {"ok": self.ok, "records": self.records, "firstBadId": self.first_bad_id}
        if self.extends is not None:
            out["extendsCheckpoint"] = self.extends
        out["checkpointsChecked"] = self.checked
        out["brokenCheckpoint"] = self.broken
        return out


def verify_against(
    session: Session, cp: dict | None, public: Ed25519PublicKey, log_dir: str | None = None
) -> Extension:
    """Walk the whole chain as plain verify does, checking on the way every checkpoint kept in
    the log (signed by ``public``), and ``cp`` if given: does today's chain extend each, is
    the record at its size the one it names, with the hash it names? The first record that
    differs is located to the earliest checkpoint it breaks, which is reported.

    A given checkpoint beyond the head, or inside the pruned prefix, is a 409; kept ones
    there are reported broken (beyond the head) or passed over (pruned)."""
    state = session.get(AuditState, 1)
    head_seq = state.head_seq if state else 0
    anchor_seq = state.anchor_seq if state else 0
    anchor_hash = state.anchor_hash if state else GENESIS_HASH
    if cp is not None:
        _check_given(cp, public, head_seq, anchor_seq)
    committed = [c for c in read_log(log_dir, public) if c["size"] >= anchor_seq]
    if cp is not None:
        committed.append(cp)
    committed.sort(key=lambda c: c["size"])  # stable: a size's kept ones before the given
    heads: dict[int, tuple[str, str]] = {}
    for c in committed:
        if c["size"] > anchor_seq:
            heads.setdefault(c["size"], (c["headId"], c["headHash"]))
    outcome = records.verify(session, heads)

    def extended(c: dict) -> bool:
        if c["size"] == 0:
            return True  # the empty chain: every chain extends it
        if c["size"] == anchor_seq:
            return c["headHash"] == anchor_hash
        return c["size"] <= outcome.checked_through and heads[c["size"]] == (
            c["headId"],
            c["headHash"],
        )

    broken = next((c for c in committed if not extended(c)), None)
    return Extension(
        ok=outcome.ok and broken is None,
        records=outcome.records,
        first_bad_id=outcome.first_bad_id,
        extends=None if cp is None else extended(cp),
        checked=len(committed),
        broken=broken,
    )


def _check_given(cp: dict, public: Ed25519PublicKey, head_seq: int, anchor_seq: int) -> None:
    check_signature(cp, public)
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
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
    """The newest kept checkpoint that verifies, read from the log's end (every signing
    looks at it; the log grows by one line per interval)."""
    if not log_dir or not log_path(log_dir).exists():
        return None
    for line in _lines_backwards(log_path(log_dir)):
        try:
            cp = parse(line)
            check_signature(cp, public)
        except CheckpointError:
            continue
        return cp
    return None


def _lines_backwards(path: Path, block: int = 1 << 16) -> Iterator[bytes]:
    with open(path, "rb") as handle:
        position = handle.seek(0, 2)
        tail = b""
        while position > 0:
            step = min(block, position)
            position -= step
            handle.seek(position)
            lines = (handle.read(step) + tail).split(b"\n")
            tail = lines.pop(0)  # may continue in the block before
            yield from (line for line in reversed(lines) if line.strip())
        if tail.strip():
            yield tail


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
        return sign_into_log(self.db, self.key, self.log_dir)

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.tick()
            except CheckpointError:
                pass  # a chain that contradicts the log: refuse_contradiction logged it
            except Exception:  # keep signing after a database hiccup
                log.exception("interval checkpoint failed")


def sign_into_log(db, key: Ed25519PrivateKey, log_dir: str) -> dict:
    """Sign the head and keep the checkpoint in the log: what the interval signer and
    `verdict audit checkpoint` do (a reader's `GET /v1/audit/checkpoint` keeps nothing)."""
    with db.session() as session:
        cp = sign(session, key, log_dir)
    append_log(log_dir, cp)
    return cp
