"""Per-kind explanations read results of any engine version: placement's 1.1 shape (scores per
plugin, rawScores, weights) and the older one, generically over the plugins present."""

from __future__ import annotations

from service.console import charts, explain


def test_placement_plugins_are_whatever_the_result_has():
    result = {
        "selectedNode": "b",
        "nodes": [
            {
                "nodeName": "a",
                "feasible": True,
                "reasons": [],
                "scores": {"TaintToleration": 100, "ImageLocality": 0},
                "rawScores": {"TaintToleration": 0},
                "weights": {"TaintToleration": 3, "ImageLocality": 1},
                "total": 300,
            },
            {
                "nodeName": "b",
                "feasible": True,
                "reasons": [],
                "scores": {"ImageLocality": 80, "NodeAffinity": 50},
                "total": 330,
            },
            {"nodeName": "c", "feasible": False, "reasons": ["Insufficient cpu"], "scores": None},
        ],
    }
    nodes, plugins = explain.placement_nodes(result)
    assert plugins == ["TaintToleration", "ImageLocality", "NodeAffinity"]
    assert nodes[0]["weights"]["TaintToleration"] == 3 and nodes[2]["scores"] == {}
    svg = charts.placement_scores(nodes, plugins)
    assert "<svg" in svg and "NodeAffinity" in svg and "<script" not in svg


def test_placement_nodes_keyed_by_name_are_accepted():
    nodes, plugins = explain.placement_nodes(
        {"nodes": {"a": {"scores": {"NodeResourcesFit": 40}, "total": 40}}}
    )
    assert nodes[0]["nodeName"] == "a" and nodes[0]["feasible"] is True
    assert plugins == ["NodeResourcesFit"]


def test_summaries_for_the_list():
    assert explain.summary("admission", {"admitted": False}) == "rejected"
    assert explain.summary("placement", {"selectedNode": None}) == "unschedulable"
    failed = {"selectedNode": None, "nominatedNodeName": None, "cycleError": {"plugin": "X"}}
    assert explain.summary("placement", failed) == "scheduling cycle error"
    assert explain.summary("preemption", failed) == "scheduling cycle error"
    assert explain.summary("prune", {"deleted": 3}) == "pruned 3 record(s)"
