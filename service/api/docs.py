"""The API's own description: GET /openapi.json and interactive docs at GET /docs.

The OpenAPI document (openapi/openapi.yaml, OpenAPI 3.1) is read once at import time.
Swagger UI's scripts and styles come from the ``swagger-ui-bundle`` package and are served
by Verdict itself under /docs/assets/ — never from a CDN, which portals often block.

That package ships Swagger UI 4.15, which renders only OpenAPI 3.0 documents: /docs
therefore displays a 3.0 rendering of the same document (``openapi_30_for_display``),
served as /docs/assets/openapi-3.0.json. /openapi.json is always the 3.1 original.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import swagger_ui_bundle
import yaml
from flask import Blueprint, Response, send_from_directory, url_for

SPEC_PATH = Path(__file__).resolve().parents[2] / "openapi" / "openapi.yaml"
ASSETS_DIR = Path(swagger_ui_bundle.swagger_ui_path)
ASSET_MAX_AGE = 24 * 3600

docs_bp = Blueprint("docs", __name__)

# Endpoints the auth layer lets through without an API key.
PUBLIC_ENDPOINTS = frozenset(
    {
        "docs.openapi_json",
        "docs.swagger_ui",
        "docs.swagger_initializer",
        "docs.display_spec",
        "docs.swagger_asset",
    }
)


def load_openapi(path: Path = SPEC_PATH) -> dict:
    with path.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


# ---------------------------------------------------------------- 3.1 → 3.0 for display

_DROPPED_SCHEMA_KEYS = frozenset(
    {
        "$schema",
        "$id",
        "$defs",
        "$comment",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "propertyNames",
        "contains",
        "minContains",
        "maxContains",
        "unevaluatedProperties",
        "unevaluatedItems",
        "prefixItems",
        "contentMediaType",
        "contentEncoding",
        "dependentRequired",
        "dependentSchemas",
        "if",
        "then",
        "else",
    }
)
_NULL = {"type": "null"}


def _schema_30(schema: Any) -> Any:
    """One JSON Schema 2020-12 schema → the OpenAPI 3.0 subset, for display only."""
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    nullable = False
    for key, value in schema.items():
        if key in _DROPPED_SCHEMA_KEYS:
            continue
        if key == "type" and isinstance(value, list):
            types = [t for t in value if t != "null"]
            nullable = nullable or len(types) < len(value)
            if len(types) == 1:
                out["type"] = types[0]
            # several non-null types: no 3.0 spelling short of oneOf; leave the type open
        elif key == "type" and value == "null":
            nullable = True
        elif key == "const":
            out["enum"] = [value]
        elif key == "examples":
            if isinstance(value, list) and value:
                out["example"] = value[0]
        elif key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
            out["minimum" if key == "exclusiveMinimum" else "maximum"] = value
            out[key] = True
        elif key in ("oneOf", "anyOf"):
            branches = [b for b in value if b != _NULL]
            nullable = nullable or len(branches) < len(value)
            branches = [_schema_30(b) for b in branches]
            if len(branches) == 1:
                out.setdefault("allOf", []).append(branches[0])
            elif branches:
                out[key] = branches
        elif key in ("allOf",):
            out.setdefault("allOf", []).extend(_schema_30(b) for b in value)
        elif key in ("not", "items"):
            out[key] = _schema_30(value)
        elif key == "additionalProperties":
            out[key] = _schema_30(value) if isinstance(value, dict) else value
        elif key in ("properties", "patternProperties"):
            out[key] = {name: _schema_30(sub) for name, sub in value.items()}
        else:
            out[key] = value
    if "$ref" in out and len(out) > 1:
        # A 3.0 Reference Object has no siblings: keep them beside an allOf.
        out.setdefault("allOf", []).insert(0, {"$ref": out.pop("$ref")})
    if nullable:
        out["nullable"] = True
        if "enum" in out and None not in out["enum"]:
            out["enum"] = [*out["enum"], None]
    return out


def _content_30(content: dict) -> dict:
    return {
        media: {**body, **({"schema": _schema_30(body["schema"])} if "schema" in body else {})}
        for media, body in content.items()
    }


def _parameter_30(parameter: dict) -> dict:
    out = dict(parameter)
    if "schema" in out:
        out["schema"] = _schema_30(out["schema"])
    if "content" in out:
        out["content"] = _content_30(out["content"])
    return out


def _response_30(response: dict) -> dict:
    out = dict(response)
    if "headers" in out:
        out["headers"] = {
            name: _ref_or(header, _parameter_30) for name, header in out["headers"].items()
        }
    if "content" in out:
        out["content"] = _content_30(out["content"])
    return out


def _role_note(security: list[dict] | None) -> str | None:
    if security is None:
        return None
    if not security or all(not requirement for requirement in security):
        return "Public: no API key needed."
    roles = sorted(
        {role for requirement in security for roles in requirement.values() for role in roles}
    )
    return f"Requires an API key with the `{'` or `'.join(roles)}` role." if roles else None


def openapi_30_for_display(spec: dict) -> dict:
    """The document in OpenAPI 3.0 terms, for Swagger UI 4 (which cannot render 3.1).

    Lossy where 3.0 has no spelling (e.g. ``unevaluatedProperties``); never used to
    validate anything. Security requirements keep their schemes; the roles (which 3.0 only
    allows for OAuth scopes) move into each operation's description.
    """
    doc = copy.deepcopy(spec)
    doc["openapi"] = "3.0.3"
    doc.pop("jsonSchemaDialect", None)
    doc.pop("webhooks", None)
    info = doc.setdefault("info", {})
    summary = info.pop("summary", None)
    if summary and not info.get("description"):
        info["description"] = summary
    if isinstance(info.get("license"), dict):
        info["license"].pop("identifier", None)
    default_security = doc.get("security")
    if default_security:
        doc["security"] = _without_roles(default_security)

    for item in doc.get("paths", {}).values():
        if "parameters" in item:
            item["parameters"] = [_ref_or(p, _parameter_30) for p in item["parameters"]]
        for method in ("get", "put", "post", "delete", "options", "head", "patch", "trace"):
            operation = item.get(method)
            if operation is None:
                continue
            security = operation.get("security", default_security)
            note = _role_note(security)
            if note:
                description = operation.get("description", "").rstrip()
                operation["description"] = f"{description}\n\n{note}" if description else note
            if operation.get("security"):
                operation["security"] = _without_roles(operation["security"])
            if "parameters" in operation:
                operation["parameters"] = [
                    _ref_or(p, _parameter_30) for p in operation["parameters"]
                ]
            body = operation.get("requestBody")
            if body and "$ref" not in body and "content" in body:
                body["content"] = _content_30(body["content"])
            operation["responses"] = {
                code: _ref_or(response, _response_30)
                for code, response in operation.get("responses", {}).items()
            }

    components = doc.get("components", {})
    components.pop("pathItems", None)
    for name, schema in components.get("schemas", {}).items():
        components["schemas"][name] = _schema_30(schema)
    for name, parameter in components.get("parameters", {}).items():
        components["parameters"][name] = _parameter_30(parameter)
    for name, header in components.get("headers", {}).items():
        components["headers"][name] = _parameter_30(header)
    for name, response in components.get("responses", {}).items():
        components["responses"][name] = _response_30(response)
    return doc


def _without_roles(security: list[dict]) -> list[dict]:
    return [{scheme: [] for scheme in requirement} for requirement in security]


def _ref_or(value: dict, convert) -> dict:
    if "$ref" in value:
        return {"$ref": value["$ref"]}  # 3.0 references carry no summary/description
    return convert(value)


OPENAPI = load_openapi()
OPENAPI_JSON = json.dumps(OPENAPI, ensure_ascii=False, separators=(",", ":")).encode()
DISPLAY_JSON = json.dumps(
    openapi_30_for_display(OPENAPI), ensure_ascii=False, separators=(",", ":")
).encode()


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
    persistAuthorization: false,
    validatorUrl: null
  });
});
"""


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
        spec=_escape(url_for("docs.display_spec")),
    )
    return Response(page, mimetype="text/html")


@docs_bp.get("/docs/assets/verdict-initializer.js")
def swagger_initializer() -> Response:
    response = Response(_INITIALIZER, mimetype="text/javascript")
    response.cache_control.public = True
    response.cache_control.max_age = ASSET_MAX_AGE
    return response


@docs_bp.get("/docs/assets/openapi-3.0.json")
def display_spec() -> Response:
    return Response(DISPLAY_JSON, mimetype="application/json")


@docs_bp.get("/docs/assets/<path:filename>")
def swagger_asset(filename: str) -> Response:
    return send_from_directory(ASSETS_DIR, filename, max_age=ASSET_MAX_AGE)
