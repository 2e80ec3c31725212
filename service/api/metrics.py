"""Prometheus metrics, labelled by route rule (never raw paths), multiprocess-safe."""

from __future__ import annotations

import os
import time

from flask import Flask, Response, g, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)

REQUESTS = Counter("verdict_http_requests_total", "HTTP requests", ["method", "route", "status"])
LATENCY = Histogram(
    "verdict_http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
)
DECISIONS = Counter(
    "verdict_decisions_total", "Decisions recorded, by kind and outcome", ["kind", "outcome"]
)
BUILD_INFO = Gauge(
    "verdict_build_info",
    "Always 1: the running release, its engine and Python",
    ["version", "engine_version", "python"],
    multiprocess_mode="max",
)
BODY_NATIVE = Gauge(
    "verdict_body_reader_native",
    "1 when the C half of reading request bodies (service/ingest/_body.c) is built; 0 when "
    "this install fell back to the Python scan, about 10 times slower on large bodies",
    multiprocess_mode="min",
)
INGEST_BYTES = Histogram(
    "verdict_ingest_bytes",
    "Snapshot bodies stored, in bytes after decompression",
    buckets=tuple(2**n for n in range(10, 31, 2)),  # 1 KiB .. 1 GiB
)
INGEST_SECONDS = Histogram(
    "verdict_ingest_duration_seconds",
    "Time to parse and store a snapshot body",
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
SNAPSHOT_CACHE = Counter(
    "verdict_snapshot_cache_total",
    "Reads of a stored snapshot: found parsed in memory (hit) or loaded (miss)",
    ["result"],
)


def decision_outcome(kind: str, result: dict) -> str:
    """What a decision answered, in one word per kind (a label of verdict_decisions_total)."""
    if kind == "admission":
        return "admitted" if result.get("admitted") else "rejected"
    if kind == "placement":
        return "placed" if result.get("selectedNode") else "unschedulable"
    if kind == "preemption":
        return "nominated" if result.get("nominatedNodeName") else "none"
    if kind == "eviction":
        return "evict" if result.get("victim") else "none"
    if kind == "node-eviction-rate":
        disrupted = any(z.get("state") != "Normal" for z in result.get("zones", ()))
        return "disrupted" if disrupted else "normal"
    return "recorded"


def count_cache(cache, snapshot_id: str) -> None:
    """Count a read of a stored snapshot as a cache hit or miss (before loading it)."""
    SNAPSHOT_CACHE.labels("hit" if snapshot_id in cache else "miss").inc()


def set_build_info() -> None:
    import importlib.metadata
    import platform

    from service.engine.version import ENGINE_VERSION

    try:
        version = importlib.metadata.version("verdict")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown"
    BUILD_INFO.labels(version, ENGINE_VERSION, platform.python_version()).set(1)


def exposition() -> Response:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
        data = generate_latest(registry)
    else:
        data = generate_latest()
    return Response(data, mimetype=CONTENT_TYPE_LATEST.split(";")[0])


def register(app: Flask) -> None:
    from service.ingest.body import NATIVE

    set_build_info()
    BODY_NATIVE.set(1 if NATIVE else 0)

    @app.before_request
    def _start_timer():
        g.started = time.perf_counter()

    @app.after_request
    def _observe(response):
        route = request.url_rule.rule if request.url_rule else "unmatched"
        elapsed = time.perf_counter() - g.get("started", time.perf_counter())
        REQUESTS.labels(request.method, route, str(response.status_code)).inc()
        LATENCY.labels(request.method, route).observe(elapsed)
        g.elapsed = elapsed
        return response
