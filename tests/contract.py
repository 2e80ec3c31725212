"""Contract checks: does an HTTP exchange match openapi/openapi.yaml?

The API tests call :func:`validate_exchange` for every response they receive, so a response
whose status, content type, headers or body the OpenAPI document does not describe fails the
test that produced it. Only the response is validated (the request finds the operation);
tests that deliberately send bad requests stay valid as long as the error is documented.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import yaml
from jsonschema.exceptions import ValidationError as SchemaError
from openapi_core import Config, OpenAPI
from openapi_core.templating.paths.exceptions import PathError
from openapi_core.testing import MockRequest, MockResponse
from openapi_core.validation.response import V31ResponseHeadersValidator
from openapi_schema_validator import OAS31Validator
from werkzeug.datastructures import Headers

SPEC_PATH = Path(__file__).resolve().parents[1] / "openapi" / "openapi.yaml"
HOST_URL = "http://localhost"
NDJSON = "application/x-ndjson"
PROBLEM_JSON = "application/problem+json"
# Responses whose body is not JSON worth checking: only status, content type and headers.
UNCHECKED_BODY_PATHS = ("/metrics",)
UNCHECKED_BODY_PREFIXES = ("/docs",)
MAX_SHOWN = 600


@functools.cache
def load_spec() -> dict:
    """The OpenAPI document as a dict (parsed once)."""
    with SPEC_PATH.open(encoding="utf-8") as handle:
        return yaml.safe_load(handle)


@functools.cache
def _openapi() -> OpenAPI:
    # openapi-core reads only application/json as JSON out of the box.
    config = Config(extra_media_type_deserializers={PROBLEM_JSON: _json_loads})
    return OpenAPI.from_dict(load_spec(), config=config)


def _json_loads(data: bytes | str) -> Any:
    return json.loads(data)


@functools.cache
def _headers_validator() -> V31ResponseHeadersValidator:
    return V31ResponseHeadersValidator(_openapi().spec)


@functools.cache
def _schema_validator(ref: str) -> OAS31Validator:
    """A validator for ``#/components/...`` ``ref`` that resolves the document's own refs."""
    root = {"$ref": ref, "components": load_spec()["components"]}
    return OAS31Validator(root, format_checker=OAS31Validator.FORMAT_CHECKER)


def _media_type(content_type: str | None) -> str:
    return (content_type or "").split(";")[0].strip().lower()


def _shorten(data: bytes | str | None) -> str:
    text = data.decode("utf-8", "replace") if isinstance(data, bytes) else str(data or "")
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def _schema_error_lines(error: SchemaError) -> list[str]:
    """The innermost failures of a jsonschema error, each with where it happened."""
    leaves = list(_leaf_errors(error))
    lines = []
    for leaf in leaves[:10]:
        where = leaf.json_path if leaf.json_path != "$" else "body"
        lines.append(f"  at {where}: {leaf.message}")
    if len(leaves) > 10:
        lines.append(f"  … and {len(leaves) - 10} more")
    return lines


def _leaf_errors(error: SchemaError) -> Iterable[SchemaError]:
    if not error.context:
        yield error
        return
    # For oneOf/anyOf, report the branch that got furthest (the most specific failures).
    best = max(error.context, key=lambda e: (len(e.absolute_path), -len(e.context or ())))
    yield from _leaf_errors(best) if error.validator in ("oneOf", "anyOf") else error.context


def _describe(exc: BaseException) -> list[str]:
    """Readable lines for an openapi-core error, following its causes to the schema errors."""
    lines: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for error in getattr(current, "schema_errors", None) or ():
            lines.extend(_schema_error_lines(error))
        current = current.__cause__ or current.__context__
    if lines:
        return [f"{type(exc).__name__}:", *lines]
    return [_shorten(str(exc) or type(exc).__name__)]


def _find_operation(method: str, path: str) -> tuple[str, dict]:
    """(spec path template, operation) for a concrete request, or AssertionError."""
    try:
        found = _openapi().response_validator.path_finder.find(method, HOST_URL + path)
    except PathError as exc:
        raise AssertionError(f"route not described: {method.upper()} {path} ({exc})") from None
    template = found.path_result.pattern
    operation = load_spec()["paths"][template][method.lower()]
    return template, operation


def _declared_response(operation: dict, status: int) -> dict | None:
    responses = operation.get("responses", {})
    response = responses.get(str(status)) or responses.get(f"{str(status)[0]}XX")
    if response is None:
        response = responses.get("default")
    if response is not None and "$ref" in response:
        name = response["$ref"].rsplit("/", 1)[-1]
        response = load_spec()["components"]["responses"][name]
    return response


