"""Errors as problem+json (api/errors.py): an unknown route, a method the route does not take."""

from __future__ import annotations


def test_unknown_route_is_problem_json(api):
    response = api.get("/v1/nothing", role="read", validate=False)
    assert response.status_code == 404
    assert response.headers["Content-Type"] == "application/problem+json"


def test_a_405_names_the_allowed_methods(api):
    response = api.request("PUT", "/v1/snapshots", role="admin", validate=False)
    assert response.status_code == 405
    assert set(response.headers["Allow"].split(", ")) >= {"GET", "POST"}
