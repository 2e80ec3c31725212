"""Fixtures: a real database (SQLite file, or PostgreSQL when VERDICT_TEST_DATABASE_URL is
set), the app on it, API keys per role, and a client that checks every response against
openapi/openapi.yaml."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest
from sqlalchemy import inspect, text

from service.app import create_app
from service.store import keys, migrate
from service.store.db import Base, Database

TEST_DATABASE_URL = os.environ.get("VERDICT_TEST_DATABASE_URL")


def _reset_postgres(url: str) -> None:
    db = Database(url)
    with db.engine.begin() as conn:
        names = inspect(conn).get_table_names()
        if names:
            conn.execute(
                text("DROP TABLE IF EXISTS " + ", ".join(f'"{n}"' for n in names) + " CASCADE")
            )
    db.dispose()


@pytest.fixture(scope="session")
def database_url(tmp_path_factory) -> str:
    if TEST_DATABASE_URL:
        _reset_postgres(TEST_DATABASE_URL)
        url = TEST_DATABASE_URL
    else:
        url = f"sqlite:///{tmp_path_factory.mktemp('db') / 'verdict-test.db'}"
    migrate.upgrade(url)
    return url


@pytest.fixture
def app(database_url, tmp_path):
    db = Database(database_url)
    with db.engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):
            conn.execute(table.delete())
    db.dispose()
    application = create_app(
        {
            "DATABASE_URL": database_url,
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path),
            "LOG_LEVEL": "WARNING",
        }
    )
    yield application
    application.extensions["verdict.db"].dispose()


@pytest.fixture
def api_keys(app) -> dict[str, str]:
    out = {}
    with app.extensions["verdict.db"].session(write=True) as session:
        for role in keys.ROLES:
            _, secret = keys.create(session, role, f"test-{role}")
            out[role] = secret
    return out


class Api:
    """Test client that authenticates with a role's key and validates the contract."""

    def __init__(self, client, api_keys: dict[str, str]) -> None:
        self.client = client
        self.keys = api_keys

    def request(
        self,
        method: str,
        path: str,
        *,
        role: str | None = "admin",
        json=None,
        data=None,
        headers=None,
        content_type=None,
        validate: bool = True,
    ):
        headers = dict(headers or {})
        if role is not None:
            headers["Authorization"] = f"Bearer {self.keys[role]}"
        body = orjson.dumps(json) if json is not None else data
        if json is not None and content_type is None:
            content_type = "application/json"
        response = self.client.open(
            path, method=method, data=body, headers=headers, content_type=content_type
        )
        if validate:
            _validate(method, path, headers, body, response)
        return response

    def get(self, path, **kw):
        return self.request("GET", path, **kw)

    def post(self, path, **kw):
        return self.request("POST", path, **kw)

    def delete(self, path, **kw):
        return self.request("DELETE", path, **kw)


def _validate(method, path, headers, body, response) -> None:
    try:
        from tests.contract import validate_exchange
    except ImportError:  # the contract checker is optional while it is being written
        return
    route, _, query = path.partition("?")
    validate_exchange(
        method,
        route,
        query,
        headers,
        body or b"",
        response.status_code,
        dict(response.headers),
        response.get_data(),
    )


@pytest.fixture
def api(app, api_keys) -> Api:
    return Api(app.test_client(), api_keys)


# --- shared test data ---

DATA = Path(__file__).parent / "data"


def node(name: str, cpu: str = "4", memory: str = "8Gi", pods: str = "110", **extra) -> dict:
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "labels": {"kubernetes.io/hostname": name, **extra.pop("labels", {})},
        },
        "spec": extra.pop("spec", {}),
        "status": {
            "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
            "conditions": [
                {"type": "Ready", "status": "True", "lastHeartbeatTime": "2026-11-20T09:59:50Z"}
            ],
        },
    }
    obj["status"].update(extra.pop("status", {}))
    return obj


def pod(
    name: str,
    node_name: str = "",
    *,
    cpu: str | None = None,
    memory: str | None = None,
    limits: dict | None = None,
    namespace: str = "default",
    priority: int | None = None,
    **spec,
) -> dict:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    resources = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    body = {"containers": [{"name": "app", "image": "nginx", "resources": resources}], **spec}
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "uid": f"uid-{namespace}-{name}"},
        "spec": body,
        "status": {"phase": "Running" if node_name else "Pending"},
    }


def kube_list(*items) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "List",
        "metadata": {"resourceVersion": ""},
        "items": list(items),
    }
