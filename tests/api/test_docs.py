"""GET /openapi.json and the Swagger UI at /docs: public, served locally, renderable."""

from __future__ import annotations

import json
import re

import pytest

from service.api.docs import PUBLIC_ENDPOINTS
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
        assert url.startswith("/docs/assets/") or url == "/openapi.json", url
        asset = api.get(url, role=None, validate=False)
        assert asset.status_code == 200, url
        assert asset.get_data(), url


@pytest.mark.parametrize(
    ("url", "mimetype"),
    [
        ("/docs/assets/swagger-ui-bundle.js", "text/javascript"),
        ("/docs/assets/swagger-ui.css", "text/css"),
        ("/docs/assets/verdict-initializer.js", "text/javascript"),
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


def test_swagger_ui_5_reads_the_31_document_itself(api):
    """The bundled Swagger UI is version 5 (it renders OpenAPI 3.1), and the page points it at
    /openapi.json, not at a converted copy."""
    from service.api.docs import ASSETS_DIR

    assert (ASSETS_DIR / "VERSION").read_text().strip().startswith("v5.")
    page = api.get("/docs", role=None).get_data(as_text=True)
    assert 'data-spec-url="/openapi.json"' in page
    assert api.get("/docs/assets/openapi-3.0.json", role=None, validate=False).status_code == 404


def test_docs_page_forbids_framing_and_foreign_scripts(api):
    response = api.get("/docs", role=None)
    policy = dict(
        part.strip().split(" ", 1)
        for part in response.headers["Content-Security-Policy"].split(";")
    )
    assert policy["frame-ancestors"] == "'none'" and response.headers["X-Frame-Options"] == "DENY"
    assert policy["script-src"] == "'self'" and policy["connect-src"] == "'self'"
    assert policy["default-src"] == "'none'"
