"""A node that reports no status.allocatable fits nothing, as in the scheduler (NodeInfo
allocatable is empty, so the pod count check fails first); Verdict invents no allocatable."""

from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.objects import Cluster
from tests.conftest import node, pod, snapshot_from_objects


def test_node_without_allocatable_has_too_many_pods():
    bare = node("n1")
    del bare["status"]["allocatable"]
    cluster = Cluster(snapshot_from_objects([bare]))
    assert cluster.node("n1").allocatable == {}
    result = compute(KINDS["placement"], cluster, {"pod": pod("p", cpu="100m")}).result
    assert result["selectedNode"] is None
    assert "Too many pods" in result["nodes"][0]["reasons"]
