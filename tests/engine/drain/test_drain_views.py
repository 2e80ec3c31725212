"""The drain's queue on the snapshot's own view (engine/scheduler/queue.py: the drained
nodes cordoned and the evicted pods deleted on the base view, each step's view derived from
the one before) against the full recompute: the cordoned cluster without the evicted pods
built anew and every cycle's view built from the whole snapshot after the step before
(``fresh_views``). Same steps, messages, ties and usage."""

from __future__ import annotations

import copy

import msgspec
import pytest

from service.engine.drain import drain_nodes
from service.engine.objects import Cluster, Pod
from service.engine.scheduler.plugins.interpod_affinity import (
    EXISTING_ANTI_TERMS,
    EXISTING_TERMS,
    _existing_anti_terms,
    _existing_terms,
)
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.queue import BOUND, WorkingCluster, run_queue
from service.engine.scheduler.snapshot import has_pod_affinity, scheduler_view
from tests.conftest import snapshot_from_objects
from tests.engine.drain.helpers import cluster_of, owned
from tests.engine.drain.test_oracle_differential import OPTIONS, SETTINGS, drain_case
from tests.oracles import seeds

PROFILES = {DEFAULT_SCHEDULER_NAME: default_profile(SETTINGS)}


def _steps(run) -> list[tuple]:
    return [
        (s.pod_key, s.outcome, s.node, [v.key for v in s.victims], s.message, s.ties,
         s.reasons, s.cleared_nominations, s.attempt)
        for s in run.steps
    ]  # fmt: skip


def _usage(run) -> list[tuple]:
    return [(u.name, u.requested_before, u.requested_after, u.pods_before, u.pods_after)
            for u in run.nodes]  # fmt: skip


def _replicated(objects: list[dict]) -> list[dict]:
    """The case with each ReplicaSet pod doubled on its node (a second replica of the same
    template), so that the recreated pods come in templates of several pods."""
    out = list(objects)
    for o in objects:
        refs = o.get("metadata", {}).get("ownerReferences") or ()
        if o["kind"] == "Pod" and any(r.get("kind") == "ReplicaSet" for r in refs):
            twin = copy.deepcopy(o)
            twin["metadata"]["name"] += "-twin"
            twin["metadata"]["uid"] = twin["metadata"].get("uid", "") + "-twin"
            out.append(twin)
    return out


def _runs(objects: list[dict], drained: list[str], **kw):
    """The drain's queue as decide() runs it, and the full recompute."""
    cluster = Cluster(snapshot_from_objects(objects))
    plan = drain_nodes(cluster, drained, OPTIONS)
    mine = run_queue(cluster, plan.recreated, profiles=PROFILES, settings=SETTINGS,
                     cordoned=plan.cordoned, deleted=plan.deleted, **kw)  # fmt: skip
    full = run_queue(plan.cluster, plan.recreated, profiles=PROFILES, settings=SETTINGS,
                     fresh_views=True, **kw)  # fmt: skip
    return plan, mine, full


@pytest.mark.parametrize("seed", seeds(30))
def test_the_drains_queue_decides_as_the_full_recompute(seed: int) -> None:
    objects, drained = drain_case(seed)
    _, mine, full = _runs(objects, drained)
    assert _steps(mine) == _steps(full)
    assert _usage(mine) == _usage(full)


@pytest.mark.parametrize("seed", seeds(30))
def test_recreated_replicas_of_one_template_decide_as_full_cycles(seed: int) -> None:
    objects, drained = drain_case(seed)
    _, mine, full = _runs(_replicated(objects), drained, tie_break_seed=seed)
    assert _steps(mine) == _steps(full)
    assert _usage(mine) == _usage(full)


def _drained_web() -> tuple[Cluster, WorkingCluster]:
    """Three ReplicaSet pods labelled app=web on two nodes; n1 cordoned and w1 evicted."""
    cluster = cluster_of(
        owned("w1", "n1", "ReplicaSet", "web"),
        owned("w2", "n1", "ReplicaSet", "web"),
        owned("other", "n2", "ReplicaSet", "web"),
    )
    w1 = next(p for p in cluster.snapshot.pods if p.name == "w1")
    return cluster, WorkingCluster(cluster, SETTINGS, cordoned=["n1"], deleted=[w1])


