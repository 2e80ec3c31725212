"""Bearer keys and roles (api/auth.py): the roles, the loopback-only development mode, and a
401 that says how to get a key."""

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


def test_a_401_says_how_to_create_a_key(api):
    for headers in ({}, {"Authorization": "Bearer vk_nope"}):
        response = api.get("/v1/snapshots", role=None, headers=headers)
        assert response.status_code == 401
        assert "verdict keys create --role" in response.json["detail"]
