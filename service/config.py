"""One settings object, read strictly from VERDICT_* environment variables (pydantic-settings).

A value that does not parse stops the service with a SettingsError naming the variable:
``VERDICT_AUTH_ENABLED=ture`` must never leave authentication off.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, ValidationError, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

GIB = 1024**3
MIB = 1024**2
PREFIX = "VERDICT_"
# Variables that used to be read and are not any more: set, they are an error, not ignored.
REMOVED = {
    "VERDICT_AUTH": "use VERDICT_AUTH_ENABLED=true|false",
    "VERDICT_THREADS": "verdict serve runs gevent workers; VERDICT_CONNECTIONS bounds a worker",
}


class SettingsError(ValueError):
    """A VERDICT_* variable the service refuses; the message names it (no traceback needed)."""


def default_instance_path() -> Path:
    """The per-user data directory ($XDG_DATA_HOME/verdict, else ~/.local/share/verdict):
    where the service is started from does not change which database it opens."""
    base = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(base) / "verdict"


# The words the README documents, and no others: pydantic alone would also take 't', 'f',
# 'y' and 'n', so VERDICT_AUTH_ENABLED=n would have turned auth off.
BOOLEAN_WORDS = {
    "true": True, "1": True, "yes": True, "on": True,
    "false": False, "0": False, "no": False, "off": False,
}  # fmt: skip


def _boolean_word(value):
    if isinstance(value, str):
        word = BOOLEAN_WORDS.get(value.strip().lower())
        if word is None:
            raise ValueError("Input should be one of true/false/1/0/yes/no/on/off")
        return word
    return value


Boolean = Annotated[bool, BeforeValidator(_boolean_word)]
NonNegative = Annotated[int, Field(ge=0)]
Positive = Annotated[int, Field(gt=0)]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        env_prefix=PREFIX, case_sensitive=True, extra="forbid", validate_default=False
    )

    # SQLAlchemy URL; default: a SQLite file in the instance folder.
    DATABASE_URL: str = ""
    # Auth on by default. Off means development mode: only loopback clients are served.
    AUTH_ENABLED: Boolean = True
    # Largest snapshot body accepted, after gzip decompression.
    MAX_BODY_BYTES: Positive = GIB
    # Bodies over this size are decoded by at most LARGE_BODY_SLOTS requests at a time per
    # worker; past that, 503 with Retry-After (bounded memory, issue 14).
    LARGE_BODY_BYTES: Positive = 16 * MIB
    LARGE_BODY_SLOTS: Positive = 1
    # Nodes (scalars, starts and ends of mappings and sequences) read from one YAML body:
    # each costs about a microsecond, some thirty times JSON; past this, 413 (issue 24).
    MAX_YAML_NODES: Positive = 500_000
    # Requests in flight per worker beyond which new ones are shed with 503 + Retry-After
    # (0: no bound). Shedding needs more gunicorn threads than this (default 4).
    MAX_IN_FLIGHT: NonNegative = 2
    # Origins allowed by CORS (comma-separated in the environment); empty = CORS off.
    CORS_ORIGINS: Annotated[list[str], NoDecode] = []
    # Parsed snapshots kept in memory per process.
    SNAPSHOT_CACHE_SIZE: Positive = 4
    # ...and at most this many pods across them (the newest snapshot is always kept).
    SNAPSHOT_CACHE_PODS: NonNegative = 400_000
    # `verdict serve`: each worker keeps this many of the newest snapshots decoded and warm
    # (0: none), looking for new ones every PRELOAD_INTERVAL seconds.
    PRELOAD_SNAPSHOTS: NonNegative = 1
    PRELOAD_INTERVAL: Positive = 10
    # Apply migrations on start when the database is empty (SQLite default: on).
    AUTO_MIGRATE: Boolean = True
    LOG_LEVEL: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = "INFO"
    TESTING: Boolean = False
    # The instance (data) folder; default: default_instance_path().
    INSTANCE_PATH: str = ""
    # Signed checkpoints: the Ed25519 private key (PKCS#8 PEM) as a file path or inline, never
    # in the database; interval signing (seconds, 0 = on demand only) into CHECKPOINT_DIR
    # (default: <instance>/checkpoints). The embedded default (no DATABASE_URL) makes its own
    # key on first start, beside its database: <instance>/checkpoint-key.pem (mode 0600).
    CHECKPOINT_KEY_FILE: str = ""
    CHECKPOINT_KEY: str = ""
    CHECKPOINT_INTERVAL: NonNegative = 0
    CHECKPOINT_DIR: str = ""
    # Console session cookie signing secret; default: a random one kept in
    # <instance>/console-secret-key (shared by the workers of one host).
    SECRET_KEY: str = ""
    # The console cookie's Secure option: "auto" sets it except for plain http to a loopback
    # host (localhost, 127.0.0.1, ::1), where a developer's browser must still get it back.
    CONSOLE_SECURE_COOKIE: Literal["auto", "true", "false"] = "auto"
    # The decisions that run many scheduling cycles (schedule, capacity): a run stops with
    # the steps so far, and says so, after this many cycles or seconds (issue 27).
    SIMULATION_MAX_STEPS: Positive = 100_000
    SIMULATION_MAX_SECONDS: Positive = 120

    @field_validator("DATABASE_URL")
    @classmethod
    def _supported_database(cls, value: str) -> str:
        if value:
            check_database_url(value)
        return value

    @field_validator("CORS_ORIGINS", mode="before")
    @classmethod
    def _comma_separated(cls, value):
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @classmethod
    def from_env(cls, overrides: dict | None = None) -> Settings:
        """The environment's settings, ``overrides`` (tests, embedding) taking precedence."""
        for name, advice in REMOVED.items():
            if name in os.environ:
                raise SettingsError(f"{name} is not a setting any more: {advice}")
        try:
            settings = cls(**(overrides or {}))
        except ValidationError as exc:
            raise SettingsError(_explain(exc, overrides or {})) from None
        if not settings.INSTANCE_PATH:
            settings.INSTANCE_PATH = str(default_instance_path())
        if not settings.CHECKPOINT_DIR:
            settings.CHECKPOINT_DIR = str(Path(settings.INSTANCE_PATH) / "checkpoints")
        if not settings.DATABASE_URL:
            Path(settings.INSTANCE_PATH).mkdir(mode=0o700, parents=True, exist_ok=True)
            settings.DATABASE_URL = f"sqlite:///{Path(settings.INSTANCE_PATH) / 'verdict.db'}"
            if not settings.CHECKPOINT_KEY and not settings.CHECKPOINT_KEY_FILE:
                settings.CHECKPOINT_KEY_FILE = str(embedded_checkpoint_key(settings.INSTANCE_PATH))
        return settings