def test_the_working_cluster_deletes_and_cordons_on_the_base_view() -> None:
    cluster, work = _drained_web()
    n1 = work.view.by_name["n1"]
    assert n1.node.unschedulable and [pi.name for pi in n1.pods] == ["w2"]
    assert n1.requested["cpu"] == 100
    assert work.view.pods_labelled("app", "web") == [n1.pods[0], *work.view.by_name["n2"].pods]
    assert [p.name for p in work.cluster.snapshot.pods] == ["w2", "other"]
    assert work.cluster.pod_count == 2
    # the run's "before" is the cluster after the drain; the base is untouched
    assert [u.pods_before for u in work.usage()] == [1, 1, 0]
    assert not cluster.nodes[0].unschedulable and cluster.pod_count == 3


def test_a_derived_views_label_index_is_its_origins_with_the_pods_refiled() -> None:
    cluster, work = _drained_web()
    base = scheduler_view(cluster, SETTINGS, whole_pods=True)
    assert base._by_label is None and work.view._by_label is None
    # the derived view's index is the base's (built there, kept) without w1
    assert [pi.name for pi in work.view.pods_labelled("app", "web")] == ["w2", "other"]
    assert [pi.name for pi in base.pods_labelled("app", "web")] == ["w1", "w2", "other"]
    fresh = scheduler_view(work.cluster, SETTINGS, whole_pods=True)
    assert {
        pair: [pi.key for pi in pods] for pair, pods in work.view._by_label.items() if pods
    } == {pair: [pi.key for pi in pods] for pair, pods in fresh._label_index().items()}


def test_recreated_pods_land_off_the_drained_node() -> None:
    cluster = cluster_of(
        owned("w1", "n1", "ReplicaSet", "web"),
        owned("w2", "n1", "ReplicaSet", "web"),
    )
    plan = drain_nodes(cluster, ["n1"], OPTIONS)
    run = run_queue(cluster, plan.recreated, profiles=PROFILES, settings=SETTINGS,
                    cordoned=plan.cordoned, deleted=plan.deleted)  # fmt: skip
    assert [(s.outcome, s.node) for s in run.steps] == [(BOUND, "n2"), (BOUND, "n3")]
    assert run.steps[1].message == '2/3 nodes are feasible; "n3" scores highest'


def _anti(groups) -> dict:
    return {key: (counts, len(pods)) for key, (_, counts, pods) in groups.items()}


def _terms(groups) -> dict:
    return {key: contributions for key, (_, contributions) in groups.items()}


def _with_affinity(view) -> tuple[dict, dict]:
    """The view's pods-with-affinity indexes, by node name (the queue's _affinity_after).
    Each node's pods are compared as a set: their order is the order they joined the node
    (the binds' order in a run, the snapshot's order when the view is built anew), as a
    NodeInfo's PodsWithAffinity upstream, and no plugin's answer depends on it."""
    return (
        {ni.name: sorted(pi.key for pi in view.pods_with_affinity(ni))
         for ni in view.nodes_with_affinity()},
        {ni.name: sorted(pi.key for pi in view.pods_with_required_anti_affinity(ni))
         for ni in view.nodes_with_required_anti_affinity()},
    )  # fmt: skip


