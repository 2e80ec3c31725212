"""The parsed-snapshot cache is bounded by count and by pods, least recently used first."""

from service.engine.objects import Cluster, Pod, Snapshot
from service.store.snapshots import ClusterCache


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
