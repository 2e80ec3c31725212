"""Warm snapshots: keep the newest stored snapshots decoded, with their derived indexes built,
in this process, so that the first decision on a snapshot does not pay for decoding it.

Decoding a 150,000-pod snapshot and building the scheduler's view of it takes seconds; a
decision on a warm snapshot takes milliseconds. Each server process runs one background
thread: it warms a snapshot as soon as this process stores it, and every ``interval``
seconds it looks for the ``count`` newest snapshots (stored by any process) and warms the
ones it does not hold yet. A request that arrives while its snapshot is being warmed waits
for that one load (``load_cluster`` loads each snapshot once at a time) instead of starting
another.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from sqlalchemy import select

from service.engine.objects import Cluster
from service.store.db import Database
from service.store.models import SnapshotRow
from service.store.snapshots import ClusterCache, load_cluster, store_view, view_outdated

log = logging.getLogger("verdict.preload")

_MAX_NUDGED = 8


class Preloader:
    def __init__(
        self,
        db: Database,
        cache: ClusterCache,
        *,
        count: int,
        interval: float,
        warm: Callable[[Cluster], None],
    ) -> None:
        self.db = db
        self.cache = cache
        self.count = max(count, 0)
        self.interval = max(interval, 0.05)  # 0 from the environment must not spin
        self.warm = warm
        self._nudged: list[str] = []
        self._wake = threading.Event()
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._warmed: set[str] = set()

    def start(self) -> None:
        if self.count == 0 or self._thread is not None:
            return
        self._thread = threading.Thread(target=self._loop, name="verdict-preload", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout=30)

    def nudge(self, snapshot_id: str) -> None:
        """Warm this snapshot now (this process just stored it). Only the last few are kept:
        without a running thread (gunicorn started directly) nothing consumes them."""
        if self.count == 0:
            return
        with self._lock:
            self._nudged.append(snapshot_id)
            del self._nudged[:-_MAX_NUDGED]
        self._wake.set()

    def newest_ids(self) -> list[str]:
        with self.db.session() as session:
            return list(
                session.scalars(
                    select(SnapshotRow.id)
                    .order_by(SnapshotRow.created_at.desc(), SnapshotRow.id.desc())
                    .limit(self.count)
                )
            )

    def run_once(self) -> list[str]:
        """Warm the nudged snapshots, then the newest ones not warm yet; the ids warmed."""
        with self._lock:
            wanted, self._nudged = self._nudged, []
        wanted += [i for i in reversed(self.newest_ids()) if i not in wanted]
        done = []
        self._warmed = {i for i in self._warmed if i in self.cache}
        for snapshot_id in dict.fromkeys(wanted):
            if snapshot_id in self._warmed:
                continue
            started = time.perf_counter()
            with self.db.session() as session:
                cluster = load_cluster(session, self.cache, snapshot_id, scheduler=True)
            if cluster is None:  # deleted meanwhile
                continue
            self.warm(cluster)
            self._store_view_if_outdated(snapshot_id, cluster)
            self._warmed.add(snapshot_id)
            done.append(snapshot_id)
            log.info(
                "snapshot warmed",
                extra={
                    "snapshot_id": snapshot_id,
                    "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                },
            )
        return done

    def _store_view_if_outdated(self, snapshot_id: str, cluster: Cluster) -> None:
        """Give a snapshot stored before the scheduler view existed (or by another engine
        version) the view it lacks, so that other processes can restore it."""
        with self.db.session() as session:
            outdated = view_outdated(session, snapshot_id)
        if outdated:
            with self.db.session(write=True) as session:
                store_view(session, snapshot_id, cluster)
            log.info("scheduler view stored", extra={"snapshot_id": snapshot_id})

    def _loop(self) -> None:
        while not self._stopped.is_set():
            try:
                self.run_once()
            except Exception:  # never let a bad row or a lost connection stop the thread
                log.exception("warming snapshots failed")
            self._wake.wait(self.interval)
            self._wake.clear()
