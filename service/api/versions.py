"""``GET /v1/versions``: the Kubernetes releases Verdict decides as, the default, and what
each changed from the release before it (the engine's table of differences,
``service/engine/version.py``; docs/releases.md lists the same)."""

from __future__ import annotations

from flask import Blueprint

from service.api.responses import json_response
from service.engine.version import DEFAULT_KUBERNETES_VERSION, KNOWN_VERSIONS, differences_in

bp = Blueprint("versions", __name__)


def versions_json() -> dict:
    """The releases, newest first, each with its differences from the one before."""
    return {
        "default": DEFAULT_KUBERNETES_VERSION,
        "versions": [
            {"version": v, "differences": [d.as_json() for d in differences_in(v)]}
            for v in reversed(KNOWN_VERSIONS)
        ],
    }


@bp.get("/v1/versions")
def versions():
    return json_response(versions_json())
