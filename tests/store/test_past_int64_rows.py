"""Rows stored before MilliValue/Value were read as Go's int64 (v1.35) hold 2**63 - 1 for a
quantity past int64; decoding reads those quantities again from the text kept beside them."""

from __future__ import annotations

import orjson

from service.engine.resources import pod_requests, scheduler_pod_requests
from service.ingest.body import parse_snapshot
from service.store.snapshots import decode, encode
from tests.conftest import kube_list, node, pod

MAX = 2**63 - 1


def _saturated_row() -> bytes:
    """A snapshot as an earlier version stored it: "1E18" cpu saturated to 2**63 - 1."""
    body = kube_list(node("n1", cpu="1E18"), pod("a", "n1", cpu="1E18"))
    snapshot = parse_snapshot(orjson.dumps(body)).snapshot
    n, p = snapshot.nodes[0], snapshot.pods[0]
    assert n.allocatable["cpu"] == 0 and n.allocatable_given["cpu"] == "1E18"
    n.allocatable["cpu"] = n.capacity["cpu"] = MAX
    p.containers[0].requests["cpu"] = MAX
    return encode(snapshot)[0]


def test_a_saturated_row_is_read_as_go_reads_its_quantities():
    snapshot = decode(_saturated_row())
    # int64Amount{1, 18}: MilliValue is positiveScaleInt64(1, 21), the loop's overflow: 0.
    assert snapshot.nodes[0].allocatable["cpu"] == 0
    assert snapshot.nodes[0].capacity["cpu"] == 0
    pod_ = snapshot.pods[0]
    assert pod_.containers[0].requests["cpu"] == 0
    assert pod_requests(pod_)["cpu"] == 0
    assert scheduler_pod_requests(pod_)[0]["cpu"] == 0


def test_an_exact_max_int64_is_kept():
    """2**63 - 1 millicores written as such is exact (no text kept): decoding keeps it."""
    body = kube_list(node("n1", cpu=f"{MAX}m"), pod("a", "n1", cpu=f"{MAX}m"))
    content, _ = encode(parse_snapshot(orjson.dumps(body)).snapshot)
    snapshot = decode(content)
    assert snapshot.nodes[0].allocatable["cpu"] == MAX
    assert snapshot.pods[0].containers[0].requests["cpu"] == MAX
