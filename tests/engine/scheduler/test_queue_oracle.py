"""The scheduling queue (engine/scheduler/queue.py) against the real kube-scheduler v1.35.4
(``verdict-oracle --profile full``), one cycle at a time.

Each random cluster of workloads (random_clusters.random_workload_case) gets a queue of new
replicas of its workloads, whose spread constraints and pod (anti-)affinity now also count
the replicas placed before them, at several priorities so that some preempt. Verdict runs
the whole queue; then every step is asked of the oracle on the state Verdict's earlier steps
produced (the bound pods, the nominated pods, the victims gone): the filter verdict of every
node (code, reasons, plugin) and every total must agree, a bound pod's node must be in the
oracle's top set, an unschedulable pod must be unschedulable there too, and a nomination
must have the same preemption candidates and victims with the chosen node in the oracle's
tie set. ``VERDICT_ORACLE_SEEDS`` widens the run."""

from __future__ import annotations

import copy
import random

import pytest

from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME
from service.engine.scheduler.queue import BOUND, NOMINATED, UNSCHEDULABLE, QueueStep, run_queue
from service.engine.version import settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.oracle import needs_oracle, oracle_profile, run_oracle
from tests.engine.scheduler.random_clusters import random_workload_case
from tests.oracles import seeds

VERSION = "1.35"


def queue_case(seed: int) -> tuple[list[dict], list[dict]]:
    """A random cluster of workloads (bound pods only) and the pending replicas to queue:
    copies of its bound pods (same labels, owner, affinity and spread), pending, some at a
    higher priority than the pods they copy."""
    preempting = seed % 2 == 1
    case = random_workload_case(seed, "preemption" if preempting else "placement")
    rng = random.Random(f"queue/{seed}")
    objects = [o for o in case["objects"] if not _pending(o)]
    bound = [o for o in objects if o.get("kind") == "Pod"]
    queue = [case["pod"]]
    for i in range(rng.randint(4, 9)):
        template = copy.deepcopy(rng.choice(bound) if bound else case["pod"])
        meta = template["metadata"]
        meta["name"], meta["uid"] = f"queued-{i}", f"uid-queued-{i}"
        template["spec"].pop("nodeName", None)
        if preempting and rng.random() < 0.5:
            template["spec"]["priority"] = rng.choice((500, 2000))
        template["status"] = {"phase": "Pending"}
        queue.append(template)
    return objects, queue


def _pending(obj: dict) -> bool:
    return obj.get("kind") == "Pod" and not obj["spec"].get("nodeName")


class State:
    """The cluster's objects as Verdict's run changes them, step by step (what the oracle is
    given before each step)."""

    def __init__(self, objects: list[dict]) -> None:
        self.objects = list(objects)

    def _index(self, namespace: str, name: str) -> int | None:
        for i, o in enumerate(self.objects):
            meta = o["metadata"]
            if o.get("kind") == "Pod" and meta["name"] == name and \
                    meta.get("namespace", "default") == namespace:  # fmt: skip
                return i
        return None

    def without(self, namespace: str, name: str) -> list[dict]:
        index = self._index(namespace, name)
        return self.objects if index is None else self.objects[:index] + self.objects[index + 1 :]

    def bind(self, pod_json: dict, node: str) -> None:
        """A copy of the pending ``pod_json`` bound to ``node`` and running."""
        placed = copy.deepcopy(pod_json)
        placed["spec"]["nodeName"] = node
        placed["status"] = {"phase": "Running"}
        self.objects.append(placed)

    def apply(self, step: QueueStep, pod_json: dict) -> None:
        for victim in step.victims:
            index = self._index(victim.namespace, victim.name)
            assert index is not None, victim.key
            del self.objects[index]
        for key in step.cleared_nominations:
            namespace, name = key.split("/")
            index = self._index(namespace, name)
            if index is not None:
                self.objects[index]["status"].pop("nominatedNodeName", None)
        index = self._index(step.pod.namespace, step.pod.name)
        if index is not None:
            del self.objects[index]
        if step.outcome == BOUND:
            self.bind(pod_json, step.node)  # type: ignore[arg-type]
        elif step.nomination:  # nominated, or a failed retry that keeps its nomination
            placed = copy.deepcopy(pod_json)
            placed["status"] = {"phase": "Pending", "nominatedNodeName": step.nomination}
            self.objects.append(placed)


