"""The body spool: a large body goes to a temporary file read through a mapping whose pages
are dropped as it is parsed, and a full disk is a 507, not a 500."""

from __future__ import annotations

import errno
import gzip
import io
import mmap
import subprocess
import sys
import tempfile
import textwrap
import time

import orjson
import pytest

from service.ingest import body as body_module
from service.ingest import spool as spool_module
from service.ingest.body import gunzip, parse_snapshot, released
from service.ingest.errors import IngestError
from service.ingest.spool import FileMapping, Spool
from tests.conftest import kube_list, node, pod

MIB = 1 << 20


def _spooled(data: bytes) -> FileMapping:
    with Spool(16) as spool:
        spool.write(data)
        return spool.result()


def test_a_body_under_the_size_stays_in_a_buffer_and_one_past_it_is_a_file_mapping():
    with Spool(16) as spool:
        spool.write(b"0123456789")
        assert isinstance(spool.result(), bytearray)
    mapped = _spooled(b"x" * 17)
    assert isinstance(mapped, FileMapping) and mapped[:] == b"x" * 17


def _file_resident_mib() -> float:
    """The process's resident mapped-file memory (RssFile), in MiB."""
    status = open("/proc/self/status").read()  # noqa: SIM115
    return int(status.split("RssFile:")[1].split()[0]) / 1024


@pytest.mark.skipif(body_module._release_start is None, reason="needs the C extension")
def test_released_drops_a_file_mappings_pages_and_they_read_back_the_same():
    """Dropping pages is timed by the releasing thread (2 ms rounds), so the test waits
    for it (up to a minute) rather than asserting a time: what it asserts is that the pages
    do go, and that the bytes read afterwards are the bytes written."""
    data = bytes(range(256)) * (64 * MIB // 256)
    mapped = _spooled(data)
    idle = _file_resident_mib()
    assert mapped[:] == data  # every page resident, nothing drops them
    assert _file_resident_mib() > idle + 60
    with released(mapped):
        for _ in range(6000):
            if _file_resident_mib() < idle + 4:
                break
            time.sleep(0.01)
        assert _file_resident_mib() < idle + 4
        assert mapped[:] == data
    assert mapped[:] == data


def test_released_leaves_anonymous_memory_alone():
    """MADV_DONTNEED on anonymous memory would zero it: only a FileMapping is released."""
    anonymous = mmap.mmap(-1, 4 * MIB)
    anonymous.write(b"y" * (4 * MIB))
    buffer = bytearray(b"z" * (4 * MIB))
    with released(anonymous), released(buffer):
        time.sleep(0.1)  # 50 rounds of the thread, had one started
        assert anonymous[:] == b"y" * (4 * MIB)
        assert buffer == b"z" * (4 * MIB)


_PEAK = textwrap.dedent(
    """
    import sys, zlib
    from service.ingest import body
    from service.ingest.spool import Spool

    def peak_mib():
        status = open("/proc/self/status").read()
        return int(status.split("VmHWM:")[1].split()[0]) // 1024

    head, size, tail, how = sys.argv[1].encode(), int(sys.argv[2]), sys.argv[3].encode(), sys.argv[4]
    squeeze = zlib.compressobj(1, wbits=31) if how == "gzip" else None
    with Spool(16) as spool:
        for piece in [head] + [b" " * (1 << 20)] * size + [tail]:
            spool.write(squeeze.compress(piece) if squeeze else piece)
        if squeeze:
            spool.write(squeeze.flush())
        mapped = spool.result()
    before = peak_mib()
    if squeeze:
        mapped = body.gunzip(mapped, 1 << 30, spool_over=16)
    body.parse_snapshot(mapped)
    print(peak_mib() - before)
    """
)


def _peak_growth(size_mib: int, head: str, tail: str, how: str = "plain") -> int:
    result = subprocess.run(
        [sys.executable, "-c", _PEAK, head, str(size_mib), tail, how],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(result.stdout.split()[-1])


@pytest.mark.skipif(body_module._release_start is None, reason="needs the C extension")
def test_parsing_a_large_spooled_body_keeps_the_peak_far_under_its_size():
    """A 256 MiB List padded with whitespace (normalized form: empty) is parsed from its
    mapping, every pass touching every page: the worker's peak (VmHWM) grows by a small
    part of it, where it grew by all of it when the mapping stayed resident. A memory
    bound, not a time: the releasing thread has 2 ms rounds, the bound allows 64 MiB."""
    growth = _peak_growth(256, '{"kind": "List", "items": [', "]}")
    assert growth < 64, growth


@pytest.mark.skipif(body_module._release_start is None, reason="needs the C extension")
def test_an_inflated_body_is_parsed_with_the_same_bound():
    """The same List sent gzipped: inflated to a spool, then parsed from its mapping."""
    growth = _peak_growth(256, '{"kind": "List", "items": [', "]}", "gzip")
    assert growth < 64, growth


def _cluster() -> bytes:
    items = [node("n1")] + [pod(f"p{i}", "n1", cpu="80u", memory="1.5Gi") for i in range(50)]
    return orjson.dumps(kube_list(*items))


def test_a_released_body_parses_to_the_same_snapshot():
    body = _cluster()
    assert parse_snapshot(_spooled(body)).snapshot == parse_snapshot(body).snapshot


def test_without_the_c_extension_a_spooled_body_is_parsed_with_its_pages_resident(monkeypatch):
    """The extension is optional: without it nothing is dropped, and the answer is the same."""
    monkeypatch.setattr(body_module, "_release_start", None)
    monkeypatch.setattr(body_module, "_first_problem", None)
    body = _cluster()
    assert parse_snapshot(_spooled(body)).snapshot == parse_snapshot(body).snapshot
    repeated = body[:-1] + b', "kind": "List"}'
    with pytest.raises(IngestError) as caught:
        parse_snapshot(_spooled(repeated))
    assert caught.value.errors[0].path == "kind"


class _FullDisk(io.BufferedRandom):
    """A temporary file on a disk with no room left: every write fails with ``code``.
    (No small tmpfs can be mounted here, so the failure is made by this subclass; the
    Spool sees the OSError a real full disk raises.)"""

    code = errno.ENOSPC

    def write(self, data):
        raise OSError(self.code, "No space left on device")


_REAL_TEMPORARY_FILE = tempfile.TemporaryFile


def _full_disk(monkeypatch, code: int) -> None:
    def temporary_file():
        raw = _REAL_TEMPORARY_FILE(buffering=0)
        handle = _FullDisk(raw)
        handle.code = code
        return handle

    monkeypatch.setattr(spool_module.tempfile, "TemporaryFile", temporary_file)


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT])
def test_a_spool_write_on_a_full_disk_is_a_507(monkeypatch, code):
    _full_disk(monkeypatch, code)
    with pytest.raises(IngestError) as caught, Spool(16) as spool:
        spool.write(b"x" * 64)
    assert caught.value.status == 507
    assert caught.value.errors[0].path == "body"


