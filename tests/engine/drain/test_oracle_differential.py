"""The recreated pods of a drain placed step by step, against the real kube-scheduler
(``verdict-oracle``, v1.35.4, full profile).

Random clusters of workloads (ReplicaSets, StatefulSets, ReplicationControllers whose pods
spread and repel each other, tests/engine/scheduler/random_clusters.py) with
PodDisruptionBudgets over them and Ready pods; one or two nodes are drained, the budgets
block some evictions, and the recreated pods go through the queue on the cordoned cluster.
Each step is then asked of the oracle on the state Verdict's own earlier steps left (the
drained nodes cordoned, the evicted pods gone, the pods bound or nominated before it): every
node's filter verdict and total must agree; a bound pod's node must be among the oracle's
top set (or be its own nominated node, which the scheduler takes without scoring); an unschedulable pod must fit nowhere
for the oracle either and get no nomination; a nominated pod must be nominated to one of the
oracle's tie set with the same victims.
"""

from __future__ import annotations

import copy
import random

import pytest

from service.engine.drain import DrainOptions, drain_nodes
from service.engine.objects import Cluster
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.scheduler.queue import BOUND, NOMINATED, run_queue
from service.engine.version import settings_for
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.oracle import needs_oracle, run_oracle
from tests.engine.scheduler.random_clusters import random_workload_case
from tests.oracles import seeds

SETTINGS = settings_for("1.35")
OPTIONS = DrainOptions(ignore_daemonsets=True, delete_emptydir_data=True, force=True,
                       ignore_errors=True)  # fmt: skip


def drain_case(seed: int) -> tuple[list[dict], list[str]]:
    """A workload cluster with Ready pods, budgets over some apps, and the nodes to drain;
    odd seeds use the generator's preemption clusters (small nodes, bound pods of several
    priorities), where a recreated pod may preempt."""
    kind = "preemption" if seed % 2 else "placement"
    objects = copy.deepcopy(random_workload_case(seed, kind)["objects"])
    objects = [o for o in objects if o["kind"] != "PodDisruptionBudget"]
    rng = random.Random(f"drain/{seed}")
    apps: set[tuple[str, str]] = set()
    for o in objects:
        if o["kind"] == "Pod":
            ready = "True" if rng.random() < 0.9 else "False"
            o["status"]["conditions"] = [{"type": "Ready", "status": ready}]
            app = (o["metadata"].get("labels") or {}).get("app")
            if app:
                apps.add((o["metadata"]["namespace"], app))
    for ns, app in sorted(apps):
        if rng.random() < 0.6:
            healthy = rng.randint(1, 4)
            objects.append({
                "apiVersion": "policy/v1",
                "kind": "PodDisruptionBudget",
                "metadata": {"name": f"{app}-pdb", "namespace": ns, "generation": 1},
                "spec": {"selector": {"matchLabels": {"app": app}}},
                "status": {"disruptionsAllowed": rng.randint(0, 2), "observedGeneration": 1,
                           "desiredHealthy": healthy, "currentHealthy": healthy + 1},
            })  # fmt: skip
    names = [o["metadata"]["name"] for o in objects if o["kind"] == "Node"]
    return objects, rng.sample(names, rng.randint(1, min(2, len(names) - 1)))


def _key(obj: dict) -> str:
    return f"{obj['metadata'].get('namespace', 'default')}/{obj['metadata']['name']}"


def _node_differences(step, theirs: dict) -> list[str]:
    """Every node's filter verdict, and its total where two or more nodes are feasible."""
    mine = step.placement
    if mine is None or "nodes" not in theirs:
        return []
    out = []
    for m, t in zip(mine.nodes, theirs["nodes"], strict=True):
        got = (m.feasible, m.status.code, list(m.status.reasons), m.status.plugin)
        want = (t["feasible"], t["code"], t["reasons"], t["plugin"])
        if got != want:
            out.append(f"{m.node_name}: verdict {got} oracle {want}")
        several = len(theirs.get("feasible") or []) > 1
        if m.feasible and t["feasible"] and several and m.total != t["total"]:
            out.append(f"{m.node_name}.total: verdict {m.total} oracle {t['total']}")
    return out


