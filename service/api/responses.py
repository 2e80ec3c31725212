"""JSON responses through orjson (fast, and strict about what is serializable)."""

from __future__ import annotations

import orjson
from flask import Response


def json_response(payload, status: int = 200) -> Response:
    return Response(orjson.dumps(payload), status=status, mimetype="application/json")
