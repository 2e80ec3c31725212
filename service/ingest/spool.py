"""Bytes gathered as they arrive, in memory up to a size, then in a temporary file."""

from __future__ import annotations

import errno
import mmap
import os
import tempfile
from contextlib import contextmanager

from service.ingest.errors import IngestError

# A spool write that fails for these is the server's lack of room, not the client's fault.
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT})


class FileMapping(mmap.mmap):
    """A read-only mapping of a spool's file. Its pages may be dropped while it is read
    (``body.released``): they are mapped back from the file. Never true of anonymous
    memory, whose dropped pages would read as zeros, hence a type of its own."""


def _no_room_error() -> IngestError:
    """507 Insufficient Storage: the request is fine, but the server cannot hold it now
    (``TMPDIR`` is full or over quota). A 503 would invite a client to retry the same body
    at once, against a disk that stays full until an operator or the other uploads free it."""
    return IngestError.one(
        "body",
        "the server has no room to spool this body (its temporary directory is full)",
        status=507,
    )


@contextmanager
def _room():
    """A write that fails for lack of room becomes the 507."""
    try:
        yield
    except OSError as exc:
        if exc.errno in _NO_ROOM:
            raise _no_room_error() from None
        raise


class Spool:
    """Chunks written in order, held in one buffer until their total passes ``over`` bytes
    (never, with None), then in an unlinked temporary file (in TMPDIR). ``result()`` is the
    buffer, or the file mapped read-only: large bytes are then read from the page cache,
    which the kernel can reclaim, not held in the process's own memory. Use it in a ``with``
    block: leaving it closes the file, which goes with the last mapping of it. A full disk
    (ENOSPC, EDQUOT) is a 507 ``IngestError``."""

    def __init__(self, over: int | None) -> None:
        self._over = over
        self._buffer = bytearray()
        self._file = None
        self._size = 0

    def write(self, chunk) -> None:
        self._size += len(chunk)
        if self._file is None and self._over is not None and self._size > self._over:
            with _room():
                self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)
                self._file.write(self._buffer)
            self._buffer = bytearray()
        if self._file is not None:
            with _room():
                self._file.write(chunk)
        else:
            self._buffer += chunk

    def replace_first_byte(self, byte: bytes) -> None:
        """Overwrite the first byte written (a placeholder whose value was known later)."""
        if self._file is None:
            self._buffer[0:1] = byte
        else:
            with _room():
                self._file.flush()
                os.pwrite(self._file.fileno(), byte, 0)

    def result(self) -> bytearray | FileMapping:
        if self._file is None:
            return self._buffer
        with _room():
            self._file.flush()  # buffered writes can first fail here
        return FileMapping(self._file.fileno(), 0, access=mmap.ACCESS_READ)

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._file is not None:
            try:
                self._file.close()
            except OSError as exc:  # the final flush of a file whose write already failed
                if exc.errno not in _NO_ROOM:
                    raise
