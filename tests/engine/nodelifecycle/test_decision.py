"""node_eviction_rate: the stateless decision at ``now`` (health, zones, rates, the tainting
timeline, taint-based eviction per pod, legacy mode), on snapshots built from v1 objects."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from service.engine.nodelifecycle.config import ConfigError
from service.engine.nodelifecycle.decision import node_eviction_rate
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.nodelifecycle.helpers import (
    DAEMONSET,
    DEFAULTS,
    NOT_READY,
    T0,
    UNREACHABLE,
    at,
    cluster,
    healthy,
    lease,
    node,
    pod,
    taint,
    toleration,
)


def decide(c, now: float = 0.0, **config):
    return node_eviction_rate(c, T0 + timedelta(seconds=now), config, settings=DEFAULT_SETTINGS)


def by_name(result: dict) -> dict:
    return {n["nodeName"]: n for n in result["nodes"]}


def evictions(result: dict) -> dict:
    return {p["pod"]["name"]: p["evictAt"] for p in result["pods"]}


# --- node health at now (§a.8) ---


@pytest.mark.parametrize(
    ("kwargs", "objects", "now", "ready"),
    [
        pytest.param({"heartbeat": 0}, [], 50, "True", id="heartbeat exactly grace old"),
        pytest.param({"heartbeat": 0}, [], 50.000001, "Unknown", id="1us past grace"),
        pytest.param(
            {"heartbeat": -3600}, [lease("n0", -10)], 0, "True", id="renewing lease, old status"
        ),
        pytest.param(
            {"heartbeat": -3600}, [lease("n0", -51)], 0, "Unknown", id="stale lease and status"
        ),
        pytest.param({"ready": "False", "heartbeat": -10}, [], 0, "False", id="kubelet False"),
        pytest.param(
            {"ready": None, "created": -60}, [], 0, "Unknown", id="no Ready, 60s old: in grace"
        ),
        pytest.param(
            {"ready": None, "created": -61}, [], 0, "Unknown", id="no Ready, 61s old: marked"
        ),
        pytest.param(
            {"ready": None, "created": -3600}, [lease("n0", -5)], 0, "Unknown", id="no Ready, lease"
        ),
    ],
)
def test_ready_status_at_now(kwargs, objects, now, ready):
    c = cluster(node("n0", **kwargs), *healthy("h", 3, heartbeat=now), *objects)
    assert by_name(decide(c, now))["n0"]["ready"] == ready


def test_startup_grace_counts_from_creation_and_decides_the_taint():
    c = cluster(
        node("young", ready=None, created=-60),
        node("old", ready=None, created=-61),
        *healthy("h", 3),
    )
    nodes = by_name(decide(c))
    # Within the startup grace the controller does not process the taint at all.
    assert nodes["young"]["taint"] is None
    # Past it, the controller writes Ready=Unknown and queues the node in the same pass
    # (the observed condition is the fake Unknown one).
    assert nodes["old"]["taint"] == UNREACHABLE
    assert nodes["old"]["taintedAt"] == at(0)


# --- zones ---


def test_zone_keys_legacy_labels_win_and_unlabelled_nodes_share_one_zone():
    legacy = node(
        "beta",
        zone="ga",
        labels={
            "failure-domain.beta.kubernetes.io/zone": "b1",
            "failure-domain.beta.kubernetes.io/region": "rb",
        },
    )
    c = cluster(node("plain", zone=None), legacy, node("ga", zone="z1"))
    result = decide(c)
    assert [(z["key"], z["region"], z["zone"]) for z in result["zones"]] == [
        ("", "", ""),
        ("rb:\x00:b1", "rb", "b1"),
        ("r1:\x00:z1", "r1", "z1"),
    ]
    assert by_name(result)["beta"]["zone"] == "rb:\x00:b1"


@pytest.mark.parametrize(
    ("total", "not_ready", "state", "rate"),
    [
        pytest.param(10, 0, "Normal", 0.1, id="healthy"),
        pytest.param(3, 2, "Normal", 0.1, id="2 of 3: count not > 2"),
        pytest.param(20, 11, "PartialDisruption", 0.0, id="11 of 20 = 0.55, small zone"),
        pytest.param(100, 54, "Normal", 0.1, id="54 of 100"),
        pytest.param(100, 55, "PartialDisruption", 0.01, id="55 of 100, large zone"),
        pytest.param(51, 29, "PartialDisruption", 0.01, id="51 nodes > 50"),
        pytest.param(50, 28, "PartialDisruption", 0.0, id="50 nodes is not > 50"),
    ],
)
def test_zone_state_and_rate(total, not_ready, state, rate):
    nodes = healthy("u", not_ready, ready="Unknown", heartbeat=-3600) + healthy(
        "h", total - not_ready
    )
    # A second, healthy zone keeps the cluster out of master disruption mode.
    c = cluster(*nodes, *healthy("b", 2, zone="b"))
    zone = decide(c)["zones"][0]
    assert (zone["state"], zone["nodes"], zone["notReadyNodes"], zone["evictionRate"]) == (
        state,
        total,
        not_ready,
        rate,
    )


def test_full_zone_is_drained_at_the_normal_rate_when_another_zone_is_not_full():
    c = cluster(*healthy("a", 3, ready="Unknown", heartbeat=-3600), *healthy("b", 2, zone="b"))
    result = decide(c)
    assert [(z["state"], z["evictionRate"]) for z in result["zones"]] == [
        ("FullDisruption", 0.1),
        ("Normal", 0.1),
    ]
    assert [by_name(result)[f"a-{i}"]["taintedAt"] for i in range(3)] == [at(0), at(10), at(20)]


def test_zone_size_not_cluster_size_decides_the_partial_rate():
    # 90 nodes in three 30-node zones: every partially disrupted zone is "small".
    nodes = []
    for zone in "abc":
        bad = 20 if zone == "a" else 0
        nodes += healthy(f"{zone}u", bad, zone=zone, ready="Unknown", heartbeat=-3600)
        nodes += healthy(f"{zone}h", 30 - bad, zone=zone)
    zones = decide(cluster(*nodes))["zones"]
    assert zones[0]["state"] == "PartialDisruption"
    assert zones[0]["evictionRate"] == 0.0


def test_excluded_nodes_do_not_count_but_are_tainted():
    excluded = node(
        "x",
        ready="Unknown",
        heartbeat=-3600,
        labels={"node.kubernetes.io/exclude-disruption": ""},
    )
    c = cluster(excluded, *healthy("h", 2))
    result = decide(c)
    assert result["zones"][0]["nodes"] == 2
    assert result["zones"][0]["notReadyNodes"] == 0
    assert by_name(result)["x"]["taint"] == UNREACHABLE
    assert by_name(result)["x"]["taintedAt"] == at(0)


def test_all_zones_fully_disrupted_stops_everything_and_removes_lifecycle_taints():
    c = cluster(
        node("a0", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -100)]),
        node(
            "b0",
            zone="b",
            ready="Unknown",
            heartbeat=-3600,
            taints=[taint("dedicated", -100, value="x")],
        ),
        pod("p-a", "a0"),
        pod("p-b", "b0", DEFAULTS),
    )
    result = decide(c)
    assert result["allZonesFullyDisrupted"] is True
    assert [z["evictionRate"] for z in result["zones"]] == [0.0, 0.0]
    assert by_name(result)["a0"]["taintedAt"] is None
    got = evictions(result)
    # a0's unreachable taint is removed at now: the pod's immediate deletion (the taint is
    # untolerated) was due when the taint was added, before the removal, so it runs at now.
    assert got["p-a"] == at(0)
    # A user NoExecute taint is not a lifecycle taint: it stays and still evicts.
    assert got["p-b"] == at(0)


def test_single_node_cluster_never_taints():
    c = cluster(node("only", ready="Unknown", heartbeat=-3600), pod("p", "only", DEFAULTS))
    result = decide(c)
    assert result["allZonesFullyDisrupted"] is True
    assert result["nodes"][0]["taint"] == UNREACHABLE
    assert result["nodes"][0]["taintedAt"] is None
    assert result["pods"][0]["evictAt"] is None
    assert "master disruption" in result["pods"][0]["reason"]


# --- the tainting timeline ---


def test_kubelet_reported_nodes_are_tainted_one_per_token_in_snapshot_order():
    c = cluster(
        node("u2", ready="Unknown", heartbeat=-3600),
        node("f1", ready="False", heartbeat=0),
        node("u1", ready="Unknown", heartbeat=-3600),
        *healthy("h", 7),
    )
    nodes = by_name(decide(c))
    assert [(nodes[n]["taint"], nodes[n]["taintedAt"]) for n in ("u2", "f1", "u1")] == [
        (UNREACHABLE, at(0)),
        (NOT_READY, at(10)),
        (UNREACHABLE, at(20)),
    ]


def test_a_node_the_controller_marks_unknown_is_queued_one_monitor_period_later():
    c = cluster(node("silent", heartbeat=-60), *healthy("h", 4))
    assert by_name(decide(c))["silent"]["taintedAt"] == at(5)
    c = cluster(node("silent", heartbeat=-60), *healthy("h", 4))
    assert by_name(decide(c, nodeMonitorPeriod="2s"))["silent"]["taintedAt"] == at(2)


def test_second_pass_requeues_pending_nodes_in_snapshot_order():
    # "flip" is stale but still says Ready=True: queued at the second pass (now + 5 s).
    # u1..u3 were queued at the first pass; u1 got the full bucket at once; at the second
    # pass the controller removes and re-adds every node still lacking its taint, in pass
    # order, so flip (earlier in the snapshot) goes before u2 and u3.
    c = cluster(
        node("flip", heartbeat=-60),
        node("u1", ready="Unknown", heartbeat=-3600),
        node("u2", ready="Unknown", heartbeat=-3600),
        node("u3", ready="Unknown", heartbeat=-3600),
        *healthy("h", 8),
    )
    nodes = by_name(decide(c))
    assert [nodes[n]["taintedAt"] for n in ("u1", "flip", "u2", "u3")] == [
        at(0),
        at(10),
        at(20),
        at(30),
    ]


def test_large_partial_zone_uses_the_secondary_rate_with_go_float32_timing():
    nodes = healthy("u", 40, ready="Unknown", heartbeat=-3600) + healthy("h", 20)
    result = decide(cluster(*nodes, *healthy("b", 1, zone="b")))
    assert result["zones"][0]["evictionRate"] == 0.01
    got = [by_name(result)[f"u-{i}"]["taintedAt"] for i in range(3)]
    assert got == [at(0), at(100.1), at(200.2)]


def test_existing_taint_keeps_time_added_and_pods_count_from_it():
    c = cluster(
        node("n", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -200)]),
        *healthy("h", 3),
        pod("default", "n", DEFAULTS),
        pod("short", "n", [toleration(UNREACHABLE, 60)]),
        pod("none", "n"),
        pod("ds", "n", DAEMONSET, owner="DaemonSet"),
    )
    result = decide(c)
    assert by_name(result)["n"]["taintedAt"] == at(-200)
    assert evictions(result) == {
        "default": at(100),
        "short": at(0),  # due at -140: a deletion already due runs at once
        "none": at(0),
        "ds": None,
    }


def test_small_partial_zone_keeps_existing_taints_and_their_evictions():
    # QT-03: rate 0 stops new taints; taints already on nodes stay and keep evicting.
    c = cluster(
        node("old", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -10)]),
        node("new1", ready="Unknown", heartbeat=-3600),
        node("new2", ready="Unknown", heartbeat=-3600),
        node("h", heartbeat=0),
        *healthy("b", 1, zone="b"),
        pod("p-old", "old", DEFAULTS),
        pod("p-new", "new1", DEFAULTS),
    )
    result = decide(c)
    assert result["zones"][0]["evictionRate"] == 0.0
    nodes = by_name(result)
    assert nodes["old"]["taintedAt"] == at(-10)
    assert (nodes["new1"]["taint"], nodes["new1"]["taintedAt"]) == (UNREACHABLE, None)
    got = {p["pod"]["name"]: p for p in result["pods"]}
    assert got["p-old"]["evictAt"] == at(290)
    assert got["p-new"]["evictAt"] is None
    assert "eviction rate is 0" in got["p-new"]["reason"]


def test_swap_is_immediate_and_keeps_the_scheduled_deletion():
    c = cluster(
        node("n", ready="False", heartbeat=0, taints=[taint(UNREACHABLE, -100)]),
        *healthy("h", 3),
        pod("both", "n", DEFAULTS),
        pod("only-unreachable", "n", [toleration(UNREACHABLE, 300)]),
    )
    result = decide(c)
    assert (by_name(result)["n"]["taint"], by_name(result)["n"]["taintedAt"]) == (
        NOT_READY,
        at(0),
    )
    # The countdown started with the unreachable taint is kept; a pod that does not
    # tolerate not-ready goes at the swap.
    assert evictions(result) == {"both": at(200), "only-unreachable": at(0)}


def test_ready_node_loses_lifecycle_taints_and_pending_deletions_are_cancelled():
    c = cluster(
        node("recent", taints=[taint(UNREACHABLE, -100)]),
        node("long", taints=[taint(UNREACHABLE, -400)]),
        *healthy("h", 2),
        pod("p-recent", "recent", DEFAULTS),
        pod("p-long", "long", DEFAULTS),
    )
    result = decide(c)
    assert by_name(result)["recent"]["taint"] is None
    got = {p["pod"]["name"]: p for p in result["pods"]}
    assert got["p-recent"]["evictAt"] is None
    assert got["p-recent"]["reason"].startswith("All taints were removed")
    # Its deadline (-100) passed before the removal: the overdue deletion runs at now.
    assert got["p-long"]["evictAt"] == at(0)
    assert "due at 2023-12-31T23:58:20Z, before now" in got["p-long"]["reason"]


def test_toleration_order_and_user_taints():
    c = cluster(
        node("n", taints=[taint("dedicated", -50, value="gpu")]),
        *healthy("h", 2),
        pod("wild-first", "n", [{"operator": "Exists"}, toleration("dedicated", 60)]),
        pod("sixty-first", "n", [toleration("dedicated", 60), {"operator": "Exists"}]),
        pod("wrong-value", "n", [toleration("dedicated", 600, operator="Equal")]),
    )
    result = decide(c)
    assert by_name(result)["n"]["taint"] is None
    assert evictions(result) == {
        "wild-first": None,
        "sixty-first": at(10),
        "wrong-value": at(0),
    }


def test_pod_created_after_the_taint_counts_from_its_creation():
    c = cluster(
        node("n", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -1000)]),
        *healthy("h", 2),
        pod("late", "n", DEFAULTS, created=-100),
        pod("early", "n", DEFAULTS, created=-2000),
    )
    assert evictions(decide(c)) == {"late": at(200), "early": at(0)}


def test_apply_default_tolerations():
    c = cluster(
        node("n", ready="Unknown", heartbeat=-3600),
        *healthy("h", 3),
        pod("bare", "n"),
        pod("own", "n", [toleration(UNREACHABLE, 30)]),
        pod("ds", "n", DAEMONSET, owner="DaemonSet"),
        pod("covered-but-wrong", "n", [toleration(NOT_READY, None, operator="Equal")]),
    )
    assert evictions(decide(c)) == {
        "bare": at(0),
        "own": at(30),
        "ds": None,
        "covered-but-wrong": at(0),
    }
    assert evictions(decide(c, applyDefaultTolerations=True)) == {
        "bare": at(300),
        "own": at(30),
        "ds": None,
        "covered-but-wrong": at(300),  # unreachable gets the default; not-ready is "covered"
    }


def test_not_ready_default_covered_by_equal_toleration_is_immediate_on_not_ready():
    c = cluster(
        node("n", ready="False", heartbeat=0),
        *healthy("h", 3),
        pod(
            "p", "n", [{"key": NOT_READY, "operator": "Equal", "value": "x", "effect": "NoExecute"}]
        ),
    )
    assert evictions(decide(c, applyDefaultTolerations=True)) == {"p": at(0)}


# --- legacy mode ---


def test_legacy_mode_deletes_pods_after_the_pod_eviction_timeout():
    c = cluster(
        node("dead", ready="Unknown", heartbeat=-600),
        node("dying", heartbeat=-120),
        node("sick", ready="False", heartbeat=0, transition=-100),
        *healthy("h", 7),
        pod("p-dead", "dead", DEFAULTS),
        pod("p-ds", "dead", DAEMONSET, owner="DaemonSet"),
        pod("p-term", "dead", deleting=True),
        pod("p-dying", "dying"),
        pod("p-sick", "sick"),
    )
    result = decide(c, mode="legacy")
    assert all(n["taint"] is None and n["taintedAt"] is None for n in result["nodes"])
    got = {p["pod"]["name"]: p for p in result["pods"]}
    assert got["p-dead"]["evictAt"] == at(0)
    assert got["p-dead"]["reason"].startswith("NodeLost: Node dead which was running pod p-dead")
    assert got["p-ds"]["evictAt"] is None
    assert got["p-term"]["evictAt"] is None
    # Marked Unknown at now, observed Unknown from now + 5 s; due after probe (-120) + 5m:
    # the first pass after 180 s is at 185 s.
    assert got["p-dying"]["evictAt"] == at(185)
    # Ready=False since -100 s: due after 200 s; passes fall at 0, 5, 10, ... and the first
    # one strictly after 200 s is at 205 s.
    assert got["p-sick"]["evictAt"] == at(205)


def test_legacy_mode_uses_the_zone_rate():
    c = cluster(
        *healthy("d", 3, ready="Unknown", heartbeat=-3600),
        *healthy("h", 7),
        *[pod(f"p{i}", f"d-{i}") for i in range(3)],
    )
    got = evictions(decide(c, mode="legacy"))
    assert got == {"p0": at(0), "p1": at(10), "p2": at(20)}


# --- shape, determinism, config ---


def test_result_is_json_and_deterministic():
    c = cluster(
        node("n", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -10)]),
        *healthy("h", 3),
        pod("p", "n", DEFAULTS),
    )
    first = decide(c)
    assert json.loads(json.dumps(first)) == first
    assert decide(c) == first
    assert set(first) == {"zones", "allZonesFullyDisrupted", "nodes", "pods"}
    assert set(first["pods"][0]) == {"pod", "evictAt", "reason"}
    assert set(first["pods"][0]["pod"]) == {
        "namespace",
        "name",
        "uid",
        "nodeName",
        "priority",
        "qosClass",
    }


@pytest.mark.parametrize(
    ("config", "path"),
    [
        ({"nodeEvictionRate": -0.1}, "nodeEvictionRate"),
        ({"secondaryNodeEvictionRate": -1}, "secondaryNodeEvictionRate"),
        ({"unhealthyZoneThreshold": 0}, "unhealthyZoneThreshold"),
        ({"unhealthyZoneThreshold": 1.01}, "unhealthyZoneThreshold"),
        ({"nodeMonitorGracePeriod": "50"}, "nodeMonitorGracePeriod"),
        ({"podEvictionTimeout": "5 minutes"}, "podEvictionTimeout"),
        ({"nodeStartupGracePeriod": 60}, "nodeStartupGracePeriod"),
        ({"nodeMonitorPeriod": "0s"}, "nodeMonitorPeriod"),
        ({"mode": "taint-manager"}, "mode"),
        ({"largeClusterSizeThreshold": -1}, "largeClusterSizeThreshold"),
        ({"largeClusterSizeThreshold": 1.5}, "largeClusterSizeThreshold"),
        ({"applyDefaultTolerations": "yes"}, "applyDefaultTolerations"),
        ({"podEvictionTimout": "5m"}, "podEvictionTimout"),
    ],
)
def test_bad_config_names_the_field(config, path):
    with pytest.raises(ConfigError) as exc:
        decide(cluster(*healthy("h", 1)), **config)
    assert exc.value.path == path


def test_go_durations_are_accepted():
    c = cluster(node("n", heartbeat=-90), *healthy("h", 3))
    assert by_name(decide(c, nodeMonitorGracePeriod="1m30s"))["n"]["ready"] == "True"
    assert by_name(decide(c, nodeMonitorGracePeriod="1m29.5s"))["n"]["ready"] == "Unknown"


# --- regressions found against the controller's own code (nodelifecycle-oracle, v1.35) ---


def test_overdue_deletion_happens_at_now():
    # Taint since -300 s, tolerated 60 s: due at -240, but the pod is still in the
    # snapshot, so the deletion runs at now (AddWork runs work whose delay is <= 0 at once).
    c = cluster(
        node("n", ready="Unknown", heartbeat=-3600, taints=[taint(UNREACHABLE, -300)]),
        *healthy("h", 3),
        pod("p", "n", [toleration(UNREACHABLE, 60)]),
        pod("zero", "n", [toleration(UNREACHABLE, 0)]),
    )
    got = {p["pod"]["name"]: p for p in decide(c)["pods"]}
    assert got["p"]["evictAt"] == at(0)
    assert "due at 2023-12-31T23:56:00Z, before now: it runs at once" in got["p"]["reason"]
    assert got["zero"]["evictAt"] == at(0)


def test_never_updated_node_past_startup_grace_is_tainted_unreachable():
    # tryUpdateNodeHealth writes Ready=Unknown (NodeStatusNeverUpdated); the same pass reads
    # the synthesized Unknown and queues the node: tainted at now, its pod deleted then.
    c = cluster(
        node("fresh", ready=None, created=-3600),
        *healthy("h", 3),
        pod("p", "fresh"),
    )
    result = decide(c)
    assert by_name(result)["fresh"] == {
        "nodeName": "fresh",
        "zone": "r1:\x00:a",
        "ready": "Unknown",
        "taint": UNREACHABLE,
        "taintedAt": at(0),
        "slotGroup": None,
    }
    assert evictions(result) == {"p": at(0)}


def test_earlier_timer_is_kept_when_the_taint_changes():
    # not-ready since -10 s, tolerated 60 s: the timer fires at +50. At +5 the controller
    # swaps the taint to unreachable, tolerated with tolerationSeconds 0: processPodOnNode
    # keeps the existing timer (created earlier), so the pod goes at +50, not at +5.
    c = cluster(
        node("n", ready="False", heartbeat=-55, taints=[taint(NOT_READY, -10)]),
        *healthy("h", 3),
        pod("p", "n", [toleration(UNREACHABLE, 0), toleration(NOT_READY, 60)]),
        pod("untolerated", "n", [toleration(NOT_READY, 60)]),
    )
    result = decide(c)
    assert by_name(result)["n"]["taint"] == UNREACHABLE
    assert by_name(result)["n"]["taintedAt"] == at(5)
    # An untolerated taint is different: the pod is deleted at once.
    assert evictions(result) == {"p": at(50), "untolerated": at(5)}


def test_node_without_ready_keeps_the_lifecycle_taint_it_carries():
    # In its startup grace the controller leaves the node alone: the taint stays and is
    # reported with its timeAdded.
    c = cluster(
        node("new", ready=None, created=-30, taints=[taint(UNREACHABLE, -20)]),
        *healthy("h", 3),
    )
    assert by_name(decide(c))["new"]["taint"] == UNREACHABLE
    assert by_name(decide(c))["new"]["taintedAt"] == at(-20)


def test_node_without_ready_is_queued_afresh_and_its_taint_restamped():
    # Past its startup grace with a taint someone else put there: the controller's queue has
    # never seen the node, so the first pass queues it and its slot re-stamps the taint.
    c = cluster(
        node("old", ready=None, created=-3600, taints=[taint(UNREACHABLE, -900)]),
        *healthy("h", 3),
    )
    assert by_name(decide(c))["old"]["taintedAt"] == at(0)


def test_swapped_taint_keeps_its_queue_entry():
    # A node that posted False while carrying unreachable was queued (and remembered) when
    # it went Unknown: the first pass swaps the taint at now and no later slot re-stamps it
    # (nodelifecycle-oracle's warm start forgets it, docs/fidelity.md).
    c = cluster(
        node("n", ready="False", heartbeat=-5, taints=[taint(UNREACHABLE, -600)]),
        *healthy("h", 9),
    )
    assert by_name(decide(c))["n"]["taintedAt"] == at(0)


# --- slot groups: nodes whose slots the controller hands out in an unspecified order ---


def test_nodes_queued_by_one_pass_share_a_slot_group():
    nodes = [node(f"u{i}", ready="False", heartbeat=-5) for i in range(3)]
    c = cluster(*nodes, *healthy("h", 7), node("lone", zone="b", ready="False", heartbeat=-5))
    result = by_name(decide(c))
    assert [result[f"u{i}"]["taintedAt"] for i in range(3)] == [at(0), at(10), at(20)]
    assert {result[f"u{i}"]["slotGroup"] for i in range(3)} == {1}
    # Alone in its zone's draw: its slot is its own.
    assert result["lone"]["slotGroup"] is None
    assert result["h-0"]["slotGroup"] is None


def test_first_pass_leftovers_draw_with_the_second_pass():
    # u0, u1 queue at now (kubelet said False); s queues at +5 (marked Unknown at now).
    # At +5 u1 is still waiting, so markNodeForTainting re-queues it with s: either may
    # take the slot at +10.
    c = cluster(
        node("u0", ready="False", heartbeat=-5),
        node("u1", ready="False", heartbeat=-5),
        node("s", heartbeat=-3600),
        *healthy("h", 9),
    )
    result = by_name(decide(c))
    assert result["u0"]["taintedAt"] == at(0)
    assert {result["u1"]["taintedAt"], result["s"]["taintedAt"]} == {at(10), at(20)}
    assert result["u1"]["slotGroup"] == result["s"]["slotGroup"] == 1
    assert result["u0"]["slotGroup"] == 1