def step_differences(seed: int) -> tuple[list[str], int]:
    """Every step of the drain's queue run where Verdict and the oracle disagree, and how
    many steps were compared."""
    objects, drained = drain_case(seed)
    cluster = Cluster(snapshot_from_objects(objects))
    plan = drain_nodes(cluster, drained, OPTIONS)
    run = run_queue(
        cluster,
        plan.recreated,
        cordoned=plan.cordoned,
        deleted=plan.deleted,
        profiles={DEFAULT_SCHEDULER_NAME: default_profile(SETTINGS)},
        settings=SETTINGS,
        keep_outcomes=True,
    )
    originals = {_key(o): o for o in objects if o["kind"] == "Pod"}
    evicted = {f.pod.key for n in plan.nodes for f in n.pods if f.outcome == "evicted"}
    state = [o for o in copy.deepcopy(objects) if o["kind"] != "Pod" or _key(o) not in evicted]
    for o in state:
        if o["kind"] == "Node" and o["metadata"]["name"] in drained:
            o.setdefault("spec", {})["unschedulable"] = True
    pending: dict[str, dict] = {}
    for f in (f for n in plan.nodes for f in n.pods if f.replacement is not None):
        obj = copy.deepcopy(originals[f.pod.key])
        obj["metadata"].update(name=f.replacement.name, uid=f.replacement.uid)
        obj["spec"].pop("nodeName", None)
        obj["status"] = {"phase": "Pending"}
        pending[f.replacement.key] = obj
    diffs: list[str] = []
    for i, step in enumerate(run.steps):
        incoming = pending[step.pod_key]
        # A nominated pod waits in the cluster as a pending pod with nominatedNodeName;
        # the pod being scheduled is the case's own pod, not one of its objects.
        state = [o for o in state if o["kind"] != "Pod" or _key(o) != step.pod_key]
        theirs = run_oracle({"kind": "preemption", "objects": state, "pod": incoming})
        where = f"seed {seed} step {i} {step.pod_key}"
        diffs.extend(f"{where}: {d}" for d in _node_differences(step, theirs))
        best = theirs.get("maxSet") or []
        chosen = theirs.get("preemption") or {}
        if step.outcome == BOUND:
            # A retried pod's nominated node that passes the filters is taken without
            # scoring (evaluateNominatedNode); the oracle's top set is over every node.
            by_nomination = step.placement is not None and (
                step.placement.nominated_node_chosen
                and step.node == step.pod.nominated_node_name
                and step.node in (theirs.get("feasible") or [])
            )
            if step.node not in best and not by_nomination:
                diffs.append(f"{where}: bound to {step.node}, oracle's top set {best}")
            bound = copy.deepcopy(incoming)
            bound["spec"]["nodeName"] = step.node
            bound["status"] = {"phase": "Running"}
            state.append(bound)
            continue
        if best:
            diffs.append(f"{where}: {step.outcome}, but the oracle fits it on {best}")
            continue
        ties = chosen.get("tieSet") or []
        if step.outcome == NOMINATED:
            victims = sorted(v.key for v in step.victims)
            candidate = next((c for c in chosen.get("candidates") or ()
                              if c["nodeName"] == step.node), None)  # fmt: skip
            theirs_victims = sorted(
                f"{v.get('namespace', 'default')}/{v['name']}"
                for v in (candidate or {}).get("victims", ())
            )
            if step.node not in ties or victims != theirs_victims:
                diffs.append(f"{where}: nominated {step.node} {victims}, oracle {ties} "
                             f"{theirs_victims}")  # fmt: skip
            gone = set(victims)
            state = [o for o in state if o["kind"] != "Pod" or _key(o) not in gone]
            for o in state:  # lower-priority nominations on the node are cleared
                if o["kind"] == "Pod" and _key(o) in step.cleared_nominations:
                    o["status"].pop("nominatedNodeName", None)
            incoming["status"]["nominatedNodeName"] = step.node
            state.append(incoming)
        elif ties:
            diffs.append(f"{where}: unschedulable, the oracle nominates one of {ties}")
    return diffs, len(run.steps)


@needs_oracle
@pytest.mark.parametrize("seed", seeds(30))
def test_each_recreated_pod_lands_where_the_real_scheduler_would(seed):
    diffs, _ = step_differences(seed)
    assert not diffs, "\n".join(diffs)


def test_the_cases_drain_under_budgets_and_recreate_pods():
    """The generator is worth its oracle time: over the first seeds, budgets block some
    evictions and let others through, recreated pods are queued, and some preempt."""
    blocked = evicted = recreated = nominated = 0
    for seed in range(60):
        objects, drained = drain_case(seed)
        cluster = Cluster(snapshot_from_objects(objects))
        plan = drain_nodes(cluster, drained, OPTIONS)
        outcomes = [f.outcome for n in plan.nodes for f in n.pods]
        blocked += outcomes.count("blocked")
        evicted += outcomes.count("evicted")
        recreated += len(plan.recreated)
        run = run_queue(cluster, plan.recreated, settings=SETTINGS,
                        cordoned=plan.cordoned, deleted=plan.deleted,
                        profiles={DEFAULT_SCHEDULER_NAME: default_profile(SETTINGS)})  # fmt: skip
        nominated += sum(step.outcome == NOMINATED for step in run.steps)
    assert blocked > 20 and evicted > 60 and recreated > 60 and nominated >= 1
