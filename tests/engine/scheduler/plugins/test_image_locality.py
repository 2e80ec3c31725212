"""ImageLocality, transcribed from kube-scheduler's imagelocality/image_locality_test.go
(TestImageLocalityPriority), plus the name normalization and init containers of v1.35."""

from __future__ import annotations

import pytest

from service.engine.objects import Container, ContainerImage, Node, Pod
from service.engine.scheduler.plugins.image_locality import (
    calculate_priority,
    normalized_image_name,
)
from tests.engine.scheduler.plugins.helpers import normalized_scores

MB = 1024 * 1024


def _images(*entries: tuple[tuple[str, ...], int]) -> tuple[ContainerImage, ...]:
    return tuple(ContainerImage(names=names, size_bytes=size * MB) for names, size in entries)


NODE_40_300_2000 = _images(
    (("gcr.io/40:latest", "gcr.io/40:v1", "gcr.io/40:v1"), 40),
    (("gcr.io/300:latest", "gcr.io/300:v1"), 300),
    (("gcr.io/2000:latest",), 2000),
)
NODE_250_10 = _images((("gcr.io/250:latest",), 250), (("gcr.io/10:latest", "gcr.io/10:v1"), 10))
NODE_600_40_900 = _images(
    (("gcr.io/600:latest",), 600), (("gcr.io/40:latest",), 40), (("gcr.io/900:latest",), 900)
)
NODE_300_600_900 = _images(
    (("gcr.io/300:latest",), 300), (("gcr.io/600:latest",), 600), (("gcr.io/900:latest",), 900)
)
NODE_4000_30 = _images((("gcr.io/4000:latest",), 4000), (("gcr.io/30:latest",), 30))
NODE_20_30_40 = _images(
    (("gcr.io/20:latest",), 20), (("gcr.io/30:latest",), 30), (("gcr.io/40:latest",), 40)
)


def _pod(*images: str, init: tuple[str, ...] = ()) -> Pod:
    return Pod(
        namespace="default",
        name="p",
        containers=tuple(Container(name=f"c{i}", image=img) for i, img in enumerate(images)),
        init_containers=tuple(Container(name=f"i{i}", image=img) for i, img in enumerate(init)),
    )


def _node(name: str, images=()) -> Node:
    return Node(name=name, images=images, allocatable={"pods": 110})


@pytest.mark.parametrize(
    ("pod", "nodes", "expected"),
    [
        pytest.param(
            _pod("gcr.io/40", "gcr.io/250"),
            [_node("node1", NODE_40_300_2000), _node("node2", NODE_250_10)],
            [0, 5],
            id="two images spread on two nodes, prefer the larger image one",
        ),
        pytest.param(
            _pod("gcr.io/40", "gcr.io/300"),
            [_node("node1", NODE_40_300_2000), _node("node2", NODE_250_10)],
            [7, 0],
            id="two images on one node, prefer this node",
        ),
        pytest.param(
            _pod("gcr.io/10", "gcr.io/4000"),
            [_node("node1", NODE_4000_30), _node("node2", NODE_250_10)],
            [100, 0],
            id="if exceed limit, use limit",
        ),
        pytest.param(
            _pod("gcr.io/10", "gcr.io/4000"),
            [_node("node1", NODE_4000_30), _node("node2", NODE_250_10), _node("node3")],
            [66, 0, 0],
            id="if exceed limit, use limit (with node which has no images present)",
        ),
        pytest.param(
            _pod("gcr.io/300", "gcr.io/600", "gcr.io/900"),
            [_node("node1", NODE_600_40_900), _node("node2", NODE_300_600_900), _node("node3")],
            [32, 36, 0],
            id="pod with multiple large images, node2 is preferred",
        ),
        pytest.param(
            _pod("gcr.io/30", "gcr.io/40"),
            [_node("node1", NODE_20_30_40), _node("node2", NODE_4000_30)],
            [1, 0],
            id="pod with multiple small images",
        ),
        pytest.param(
            _pod("gcr.io/30", init=("gcr.io/300",)),
            [_node("node1", NODE_40_300_2000), _node("node2", NODE_20_30_40)],
            [6, 0],
            id="include InitContainers: two images spread on two nodes, prefer the larger image one",
        ),
    ],
)
def test_image_locality_priority(pod, nodes, expected) -> None:
    assert normalized_scores("ImageLocality", pod, nodes) == expected


@pytest.mark.parametrize(
    ("name", "want"),
    [
        # TestNormalizedImageName
        ("root", "root:latest"),
        ("gcr.io:5000/root", "gcr.io:5000/root:latest"),
        ("root:tag", "root:tag"),
        ("root@sha256:" + "ab" * 32, "root@sha256:" + "ab" * 32),
    ],
)
def test_normalized_image_name(name, want) -> None:
    assert normalized_image_name(name) == want


def test_calculate_priority_clamps() -> None:
    assert calculate_priority(0, 1) == 0
    assert calculate_priority(10**12, 2) == 100
    assert calculate_priority(23 * MB + (977 * MB) // 2, 1) == 50


# --- the batch (ScoresNodes) held to Score node by node, and the image states ---


@pytest.mark.parametrize("seed", range(24))
def test_batch_equals_per_node(seed):
    from tests.engine.scheduler.plugins.node_batches import check_batches

    check_batches("ImageLocality", seed)


def test_image_states_count_a_name_once_per_node_and_keep_the_first_size():
    """A name reported twice by one node counts once; its size is the first node's."""
    from service.engine.objects import Cluster, Snapshot
    from service.engine.scheduler.plugins.image_locality import image_states
    from service.engine.scheduler.snapshot import scheduler_view
    from service.engine.version import DEFAULT_SETTINGS

    nodes = (
        _node("a", _images((("x:1", "x:1"), 10), (("x:1",), 20))),
        _node("b"),
        _node("c", _images((("x:1", "y:2"), 30))),
    )
    view = scheduler_view(Cluster(Snapshot(nodes=nodes)), DEFAULT_SETTINGS)

    class Key:
        pass

    states = image_states(view.nodes, Key())
    assert states.nodes == {"x:1": [0, 2], "y:2": [2]}
    assert states.size == {"x:1": 10 * MB, "y:2": 30 * MB}
    assert states.total_nodes == 3
