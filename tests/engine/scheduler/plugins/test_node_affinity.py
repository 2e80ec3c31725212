"""NodeAffinity's score and addedAffinity, transcribed from kube-scheduler's
nodeaffinity/node_affinity_test.go (TestNodeAffinityPriority; the addedAffinity rows of
TestNodeAffinity). Not transcribed: "PreScore returns error when an incoming Pod has a broken
affinity" (the API server refuses such a pod before any scheduler sees it)."""

from __future__ import annotations

import msgspec
import pytest

from service.engine.objects import (
    NodeSelectorRequirement,
    NodeSelectorTerm,
    PreferredSchedulingTerm,
)
from service.engine.scheduler.framework import UNRESOLVABLE
from service.engine.scheduler.profile import AddedAffinity, NodeAffinityArgs
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import node
from tests.engine.scheduler.helpers import pod as make_pod
from tests.engine.scheduler.plugins.helpers import filter_status, normalized_scores
from tests.engine.scheduler.plugins.node_batches import check_batches

LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}


def _term(weight: int, *pairs: tuple[str, str]) -> PreferredSchedulingTerm:
    return PreferredSchedulingTerm(
        weight=weight,
        preference=NodeSelectorTerm(
            match_expressions=tuple(NodeSelectorRequirement(k, "In", (v,)) for k, v in pairs)
        ),
    )


AFFINITY1 = (_term(2, ("foo", "bar")),)
AFFINITY2 = (
    _term(2, ("foo", "bar")),
    _term(4, ("key", "value")),
    _term(5, ("foo", "bar"), ("key", "value"), ("az", "az1")),
)


def _pod(preferred=None):
    return msgspec.structs.replace(make_pod("p"), preferred_node_affinity=preferred)


@pytest.mark.parametrize(
    ("preferred", "nodes", "expected", "added"),
    [
        pytest.param(
            None,
            [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
            [0, 0, 0],
            None,
            id="all nodes are same priority as NodeAffinity is nil",
        ),
        pytest.param(
            AFFINITY1,
            [("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)],
            [0, 0, 0],
            None,
            id="no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is zero",
        ),
        pytest.param(
            AFFINITY1,
            [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)],
            [100, 0, 0],
            None,
            id="only node1 matches the preferred scheduling requirements of pod",
        ),
        pytest.param(
            AFFINITY2,
            [("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)],
            [18, 100, 36],
            None,
            id="all nodes matches the preferred scheduling requirements of pod but with different priorities",
        ),
        pytest.param(
            None,
            [("node1", LABEL1), ("node2", LABEL2)],
            [100, 0],
            AddedAffinity(preferred=AFFINITY1),
            id="added affinity",
        ),
        pytest.param(
            AFFINITY1,
            [("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)],
            [40, 60, 100],
            AddedAffinity(preferred=(_term(3, ("key", "value")),)),
            id="added affinity and pod has default affinity",
        ),
    ],
)
def test_node_affinity_priority(preferred, nodes, expected, added) -> None:
    args = NodeAffinityArgs(added) if added is not None else None
    got = normalized_scores(
        "NodeAffinity", _pod(preferred), [node(n, labels=labels) for n, labels in nodes], args=args
    )
    assert got == expected


def test_skip_is_returned_in_pre_score_when_node_affinity_is_nil() -> None:
    """ "Skip is returned in PreScore when NodeAffinity is nil": the plugin does not score."""
    from service.engine.scheduler.placement import place
    from tests.engine.scheduler.helpers import cluster

    out = place(cluster([node("node1", labels=LABEL1)], []), _pod(None), settings=DEFAULT_SETTINGS)
    assert "NodeAffinity" not in out.weights
    assert (
        "NodeAffinity"
        in place(
            cluster([node("node1", labels=LABEL1)], []), _pod(AFFINITY1), settings=DEFAULT_SETTINGS
        ).weights
    )


ADDED_REQUIRED = AddedAffinity(
    required=(
        NodeSelectorTerm(match_expressions=(NodeSelectorRequirement("zone", "In", ("foo",)),)),
    )
)


@pytest.mark.parametrize(
    ("labels", "node_selector", "reason"),
    [
        pytest.param({"zone": "foo"}, None, None, id="Pod with added affinity, matching node"),
        pytest.param(
            {"zone": "bar"},
            None,
            "node(s) didn't match scheduler-enforced node affinity",
            id="Pod with added affinity, not matching node",
        ),
        pytest.param(
            {"zone": "foo"},
            {"zone": "foo"},
            None,
            id="Pod with matching NodeSelector and added affinity",
        ),
        pytest.param(
            {"zone": "foo"},
            {"zone": "bar"},
            "node(s) didn't match Pod's node affinity/selector",
            id="Pod with added affinity and not matching NodeSelector",
        ),
    ],
)
def test_added_affinity_filter(labels, node_selector, reason) -> None:
    incoming = make_pod("p", node_selector=node_selector)
    status = filter_status(
        "NodeAffinity", incoming, node("node1", labels=labels), NodeAffinityArgs(ADDED_REQUIRED)
    )
    if reason is None:
        assert status.is_success
    else:
        assert (status.code, status.reasons, status.plugin) == (
            UNRESOLVABLE,
            (reason,),
            "NodeAffinity",
        )


# --- the batches (FiltersNodes, ScoresNodes) held to Filter and Score node by node ---


@pytest.mark.parametrize("seed", range(40))
def test_batches_equal_per_node(seed):
    check_batches("NodeAffinity", seed)


@pytest.mark.parametrize("seed", range(6))
def test_batches_equal_per_node_with_added_affinity(seed):
    """NodeAffinityArgs.addedAffinity: its required terms are read too (and may name fields),
    its preferred terms scored with the pod's."""
    import random
    from dataclasses import replace

    from service.engine.objects import NodeSelectorRequirement as Req
    from service.engine.objects import NodeSelectorTerm as Term
    from service.engine.objects import PreferredSchedulingTerm as Pref
    from service.engine.scheduler.profile import DEFAULT_PROFILE

    rng = random.Random(seed)
    required = (
        Term((Req("pool", rng.choice(("In", "NotIn")), ("a", "b")),)),
        Term(match_fields=(Req("metadata.name", "NotIn", (f"n{rng.randrange(30)}",)),)),
    )[: rng.randint(1, 2)]
    preferred = (
        Pref(7, Term((Req("gpu", "Exists"),))),
        Pref(3, Term((Req("size", "Gt", ("5",)),))),
    )
    args = NodeAffinityArgs(AddedAffinity(required=required, preferred=preferred))
    profile = replace(DEFAULT_PROFILE, args={**DEFAULT_PROFILE.args, "NodeAffinity": args})
    check_batches("NodeAffinity", 100 + seed, profile=profile)
