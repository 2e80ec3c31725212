"""The framework's NodeInfo (engine/scheduler/framework.py): a node's Requested adds its pods
with Go's wrapping int64 ``+=``, as NodeInfo.update does."""

from __future__ import annotations

import orjson

from service.engine.objects import Cluster
from service.engine.quantity import MAX_INT64, wrap_int64
from service.engine.scheduler.framework import NodeInfo, node_info_pods_of, pod_info
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.body import parse_snapshot
from tests.conftest import kube_list, node, pod
from tests.engine.helpers import MAX_MILLI, parsed_pod


def test_node_requested_wraps_like_node_info_update():
    big = parsed_pod(MAX_MILLI)
    infos = [pod_info(big, settings=DEFAULT_SETTINGS) for _ in range(2)]
    assert node_info_pods_of(infos).requested["cpu"] == -2
    snapshot = parse_snapshot(
        orjson.dumps(kube_list(node("n1"), *(pod(n, "n1", cpu=MAX_MILLI) for n in "abc")))
    ).snapshot
    cluster = Cluster(snapshot)
    node_info = NodeInfo(
        cluster.snapshot.nodes[0],
        0,
        [pod_info(p, settings=DEFAULT_SETTINGS) for p in snapshot.pods],
    )
    assert node_info.requested["cpu"] == MAX_INT64 - 2
    state = node_info.base_state().with_pods([pod_info(big, settings=DEFAULT_SETTINGS)])
    assert state.requested["cpu"] == wrap_int64(3 * MAX_INT64 + MAX_INT64)
