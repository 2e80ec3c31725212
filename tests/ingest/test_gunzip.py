"""gzip bodies: inflated piece by piece, refused at the limit, spooled to a temporary file past
a size (so that a bomb's output never enters the worker's memory)."""

from __future__ import annotations

import gzip
import mmap

import orjson
import pytest

from service.ingest.body import gunzip, parse_snapshot
from service.ingest.errors import IngestError
from tests.conftest import kube_list, node, pod


def _cluster() -> bytes:
    items = [node("n1")] + [pod(f"p{i}", "n1", cpu="80u", memory="1.5Gi") for i in range(50)]
    return orjson.dumps(kube_list(*items))


def test_small_output_stays_in_memory():
    body = _cluster()
    out = gunzip(gzip.compress(body), limit=len(body))
    assert isinstance(out, bytearray) and out == body


def test_output_past_the_spool_size_is_read_from_a_mapped_file():
    body = _cluster()
    out = gunzip(gzip.compress(body), limit=len(body), spool_over=4096)
    assert isinstance(out, mmap.mmap)
    assert out[:] == body
    parsed = parse_snapshot(out)
    assert len(parsed.snapshot.pods) == 50


def test_a_spooled_body_is_still_checked_for_repeated_keys_and_nul():
    for extra, path in ((b', "kind": "List"', "kind"), (b', "x": "\\u0000"', "x")):
        body = _cluster()[:-1] + extra + b"}"
        out = gunzip(gzip.compress(body), limit=len(body), spool_over=4096)
        with pytest.raises(IngestError) as caught:
            parse_snapshot(out)
        assert (caught.value.status, caught.value.errors[0].path) == (400, path)


def test_a_bomb_stops_at_the_limit_whether_spooled_or_not():
    bomb = gzip.compress(b" " * (8 << 20))
    for spool_over in (1 << 30, 4096):
        grown = []
        with pytest.raises(IngestError) as caught:
            gunzip(bomb, limit=3 << 20, on_grow=grown.append, spool_over=spool_over)
        assert caught.value.status == 413
        assert max(grown) <= 3 << 20