def test_inflating_onto_a_full_disk_is_a_507(monkeypatch):
    _full_disk(monkeypatch, errno.ENOSPC)
    body = _cluster()
    with pytest.raises(IngestError) as caught:
        gunzip(gzip.compress(body), limit=len(body), spool_over=4096)
    assert caught.value.status == 507


def test_a_flush_that_finds_the_disk_full_is_a_507(monkeypatch):
    """Buffered writes can first fail when the spool is flushed for its mapping."""

    class _FullAtFlush(io.BufferedRandom):
        def flush(self):
            raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(
        spool_module.tempfile,
        "TemporaryFile",
        lambda: _FullAtFlush(_REAL_TEMPORARY_FILE(buffering=0)),
    )
    with pytest.raises(IngestError) as caught, Spool(16) as spool:
        spool.write(b"x" * 64)
        spool.result()
    assert caught.value.status == 507


def test_other_write_failures_are_not_turned_into_a_507(monkeypatch):
    _full_disk(monkeypatch, errno.EIO)
    with pytest.raises(OSError) as caught, Spool(16) as spool:
        spool.write(b"x" * 64)
    assert caught.value.errno == errno.EIO


def test_post_snapshot_onto_a_full_disk_is_a_507_problem(api, app, monkeypatch):
    """Through the API: the spool's writes fail as on a full disk (the tiny subclass above,
    since no small tmpfs can be mounted here) and the answer is a 507 problem+json, not a
    500; the failed body stores nothing."""
    monkeypatch.setattr(app.config["VERDICT"], "LARGE_BODY_BYTES", 4096)
    _full_disk(monkeypatch, errno.ENOSPC)
    for headers, body in (
        ({}, _cluster()),
        ({"Content-Encoding": "gzip"}, gzip.compress(_cluster())),
    ):
        response = api.post(
            "/v1/snapshots", data=body, headers=headers, content_type="application/json"
        )
        assert response.status_code == 507, response.get_data()
        assert response.mimetype == "application/problem+json"
        problem = response.get_json()
        assert problem["title"] == "Insufficient Storage"
        assert problem["errors"][0]["path"] == "body"
    assert api.get("/v1/snapshots").get_json()["items"] == []