def step_differences(step: QueueStep, theirs: dict) -> list[str]:
    """Where one of Verdict's cycles disagrees with the oracle's answer on the same state."""
    if "error" in theirs:
        return [f"oracle cycle error {theirs['error']!r}"]
    diffs: list[str] = []
    mine = step.placement
    assert mine is not None
    for m, t in zip(mine.nodes, theirs["nodes"], strict=True):
        got = (m.feasible, m.status.code, list(m.status.reasons), m.status.plugin)
        want = (t["feasible"], t["code"], t["reasons"], t["plugin"])
        if got != want:
            diffs.append(f"{m.node_name}: verdict {got} oracle {want}")
        if m.feasible and t["feasible"] and len(theirs["feasible"]) > 1 and m.total != t["total"]:
            diffs.append(f"{m.node_name}.total: verdict {m.total} oracle {t['total']}")
    best = theirs.get("maxSet") or []
    if step.outcome == BOUND:
        nominated = step.pod.nominated_node_name
        if step.node not in best and not (mine.nominated_node_chosen and step.node == nominated):
            diffs.append(f"bound to {step.node!r}, oracle's top set {best}")
        return diffs
    if best:
        diffs.append(f"verdict: {step.outcome}; oracle places it on one of {best}")
        return diffs
    pre = theirs.get("preemption") or {}
    theirs_candidates = {
        c["nodeName"]: [v["name"] for v in c["victims"]] for c in pre.get("candidates") or ()
    }
    outcome = step.preemption
    mine_candidates = (
        {c.node_name: [v.name for v in c.victims] for c in outcome.candidates} if outcome else {}
    )
    if mine_candidates != theirs_candidates:
        diffs.append(f"candidates: verdict {mine_candidates} oracle {theirs_candidates}")
    ties = pre.get("tieSet") or []
    if step.outcome == NOMINATED and step.node not in ties:
        diffs.append(f"nominated {step.node!r}, oracle's tie set {ties}")
    if step.outcome == UNSCHEDULABLE and ties:
        diffs.append(f"verdict: unschedulable; oracle nominates one of {ties}")
    return diffs


def queue_differences(seed: int) -> tuple[list[str], int]:
    """Every disagreement of one queue run, and its number of steps."""
    from service.engine.objects import Cluster

    objects, queue = queue_case(seed)
    settings = settings_for(VERSION)
    cluster = Cluster(snapshot_from_objects(objects))
    pods = [pod_from_object(p) for p in queue]
    by_key = {f"{p['metadata'].get('namespace', 'default')}/{p['metadata']['name']}": p
              for p in queue}  # fmt: skip
    run = run_queue(
        cluster,
        pods,
        profiles={DEFAULT_SCHEDULER_NAME: oracle_profile("full", VERSION)},
        settings=settings,
        keep_outcomes=True,
    )
    state = State(objects)
    diffs: list[str] = []
    for n, step in enumerate(run.steps):
        pod_json = copy.deepcopy(by_key[step.pod_key])
        if step.pod.nominated_node_name:  # a retry: the pod carries its nomination
            pod_json["status"] = {"phase": "Pending",
                                  "nominatedNodeName": step.pod.nominated_node_name}  # fmt: skip
        # the pod itself is not among the objects (a retried pod's nomination is its own)
        others = state.without(step.pod.namespace, step.pod.name)
        theirs = run_oracle({"kind": "preemption", "objects": others, "pod": pod_json},
                            "full", VERSION)  # fmt: skip
        diffs += [f"step {n} ({step.pod_key}): {d}" for d in step_differences(step, theirs)]
        state.apply(step, by_key[step.pod_key])
    return diffs, len(run.steps)


@needs_oracle
@pytest.mark.parametrize("seed", seeds(40))
def test_every_cycle_of_the_queue_matches_the_real_scheduler(seed: int) -> None:
    diffs, _ = queue_differences(seed)
    assert diffs == [], f"seed {seed}"
