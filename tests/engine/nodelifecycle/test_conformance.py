"""Every case of tests/conformance/nodelifecycle.json against the engine function its group
names, one test per group, one row per case (ids = case names).

Skipped group: v1.Toleration.ToleratesTaint (owned and tested with
service/engine/tolerations.py). Multi-pass groups run on a fresh NodeLifecycleSimulator.
"""

from __future__ import annotations

import math

import pytest

from service.engine.nodelifecycle.clock import MILLISECOND, SECOND, format_time
from service.engine.nodelifecycle.queue import (
    AlwaysLimiter,
    RateLimitedTimedQueue,
    TokenBucketLimiter,
    run_queue_loop,
)
from service.engine.nodelifecycle.tainteviction import (
    TaintEvictionQueue,
    default_toleration_seconds,
    get_min_toleration_time,
    no_execute_taints,
    pod_decision,
    replay_pod,
)
from service.engine.nodelifecycle.tainting import (
    ACTION_ENQUEUE_NOT_READY,
    ACTION_ENQUEUE_UNREACHABLE,
    ACTION_NONE,
    ACTION_REMOVE,
    ACTION_SWAP_TO_NOT_READY,
    ACTION_SWAP_TO_UNREACHABLE,
    no_schedule_condition_taints,
)
from service.engine.nodelifecycle.timeline import _initial_events
from service.engine.nodelifecycle.zones import compute_zone_state, rate_for_state
from service.engine.topology import zone_key
from service.ingest.kube import node_from_object, pod_from_object
from tests.engine.nodelifecycle.controller import NodeLifecycleSimulator
from tests.engine.nodelifecycle.helpers import (
    case_toleration,
    cases,
    config,
    ns,
    toleration_dict,
)

# --- helpers ---


def _simulate(case: dict, *, run_loop: bool = False, pods=()) -> tuple:
    """Run the case's passes on a fresh controller; returns (simulator, records per pass)."""
    inp = case["input"]
    sim = NodeLifecycleSimulator(config(inp["config"]), pods)
    records = []
    passes = inp["passes"]
    for i, p in enumerate(passes):
        now = ns(p["now"])
        sim.set_nodes(node_from_object(n) for n in p["nodes"])
        leases = {name: ns(t) for name, t in p.get("leaseRenewTimes", {}).items()}
        records.append(sim.monitor_pass(now, leases))
        if run_loop:
            until = ns(passes[i + 1]["now"]) if i + 1 < len(passes) else None
            until = until or now + sim.config.node_monitor_period_ns
            sim.run_loop(now, until)
    return sim, records


def _condition_dict(cond) -> dict:
    return {
        "type": cond.type,
        "status": cond.status,
        "reason": cond.reason,
        "message": cond.message,
        "lastHeartbeatTime": format_time(cond.last_heartbeat),
        "lastTransitionTime": format_time(cond.last_transition),
    }


def _eviction(decision) -> dict:
    if decision.kind == "after":
        return {"decision": "after", "seconds": decision.seconds}
    return {"decision": decision.kind}


def _decide(node: dict, pod: dict) -> dict:
    """processPodOnNode for one pod on one node (unbound pods are ignored: never)."""
    model_node = node_from_object(node)
    model_pod = pod_from_object(pod)
    if not model_pod.node_name:
        return {"decision": "never"}
    return _eviction(pod_decision(no_execute_taints(model_node.taints), model_pod.tolerations))


# --- topology.GetZoneKey ---


@pytest.mark.parametrize("case", cases("topology.GetZoneKey"))
def test_get_zone_key(case):
    node = node_from_object(case["input"]["node"])
    assert zone_key(node.labels) == case["expected"]["zoneKey"]


# --- monitorNodeHealth: zone states over passes ---


