"""The stored form of a snapshot (zstd-compressed msgpack, the zlib rows written before, and
the digest of plain quantities unchanged by exact ones) and the parsed-snapshot cache, bounded by count and by pods, least recently used first."""

from __future__ import annotations

import zlib

import msgspec
import orjson

from service.engine.objects import Cluster, Container, Node, Pod, Snapshot
from service.ingest.body import parse_snapshot
from service.store import snapshots as store
from service.store.snapshots import ClusterCache, encode
from tests.conftest import kube_list, node, pod


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


def _cluster(pods: int) -> Cluster:
    return Cluster(Snapshot(pods=tuple(Pod(namespace="d", name=f"p{i}") for i in range(pods))))


def test_bounded_by_count_and_pods():
    cache = ClusterCache(size=2, max_pods=10)
    cache.put("a", _cluster(4))
    cache.put("b", _cluster(4))
    assert cache.get("a") is not None  # a is now the most recently used
    cache.put("c", _cluster(4))
    assert cache.get("b") is None and cache.get("a") is not None
    cache.put("big", _cluster(50))  # over the pod bound alone: kept, everything else dropped
    assert cache.get("big") is not None and cache.get("a") is None and cache.get("c") is None


def test_plain_quantities_store_as_before():
    """Quantities the integers rebuild keep no written form: the stored bytes, and so the
    digest, of such a snapshot are those of the code before (computed with commit d52b342)."""
    body = kube_list(
        node("n1", cpu="4", memory="8Gi"),
        pod("a", "n1", cpu="100m", memory="1Gi", limits={"cpu": "2"}),
        pod("b", "n1", cpu="0.5", memory="1000M"),
    )
    _, digest = encode(parse_snapshot(orjson.dumps(body)).snapshot)
    assert digest == "sha256:ca24f3b8c01cec0c58996d66abd0ea5c121f2d9823554d5919e1702f37571fe5"
