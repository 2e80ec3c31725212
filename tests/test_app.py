"""The app factory (service/app.py): CORS off unless origins are configured."""

from __future__ import annotations

from service.app import create_app


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