@pytest.mark.parametrize("case", cases("nodelifecycle.monitorNodeHealth -> zoneStates"))
def test_monitor_node_health_zone_states(case):
    states = []
    inp = case["input"]
    sim = NodeLifecycleSimulator(config(inp["config"]))
    for p in inp["passes"]:
        sim.set_nodes(node_from_object(n) for n in p["nodes"])
        sim.monitor_pass(ns(p["now"]))
        states.append(sim.zone_states())
    assert states == case["expected"]["zoneStatesAfterEachPass"]


@pytest.mark.parametrize(
    "case",
    cases("nodelifecycle.monitorNodeHealth -> zoneStates + eviction gate (legacy test)"),
)
def test_monitor_node_health_legacy_eviction(case):
    pods = [pod_from_object(p) for p in case["input"]["pods"]]
    inp = case["input"]
    sim = NodeLifecycleSimulator(config(inp["config"]), pods)
    states = []
    for i, p in enumerate(inp["passes"]):
        now = ns(p["now"])
        sim.set_nodes(node_from_object(n) for n in p["nodes"])
        sim.monitor_pass(now)
        states.append(sim.zone_states())
        # doEvictionPass runs every 100 ms until the next pass.
        if i + 1 < len(inp["passes"]):
            sim.run_loop(now, ns(inp["passes"][i + 1]["now"]))
        else:
            sim.run_loop(now, now + sim.config.node_monitor_period_ns)
    assert states == case["expected"]["zoneStatesAfterEachPass"]
    assert ("default/pod0" in sim.deleted_pods) == case["expected"]["pod0EvictedAfterPass2"]


# --- tryUpdateNodeHealth: status written, conditions, pods marked NotReady ---


def _single_node_status(case: dict) -> dict:
    _, records = _simulate(case)
    node_records = [r["node0"] for r in records]
    posted = [r for r in node_records if r.posted]
    return {
        "nodeStatusPostedByController": bool(posted),
        "postedConditions": [_condition_dict(c) for c in posted[-1].conditions] if posted else None,
        "podsMarkedNotReady": any(r.pods_marked_not_ready for r in node_records),
    }


@pytest.mark.parametrize("case", cases("nodelifecycle.tryUpdateNodeHealth (via monitorNodeHealth)"))
def test_try_update_node_health(case):
    assert _single_node_status(case) == case["expected"]


@pytest.mark.parametrize(
    "case", cases("nodelifecycle.tryUpdateNodeHealth with node Lease (via monitorNodeHealth)")
)
def test_try_update_node_health_with_lease(case):
    assert _single_node_status(case) == case["expected"]


@pytest.mark.parametrize("case", cases("nodelifecycle.monitorNodeHealth -> MarkPodsNotReady"))
def test_mark_pods_not_ready(case):
    assert _single_node_status(case) == case["expected"]


# --- NoSchedule condition taints ---


@pytest.mark.parametrize("case", cases("nodelifecycle.doNoScheduleTaintingPass"))
def test_no_schedule_tainting_pass(case):
    node = node_from_object(case["input"]["node"])
    got = [{"key": t.key, "effect": t.effect} for t in no_schedule_condition_taints(node)]
    assert got == case["expected"]["noScheduleConditionTaints"]
    assert all(t.time_added is None for t in no_schedule_condition_taints(node))


# --- processTaintBaseEviction + doNoExecuteTaintingPass ---


def _apply_no_execute_taints_nodes(node3_status: dict | None = None) -> list[dict]:
    """The four nodes of TestApplyNoExecuteTaints (k8s node_lifecycle_controller_test.go)."""

    def node(name, status, hb, lt):
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "creationTimestamp": "2012-01-01T00:00:00Z",
                "labels": {
                    "topology.kubernetes.io/region": "region1",
                    "topology.kubernetes.io/zone": "zone1",
                    "failure-domain.beta.kubernetes.io/region": "region1",
                    "failure-domain.beta.kubernetes.io/zone": "zone1",
                },
            },
            "spec": {},
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": status,
                        "lastHeartbeatTime": hb,
                        "lastTransitionTime": lt,
                    }
                ]
            },
        }

    return [
        node("node0", "Unknown", "2015-01-01T12:00:00Z", "2015-01-01T12:00:00Z"),
        node("node1", "True", "2017-01-01T12:00:00Z", "2017-01-01T12:00:00Z"),
        node("node2", "False", "2015-01-01T12:00:00Z", "2015-01-01T12:00:00Z"),
        node("node3", "True", "2016-01-01T12:00:00Z", "2016-01-01T12:00:00Z"),
    ]


