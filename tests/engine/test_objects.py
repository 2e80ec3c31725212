"""Cluster's per-snapshot indexes: built lazily, or ahead of time by a warming thread that
pauses between steps."""

from __future__ import annotations

from service.engine.objects import Cluster, Node, Pod, Snapshot


def _snapshot(pods: int) -> Snapshot:
    return Snapshot(
        nodes=(Node(name="a"), Node(name="b"), Node(name="empty")),
        pods=tuple(
            Pod(namespace="ns", name=f"p{i}", node_name=("a", "b", "", "gone")[i % 4])
            for i in range(pods)
        ),
    )


def test_pods_by_node_built_in_steps_equals_the_lazy_index() -> None:
    snapshot = _snapshot(20_000)
    pauses = []
    warmed = Cluster(snapshot)
    warmed.build_pods_by_node(lambda: pauses.append(1))
    assert len(pauses) == 3  # 20,000 pods in steps of 8,192
    lazy = Cluster(snapshot).pods_by_node
    assert warmed.pods_by_node == lazy
    assert list(lazy) == ["a", "b", "empty", "gone"]
    assert [p.name for p in lazy["b"][:2]] == ["p1", "p5"]
    assert lazy["empty"] == ()


def test_building_again_keeps_the_index_already_there() -> None:
    cluster = Cluster(_snapshot(10))
    first = cluster.pods_by_node
    cluster.build_pods_by_node(lambda: None)
    assert cluster.pods_by_node is first
