"""Settings are parsed strictly (issue 14): a typo never turns authentication off, and a
bad value stops the service with a message naming the variable."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest

from service.app import create_app
from service.config import Settings, SettingsError, default_instance_path
from service.extensions import extensions


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch, tmp_path):
    for name in list(os.environ):
        if name.startswith("VERDICT_") and name != "VERDICT_TEST_DATABASE_URL":
            monkeypatch.delenv(name)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("VERDICT_AUTH_ENABLED", "ture"),
        ("VERDICT_AUTH_ENABLED", "enabled"),
        ("VERDICT_AUTH_ENABLED", ""),
        # pydantic's own bool takes these; the README lists true/false/1/0/yes/no/on/off
        ("VERDICT_AUTH_ENABLED", "f"),
        ("VERDICT_AUTH_ENABLED", "n"),
        ("VERDICT_AUTH_ENABLED", "N"),
        ("VERDICT_AUTH_ENABLED", "t"),
        ("VERDICT_AUTH_ENABLED", "y"),
        ("VERDICT_AUTH_ENABLED", "disabled"),
        ("VERDICT_AUTO_MIGRATE", "n"),
        ("VERDICT_TESTING", "maybe"),
        ("VERDICT_MAX_BODY_BYTES", "1GB"),
        ("VERDICT_MAX_BODY_BYTES", "0"),
        ("VERDICT_PRELOAD_INTERVAL", "1.5"),
        ("VERDICT_SNAPSHOT_CACHE_PODS", "-1"),
        ("VERDICT_LOG_LEVEL", "LOUD"),
        ("VERDICT_MAX_IN_FLIGHT", "many"),
    ],
)
def test_a_malformed_value_is_refused_naming_the_variable(monkeypatch, name, value):
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as err:
        Settings.from_env()
    assert name in str(err.value)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    ("value", "enabled"),
    [
        *[(word, True) for word in ("true", "1", "yes", "on", "TRUE", "On")],
        *[(word, False) for word in ("false", "0", "no", "off", "False", "OFF")],
    ],
)
def test_booleans_take_the_documented_words(monkeypatch, value, enabled):
    monkeypatch.setenv("VERDICT_AUTH_ENABLED", value)
    assert Settings.from_env().AUTH_ENABLED is enabled


def test_the_old_alias_is_an_error_not_a_way_to_turn_auth_off(monkeypatch):
    monkeypatch.setenv("VERDICT_AUTH", "off")
    with pytest.raises(SettingsError, match="VERDICT_AUTH "):
        Settings.from_env()


def test_threads_are_gone_with_the_threaded_worker(monkeypatch):
    """`verdict serve` runs gevent workers (issue 24): a VERDICT_THREADS left in an
    environment says what bounds a worker now instead of being ignored."""
    monkeypatch.setenv("VERDICT_THREADS", "8")
    with pytest.raises(SettingsError, match="VERDICT_CONNECTIONS"):
        Settings.from_env()


def test_an_unknown_override_is_refused():
    with pytest.raises(SettingsError, match="AUTH_ENABLE"):
        Settings.from_env({"AUTH_ENABLE": False})


def test_cors_origins_are_comma_separated(monkeypatch):
    monkeypatch.setenv("VERDICT_CORS_ORIGINS", "https://a.example, https://b.example")
    assert Settings.from_env().CORS_ORIGINS == ["https://a.example", "https://b.example"]


def test_the_data_directory_does_not_depend_on_the_current_directory(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    first = Settings.from_env()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert Settings.from_env().DATABASE_URL == first.DATABASE_URL
    assert Path(first.INSTANCE_PATH) == default_instance_path() == tmp_path / "data" / "verdict"
    monkeypatch.setenv("VERDICT_INSTANCE_PATH", str(tmp_path / "mine"))
    assert Settings.from_env().DATABASE_URL == f"sqlite:///{tmp_path / 'mine' / 'verdict.db'}"


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_development_mode_says_so_at_every_start(tmp_path):
    overrides = {"AUTH_ENABLED": False, "INSTANCE_PATH": str(tmp_path), "LOG_LEVEL": "WARNING"}
    collect = _Collect()
    logging.getLogger("verdict").addHandler(collect)
    try:
        for start in (1, 2):
            extensions(create_app(overrides)).db.dispose()
            warned = [m for m in collect.messages if "auth is OFF" in m]
            assert len(warned) == start
        extensions(create_app({**overrides, "AUTH_ENABLED": True})).db.dispose()
        assert len([m for m in collect.messages if "auth is OFF" in m]) == 2
    finally:
        logging.getLogger("verdict").removeHandler(collect)


@pytest.mark.parametrize("word", ["ture", "f", "n"])
def test_verdict_serve_refuses_to_start_on_a_typo(tmp_path, word):
    """Only the documented words turn auth off: 'f' and 'n' did too (issue 24)."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(tmp_path),
        "VERDICT_AUTH_ENABLED": word,
    }
    verdict = Path(sys.executable).with_name("verdict")
    done = subprocess.run(
        [str(verdict), "serve", "--port", "18080"], env=env, capture_output=True, timeout=60
    )
    assert done.returncode != 0
    assert f"VERDICT_AUTH_ENABLED='{word}'".encode() in done.stderr
    assert b"true/false/1/0/yes/no/on/off" in done.stderr


def _verdict(env: dict, *argv: str) -> subprocess.CompletedProcess:
    verdict = Path(sys.executable).with_name("verdict")
    return subprocess.run(
        [str(verdict), *argv], env=env, capture_output=True, text=True, timeout=120
    )


def test_the_embedded_default_makes_its_checkpoint_key_on_first_start(tmp_path):
    """Beside the database, outside it, mode 0600, said where once; then reused."""
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(tmp_path),
    }
    first = _verdict(env, "db", "upgrade")
    key = tmp_path / "checkpoint-key.pem"
    assert first.returncode == 0, first.stderr
    assert f"made a checkpoint signing key at {key} (mode 0600)" in first.stderr
    assert key.stat().st_mode & 0o777 == 0o600 and (tmp_path / "verdict.db").exists()
    signed = _verdict(env, "audit", "checkpoint")
    assert signed.returncode == 0, signed.stderr
    assert "made a checkpoint" not in signed.stderr
    checkpoint = orjson.loads(signed.stdout)
    public = _verdict(env, "audit", "public-key")
    assert public.stdout.splitlines()[0] == f"keyId {checkpoint['keyId']}"
    assert "made a checkpoint" not in public.stderr
    assert b"PRIVATE KEY" not in (tmp_path / "verdict.db").read_bytes()


def test_a_deployment_with_its_own_database_keeps_setting_its_own_key(tmp_path):
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(tmp_path),
        "VERDICT_DATABASE_URL": f"sqlite:///{tmp_path / 'own.db'}",
    }
    assert _verdict(env, "db", "upgrade").returncode == 0
    done = _verdict(env, "audit", "checkpoint")
    assert done.returncode == 1 and "no checkpoint key" in done.stderr
    assert not (tmp_path / "checkpoint-key.pem").exists()
    own = tmp_path / "own.pem"
    assert _verdict(env, "audit", "keygen", "--output", str(own)).returncode == 0
    settings = Settings.from_env({"INSTANCE_PATH": str(tmp_path), "CHECKPOINT_KEY_FILE": str(own)})
    assert settings.CHECKPOINT_KEY_FILE == str(own)
    assert not (tmp_path / "checkpoint-key.pem").exists()
