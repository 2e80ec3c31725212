"""Warm snapshots: the newest are decoded and their scheduler view built in the background;
concurrent first requests decode a snapshot once."""

from __future__ import annotations

import threading
import time

from service.engine.scheduler import snapshot as scheduler_snapshot
from service.extensions import extensions
from service.store import snapshots as store
from service.store.preload import Preloader
from service.store.snapshots import ClusterCache
from tests.conftest import kube_list, node, pod


def _store(api, name: str) -> str:
    body = kube_list(node(f"{name}-n1"), pod(f"{name}-p1", f"{name}-n1", cpu="100m"))
    response = api.post("/v1/snapshots", json=body)
    assert response.status_code == 201
    return response.get_json()["id"]


def _preloader(app, cache: ClusterCache, count: int = 1, interval: float = 0.05) -> Preloader:
    from service.store.warm import warm

    return Preloader(extensions(app).db, cache, count=count, interval=interval, warm=warm)


def _is_warm(cache: ClusterCache, snapshot_id: str) -> bool:
    cluster = cache.get(snapshot_id)
    return cluster is not None and scheduler_snapshot._VIEWS.get(cluster) is not None


def test_the_newest_snapshots_are_warmed_once(app, api):
    older = _store(api, "a")
    time.sleep(0.01)
    newest = _store(api, "b")
    cache = ClusterCache(size=4)  # a process that has seen neither
    preloader = _preloader(app, cache, count=1)
    assert preloader.run_once() == [newest]
    assert _is_warm(cache, newest)
    assert older not in cache
    assert preloader.run_once() == []  # already warm: nothing decoded again


def test_a_nudged_snapshot_is_warmed_first_even_if_not_the_newest(app, api):
    older = _store(api, "a")
    time.sleep(0.01)
    newest = _store(api, "b")
    cache = ClusterCache(size=4)
    preloader = _preloader(app, cache, count=1)
    preloader.nudge(older)
    assert preloader.run_once() == [older, newest]
    assert _is_warm(cache, older) and _is_warm(cache, newest)


def test_a_deleted_snapshot_is_skipped(app, api):
    gone = _store(api, "a")
    assert api.delete(f"/v1/snapshots/{gone}").status_code == 204
    cache = ClusterCache(size=4)
    preloader = _preloader(app, cache, count=1)
    preloader.nudge(gone)
    assert preloader.run_once() == []
    assert gone not in cache


def test_the_thread_warms_what_is_stored_after_it_started(app, api):
    cache = ClusterCache(size=4)
    preloader = _preloader(app, cache, count=2, interval=0.05)
    preloader.start()
    try:
        snapshot_id = _store(api, "a")
        deadline = time.monotonic() + 10
        while not _is_warm(cache, snapshot_id) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _is_warm(cache, snapshot_id)
    finally:
        preloader.stop()


def test_count_zero_turns_warming_off(app, api):
    snapshot_id = _store(api, "a")
    cache = ClusterCache(size=4)
    preloader = _preloader(app, cache, count=0)
    preloader.start()
    preloader.nudge(snapshot_id)
    assert preloader._thread is None
    assert snapshot_id not in cache


def test_concurrent_first_loads_decode_once(app, api, monkeypatch):
    snapshot_id = _store(api, "a")
    cache = ClusterCache(size=4)
    decoded = []
    real_decode = store.decode

    def counting_decode(content):
        decoded.append(1)
        time.sleep(0.05)  # long enough for the other threads to arrive while it runs
        return real_decode(content)

    monkeypatch.setattr(store, "decode", counting_decode)
    db = extensions(app).db
    found = []

    def load():
        with db.session() as session:
            found.append(store.load_cluster(session, cache, snapshot_id))

    threads = [threading.Thread(target=load) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(decoded) == 1
    assert len(found) == 6 and all(c is found[0] for c in found)
    assert not cache._loading  # no lock left behind


def test_nudges_without_a_thread_do_not_pile_up(app):
    cache = ClusterCache(size=4)
    preloader = _preloader(app, cache, count=1)
    for i in range(100):
        preloader.nudge(f"id-{i}")
    assert preloader._nudged == [f"id-{i}" for i in range(92, 100)]
