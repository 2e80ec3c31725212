"""emptyDir sizeLimit eviction: checked first among local-storage evictions, grace 1 s."""

from __future__ import annotations

import pytest

from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.objects import Cluster
from tests.conftest import node, pod, snapshot_from_objects


def _cluster(used: int, size_limit: str | None, medium: str = "") -> Cluster:
    p = pod("cache", "n1", cpu="100m", memory="64Mi")
    empty_dir = {"medium": medium} if medium else {}
    if size_limit is not None:
        empty_dir["sizeLimit"] = size_limit
    p["spec"]["volumes"] = [
        {"name": "config", "configMap": {"name": "x"}},
        {"name": "scratch", "emptyDir": empty_dir},
    ]
    summary = {
        "node": {
            "nodeName": "n1",
            "memory": {"availableBytes": 6 * 2**30, "workingSetBytes": 2**30},
            "fs": {
                "availableBytes": 80 * 2**30,
                "capacityBytes": 100 * 2**30,
                "inodesFree": 10**6,
                "inodes": 2 * 10**6,
            },
        },
        "pods": [
            {
                "podRef": {"name": "cache", "namespace": "default", "uid": "uid-default-cache"},
                "memory": {"workingSetBytes": 2**20},
                "volume": [{"name": "scratch", "usedBytes": used}],
            }
        ],
    }
    return Cluster(snapshot_from_objects([node("n1"), p], {"n1": summary}))


def _decide(cluster: Cluster) -> dict:
    return compute(
        KINDS["eviction"], cluster, {"nodeName": "n1", "now": "2026-11-20T10:00:00Z"}
    ).result


@pytest.mark.parametrize("medium", ["", "Memory"])
def test_usage_over_the_size_limit_evicts(medium):
    result = _decide(_cluster(used=2 * 2**30, size_limit="1Gi", medium=medium))
    assert [e["pod"]["name"] for e in result["evictions"]] == ["cache"]
    eviction = result["evictions"][0]
    assert eviction["signal"] == "emptydirfs.limit"
    assert eviction["gracePeriodSeconds"] == 1
    assert eviction["message"] == 'Usage of EmptyDir volume "scratch" exceeds the limit "1Gi". '


@pytest.mark.parametrize(("used", "limit"), [(2**30, "1Gi"), (5 * 2**30, None), (5 * 2**30, "0")])
def test_at_the_limit_or_without_a_limit_nothing_happens(used, limit):
    assert _decide(_cluster(used=used, size_limit=limit))["evictions"] == []