def _test_apply_no_execute_taints_step3(case: dict) -> dict:
    """The case gives only a description of steps 1-2 ("priorSteps"); this replays the
    upstream test: step 1 taints node0/node2, step 2 makes node2 healthy, step 3 makes node3
    Ready=False, runs a monitor pass (node3 queued), then replaces node3's conditions by a
    lone MemoryPressure=Unknown before the tainting loop runs. The upstream test keeps the
    clock fixed; passes here are 5 s apart (well inside every grace period)."""
    from service.engine.nodelifecycle.health import Condition

    t0 = ns(case["input"]["now"])
    period = 5 * SECOND
    sim = NodeLifecycleSimulator(config(case["input"]["config"]))
    nodes = [node_from_object(n) for n in _apply_no_execute_taints_nodes()]
    sim.set_nodes(nodes)
    sim.monitor_pass(t0)
    sim.run_loop(t0, t0 + period)
    assert sim.no_execute_taint_keys("node0") == ["node.kubernetes.io/unreachable"]
    assert sim.no_execute_taint_keys("node2") == ["node.kubernetes.io/not-ready"]
    # Step 2: node2 healthy again.
    healthy = Condition("Ready", "True", ns("2017-01-01T12:10:00Z"), ns("2017-01-01T12:00:00Z"))
    sim.nodes["node2"].conditions = [healthy]
    sim.monitor_pass(t0 + period)
    sim.run_loop(t0 + period, t0 + 2 * period)
    assert sim.no_execute_taint_keys("node2") == []
    # Step 3: node3 NotReady, queued, then its Ready condition disappears.
    unhealthy = Condition("Ready", "False", ns("2017-01-01T12:10:00Z"), ns("2017-01-01T12:00:00Z"))
    sim.nodes["node3"].conditions = [unhealthy]
    records = sim.monitor_pass(t0 + 2 * period)
    assert records["node3"].action == ACTION_ENQUEUE_NOT_READY
    sim.nodes["node3"].conditions = [
        Condition(
            "MemoryPressure", "Unknown", ns("2017-01-01T12:10:00Z"), ns("2017-01-01T12:00:00Z")
        )
    ]
    sim.run_loop(t0 + 2 * period, t0 + 3 * period)
    return {"noExecuteTaintKeys": {"node3": sim.no_execute_taint_keys("node3")}}


@pytest.mark.parametrize(
    "case", cases("nodelifecycle.processTaintBaseEviction + doNoExecuteTaintingPass")
)
def test_apply_no_execute_taints(case):
    expected = {k: v for k, v in case["expected"].items() if k != "note"}
    if "priorSteps" in case["input"]:
        assert _test_apply_no_execute_taints_step3(case) == expected
        return
    now = ns(case["input"]["now"])
    sim = NodeLifecycleSimulator(config(case["input"]["config"]))
    got = {}
    for i, step in enumerate(case["input"]["steps"], start=1):
        sim.set_nodes(node_from_object(n) for n in step["nodes"])
        sim.monitor_pass(now)
        sim.run_loop(now, now + 100 * MILLISECOND)  # one doNoExecuteTaintingPass
        got[f"noExecuteTaintKeysAfterStep{i}"] = {
            name: sim.no_execute_taint_keys(name) for name in sim.nodes
        }
    assert got == expected


