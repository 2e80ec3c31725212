"""One settings object, read from VERDICT_* environment variables, with safe defaults."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, fields
from pathlib import Path

GIB = 1024**3


def _bool(text: str) -> bool:
    return text.strip().lower() in ("1", "true", "yes", "on")


def _list(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def default_instance_path() -> Path:
    return Path(os.environ.get("VERDICT_INSTANCE_PATH", Path.cwd() / "instance"))


@dataclass
class Settings:
    # SQLAlchemy URL; default: a SQLite file in the instance folder.
    DATABASE_URL: str = ""
    # Auth on by default. Off means development mode: only loopback clients are served.
    AUTH_ENABLED: bool = True
    # Largest snapshot body accepted, after gzip decompression.
    MAX_BODY_BYTES: int = GIB
    # Origins allowed by CORS (comma-separated in the environment); empty = CORS off.
    CORS_ORIGINS: list[str] = field(default_factory=list)
    # Parsed snapshots kept in memory per process.
    SNAPSHOT_CACHE_SIZE: int = 4
    # ...and at most this many pods across them (the newest snapshot is always kept).
    SNAPSHOT_CACHE_PODS: int = 400_000
    # `verdict serve`: each worker keeps this many of the newest snapshots decoded and warm
    # (0: none), looking for new ones every PRELOAD_INTERVAL seconds.
    PRELOAD_SNAPSHOTS: int = 1
    PRELOAD_INTERVAL: int = 10
    # Apply migrations on start when the database is empty (SQLite default: on).
    AUTO_MIGRATE: bool = True
    LOG_LEVEL: str = "INFO"
    TESTING: bool = False
    INSTANCE_PATH: str = ""
    # Signed checkpoints: the Ed25519 private key (PKCS#8 PEM) as a file path or inline, never
    # in the database; interval signing (seconds, 0 = on demand only) into CHECKPOINT_DIR
    # (default: <instance>/checkpoints).
    CHECKPOINT_KEY_FILE: str = ""
    CHECKPOINT_KEY: str = ""
    CHECKPOINT_INTERVAL: int = 0
    CHECKPOINT_DIR: str = ""
    # Console session cookie signing secret; default: a random one kept in
    # <instance>/console-secret-key (shared by the workers of one host).
    SECRET_KEY: str = ""

    @classmethod
    def from_env(cls, overrides: dict | None = None) -> Settings:
        settings = cls()
        converters = {bool: _bool, int: int, list: _list}
        for f in fields(cls):
            raw = os.environ.get(f"VERDICT_{f.name}")
            if raw is None and f.name == "AUTH_ENABLED":
                raw = os.environ.get("VERDICT_AUTH")
            if raw is not None:
                kind = f.type if isinstance(f.type, type) else type(getattr(settings, f.name))
                setattr(settings, f.name, converters.get(kind, str)(raw))
        for key, value in (overrides or {}).items():
            if not hasattr(settings, key):
                raise KeyError(f"unknown setting {key}")
            setattr(settings, key, value)
        if not settings.INSTANCE_PATH:
            settings.INSTANCE_PATH = str(default_instance_path())
        if not settings.CHECKPOINT_DIR:
            settings.CHECKPOINT_DIR = str(Path(settings.INSTANCE_PATH) / "checkpoints")
        if not settings.DATABASE_URL:
            Path(settings.INSTANCE_PATH).mkdir(parents=True, exist_ok=True)
            settings.DATABASE_URL = f"sqlite:///{Path(settings.INSTANCE_PATH) / 'verdict.db'}"
        return settings
