"""SVG charts made on the server: pygal's bar chart (its own JS turned off), and the timeline,
written as plain SVG for an exact time axis and a `now` mark; no script, no CDN."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta

import pygal
from markupsafe import Markup, escape
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
    """An RFC 3339 time from a result (nanoseconds cut to microseconds), or None."""
    if not moment:
        return None
    whole, dot, fraction = moment.replace("Z", "+00:00").partition(".")
    if dot:
        digits, _, zone = fraction.partition("+")
        whole = f"{whole}.{digits[:6].ljust(6, '0')}+{zone}"
    try:
        return datetime.fromisoformat(whole)
    except ValueError:
        return None


# Tick steps for the time axis, in seconds: the first giving at most TICKS ticks is used.
_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200)
_STEPS += tuple(86400 * days for days in (1, 2, 7, 14, 30, 90, 365))
TICKS = 7
TIMELINE_ROWS = 60  # beyond this the tables carry the rest
_WIDTH, _LEFT, _RIGHT, _TOP, _ROW, _AXIS = 860, 230, 30, 46, 22, 40


def _timeline_events(nodes: list[dict], pods: list[dict]) -> list[tuple[str, str, datetime, bool]]:
    events = []
    for n in nodes:
        if (moment := _parse(n.get("taintedAt"))) is not None:
            events.append((n.get("nodeName", "?"), "tainted", moment, bool(n.get("projected"))))
    for p in pods:
        if (moment := _parse(p.get("evictAt"))) is not None:
            ref = p.get("pod") or {}
            name = f"{ref.get('namespace', '')}/{ref.get('name', '')}"
            events.append((name, "evicted", moment, bool(p.get("projected"))))
    return events


def _ticks(start: datetime, end: datetime) -> list[datetime]:
    span = (end - start).total_seconds()
    step = next((s for s in _STEPS if span / s <= TICKS), _STEPS[-1])
    first = math.ceil(start.timestamp() / step) * step
    return [
        datetime.fromtimestamp(first + i * step, tz=UTC)
        for i in range(int((end.timestamp() - first) // step) + 1)
    ]


def eviction_timeline(nodes: list[dict], pods: list[dict], now: str | None) -> Markup | None:
    """When each node is tainted and each pod evicted, one row each, against a time axis that
    spans ``now`` and every event, with ``now`` marked by a dashed line; a projected time (later
    than now) is a hollow mark. Plain SVG, so the axis and the mark are exactly where said."""
    events = _timeline_events(nodes, pods)
    if not events:
        return None
    shown, more = events[:TIMELINE_ROWS], len(events) - TIMELINE_ROWS
    moment_now = _parse(now)
    times = [e[2] for e in shown] + ([moment_now] if moment_now else [])
    start, end = min(times), max(times)
    pad = max((end - start) * 0.05, timedelta(seconds=5))
    start, end = start - pad, end + pad
    span = (end - start).total_seconds()
    plot = _WIDTH - _LEFT - _RIGHT
    height = _TOP + _ROW * len(shown) + _AXIS + (18 if more > 0 else 0)
    bottom = _TOP + _ROW * len(shown)

    def x(moment: datetime) -> float:
        return round(_LEFT + plot * (moment - start).total_seconds() / span, 1)

    label = "%H:%M:%S" if span < 86400 else "%m-%d %H:%M"
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="timeline" role="img" '
        f'viewBox="0 0 {_WIDTH} {height}" width="{_WIDTH}" height="{height}" '
        'aria-labelledby="timeline-title">',
        '<title id="timeline-title">Taint and eviction timeline</title>',
        '<g class="legend" font-size="12">'
        f'<rect x="{_LEFT}" y="8" width="10" height="10" fill="#d97706"/>'
        f'<text x="{_LEFT + 16}" y="17">node tainted</text>'
        f'<circle cx="{_LEFT + 125}" cy="13" r="5" fill="#b91c1c"/>'
        f'<text x="{_LEFT + 136}" y="17">pod evicted</text>'
        f'<circle cx="{_LEFT + 235}" cy="13" r="5" fill="white" stroke="#444"/>'
        f'<text x="{_LEFT + 246}" y="17">projected (after now)</text></g>',
        f'<g class="axis" font-size="11"><line x1="{_LEFT}" y1="{bottom}" x2="{_LEFT + plot}" '
        f'y2="{bottom}" stroke="#444"/>',
    ]
    for tick in _ticks(start, end):
        tx = x(tick)
        parts.append(
            f'<line x1="{tx}" y1="{_TOP - 6}" x2="{tx}" y2="{bottom + 4}" stroke="#ddd"/>'
            f'<text class="tick" x="{tx}" y="{bottom + 18}" text-anchor="middle">'
            f"{escape(tick.strftime(label))}</text>"
        )
    parts.append(
        f'<text x="{_LEFT + plot / 2}" y="{bottom + 34}" text-anchor="middle">time (UTC)</text></g>'
    )
    for row, (name, what, moment, projected) in enumerate(shown):
        y = _TOP + _ROW * row + _ROW / 2
        color = "#d97706" if what == "tainted" else "#b91c1c"
        fill = "white" if projected else color
        title = f"{name} {what} at {moment.isoformat()}" + (" (projected)" if projected else "")
        mark = (
            f'<rect x="{x(moment) - 5}" y="{y - 5}" width="10" height="10"'
            if what == "tainted"
            else f'<circle cx="{x(moment)}" cy="{y}" r="5"'
        )
        parts.append(
            f'<g class="event {what}"><text x="{_LEFT - 8}" y="{y + 4}" text-anchor="end" '
            f'font-size="12">{escape(name)}</text>{mark} fill="{fill}" stroke="{color}" '
            f'stroke-width="2"><title>{escape(title)}</title></{"rect" if what == "tainted" else "circle"}></g>'
        )
    if moment_now is not None:
        nx = x(moment_now)
        parts.append(
            f'<g class="now"><line x1="{nx}" y1="{_TOP - 10}" x2="{nx}" y2="{bottom}" '
            'stroke="#1f6feb" stroke-width="2" stroke-dasharray="6 4"/>'
            f'<text x="{nx}" y="{_TOP - 14}" text-anchor="middle" font-size="12" fill="#1f6feb">'
            f"now {escape(moment_now.strftime(label))}</text></g>"
        )
    if more > 0:
        parts.append(
            f'<text x="{_LEFT}" y="{height - 4}" font-size="12">… and {more} more, in the '
            "tables below</text>"
        )
    parts.append("</svg>")
    return Markup("".join(parts))