EMBEDDED_KEY_NAME = "checkpoint-key.pem"


def embedded_checkpoint_key(instance_path: str) -> Path:
    """The embedded default's checkpoint key, beside its database and outside it, made on
    first start (mode 0600) with a line on stderr saying where. A deployment with a database
    of its own sets VERDICT_CHECKPOINT_KEY_FILE (or _KEY) instead, and nothing is made."""
    from service.store.checkpoints import write_new_key

    path = Path(instance_path) / EMBEDDED_KEY_NAME
    if not path.exists():
        try:
            write_new_key(path)
        except FileExistsError:  # another process of this instance made it first
            return path
        print(
            f"verdict: made a checkpoint signing key at {path} (mode 0600), kept outside the "
            "database; back it up, and set VERDICT_CHECKPOINT_KEY_FILE to use your own",
            file=sys.stderr,
        )
    return path


DATABASE_URL_FORMS = "sqlite:////absolute/path/verdict.db or postgresql://user:password@host/db"


def check_database_url(value: str) -> None:
    """Refuse, in words, a URL that is not one of the two databases Verdict runs on (SQLite,
    PostgreSQL through psycopg 3): found later, it would be a traceback from SQLAlchemy."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        url = make_url(value)
    except ArgumentError:
        raise ValueError(f"not a database URL; write {DATABASE_URL_FORMS}") from None
    backend, driver = url.get_backend_name(), url.drivername.partition("+")[2]
    supported = (backend == "sqlite" and driver in ("", "pysqlite")) or (
        backend in ("postgresql", "postgres") and driver in ("", "psycopg")
    )
    if not supported:
        raise ValueError(
            f"Verdict runs on SQLite and PostgreSQL (psycopg), not {url.drivername}; "
            f"write {DATABASE_URL_FORMS}"
        )


def _explain(exc: ValidationError, overrides: dict) -> str:
    """One line per refused value: ``VERDICT_AUTH_ENABLED='ture': Input should be ...``."""
    lines = []
    for error in exc.errors():
        field = str(error["loc"][0]) if error["loc"] else "?"
        name = field if field in overrides else PREFIX + field
        message = error["msg"].removeprefix("Value error, ")
        lines.append(f"{name}={error.get('input')!r}: {message}")
    return "invalid settings: " + "; ".join(lines)