def validate_exchange(
    method: str,
    path: str,
    query: str,
    request_headers: Mapping[str, Any] | Headers,
    request_body: bytes,
    status: int,
    response_headers: Mapping[str, Any] | Headers,
    response_body: bytes,
) -> None:
    """Raise AssertionError unless the response is one openapi.yaml describes.

    ``method``/``path``/``query`` locate the operation (``path`` without the query string,
    ``query`` without the ``?``). The response's status must be documented for that
    operation, its Content-Type must be one the status declares, its headers must validate
    (required ones present), and its body must validate against the schema — except for
    /metrics and /docs pages (not JSON), and NDJSON bodies, whose every line must validate
    against the media type's ``x-item-schema`` (the DecisionRecord).
    """
    method = method.lower()
    _template, operation = _find_operation(method, path)
    request_headers = Headers(request_headers)
    response_headers = Headers(response_headers)
    content_type = response_headers.get("Content-Type", "")
    context = (
        f"{method.upper()} {path}{'?' + query if query else ''} → {status} "
        f"({content_type or 'no content type'})"
    )

    declared = _declared_response(operation, status)
    if declared is None:
        documented = ", ".join(sorted(operation.get("responses", {})))
        raise AssertionError(
            f"{context}: status {status} is not documented for this operation "
            f"(documented: {documented})\n  body: {_shorten(response_body)}"
        )

    media = _media_type(content_type)
    skip_body = (
        path in UNCHECKED_BODY_PATHS or path.startswith(UNCHECKED_BODY_PREFIXES) or media == NDJSON
    )
    if skip_body:
        _check_media_type(context, declared, media, response_body)
        _validate_headers_only(
            context, method, path, query, request_headers, status, response_headers, content_type
        )
        if media == NDJSON:
            _validate_ndjson(context, declared, response_body)
        return

    request = MockRequest(
        HOST_URL,
        method,
        path,
        args=parse_qsl(query or "", keep_blank_values=True),
        headers=dict(request_headers.items()),
        data=request_body or b"",
        content_type=request_headers.get("Content-Type", "application/json"),
    )
    response = MockResponse(
        response_body or b"",
        status_code=status,
        headers=dict(response_headers.items()),
        content_type=content_type,
    )
    errors = list(_openapi().iter_response_errors(request, response))
    if errors:
        lines = [f"{context}: the response does not match openapi.yaml"]
        for exc in errors:
            lines.extend(_describe(exc))
        lines.append(f"  body: {_shorten(response_body)}")
        raise AssertionError("\n".join(lines))


def _check_media_type(context: str, declared: dict, media: str, body: bytes) -> None:
    content = declared.get("content")
    if not content:
        if body:
            raise AssertionError(f"{context}: a body was sent where none is documented")
        return
    if media not in content:
        raise AssertionError(
            f"{context}: content type {media or '(none)'} is not documented "
            f"(documented: {', '.join(content)})"
        )


def _validate_headers_only(
    context: str,
    method: str,
    path: str,
    query: str,
    request_headers: Headers,
    status: int,
    response_headers: Headers,
    content_type: str,
) -> None:
    request = MockRequest(
        HOST_URL,
        method,
        path,
        args=parse_qsl(query or "", keep_blank_values=True),
        headers=dict(request_headers.items()),
    )
    response = MockResponse(
        b"", status_code=status, headers=dict(response_headers.items()), content_type=content_type
    )
    errors = list(_headers_validator().iter_errors(request, response))
    if errors:
        lines = [f"{context}: response headers do not match openapi.yaml"]
        for exc in errors:
            lines.extend(_describe(exc))
        raise AssertionError("\n".join(lines))


def _validate_ndjson(context: str, declared: dict, body: bytes) -> None:
    media = declared["content"][NDJSON]
    ref = media.get("x-item-schema", {}).get("$ref")
    if not ref:
        raise AssertionError(f"{context}: the NDJSON media type names no x-item-schema")
    validator = _schema_validator(ref)
    for number, line in enumerate(body.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise AssertionError(f"{context}: line {number} is not JSON: {exc}") from None
        error = next(iter(sorted(validator.iter_errors(item), key=lambda e: e.path)), None)
        if error is not None:
            lines = [f"{context}: NDJSON line {number} does not match {ref}"]
            lines.extend(_schema_error_lines(error))
            lines.append(f"  line: {_shorten(line)}")
            raise AssertionError("\n".join(lines))


def validate_instance(ref: str, instance: Any) -> None:
    """Validate a value against ``#/components/schemas/<Name>`` (AssertionError if invalid)."""
    if not ref.startswith("#/"):
        ref = f"#/components/schemas/{ref}"
    error = next(iter(_schema_validator(ref).iter_errors(instance)), None)
    if error is not None:
        lines = [f"value does not match {ref}"]
        lines.extend(_schema_error_lines(error))
        raise AssertionError("\n".join(lines))
