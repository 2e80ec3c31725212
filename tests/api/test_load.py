"""The worker's in-flight bound (api/load.py): past it a request is shed at once with 503,
and a request waiting for its body holds no slot while it waits (issue 24)."""

from __future__ import annotations

import io

import pytest

from service.app import create_app


@pytest.fixture
def bounded(database_url, tmp_path):
    application = create_app(
        {
            "DATABASE_URL": database_url,
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path),
            "LOG_LEVEL": "WARNING",
            "AUTH_ENABLED": False,
            "MAX_IN_FLIGHT": 1,
        }
    )
    yield application
    application.extensions["verdict.db"].dispose()


def test_requests_past_the_bound_are_shed_and_probes_are_not(bounded):
    client = bounded.test_client()
    slots = bounded.extensions["verdict.in_flight"]
    assert slots.take()
    response = client.get("/v1/snapshots")
    assert response.status_code == 503 and response.headers["Retry-After"] == "1"
    assert client.get("/healthz").status_code == 200
    slots.give_back()
    assert client.get("/v1/snapshots").status_code == 200


class _Watched(io.BytesIO):
    """A request body that records how many in-flight slots are taken at each read."""

    def __init__(self, data: bytes, slots) -> None:
        super().__init__(data)
        self.slots, self.seen = slots, []

    def read(self, *args) -> bytes:
        self.seen.append(self.slots.used)
        return super().read(*args)

    def readinto(self, buffer) -> int:
        self.seen.append(self.slots.used)
        return super().readinto(buffer)


def test_a_request_waiting_for_its_body_holds_no_slot(bounded):
    slots = bounded.extensions["verdict.in_flight"]
    body = _Watched(b"{}", slots)
    response = bounded.test_client().post(
        "/v1/decisions/admission",
        input_stream=body,
        headers={"Content-Type": "application/json", "Content-Length": "2"},
    )
    assert response.status_code == 422  # the body arrived, and was read within the bound
    assert body.seen and set(body.seen) == {0}
    assert slots.used == 0
