"""int64 at the edges, as Kubernetes computes it: a pod's total is a Quantity sum read with
MilliValue/Value in Go's int64 (never saturated); a node's Requested adds pods with Go's
wrapping int64 ``+=``."""

from __future__ import annotations

import orjson
import pytest

from service.engine.objects import Cluster
from service.engine.quantity import MAX_INT64, MIN_INT64, wrap_int64, wrap_int64_values
from service.engine.resources import pod_limits, pod_requests, scheduler_pod_requests
from service.engine.scheduler.framework import NodeInfo, node_info_pods_of, pod_info
from service.ingest.body import parse_snapshot
from tests.conftest import kube_list, node, pod


@pytest.mark.parametrize(
    ("value", "wrapped"),
    [
        (0, 0),
        (MAX_INT64, MAX_INT64),
        (MIN_INT64, MIN_INT64),
        (MAX_INT64 + 1, MIN_INT64),
        (MIN_INT64 - 1, MAX_INT64),
        (2 * MAX_INT64, -2),
        (3 * MAX_INT64, MAX_INT64 - 2),
        (2**64, 0),
    ],
)
def test_wrap_int64(value, wrapped):
    assert wrap_int64(value) == wrapped


def test_wrap_int64_values_in_place():
    sums = {"cpu": 2 * MAX_INT64, "memory": 5}
    assert wrap_int64_values(sums) is sums
    assert sums == {"cpu": -2, "memory": 5}


def _pod(*cpus: str, limits: bool = False):
    body = pod("p", "n1")
    body["spec"]["containers"] = [
        {
            "name": f"c{i}",
            "image": "nginx",
            "resources": {"requests": {"cpu": cpu}} | ({"limits": {"cpu": cpu}} if limits else {}),
        }
        for i, cpu in enumerate(cpus)
    ]
    snapshot = parse_snapshot(orjson.dumps(kube_list(node("n1"), body))).snapshot
    return snapshot.pods[0]


MAX_MILLI = f"{MAX_INT64}m"


def test_a_pod_total_is_the_int64_view_of_the_exact_sum():
    # Quantity.Add keeps int64Amount{2, 18} (int64Amount.Add); MilliValue is then
    # AsScaledInt64 -> positiveScaleInt64(2, 21), whose loop returns 0 on overflow (v1.35).
    assert pod_requests(_pod("1E18", "1E18"))["cpu"] == 0
    assert pod_limits(_pod("1E18", "1E18", limits=True))["cpu"] == 0
    # Two inf.Decs (19 digits) add to Dec{2 * MaxInt64 * 10**6, 9}; scaledValue divides by
    # 10**6 exactly and big.Int.Int64() keeps the low 64 bits: -2.
    assert pod_requests(_pod(MAX_MILLI, MAX_MILLI))["cpu"] == -2
    # Each fits but the sum does not: int64Amount.Add of {9223372036854775, 0} twice fits
    # ({18446744073709550, 0}); MilliValue's int64MultiplyScale1000 wraps the product.
    assert pod_requests(_pod("9223372036854775", "9223372036854775"))["cpu"] == wrap_int64(
        18446744073709550000
    )
    # 0.5m + 0.5m is 1m exactly; rounding each container up first would say 2m.
    assert pod_requests(_pod("500u", "500u"))["cpu"] == 1
    assert pod_requests(_pod("500u"))["cpu"] == 1
    # {1000, -6} + {1, 18}: aligning 1E18 to scale -6 overflows, so Add makes an inf.Dec at
    # scale 6 (the larger Dec scale); scaledValue divides by 1000 rounding up (10**21 + 1)
    # and keeps the low 64 bits.
    reqs, nz_cpu, _ = scheduler_pod_requests(_pod("500u", "500u", "1E18"))
    assert reqs["cpu"] == nz_cpu == wrap_int64(10**21 + 1)


def test_node_requested_wraps_like_node_info_update():
    big = _pod(MAX_MILLI)
    infos = [pod_info(big) for _ in range(2)]
    assert node_info_pods_of(infos).requested["cpu"] == -2
    snapshot = parse_snapshot(
        orjson.dumps(kube_list(node("n1"), *(pod(n, "n1", cpu=MAX_MILLI) for n in "abc")))
    ).snapshot
    cluster = Cluster(snapshot)
    node_info = NodeInfo(cluster.snapshot.nodes[0], 0, [pod_info(p) for p in snapshot.pods])
    assert node_info.requested["cpu"] == MAX_INT64 - 2
    state = node_info.base_state().with_pods([pod_info(big)])
    assert state.requested["cpu"] == wrap_int64(3 * MAX_INT64 + MAX_INT64)


def test_non_zero_requests_sum_exact_quantities():
    """The scorers' pod request (resource_allocation.go calculatePodResourceRequest:
    PodRequests with NonMissingContainerRequests, then MilliValue) adds the containers'
    Quantities exactly: two of 500u cpu are 1 millicore; memory gets 200Mi per container."""
    from service.engine.resources import pod_requests_non_zero
    from service.engine.scheduler.plugins.noderesources.resource_allocation import (
        ResourceAllocationScorer,
    )

    p = _pod("500u", "500u")
    assert pod_requests_non_zero(p) == {"cpu": 1, "memory": 2 * 200 * 1024**2}
    reqs, nz_cpu, nz_mem = scheduler_pod_requests(p)
    assert (reqs["cpu"], nz_cpu, nz_mem) == (1, 1, 2 * 200 * 1024**2)
    prepared = ResourceAllocationScorer().prepare(p)
    assert prepared.pairs({"cpu": 4000, "memory": 2**30}, {}, 0, 0)[0] == [1, 400 * 1024**2]
