"""decisions/cooperative.py: long work yields to a gevent worker's other requests, and only
there."""

from __future__ import annotations

from service.decisions import KINDS, cooperative
from service.decisions.run import compute
from service.engine.objects import Cluster
from tests.conftest import node, pod, snapshot_from_objects


def _capacity_run() -> dict:
    objects = [node("n1", cpu="2", memory="4Gi"), node("n2", cpu="2", memory="4Gi")]
    web = pod("web", cpu="500m", memory="1Gi")
    return compute(KINDS["capacity"], Cluster(snapshot_from_objects(objects)), {"pod": web}).result


def test_outside_gevent_it_never_sleeps(monkeypatch):
    slept = []
    monkeypatch.setattr(cooperative.time, "sleep", lambda s: slept.append(s))
    monkeypatch.setattr(cooperative, "YIELD_SECONDS", 0.0)
    assert _capacity_run()["replicas"] == 8
    assert slept == []


def test_under_gevent_a_what_if_run_yields_between_its_cycles(monkeypatch):
    """A capacity run is one cycle per replica: each may be the slice that yields."""
    slept = []
    monkeypatch.setattr(cooperative.time, "sleep", lambda s: slept.append(s))
    monkeypatch.setattr(cooperative, "under_gevent", lambda: True)
    monkeypatch.setattr(cooperative, "YIELD_SECONDS", 0.0)
    assert _capacity_run()["replicas"] == 8
    assert len(slept) >= 8 and set(slept) == {0}


def test_it_yields_at_most_once_per_slice(monkeypatch):
    slept = []
    monkeypatch.setattr(cooperative.time, "sleep", lambda s: slept.append(s))
    monkeypatch.setattr(cooperative, "under_gevent", lambda: True)
    monkeypatch.setattr(cooperative, "YIELD_SECONDS", 3600.0)
    step = cooperative.Cooperative()
    for _ in range(100):
        step()
    assert slept == []
