"""Auth roles, development mode, request ids, health, readiness and metrics."""

from __future__ import annotations

from service.app import create_app


def test_roles(api):
    assert api.get("/v1/snapshots", role=None).status_code == 401
    bad = api.get("/v1/snapshots", role=None, headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401 and bad.headers["Content-Type"] == "application/problem+json"
    assert api.get("/v1/snapshots", role="read").status_code == 200
    assert (
        api.post("/v1/snapshots", json={"kind": "List", "items": []}, role="read").status_code
        == 403
    )
    assert (
        api.post("/v1/snapshots", json={"kind": "List", "items": []}, role="decide").status_code
        == 201
    )


def test_development_mode_serves_loopback_only(database_url, tmp_path):
    app = create_app(
        {"DATABASE_URL": database_url, "AUTH_ENABLED": False, "INSTANCE_PATH": str(tmp_path)}
    )
    client = app.test_client()
    assert client.get("/v1/snapshots", environ_base={"REMOTE_ADDR": "127.0.0.1"}).status_code == 200
    assert client.get("/v1/snapshots", environ_base={"REMOTE_ADDR": "10.1.2.3"}).status_code == 403


def test_request_id_echoed_and_generated(api):
    given = api.get("/healthz", role=None, headers={"X-Request-ID": "abc-123"})
    assert given.headers["X-Request-ID"] == "abc-123"
    assert len(api.get("/healthz", role=None).headers["X-Request-ID"]) == 36


def test_health_ready_metrics(api):
    assert api.get("/healthz", role=None).json == {"status": "ok"}
    assert api.get("/readyz", role=None).json["status"] == "ok"
    api.get("/v1/snapshots", role="read")
    text = api.get("/metrics", role=None).get_data(as_text=True)
    assert 'verdict_http_requests_total{method="GET",route="/v1/snapshots",status="200"}' in text


def test_unknown_route_is_problem_json(api):
    response = api.get("/v1/nothing", role="read", validate=False)
    assert response.status_code == 404
    assert response.headers["Content-Type"] == "application/problem+json"


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
