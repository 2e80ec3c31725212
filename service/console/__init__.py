"""The auditors' web console at /console: server-rendered pages over the history, the
snapshots and the chain. Sign-in with an API key (read is enough) into a signed, HttpOnly,
SameSite=Strict session cookie, Secure unless served over plain http to a loopback host;
CSRF tokens (Flask-WTF) on every form that posts."""

from __future__ import annotations

import ipaddress
import os
import secrets
from datetime import timedelta
from pathlib import Path

from flask import Flask, request
from flask.sessions import SecureCookieSessionInterface
from flask_wtf.csrf import CSRFProtect

csrf = CSRFProtect()
SESSION_HOURS = 8


def _secret_key(settings) -> str:
    """VERDICT_SECRET_KEY, else one kept in the instance folder (created once, mode 0600), so
    that every worker of `verdict serve` signs cookies with the same key."""
    if settings.SECRET_KEY:
        return settings.SECRET_KEY
    path = Path(settings.INSTANCE_PATH) / "console-secret-key"
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return path.read_text().strip()
    with os.fdopen(fd, "w") as handle:
        handle.write(secrets.token_urlsafe(48))
    return path.read_text().strip()


class ConsoleSessions(SecureCookieSessionInterface):
    """The session cookie, Secure as VERDICT_CONSOLE_SECURE_COOKIE says: "auto" sets it
    whenever the request came over https or to a host that is not this machine, so that a
    cookie holding a signed-in session never travels in clear text across a network; plain
    http to localhost, the developer's own machine, gets a cookie the browser will send."""

    def get_cookie_secure(self, app: Flask) -> bool:
        mode = app.config["VERDICT"].CONSOLE_SECURE_COOKIE
        if mode != "auto":
            return mode == "true"
        return request.is_secure or not is_loopback(request.host)


def is_loopback(host: str) -> bool:
    """Whether a Host header names this machine (a port, brackets around IPv6, ignored)."""
    name = host.rsplit(":", 1)[0] if host.count(":") == 1 else host
    name = name.strip("[]").split("]")[0].lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def register(app: Flask) -> None:
    from service.console.views import bp

    settings = app.config["VERDICT"]
    app.secret_key = _secret_key(settings)
    app.config.update(
        SESSION_COOKIE_NAME="verdict_console",
        SESSION_COOKIE_PATH="/console",
        SESSION_COOKIE_HTTPONLY=True,
        SESSION_COOKIE_SAMESITE="Strict",
        PERMANENT_SESSION_LIFETIME=timedelta(hours=SESSION_HOURS),
        # Checked by the console's own before_request, so the JSON API is not affected.
        WTF_CSRF_CHECK_DEFAULT=False,
        WTF_CSRF_TIME_LIMIT=SESSION_HOURS * 3600,
    )
    app.session_interface = ConsoleSessions()
    csrf.init_app(app)
    app.register_blueprint(bp)