# --- taint eviction controller ---


@pytest.mark.parametrize("case", cases("tainteviction.getMinTolerationTime"))
def test_get_min_toleration_time(case):
    used = [case_toleration(t) for t in case["input"]["usedTolerations"]]
    assert get_min_toleration_time(used) == case["expected"]["minTolerationSeconds"]


@pytest.mark.parametrize("case", cases("tainteviction.processPodOnNode (pod create)"))
def test_process_pod_on_node_pod_create(case):
    assert _decide(case["input"]["node"], case["input"]["pod"]) == case["expected"]["eviction"]


@pytest.mark.parametrize("case", cases("tainteviction.handleNodeUpdate (node create)"))
def test_handle_node_update_create(case):
    assert _decide(case["input"]["node"], case["input"]["pod"]) == case["expected"]["eviction"]


@pytest.mark.parametrize("case", cases("tainteviction.handleNodeUpdate (node update)"))
def test_handle_node_update(case):
    assert _decide(case["input"]["node"], case["input"]["pod"]) == case["expected"]["eviction"]


@pytest.mark.parametrize("case", cases("tainteviction.handleNodeUpdate (several pods)"))
def test_handle_node_update_several_pods(case):
    got = {
        pod["metadata"]["name"]: _decide(case["input"]["node"], pod)
        for pod in case["input"]["pods"]
    }
    assert got == case["expected"]["evictions"]


