"""The stored form of a snapshot: zstd-compressed msgpack, and the zlib rows written before."""

from __future__ import annotations

import zlib

import msgspec

from service.engine.objects import Container, Node, Pod, Snapshot
from service.store import snapshots as store


def _snapshot() -> Snapshot:
    return Snapshot(
        nodes=(Node(name="n1", allocatable={"cpu": 4000, "pods": 110}),),
        pods=(
            Pod(
                namespace="d",
                name="p",
                node_name="n1",
                labels={"app": "x"},
                containers=(Container(name="c", requests={"cpu": 100}),),
            ),
        ),
    )


def test_round_trip_through_zstd():
    snapshot = _snapshot()
    content, digest = store.encode(snapshot)
    assert content[:4] == b"\x28\xb5\x2f\xfd"  # a zstd frame
    assert store.decode(content) == snapshot
    assert digest == store.encode(_snapshot())[1]  # same content, same digest


def test_rows_written_with_zlib_still_decode_with_the_same_digest():
    snapshot = _snapshot()
    packed = msgspec.msgpack.encode(snapshot)
    legacy = zlib.compress(packed, 1)
    assert store.decode(legacy) == snapshot
    assert store.encode(snapshot)[1] == store.encode(store.decode(legacy))[1]
