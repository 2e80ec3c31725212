"""GET /openapi.json and the Swagger UI at /docs: public, served locally, renderable."""

from __future__ import annotations

import json
import re

import pytest
from openapi_spec_validator import OpenAPIV30SpecValidator

from service.api.docs import PUBLIC_ENDPOINTS, _schema_30, openapi_30_for_display
from tests.contract import load_spec

METHODS = ("get", "put", "post", "delete", "patch")


def test_openapi_json_is_the_yaml_document_and_public(api):
    response = api.get("/openapi.json", role=None)
    assert response.status_code == 200
    assert response.mimetype == "application/json"
    assert json.loads(response.get_data()) == load_spec()


def test_docs_page_uses_only_local_assets(api):
    response = api.get("/docs", role=None)
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "://" not in page  # no CDN, no absolute URL of any kind
    urls = re.findall(r'(?:src|href|data-spec-url)="([^"]+)"', page)
    assert {"/docs/assets/swagger-ui-bundle.js", "/docs/assets/swagger-ui.css"} <= set(urls)
    for url in urls:
        assert url.startswith("/docs/assets/"), url
        asset = api.get(url, role=None, validate=False)
        assert asset.status_code == 200, url
        assert asset.get_data(), url


@pytest.mark.parametrize(
    ("url", "mimetype"),
    [
        ("/docs/assets/swagger-ui-bundle.js", "text/javascript"),
        ("/docs/assets/swagger-ui.css", "text/css"),
        ("/docs/assets/verdict-initializer.js", "text/javascript"),
        ("/docs/assets/openapi-3.0.json", "application/json"),
    ],
)
def test_assets_are_public_with_their_types(api, url, mimetype):
    response = api.get(url, role=None, validate=False)
    assert response.status_code == 200
    assert response.mimetype == mimetype


@pytest.mark.parametrize(
    "url",
    ["/docs/assets/missing.js", "/docs/assets/../docs.py", "/docs/assets/%2e%2e/%2e%2e/app.py"],
)
def test_assets_outside_the_bundle_are_not_found(api, url):
    assert api.get(url, role=None, validate=False).status_code == 404


def test_public_endpoints_exist(app):
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()}
    assert endpoints >= PUBLIC_ENDPOINTS


def test_display_document_is_valid_openapi_30_with_the_same_operations():
    """Swagger UI 4 (the bundled version) renders only 3.0 documents."""
    display = openapi_30_for_display(load_spec())
    assert display["openapi"] == "3.0.3"
    errors = [e.message for e in OpenAPIV30SpecValidator(display).iter_errors()]
    assert not errors, errors[:5]
    original = load_spec()
    assert display["paths"].keys() == original["paths"].keys()
    for path, item in original["paths"].items():
        for method in METHODS:
            if method in item:
                converted = display["paths"][path][method]
                assert converted["operationId"] == item[method]["operationId"]
                assert converted["responses"].keys() == item[method]["responses"].keys()
    assert load_spec() == original  # the conversion does not touch the 3.1 document


def test_display_document_states_the_roles():
    ops = openapi_30_for_display(load_spec())["paths"]
    assert ops["/v1/snapshots/{id}"]["delete"]["description"].endswith(
        "Requires an API key with the `admin` role."
    )
    assert ops["/v1/snapshots/{id}"]["delete"]["security"] == [{"bearerAuth": []}]
    assert ops["/healthz"]["get"]["description"].endswith("Public: no API key needed.")


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"type": ["string", "null"]}, {"type": "string", "nullable": True}),
        ({"type": "integer"}, {"type": "integer"}),
        ({"const": "admission"}, {"enum": ["admission"]}),
        ({"type": "string", "examples": ["a", "b"]}, {"type": "string", "example": "a"}),
        (
            {"oneOf": [{"$ref": "#/components/schemas/PodRef"}, {"type": "null"}]},
            {"allOf": [{"$ref": "#/components/schemas/PodRef"}], "nullable": True},
        ),
        (
            {"oneOf": [{"type": "string"}, {"type": "number"}]},
            {"oneOf": [{"type": "string"}, {"type": "number"}]},
        ),
        (
            {"type": ["string", "null"], "enum": ["a", None]},
            {"type": "string", "enum": ["a", None], "nullable": True},
        ),
        ({"type": "number", "exclusiveMinimum": 0}, {"type": "number", "minimum": 0,
                                                     "exclusiveMinimum": True}),
        (
            {"$ref": "#/components/schemas/Duration", "default": "50s"},
            {"allOf": [{"$ref": "#/components/schemas/Duration"}], "default": "50s"},
        ),
        (
            {"allOf": [{"$ref": "#/a"}], "unevaluatedProperties": False},
            {"allOf": [{"$ref": "#/a"}]},
        ),
        (
            {"type": "object", "properties": {"x": {"type": ["object", "null"]}},
             "additionalProperties": {"const": 1}},
            {"type": "object", "properties": {"x": {"type": "object", "nullable": True}},
             "additionalProperties": {"enum": [1]}},
        ),
    ],
)  # fmt: skip
def test_schema_conversion_to_30(schema, expected):
    assert _schema_30(schema) == expected