@pytest.mark.parametrize("case", cases("tainteviction.handlePodUpdate (pod update sequences)"))
def test_handle_pod_update_sequence(case):
    node = node_from_object(case["input"]["node"])
    taints = no_execute_taints(node.taints)
    queue = TaintEvictionQueue()
    t = ns("2024-01-01T00:00:00Z")
    for raw in (case["input"]["prevPod"], case["input"]["newPod"]):
        pod = pod_from_object(raw)
        if pod.node_name:  # handlePodUpdate ignores unbound pods
            queue.process_pod_on_node(pod.key, pod.tolerations, taints, t)
        t += SECOND
    scheduled = queue.scheduled("default/pod1")
    if scheduled is None:
        got = {"decision": "never"}
    else:
        created, fire, _ = scheduled
        got = (
            {"decision": "immediate"}
            if fire == created
            else {"decision": "after", "seconds": (fire - created) // SECOND}
        )
    assert got == case["expected"]["eviction"]


@pytest.mark.parametrize("case", cases("tainteviction.processPodOnNode (eviction time)"))
def test_process_pod_on_node_eviction_time(case):
    node = node_from_object(case["input"]["node"])
    pod = pod_from_object(case["input"]["pod"])
    assert _decide(case["input"]["node"], case["input"]["pod"]) == case["expected"]["eviction"]
    if "evictAtApprox" in case["expected"]:
        events = _initial_events(node.taints, origin=0)
        outcome = replay_pod(events, pod.tolerations)
        assert format_time(outcome.evict_at) == case["expected"]["evictAtApprox"]


@pytest.mark.parametrize("case", cases("admission.DefaultTolerationSeconds"))
def test_default_toleration_seconds(case):
    tolerations = [case_toleration(t) for t in case["input"]["podTolerations"]]
    got = [toleration_dict(t) for t in default_toleration_seconds(tolerations)]
    assert got == case["expected"]["podTolerations"]


@pytest.mark.parametrize("case", cases("admission.DefaultTolerationSeconds (edge cases)"))
def test_default_toleration_seconds_edge_cases(case):
    tolerations = [case_toleration(t) for t in case["input"]["podTolerations"]]
    got = [toleration_dict(t) for t in default_toleration_seconds(tolerations)]
    assert got == case["expected"]["podTolerations"]


# --- RateLimitedTimedQueue ---


def _run_ops(ops: list[str]) -> dict:
    queue = RateLimitedTimedQueue(AlwaysLimiter())
    tries: list[list[str]] = []
    qps: list[float] = []
    limiters: list[object] = []
    for t, op in enumerate(ops, start=1):
        verb, _, arg = op.partition(" ")
        if verb == "Add":
            queue.add(arg, t)
        elif verb == "Remove":
            queue.remove(arg)
        elif op.startswith("Try"):
            processed: list[str] = []
            queue.try_process(t, lambda item, out=processed: (out.append(item.value), (True, 0))[1])
            tries.append(processed)
        elif op.startswith("SwapLimiter("):
            before = queue.limiter
            queue.swap_limiter(float(op[len("SwapLimiter(") : -1]), t)
            qps.append(queue.limiter.reported_qps)
            limiters.append(
                "unchanged (same object)"
                if queue.limiter is before
                else type(queue.limiter).__name__
            )
    return {"queue": queue, "tries": tries, "qps": qps, "limiters": limiters}


@pytest.mark.parametrize("case", cases("scheduler.RateLimitedTimedQueue"))
def test_rate_limited_timed_queue(case):
    out = _run_ops(case["input"]["ops"])
    expected = case["expected"]
    if "queueOrder" in expected:
        assert out["queue"].queued() == expected["queueOrder"]
        assert sorted(out["queue"].in_set()) == sorted(expected["set"])
    if "processed" in expected:
        assert out["tries"] == [expected["processed"]]
    if "processedByFirstTry" in expected:
        assert out["tries"] == [expected["processedByFirstTry"], expected["processedBySecondTry"]]
    if "reportedQPSAfterEachOp" in expected:
        assert out["qps"] == pytest.approx(expected["reportedQPSAfterEachOp"])
        names = {
            "never-accept": "NeverLimiter",
            "token bucket 5.5 qps burst 1": "TokenBucketLimiter",
            "unchanged (same object)": "unchanged (same object)",
        }
        assert out["limiters"] == [names[x] for x in expected["limiterAfterEachOp"]]


# Disputed: QT-02 expects [0, 100, 200] s within 0.1 s at 0.01 qps. The bucket's rate is
# float32(0.01) = 0.009999999776... (client-go NewTokenBucketRateLimiter takes a float32;
# rate.Limit(float64(qps))). Exactly 100 s after a token was taken the bucket holds
# 100 * 0.0099999998 = 0.99999998 tokens; x/time/rate's reserveN computes the wait for the
# missing 2.2e-8 token as durationFromTokens = 2 ns > 0, so AllowN(t, 1) is false. The next
# 100 ms tick accepts, and advance() caps the bucket at burst 1, dropping the surplus, so
# every further node slips one more tick: 0, 100.1, 200.2 s. (At 0.1 qps float32 rounds up,
# 0.10000000149, and QT-01's 0/10/20 s is exact.) See test_tainting_timing_go_float32.
_TIMING_CASES = [
    pytest.param(
        p.values[0],
        id=p.id,
        marks=pytest.mark.xfail(
            strict=True,
            reason="float32(0.01) < 0.01: the third node is tainted at 200.2 s, not 200±0.1 s",
        ),
    )
    if p.id.startswith("QT-02")
    else p
    for p in cases("scheduler.RateLimitedTimedQueue (tainting timing)")
]


def _taint_offsets(rate: float, names: list[str]) -> list[float]:
    queue = RateLimitedTimedQueue(TokenBucketLimiter(0.1))
    t0 = ns("2024-01-01T00:00:00Z")
    queue.swap_limiter(rate, t0)  # a full bucket at the zone rate (never-accept at 0)
    for name in names:
        queue.add(name, t0)
    tainted: list[tuple[str, int]] = []
    run_queue_loop(
        {"zone": queue},
        lambda _z, item, t: (tainted.append((item.value, t)), (True, 0))[1],
        start=t0,
        until=t0 + 3600 * SECOND,
    )
    assert [name for name, _ in tainted] == names[: len(tainted)]
    return [(t - t0) / SECOND for _, t in tainted]


def test_tainting_timing_go_float32():
    assert _taint_offsets(0.01, ["n1", "n2", "n3"]) == [0, 100.1, 200.2]
    assert _taint_offsets(0.1, ["n1", "n2", "n3"]) == [0, 10, 20]


@pytest.mark.parametrize("case", _TIMING_CASES)
def test_tainting_timing(case):
    inp, expected = case["input"], case["expected"]
    offsets = _taint_offsets(inp["zoneRateQPS"], inp["enqueued"])
    assert len(offsets) == len(expected["taintOffsetsSeconds"])
    for got, want in zip(offsets, expected["taintOffsetsSeconds"], strict=True):
        assert math.isclose(got, want, abs_tol=expected["toleranceSeconds"] + 1e-9)


# --- ComputeZoneState, setLimiterInZone ---


@pytest.mark.parametrize("case", cases("nodelifecycle.ComputeZoneState"))
def test_compute_zone_state(case):
    statuses = [c["status"] if c else None for c in case["input"]["readyConditions"]]
    not_ready, state = compute_zone_state(statuses, case["input"]["unhealthyZoneThreshold"])
    assert {"zoneState": state, "notReadyCount": not_ready} == case["expected"]


@pytest.mark.parametrize(
    "case", cases("nodelifecycle.setLimiterInZone / ReducedQPSFunc / HealthyQPSFunc")
)
def test_set_limiter_in_zone(case):
    inp = case["input"]
    assert inp["allZonesFullyDisrupted"] is False
    rate = rate_for_state(inp["zoneState"], inp["zoneSize"], config(inp["config"]))
    assert rate == case["expected"]["zoneRateQPS"]


# --- handleDisruption over passes ---


@pytest.mark.parametrize(
    "case", cases("nodelifecycle.handleDisruption (cluster level, via monitorNodeHealth passes)")
)
def test_handle_disruption(case):
    inp = case["input"]
    sim = NodeLifecycleSimulator(config(inp["config"]))
    states, rates, modes = [], [], []
    for p in inp["passes"]:
        sim.set_nodes(node_from_object(n) for n in p["nodes"])
        sim.monitor_pass(ns(p["now"]))
        states.append(sim.zone_states())
        rates.append(sim.zone_rates())
        modes.append(sim.disruption.all_fully_disrupted)
    expected = case["expected"]
    assert states == expected["zoneStatesAfterEachPass"]
    assert rates == expected["zoneRatesQPSAfterEachPass"]
    assert modes == expected["allZonesFullyDisruptedModeAfterEachPass"]


# --- tryUpdateNodeHealth + processTaintBaseEviction timing ---

_ACTION_TEXT = {
    ACTION_REMOVE: "remove not-ready/unreachable NoExecute taints (if any)",
    ACTION_ENQUEUE_UNREACHABLE: "enqueue for node.kubernetes.io/unreachable:NoExecute",
    ACTION_ENQUEUE_NOT_READY: "enqueue for node.kubernetes.io/not-ready:NoExecute",
    ACTION_SWAP_TO_NOT_READY: "swap unreachable->not-ready now",
    ACTION_SWAP_TO_UNREACHABLE: "swap not-ready->unreachable now",
    ACTION_NONE: "none (no Ready condition yet)",
}


@pytest.mark.parametrize(
    "case", cases("nodelifecycle.tryUpdateNodeHealth + processTaintBaseEviction (timing)")
)
def test_node_health_timing(case):
    _, records = _simulate(case)
    got = [
        {
            "readyStatus": r["n0"].current,
            "controllerPostedStatus": r["n0"].posted,
            "podsMarkedNotReady": r["n0"].pods_marked_not_ready,
            "taintAction": _ACTION_TEXT[r["n0"].action],
        }
        for r in records
    ]
    assert got == case["expected"]["afterEachPass"]
