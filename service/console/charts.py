"""SVG charts made on the server with pygal; no script, no CDN (pygal's own JS is turned off)."""

from __future__ import annotations

import re
from datetime import datetime

import pygal
from markupsafe import Markup
from pygal.style import Style

STYLE = Style(
    background="white",
    plot_background="white",
    font_family="system-ui, sans-serif",
    colors=("#1f6feb", "#d97706", "#059669", "#b91c1c", "#7c3aed", "#0e7490", "#a16207"),
)


_SCRIPT = re.compile(r"<script\b.*?</script>", re.S)


def _render(chart) -> Markup:
    """The SVG without pygal's inline config script: the page runs no script at all."""
    return Markup(_SCRIPT.sub("", chart.render(is_unicode=True)))


def _config(title: str, **extra) -> dict:
    return {
        "title": title,
        "style": STYLE,
        "js": [],  # pygal links a script from a CDN by default
        "disable_xml_declaration": True,
        "width": 860,
        "height": 360,
        "legend_at_bottom": True,
        **extra,
    }


def placement_scores(nodes: list[dict], plugins: list[str]) -> Markup | None:
    """One bar group per node, one bar per score plugin (normalized 0–100)."""
    scored = [n for n in nodes if n["scores"]]
    if not scored or not plugins:
        return None
    chart = pygal.Bar(
        **_config("Scores per node and plugin (0–100)", range=(0, 100), x_label_rotation=20)
    )
    chart.x_labels = [n["nodeName"] for n in scored]
    for plugin in plugins:
        chart.add(plugin, [n["scores"].get(plugin) for n in scored])
    return _render(chart)


def _parse(moment: str | None) -> datetime | None:
    if not moment:
        return None
    try:
        return datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return None


def eviction_timeline(nodes: list[dict], pods: list[dict]) -> Markup | None:
    """When each node is tainted and each pod evicted, on one time axis (row = node or pod)."""
    taints = [(n["nodeName"], _parse(n.get("taintedAt"))) for n in nodes]
    evictions = [
        (f"{p['pod']['namespace']}/{p['pod']['name']}", _parse(p.get("evictAt"))) for p in pods
    ]
    taints = [(name, t) for name, t in taints if t is not None]
    evictions = [(name, t) for name, t in evictions if t is not None]
    if not taints and not evictions:
        return None
    chart = pygal.DateTimeLine(
        **_config(
            "Taint and eviction timeline",
            stroke=False,
            show_y_labels=False,
            x_label_rotation=20,
            x_value_formatter=lambda moment: moment.strftime("%H:%M:%S"),
        )
    )
    rows = 0
    for series, points in (("node tainted", taints), ("pod evicted", evictions)):
        values = []
        for name, moment in points:
            rows += 1
            values.append({"value": (moment, rows), "label": name})
        chart.add(series, values)
    return _render(chart)