@pytest.mark.parametrize("seed", seeds(20))
def test_the_existing_pods_terms_carried_are_those_built_anew(seed: int) -> None:
    """InterPodAffinity's groups of the existing pods' terms, updated step by step
    (interpod_affinity.existing_terms_after), and the pods-with-affinity indexes equal those
    built over the run's last cluster; the snapshot's own view keeps its own unchanged."""
    objects, drained = drain_case(seed)
    cluster = Cluster(snapshot_from_objects(objects))
    base = scheduler_view(cluster, SETTINGS, whole_pods=True)
    before = (_anti(base.derived(EXISTING_ANTI_TERMS, lambda: _existing_anti_terms(base))),
              _terms(base.derived(EXISTING_TERMS, lambda: _existing_terms(base))))  # fmt: skip
    before = copy.deepcopy((*before, _with_affinity(base)))
    plan = drain_nodes(cluster, drained, OPTIONS)
    run = run_queue(cluster, plan.recreated, profiles=PROFILES, settings=SETTINGS,
                    cordoned=plan.cordoned, deleted=plan.deleted)  # fmt: skip
    view = scheduler_view(run.cluster, SETTINGS)
    assert {EXISTING_TERMS, EXISTING_ANTI_TERMS} <= set(view._derived)  # carried, not rebuilt
    fresh = scheduler_view(Cluster(run.cluster.snapshot), SETTINGS, whole_pods=True)
    assert _anti(view._derived[EXISTING_ANTI_TERMS]) == _anti(_existing_anti_terms(fresh))
    assert _terms(view._derived[EXISTING_TERMS]) == _terms(_existing_terms(fresh))
    assert view._with_affinity is not None  # carried, not rebuilt
    assert _with_affinity(view) == _with_affinity(fresh)
    assert (_anti(base._derived[EXISTING_ANTI_TERMS]), _terms(base._derived[EXISTING_TERMS]),
            _with_affinity(base)) == before  # fmt: skip


def test_the_cases_move_pods_with_affinity_terms() -> None:
    """The test above is worth running: the drains evict and the queue binds pods that
    carry terms."""
    moved = 0
    for seed in range(10):
        objects, drained = drain_case(seed)
        plan = drain_nodes(Cluster(snapshot_from_objects(objects)), drained, OPTIONS)
        moved += sum(has_pod_affinity(p) for p in plan.deleted)
    assert moved >= 5


def test_the_base_views_term_groups_are_shared_until_a_step_changes_them() -> None:
    """A step that binds no pod with terms shares the base view's InterPodAffinity groups
    (no copy); a later one that binds a pod with terms counts it in a copy: the base's are
    unchanged and the run's equal those built anew."""
    checked = 0
    for seed in range(10):
        objects, drained = drain_case(seed)
        cluster = Cluster(snapshot_from_objects(objects))
        recreated = drain_nodes(cluster, drained, OPTIONS).recreated
        plain = [p for p in recreated if not has_pod_affinity(p)]
        with_terms = [p for p in recreated if has_pod_affinity(p)]
        if not plain or not with_terms:
            continue
        work = WorkingCluster(cluster, SETTINGS)
        base = work.view
        groups = (base.derived(EXISTING_ANTI_TERMS, lambda b=base: _existing_anti_terms(b)),
                  base.derived(EXISTING_TERMS, lambda b=base: _existing_terms(b)))  # fmt: skip
        before = copy.deepcopy((_anti(groups[0]), _terms(groups[1])))
        node = base.nodes[0].name
        work.bind(_renamed(plain[0]), node)
        assert work.view._derived[EXISTING_ANTI_TERMS] is groups[0]
        assert work.view._derived[EXISTING_TERMS] is groups[1]
        work.bind(_renamed(with_terms[0]), node)
        assert (_anti(groups[0]), _terms(groups[1])) == before
        fresh = scheduler_view(Cluster(work.cluster.snapshot), SETTINGS, whole_pods=True)
        assert _anti(work.view._derived[EXISTING_ANTI_TERMS]) == _anti(_existing_anti_terms(fresh))
        assert _terms(work.view._derived[EXISTING_TERMS]) == _terms(_existing_terms(fresh))
        checked += 1
    assert checked >= 3


def _renamed(pod: Pod) -> Pod:
    """A new pod like ``pod`` (the drain's recreated pods keep the evicted pods' names)."""
    return msgspec.structs.replace(pod, name=pod.name + "-new", uid=pod.uid + "-new")
