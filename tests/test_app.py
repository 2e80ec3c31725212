"""The app factory (service/app.py): CORS off unless origins are configured; an install
without the C body reader says so."""

from __future__ import annotations

import logging

from service.app import create_app
from service.extensions import extensions
from service.ingest import body


def test_cors_off_by_default_and_configurable(database_url, tmp_path, api):
    plain = api.get("/healthz", role=None, headers={"Origin": "https://portal.example"})
    assert "Access-Control-Allow-Origin" not in plain.headers
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "INSTANCE_PATH": str(tmp_path),
            "CORS_ORIGINS": ["https://portal.example"],
        }
    )
    allowed = app.test_client().get("/healthz", headers={"Origin": "https://portal.example"})
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://portal.example"
    other = app.test_client().get("/healthz", headers={"Origin": "https://evil.example"})
    assert "Access-Control-Allow-Origin" not in other.headers


class _Collect(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _body_reader_gauge(app) -> str:
    text = app.test_client().get("/metrics").get_data(as_text=True)
    return next(line for line in text.splitlines() if line.startswith("verdict_body_reader_"))


def test_an_install_without_the_c_body_reader_says_so_at_start_and_in_metrics(
    database_url, tmp_path, monkeypatch
):
    config = {"DATABASE_URL": database_url, "INSTANCE_PATH": str(tmp_path)}
    collect = _Collect()
    logging.getLogger("verdict").addHandler(collect)
    try:
        monkeypatch.setattr(body, "NATIVE", True)
        built = create_app(config)
        assert _body_reader_gauge(built) == "verdict_body_reader_native 1.0"
        assert not [m for m in collect.messages if "C body reader" in m]
        monkeypatch.setattr(body, "NATIVE", False)
        fallback = create_app(config)
        assert [m for m in collect.messages if "C body reader" in m]
        assert _body_reader_gauge(fallback) == "verdict_body_reader_native 0.0"
    finally:
        logging.getLogger("verdict").removeHandler(collect)
    for app in (built, fallback):
        extensions(app).db.dispose()
