"""The Eviction API's PDB check (engine/drain/eviction_api.py), in eviction.go's order: pods
that ignore budgets, one budget consumed per eviction, more than one budget, unready pods,
stale and negative statuses, the 429 naming the budget."""

from __future__ import annotations

from service.engine.drain.eviction_api import (
    MULTIPLE_PDBS,
    TOO_MANY_REQUESTS,
    Budgets,
    evict,
    selects,
)
from tests.engine.drain.helpers import cluster_of, owned, pdb

WEB = {"matchLabels": {"app": "web"}}


def _setup(*objects):
    cluster = cluster_of(*objects)
    pods = {p.name: p for p in cluster.snapshot.pods}
    return pods, Budgets(cluster.snapshot.pdbs)


def test_each_eviction_consumes_the_budget_until_429_names_it():
    pods, budgets = _setup(
        *(owned(f"w{i}", "n1", "ReplicaSet", "web") for i in range(3)),
        pdb("web-pdb", WEB, 2, desiredHealthy=2, currentHealthy=4),
    )
    first, second, third = (evict(pods[n], budgets) for n in ("w0", "w1", "w2"))
    assert (first.code, first.disruptions_allowed, first.consumed) == (200, 2, True)
    assert (second.code, second.disruptions_allowed) == (200, 1)
    assert third.code == 429 and third.message == TOO_MANY_REQUESTS
    assert third.cause == "The disruption budget web-pdb needs 2 healthy pods and has 4 currently"
    assert (third.pdb, third.disruptions_allowed, third.consumed) == ("web-pdb", 0, False)
    assert budgets.consumed() == {("default", "web-pdb"): 0}


def test_pending_terminal_and_terminating_pods_ignore_budgets():
    terminating = owned("t", "n1", "ReplicaSet", "web")
    terminating["metadata"]["deletionTimestamp"] = "2026-11-20T09:00:00Z"
    pods, budgets = _setup(
        owned("p", "n1", "ReplicaSet", "web", phase="Pending"),
        owned("s", "n1", "ReplicaSet", "web", phase="Succeeded"),
        owned("f", "n1", "ReplicaSet", "web", phase="Failed"),
        terminating,
        pdb("web-pdb", WEB, 0),
    )
    for name in ("p", "s", "f", "t"):
        answer = evict(pods[name], budgets)
        assert answer.allowed and not answer.pdb_checked, name
    assert budgets.consumed() == {}


def test_more_than_one_budget_is_refused_with_500_before_anything_else():
    pods, budgets = _setup(
        owned("w", "n1", "ReplicaSet", "web", labels={"app": "web", "tier": "front"}),
        pdb("by-app", WEB, 5),
        pdb("by-tier", {"matchLabels": {"tier": "front"}}, 5),
    )
    answer = evict(pods["w"], budgets)
    assert (answer.code, answer.message) == (500, MULTIPLE_PDBS)
    assert "by-app, by-tier" in answer.cause
    assert budgets.consumed() == {}


def test_budgets_in_other_namespaces_or_with_empty_or_invalid_selectors_match_nothing():
    pods, budgets = _setup(
        owned("w", "n1", "ReplicaSet", "web"),
        pdb("elsewhere", WEB, 0, namespace="other"),
        pdb("empty", {}, 0),
        pdb("nil", None, 0),
        pdb(
            "invalid",
            {"matchExpressions": [{"key": "app", "operator": "Exists", "values": ["web"]}]},
            0,
        ),
    )
    assert budgets.matching(pods["w"]) == []
    assert evict(pods["w"], budgets).allowed


def test_an_unready_pod_is_evicted_free_when_the_application_is_healthy():
    pods, budgets = _setup(
        owned("sick", "n1", "ReplicaSet", "web", ready=False),
        pdb("web-pdb", WEB, 0, desiredHealthy=2, currentHealthy=2),
    )
    answer = evict(pods["sick"], budgets)
    assert answer.allowed and not answer.consumed


def test_an_unready_pod_under_an_unhealthy_application_needs_the_budget():
    pods, budgets = _setup(
        owned("sick", "n1", "ReplicaSet", "web", ready=False),
        pdb("web-pdb", WEB, 0, desiredHealthy=3, currentHealthy=2),
    )
    assert evict(pods["sick"], budgets).code == 429


def test_always_allow_evicts_unready_pods_free_but_not_ready_ones():
    pods, budgets = _setup(
        owned("sick", "n1", "ReplicaSet", "web", ready=False),
        owned("fine", "n1", "ReplicaSet", "web"),
        pdb("web-pdb", WEB, 0, desiredHealthy=3, currentHealthy=1, policy="AlwaysAllow"),
    )
    assert evict(pods["sick"], budgets).allowed
    assert evict(pods["fine"], budgets).code == 429


def test_a_status_older_than_the_spec_is_still_being_processed():
    pods, budgets = _setup(owned("w", "n1", "ReplicaSet", "web"), pdb("p", WEB, 3, generation=2))
    answer = evict(pods["w"], budgets)
    assert answer.code == 429
    assert answer.cause == "The disruption budget p is still being processed by the server."


def test_a_negative_budget_is_forbidden():
    pods, budgets = _setup(owned("w", "n1", "ReplicaSet", "web"), pdb("p", WEB, -1))
    answer = evict(pods["w"], budgets)
    assert answer.code == 403 and "pdb disruptions allowed is negative" in answer.message


def test_too_many_unconfirmed_disruptions_are_forbidden():
    disrupted = {f"old-{i}": "2026-11-20T09:00:00Z" for i in range(2001)}
    pods, budgets = _setup(
        owned("w", "n1", "ReplicaSet", "web"), pdb("p", WEB, 3, disruptedPods=disrupted)
    )
    answer = evict(pods["w"], budgets)
    assert answer.code == 403 and "DisruptedPods map too big" in answer.message


def test_selects_reads_match_expressions():
    pods, _ = _setup(owned("w", "n1", "ReplicaSet", "web"))
    cluster = cluster_of(pdb("p", {"matchExpressions": [{"key": "app", "operator": "In",
                                                        "values": ["web", "api"]}]}, 1))  # fmt: skip
    assert selects(cluster.snapshot.pdbs[0], pods["w"])
