"""Bearer API keys with roles read < decide < admin; a loopback-only development mode."""

from __future__ import annotations

import ipaddress
import time

from flask import Flask, current_app, g, request

from service.api.errors import ApiError
from service.extensions import extensions
from service.store import keys

PUBLIC_ENDPOINTS = {"ops.healthz", "ops.readyz", "ops.metrics"}


# POSTs that change nothing: replay and impact recompute decisions and store nothing.
READ_ONLY_POSTS = {"history.replay", "impact.impact"}


# How to get a key, said by every 401 (the server's database is not named: a client need not
# know where it is).
KEY_HINT = (
    "create a key with `verdict keys create --role read|decide|admin`, run on the server's "
    "host with the server's settings (the same database; `verdict keys create` prints which)"
)


def required_role() -> str:
    if request.method in ("GET", "HEAD", "OPTIONS") or request.endpoint in READ_ONLY_POSTS:
        return "read"
    if request.method == "DELETE":
        return "admin"
    return "decide"


def _is_loopback(address: str | None) -> bool:
    try:
        return ipaddress.ip_address(address or "").is_loopback
    except ValueError:
        return False


KEY_CACHE_SECONDS = 5.0


def _lookup(secret: str) -> tuple[str, str] | None:
    """(role, key id) for a secret. Valid keys are remembered for a few seconds per process
    so that a busy client does not cost a database round trip per request; a revocation
    takes effect within KEY_CACHE_SECONDS."""
    cache = extensions().keys
    digest = keys.hash_secret(secret)
    hit = cache.get(digest)
    now = time.monotonic()
    if hit is not None and hit[0] > now:
        return hit[1]
    with extensions().db.session() as session:
        key = keys.find(session, secret)
        found = (key.role, key.id) if key is not None else None
    if found is not None:
        if len(cache) > 10_000:
            cache.clear()
        cache[digest] = (now + KEY_CACHE_SECONDS, found)
    else:
        cache.pop(digest, None)
    return found


def register(app: Flask) -> None:
    from service.api.docs import PUBLIC_ENDPOINTS as DOCS_PUBLIC

    public = PUBLIC_ENDPOINTS | set(DOCS_PUBLIC)

    @app.before_request
    def _authenticate():
        g.key_id = None
        if request.method == "OPTIONS" or request.endpoint in public or request.endpoint is None:
            return None
        if request.blueprint == "console":  # the console signs in with its own session
            return None
        settings = current_app.config["VERDICT"]
        if not settings.AUTH_ENABLED:
            if not _is_loopback(request.remote_addr):
                raise ApiError(403, "development mode (auth off) serves loopback clients only")
            return None
        header = request.headers.get("Authorization", "")
        scheme, _, secret = header.partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise ApiError(
                401,
                f"missing bearer API key: send 'Authorization: Bearer <key>'; {KEY_HINT}",
                headers={"WWW-Authenticate": 'Bearer realm="verdict"'},
            )
        found = _lookup(secret.strip())
        if found is None:
            raise ApiError(
                401,
                f"invalid or revoked API key; {KEY_HINT}",
                headers={"WWW-Authenticate": 'Bearer error="invalid_token"'},
            )
        role, key_id = found
        needed = required_role()
        if needed not in keys.GRANTS[role]:
            raise ApiError(403, f"this operation needs the {needed!r} role; the key has {role!r}")
        g.key_id = key_id
        return None
