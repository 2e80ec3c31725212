"""Bounds on one worker's work: requests in flight, and large bodies decoded at once.

Past either bound a request is answered 503 with Retry-After at once, rather than queued
behind work it would only make slower (overload is shed), and counted in /metrics. A
request waiting for its client to send more of its body is not in flight: a client that
sends slowly, or stops mid-body, must not take the slots of the others (issue 24).
"""

from __future__ import annotations

import threading

from flask import Flask, current_app, g, request
from prometheus_client import Counter

from service.api.errors import ApiError

SHED = Counter(
    "verdict_requests_shed_total",
    "Requests answered 503 at once because the worker was at one of its bounds",
    ["reason"],
)
# Probes and metrics stay answerable under load: they are how an operator sees it.
UNBOUNDED_PATHS = ("/healthz", "/readyz", "/metrics")
# Files served as they are from disk cost no work worth shedding, and a browser asks for
# several at once: shedding one (Swagger UI's bundle, say) would leave a blank page.
UNBOUNDED_ENDPOINTS = frozenset(
    {
        "docs.swagger_ui",
        "docs.swagger_initializer",
        "docs.swagger_asset",
        "docs.openapi_json",
        "console.static",
    }
)


class Slots:
    """A counter that refuses rather than waits: the non-blocking half of a semaphore."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.used = 0
        self._lock = threading.Lock()

    def take(self) -> bool:
        with self._lock:
            if self.used >= self.size:
                return False
            self.used += 1
            return True

    def give_back(self) -> None:
        with self._lock:
            self.used -= 1


class SlotFreeWhileWaiting:
    """The request's input stream: each read gives the request's in-flight slot back while
    it waits for the client, and takes it again once the bytes are in (shed with 503 when
    the others took them all meanwhile)."""

    def __init__(self, stream, slots: Slots) -> None:
        self.stream, self.slots = stream, slots

    def _waiting(self, read, *args):
        if g.pop("in_flight_slot", False):
            self.slots.give_back()
        try:
            data = read(*args)
        except TimeoutError:  # the socket's idle timeout (service/serving.py)
            raise ApiError(408, "no byte of the body arrived in time") from None
        _take_in_flight(self.slots)
        return data

    def read(self, *args):
        return self._waiting(self.stream.read, *args)

    def readline(self, *args):
        return self._waiting(self.stream.readline, *args)

    def readlines(self, *args):
        return self._waiting(self.stream.readlines, *args)

    def __iter__(self):
        return iter(self.readline, b"")


def _take_in_flight(slots: Slots) -> None:
    if not slots.take():
        raise _shed("in_flight", "this worker is at its bound of requests in flight", 1)
    g.in_flight_slot = True


def _has_body() -> bool:
    return (
        bool(request.content_length)
        or "chunked" in request.headers.get("Transfer-Encoding", "").lower()
    )


def _shed(reason: str, detail: str, retry_after: int) -> ApiError:
    SHED.labels(reason).inc()
    return ApiError(503, detail, headers={"Retry-After": str(retry_after)})


def hold_large_body_slot() -> None:
    """Called once a body being read or inflated grows past LARGE_BODY_BYTES: this request
    now holds one of the worker's LARGE_BODY_SLOTS until it ends, or is shed with 503."""
    if g.get("large_body_slot"):
        return
    if not current_app.extensions["verdict.large_bodies"].take():
        raise _shed("large_body", "this worker is already decoding its share of large bodies", 5)
    g.large_body_slot = True


def register(app: Flask) -> None:
    settings = app.config["VERDICT"]
    in_flight = Slots(settings.MAX_IN_FLIGHT) if settings.MAX_IN_FLIGHT else None
    large_bodies = Slots(settings.LARGE_BODY_SLOTS)
    app.extensions["verdict.large_bodies"] = large_bodies
    app.extensions["verdict.in_flight"] = in_flight

    @app.before_request
    def _admit():
        if (
            in_flight is None
            or request.path in UNBOUNDED_PATHS
            or request.endpoint in UNBOUNDED_ENDPOINTS
        ):
            return
        _take_in_flight(in_flight)
        if _has_body():
            environ = request.environ
            environ["wsgi.input"] = SlotFreeWhileWaiting(environ["wsgi.input"], in_flight)

    @app.teardown_request
    def _release(_exc):
        if g.pop("in_flight_slot", False):
            in_flight.give_back()
        if g.pop("large_body_slot", False):
            large_bodies.give_back()
