"""The output: the kubectl List of the cluster's items, alone (``--list``) or inside a Verdict
snapshot envelope with the nodes' Summary stats, serialized in chunks so that the CLI streams
a 150,000-pod cluster without holding it.

Items are written with sorted keys, as ``kubectl get -o json`` prints them; Summary objects
keep the kubelet's (Go struct) field order. Nothing here draws randomness: the bytes are those
of the plan's ``items()`` and ``stats()``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import orjson

from bench.generate.cluster import Cluster
from bench.generate.common import DEFAULT_CAPTURED_AT
from bench.generate.volumes import VolumeCluster

_LIST_HEAD = b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":['


def iter_items(
    nodes: int, pods: int, seed: int, *, captured_at: str = DEFAULT_CAPTURED_AT
) -> Iterator[dict]:
    """The List items (nodes, pods, PDBs, PriorityClasses, Leases), one dict at a time.

    Dicts may share sub-objects with each other (pod templates); treat them as read-only or
    use :func:`generate`, which returns independent objects.
    """
    return Cluster(nodes, pods, seed, captured_at).items()


def iter_stats(
    nodes: int, pods: int, seed: int, *, captured_at: str = DEFAULT_CAPTURED_AT
) -> Iterator[tuple[str, dict]]:
    """(node name, kubelet Summary) pairs, in node-name order, skipping unreachable nodes."""
    return Cluster(nodes, pods, seed, captured_at).stats()


def iter_chunks(
    nodes: int,
    pods: int,
    seed: int,
    *,
    stats: bool = True,
    list_only: bool = False,
    captured_at: str = DEFAULT_CAPTURED_AT,
    batch: int = 256,
    volumes: bool = False,
) -> Iterator[bytes]:
    """The serialized output, in chunks of about ``batch`` objects (what the CLI writes).
    ``volumes``: the cluster of ``volumes.py`` (StatefulSets claiming zonal volumes, CSINode
    limits)."""
    cluster_type = VolumeCluster if volumes else Cluster
    cluster = cluster_type(nodes, pods, seed, captured_at)
    return _chunked(_pieces(cluster, stats=stats and not list_only, list_only=list_only), batch)


def generate(
    nodes: int,
    pods: int,
    seed: int,
    *,
    stats: bool = True,
    captured_at: str = DEFAULT_CAPTURED_AT,
) -> dict:
    """The envelope as a Python dict (meant for small sizes); equal to ``json.loads`` of the CLI
    output for the same arguments."""
    return orjson.loads(
        b"".join(iter_chunks(nodes, pods, seed, stats=stats, captured_at=captured_at))
    )


def _pieces(cluster: Cluster, *, stats: bool, list_only: bool) -> Iterator[bytes]:
    """The output as a sequence of byte strings: the envelope's head (unless ``list_only``),
    the List, the stats object (if ``stats``), the closing braces and a newline."""
    if not list_only:
        yield (
            b'{"name":'
            + orjson.dumps(cluster.name)
            + b',"cluster":"synthetic","labels":{"generator":"bench.generate"},"capturedAt":'
            + orjson.dumps(cluster.captured_at)
            + b',"objects":'
        )
    yield _LIST_HEAD
    yield from _comma_separated(
        orjson.dumps(item, option=orjson.OPT_SORT_KEYS) for item in cluster.items()
    )
    yield b"]}"
    if stats:
        yield b',"stats":{'
        yield from _comma_separated(
            orjson.dumps(name) + b":" + orjson.dumps(summary) for name, summary in cluster.stats()
        )
        yield b"}"
    if not list_only:
        yield b"}"
    yield b"\n"


def _comma_separated(values: Iterable[bytes]) -> Iterator[bytes]:
    """JSON array or object members: a comma before every value but the first."""
    first = True
    for value in values:
        if not first:
            yield b","
        first = False
        yield value


def _chunked(pieces: Iterable[bytes], batch: int) -> Iterator[bytes]:
    """Join pieces into chunks of about ``batch`` objects (each followed by its comma): one
    write per chunk keeps the CLI fast, and memory stays bounded by the chunk."""
    chunk: list[bytes] = []
    for piece in pieces:
        chunk.append(piece)
        if len(chunk) >= 2 * batch:
            yield b"".join(chunk)
            chunk.clear()
    if chunk:
        yield b"".join(chunk)
