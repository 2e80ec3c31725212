"""Bytes gathered as they arrive, in memory up to a size, then in a temporary file."""

from __future__ import annotations

import mmap
import tempfile


class Spool:
    """Chunks written in order, held in one buffer until their total passes ``over`` bytes
    (never, with None), then in an unlinked temporary file (in TMPDIR). ``result()`` is the
    buffer, or the file mapped read-only: large bytes are then read from the page cache,
    which the kernel can reclaim, not held in the process's own memory. Use it in a ``with``
    block: leaving it closes the file, which goes with the last mapping of it."""

    def __init__(self, over: int | None) -> None:
        self._over = over
        self._buffer = bytearray()
        self._file = None
        self._size = 0

    def write(self, chunk) -> None:
        self._size += len(chunk)
        if self._file is None and self._over is not None and self._size > self._over:
            self._file = tempfile.TemporaryFile()  # noqa: SIM115 (closed by __exit__)
            self._file.write(self._buffer)
            self._buffer = bytearray()
        if self._file is not None:
            self._file.write(chunk)
        else:
            self._buffer += chunk

    def result(self) -> bytearray | mmap.mmap:
        if self._file is None:
            return self._buffer
        self._file.flush()
        return mmap.mmap(self._file.fileno(), 0, access=mmap.ACCESS_READ)

    def __enter__(self) -> Spool:
        return self

    def __exit__(self, *exc_info) -> None:
        if self._file is not None:
            self._file.close()
