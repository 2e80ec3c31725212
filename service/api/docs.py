"""The API's own description: GET /openapi.json and interactive docs at GET /docs.

The OpenAPI document (openapi/openapi.yaml, OpenAPI 3.1, shipped inside the package) is read
once at import time. Swagger UI 5, which reads OpenAPI 3.1 as it is, comes from the
``flask-swagger-ui`` package (its ``dist`` assets, whose version follows Swagger UI's) and is
served by Verdict itself under /docs/assets/ — never from a CDN, which portals often block.
The page and its initializer are Verdict's own, with no inline script, so that a strict
Content-Security-Policy works.
"""

from __future__ import annotations

import json
from pathlib import Path

import flask_swagger_ui
import yaml
from flask import Blueprint, Response, send_from_directory, url_for

from service.bundled import openapi_path

SPEC_PATH = openapi_path()
ASSETS_DIR = Path(flask_swagger_ui.__file__).resolve().parent / "dist"
ASSET_MAX_AGE = 24 * 3600

docs_bp = Blueprint("docs", __name__)

# Endpoints the auth layer lets through without an API key.
PUBLIC_ENDPOINTS = frozenset(
    {
        "docs.openapi_json",
        "docs.swagger_ui",
        "docs.swagger_initializer",
        "docs.swagger_asset",
    }
)


def load_openapi(path: Path = SPEC_PATH) -> dict:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


OPENAPI = load_openapi()
OPENAPI_JSON = json.dumps(OPENAPI, ensure_ascii=False, separators=(",", ":")).encode()


# ---------------------------------------------------------------- routes

_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<link rel="stylesheet" href="{css}">
<link rel="icon" type="image/png" href="{icon32}" sizes="32x32">
<link rel="icon" type="image/png" href="{icon16}" sizes="16x16">
</head>
<body>
<div id="swagger-ui" data-spec-url="{spec}"></div>
<script src="{bundle}"></script>
<script src="{init}"></script>
</body>
</html>
"""

# Kept out of the page so that a strict Content-Security-Policy (no inline script) works.
_INITIALIZER = """window.addEventListener("load", function () {
  var root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.getAttribute("data-spec-url"),
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
    tryItOutEnabled: false,
    displayRequestDuration: true,
    persistAuthorization: false,
    validatorUrl: null
  });
});
"""


# The page runs only Verdict's own scripts and talks only to Verdict; no site may frame it
# (clickjacking "Authorize" or "Execute"). Swagger UI sets inline styles and data: icons.
DOCS_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; "
    "base-uri 'none'; form-action 'none'"
)


def _escape(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


@docs_bp.get("/openapi.json")
def openapi_json() -> Response:
    return Response(OPENAPI_JSON, mimetype="application/json")


@docs_bp.get("/docs")
def swagger_ui() -> Response:
    def asset(name: str) -> str:
        return _escape(url_for("docs.swagger_asset", filename=name))

    page = _PAGE.format(
        title=_escape(OPENAPI.get("info", {}).get("title", "API")),
        css=asset("swagger-ui.css"),
        icon32=asset("favicon-32x32.png"),
        icon16=asset("favicon-16x16.png"),
        bundle=asset("swagger-ui-bundle.js"),
        init=_escape(url_for("docs.swagger_initializer")),
        spec=_escape(url_for("docs.openapi_json")),
    )
    response = Response(page, mimetype="text/html")
    response.headers["Content-Security-Policy"] = DOCS_CSP
    response.headers["X-Frame-Options"] = "DENY"  # frame-ancestors, for older browsers
    return response


@docs_bp.get("/docs/assets/verdict-initializer.js")
def swagger_initializer() -> Response:
    response = Response(_INITIALIZER, mimetype="text/javascript")
    response.cache_control.public = True
    response.cache_control.max_age = ASSET_MAX_AGE
    return response


@docs_bp.get("/docs/assets/<path:filename>")
def swagger_asset(filename: str) -> Response:
    return send_from_directory(ASSETS_DIR, filename, max_age=ASSET_MAX_AGE)
