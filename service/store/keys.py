"""API keys: random secrets shown once, stored as SHA-256 hashes."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from datetime import UTC, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from service.store.models import ApiKey

ROLES = ("read", "decide", "admin")
# What each role may do: admin ⊃ decide ⊃ read.
GRANTS = {"read": {"read"}, "decide": {"read", "decide"}, "admin": {"read", "decide", "admin"}}
KEY_PREFIX = "vk_"


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode()).hexdigest()


def create(session: Session, role: str, name: str = "") -> tuple[ApiKey, str]:
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    secret = KEY_PREFIX + secrets.token_urlsafe(32)
    key = ApiKey(
        id=str(uuid.uuid4()),
        name=name,
        role=role,
        key_hash=hash_secret(secret),
        created_at=datetime.now(UTC),
    )
    session.add(key)
    session.flush()
    return key, secret


def find(session: Session, secret: str) -> ApiKey | None:
    key = session.scalar(select(ApiKey).where(ApiKey.key_hash == hash_secret(secret)))
    if key is None or key.revoked_at is not None:
        return None
    return key


def revoke(session: Session, key_id: str) -> bool:
    key = session.get(ApiKey, key_id)
    if key is None:
        return False
    key.revoked_at = datetime.now(UTC)
    return True


def callers(session: Session, key_ids) -> dict[str, ApiKey]:
    """The keys ``key_ids`` name (revoked ones included), to show a record's caller by name."""
    wanted = {key_id for key_id in key_ids if key_id}
    if not wanted:
        return {}
    return {key.id: key for key in session.scalars(select(ApiKey).where(ApiKey.id.in_(wanted)))}


def list_keys(session: Session) -> list[ApiKey]:
    return list(session.scalars(select(ApiKey).order_by(ApiKey.created_at)))
