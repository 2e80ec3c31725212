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
  it holds none of the worker's in-flight slots (service/api/load.py);
- a body the app answered without reading (a 413 at the limit, a 415, a 401) is not parsed
  to its end: gunicorn would read the rest of it, chunk by chunk, to reuse the connection
  (3.5 s of CPU for the rest of a 200 MiB chunked body), ignoring the app's wish to close.
  A leftover of up to ``DRAIN_BYTES`` is still read so that the connection stays alive;
  past that the connection is closed the way RFC 9112 section 9.6 describes: the answer
  is sent, the sending side shut, and what the client still sends is discarded unparsed
  (bounded by ``LINGER_BYTES`` and ``LINGER_SECONDS``) so that a client still sending
  its body reads the answer instead of a reset.

What the app needs under gevent: gunicorn patches the standard library in each worker before
the app is created there, so its threads (the warming and checkpoint threads) are greenlets
and its locks gevent's; psycopg, imported earlier by the migration that runs before the
fork, is told to wait on the (patched) ``select`` (``PSYCOPG_WAIT_FUNC``) instead of its C
wait, which would block the worker's other greenlets. SQLite calls and CPU work run without
switching: a long decision holds its worker until it is done (run more workers).
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time

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

    def handle_request(self, listener_name, req, sock, addr):
        """gunicorn's, then: a body left unread past ``DRAIN_BYTES`` closes the connection
        (lingering) instead of being parsed to its end by the next request's parser."""
        try:
            kept = AsyncWorker.handle_request(self, listener_name, req, sock, addr)
        except StopIteration:
            if not _rest_of_body_read(req, sock, 0):
                linger_close(sock)
            raise
        if kept and not _rest_of_body_read(req, sock, DRAIN_BYTES):
            linger_close(sock)
            raise StopIteration()  # gunicorn's handle() then closes the socket
        return kept


DRAIN_BYTES = 64 * 1024  # a leftover this small is read, and the connection kept
DRAIN_SECONDS = 2  # the most a leftover's read waits for the client
LINGER_BYTES = 256 * 1024 * 1024  # discarded at most (~0.1 s of CPU) before the close
LINGER_SECONDS = 30  # and for at most this long (nginx's lingering_time)
LINGER_IDLE_SECONDS = 5  # or until the client sends nothing for this long (lingering_timeout)
_DISCARD_CHUNK = 1 << 20


def _rest_of_body_read(req, sock, limit: int) -> bool:
    """Whether the request's body is read to its end, reading at most ``limit`` more bytes
    of it (through gunicorn's parser) to get there."""
    body = getattr(req, "body", None)
    if body is None:
        return True
    if getattr(body, "failed", False):
        return False  # reading it raised (a timeout, a bad chunk): where it ends is unknown
    before = sock.gettimeout()
    try:
        sock.settimeout(DRAIN_SECONDS)
        read = 0
        while True:
            data = body.read(min(8192, limit - read + 1))
            if not data:
                return True
            read += len(data)
            if read > limit:
                return False
    except Exception:  # a timeout, a reset, a bad chunk: the connection is not reusable
        return False
    finally:
        with contextlib.suppress(OSError):
            sock.settimeout(before)


def linger_close(sock) -> None:
    """Send nothing more, then discard what the client still sends, unparsed, until it
    stops or pauses, or ``LINGER_BYTES`` or ``LINGER_SECONDS`` are reached; the caller closes
    (RFC 9112 section 9.6: closing with unread data would reset the connection and lose
    the answer the client has not read yet)."""
    deadline = time.monotonic() + LINGER_SECONDS
    buffer = bytearray(_DISCARD_CHUNK)
    discarded = 0
    try:
        sock.shutdown(socket.SHUT_WR)
        while discarded < LINGER_BYTES:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            sock.settimeout(min(left, LINGER_IDLE_SECONDS))
            count = sock.recv_into(buffer)
            if not count:
                return
            discarded += count
    except OSError:
        return


def worker_exit(_server, _worker) -> None:
    """Before a worker's interpreter shuts down: logging's handlers flushed and closed, and
    its list of them emptied. At shutdown each handler's weak reference calls back into
    logging, which takes its lock, a gevent lock once the worker is patched; by then gevent's
    modules are torn down, and every worker's exit printed "Exception ignored in
    _removeHandlerRef ... TypeError" from gevent's ``get_ident``. With the list empty the
    callback has nothing to remove and takes no lock."""
    logging.shutdown()
    logging._handlerList.clear()  # what _removeHandlerRef reads first


def configure(cfg, connections: int, header_timeout: int, idle_timeout: int) -> None:
    """The gunicorn settings that bound slow clients, and a clean worker exit."""
    cfg.set("worker_class", f"{__name__}.Worker")
    cfg.set("worker_connections", connections)
    cfg.set("keepalive", header_timeout)
    cfg.set("worker_exit", worker_exit)
    Worker.idle_timeout = idle_timeout
