"""How `verdict serve` runs the app: gunicorn with gevent workers, so that slow clients cost a
greenlet and a socket, not a worker thread.

gunicorn's threaded worker hands a connection to a thread as soon as its first bytes arrive,
and the thread then blocks until the headers and the body are in: eight clients sending half
their headers held every thread. gevent's worker (gunicorn's own async worker, which its
documentation recommends for serving clients directly) waits for each connection in a
greenlet instead; the bounds below then time the slow ones out:

- the headers of a request must arrive within ``--header-timeout`` seconds (gunicorn's
  ``keepalive``, which its async workers apply to reading every request's headers, the first
  one included, and to an idle kept-alive connection);
- every read or write on a client's socket (a body, an answer) waits at most
  ``--idle-timeout`` seconds for the client (a body that stops is answered 408);
- a worker holds at most ``--connections`` connections; while a request waits for its body
  it holds none of the worker's in-flight slots (service/api/load.py).

What the app needs under gevent: gunicorn patches the standard library in each worker before
the app is created there, so its threads (the warming and checkpoint threads) are greenlets
and its locks gevent's; psycopg, imported earlier by the migration that runs before the
fork, is told to wait on the (patched) ``select`` (``PSYCOPG_WAIT_FUNC``) instead of its C
wait, which would block the worker's other greenlets. SQLite calls and CPU work run without
switching: a long decision holds its worker until it is done (run more workers).
"""

from __future__ import annotations

import os

from gunicorn.workers.base_async import AsyncWorker
from gunicorn.workers.ggevent import GeventWorker


def prepare_psycopg() -> None:
    """Before psycopg is imported: its waits go through ``select``, which gevent patches."""
    os.environ.setdefault("PSYCOPG_WAIT_FUNC", "wait_select")


class Worker(GeventWorker):
    """gunicorn's gevent worker, with a timeout on every read and write of a client socket
    (its own worker makes client sockets blocking without one)."""

    idle_timeout = 30  # set by configure() in the arbiter, inherited by the forked workers

    def handle(self, listener, client, addr):
        client.settimeout(self.idle_timeout)
        AsyncWorker.handle(self, listener, client, addr)


def configure(cfg, connections: int, header_timeout: int, idle_timeout: int) -> None:
    """The gunicorn settings that bound slow clients."""
    cfg.set("worker_class", f"{__name__}.Worker")
    cfg.set("worker_connections", connections)
    cfg.set("keepalive", header_timeout)
    Worker.idle_timeout = idle_timeout
