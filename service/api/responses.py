"""JSON responses through orjson (fast, and strict about what is serializable), and YAML for
the clients that ask for it."""

from __future__ import annotations

import orjson
import yaml
from flask import Response, request


def json_response(payload, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status=status, mimetype="application/json")


def negotiated(payload, status: int = 200) -> Response:
    """JSON, or YAML when the client prefers it (``Accept: application/yaml``): a decision as
    it is answered and as it is read back."""
    best = request.accept_mimetypes.best_match(["application/json", "application/yaml"])
    if best == "application/yaml":
        text = yaml.safe_dump(payload, sort_keys=False, allow_unicode=True)
        return Response(text, status=status, mimetype="application/yaml")
    return json_response(payload, status)
