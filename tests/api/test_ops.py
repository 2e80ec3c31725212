"""Liveness, readiness and metrics (api/ops.py)."""

from __future__ import annotations

from service.app import create_app


def test_health_ready_metrics(api):
    assert api.get("/healthz", role=None).json == {"status": "ok"}
    assert api.get("/readyz", role=None).json["status"] == "ok"
    api.get("/v1/snapshots", role="read")
    text = api.get("/metrics", role=None).get_data(as_text=True)
    assert 'verdict_http_requests_total{method="GET",route="/v1/snapshots",status="200"}' in text


def test_readyz_is_503_when_migrations_are_behind(tmp_path):
    from service.store import migrate

    url = f"sqlite:///{tmp_path / 'behind.db'}"
    migrate.upgrade(url)
    migrate.downgrade(url, "base")
    app = create_app({"DATABASE_URL": url, "AUTO_MIGRATE": False, "INSTANCE_PATH": str(tmp_path)})
    response = app.test_client().get("/readyz")
    assert response.status_code == 503
    assert response.headers["Content-Type"] == "application/problem+json"
    assert "migrations" in response.json["detail"]
