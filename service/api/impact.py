"""POST /v1/impact: what a change would have decided differently over the stored history
(``decisions/impact.py``). It replays and stores nothing, so the read role may ask."""

from __future__ import annotations

from flask import Blueprint

from service.api.metrics import count_cache
from service.api.requests import json_body
from service.api.responses import json_response
from service.decisions.impact import ImpactRequestSchema, impact_page
from service.extensions import extensions

bp = Blueprint("impact", __name__)


@bp.post("/v1/impact")
def impact():
    query = ImpactRequestSchema().load(json_body(yaml=True))
    answer = impact_page(
        extensions().db,
        extensions().cache,
        query,
        on_read=count_cache,
    )
    return json_response(answer)
