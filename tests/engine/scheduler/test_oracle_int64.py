"""The real scheduler (v1.35.4, the verdict-oracle binary) on clusters whose quantities sit at int64's
edges: node Requested sums that wrap (NodeInfo.update), scores computed in int64
(leastRequestedScore, mostRequestedScore, the requested-to-capacity utilization, all
wrapping and truncating) and float64 (balancedResourceScorer) from wrapped sums, for each
scoring strategy. Only quantities whose MilliValue/Value is the exact integer are used
(e.g. ``9223372036854775807m``), so the test is about the arithmetic on them."""

from __future__ import annotations

import json
import random
import re
import subprocess

import pytest

from service.decisions.priority import admit_priority
from service.engine.objects import Cluster
from service.engine.quantity import parse_quantity
from service.engine.scheduler.preemption import preempt
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects
from tests.conftest import node, pod
from tests.engine.scheduler.oracle import (
    BINARY,
    cycle_error_differences,
    needs_oracle,
    placement_differences,
    preemption_differences,
    verdict_placement,
)
from tests.engine.scheduler.test_oracle_cases import _restricted

MAX = 2**63 - 1
_INVALID = re.compile(r'plugin "(?P<plugin>\w+)" returns an invalid score (?P<score>-?\d+)')
_CPU = [f"{MAX}m", f"{2**62}m", f"{3 * 2**61}m", "4", "9223372036854775", "500m"]
_MEMORY = [str(MAX), str(2**62), "8Gi", "1Gi", str(MAX - 1)]
_SCORING = [
    None,
    {
        "strategy": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1}],
    },
    {
        "strategy": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        "shape": [
            {"utilization": 0, "score": 0},
            {"utilization": 50, "score": 7},
            {"utilization": 100, "score": 10},
        ],
    },
    {
        "strategy": "LeastAllocated",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 5}],
    },
]


def _case(seed: int) -> dict:
    rng = random.Random(seed)
    nodes = [
        node(f"n{i}", cpu=rng.choice(_CPU[:5]), memory=rng.choice(_MEMORY[:3]), pods="110")
        for i in range(5)
    ]
    pods = []
    for i in range(12):
        body = pod(
            f"p{i}",
            rng.choice(nodes)["metadata"]["name"],
            cpu=rng.choice([None, *_CPU]),
            memory=rng.choice([None, *_MEMORY]),
        )
        body["status"] = {"phase": "Running", "startTime": "2026-11-20T09:00:00Z"}
        pods.append(body)
    incoming = pod(
        "incoming",
        cpu=rng.choice(["100m", "1", f"{2**62}m"]),
        memory=rng.choice([None, "1Gi", str(2**62)]),
    )
    return {"kind": "placement", "objects": nodes + pods, "pod": incoming}


def _oracle(case: dict) -> dict:
    """The oracle's answer, an error included (it is in the JSON, with exit status 2)."""
    done = subprocess.run(
        [str(BINARY), "--profile", "restricted"],
        input=json.dumps(case),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return json.loads(done.stdout)


def _differences(case: dict, scoring: dict | None) -> list[str]:
    case = dict(case, scoring=scoring)
    theirs = _oracle(case)
    mine = verdict_placement(case, "1.35", _restricted(scoring))
    diffs = []
    if theirs.get("error"):
        # runScorePlugins refuses a score outside [0, 100] (a wrapped sum can give one): the
        # cycle fails, and Verdict's fails with it.
        assert _INVALID.search(theirs["error"]), theirs["error"]
        return cycle_error_differences(mine, theirs["error"])
    if mine["cycleError"]:
        diffs.append(f"verdict fails the cycle ({mine['cycleError']}), the oracle does not")
    for m, t in zip(mine["nodes"], theirs["nodes"], strict=True):
        if m["feasible"] != t["feasible"] or m["reasons"] != t["reasons"]:
            diffs.append(
                f"{m['name']}: verdict {m['feasible'], m['reasons']} oracle {t['feasible'], t['reasons']}"
            )
        elif t["feasible"] and m["scores"] != t["scores"]:
            diffs.append(f"{m['name']}.scores: verdict {m['scores']} oracle {t['scores']}")
    return diffs


@needs_oracle
@pytest.mark.parametrize("seed", range(12))
def test_scores_at_int64_edges_match_the_scheduler(seed: int) -> None:
    case = _case(seed)
    for scoring in _SCORING:
        assert _differences(case, scoring) == [], (seed, scoring)


def _preemption_case(seed: int) -> dict:
    """Nodes whose pods' cpu requests sum past int64 (Requested wraps, so reprieving a
    victim can make the preemptor fit again) and a high-priority pod to place."""
    rng = random.Random(seed)
    nodes = [node(f"n{i}", cpu=rng.choice([f"{MAX}m", "4", f"{2**62}m"])) for i in range(4)]
    pods = []
    for i in range(14):
        body = pod(
            f"p{i}",
            rng.choice(nodes)["metadata"]["name"],
            cpu=rng.choice(["500m", "1", f"{2**62}m", f"{3 * 2**61}m", f"{MAX}m"]),
            memory=rng.choice([None, "1Gi"]),
            priority=rng.choice([0, 10, 100, 5000]),
        )
        body["status"] = {"phase": "Running", "startTime": f"2026-11-20T09:00:{i:02d}Z"}
        pods.append(body)
    incoming = pod("incoming", cpu=rng.choice(["1", "3", f"{2**62}m"]), priority=1000)
    return {"kind": "preemption", "objects": nodes + pods, "pod": incoming}


@needs_oracle
@pytest.mark.parametrize("seed", range(16))
def test_preemption_at_int64_edges_matches_the_scheduler(seed: int) -> None:
    """SelectVictimsOnNode re-runs fitsRequest on NodeInfos whose Requested wrapped: the
    candidates, their victims (in order) and the nominated node are the scheduler's."""
    case = _preemption_case(seed)
    theirs = _oracle(case)
    if theirs.get("error"):
        # The pod fit a node, scoring ran and refused an out-of-range score: no preemption.
        assert _INVALID.search(theirs["error"]), theirs["error"]
        cluster = Cluster(snapshot_from_objects(case["objects"]))
        out = preempt(
            cluster,
            admit_priority(pod_from_object(case["pod"]), cluster),
            settings=DEFAULT_SETTINGS,
        )
        assert out.fits_without_preemption
        return
    assert preemption_differences(case, profile="restricted") == []


# Quantities whose MilliValue/Value leave int64 (v1.35 reads them without saturating:
# AsScaledInt64's overflow gives 0 or a wrapped product, scaledValue the low 64 bits) and
# sums of quantities whose representation (int64Amount or inf.Dec, Quantity.Add) decides
# how they are read.
_PAST_CPU = [
    "1E18",
    "1E16",
    "2E18",
    "9223372036854776",
    "13835058055282163712m",
    "9Ei",
    "1e40",
    "4",
    f"{MAX}m",
    "500u",
    "9223372036854775",
]
_PAST_MEMORY = ["9Ei", "1e40", "2E18", "9223372036854775808", "8Gi", "1E18", "100Ei"]


def _containers(rng: random.Random) -> list[dict]:
    """One to three containers, so pods' totals are sums (sub-milli ones included)."""
    out = []
    for i in range(rng.choice([1, 1, 2, 3])):
        requests = {}
        cpu = rng.choice([None, "500u", "250u", *_PAST_CPU])
        memory = rng.choice([None, "1Gi", *_PAST_MEMORY])
        if cpu is not None:
            requests["cpu"] = cpu
        if memory is not None:
            requests["memory"] = memory
        out.append({"name": f"c{i}", "image": "nginx", "resources": {"requests": requests}})
    return out


def _past_int64_case(seed: int) -> dict:
    rng = random.Random(seed)
    nodes = [
        node(f"n{i}", cpu=rng.choice(_PAST_CPU), memory=rng.choice(_PAST_MEMORY), pods="110")
        for i in range(5)
    ]
    pods = []
    for i in range(8):
        body = pod(f"p{i}", rng.choice(nodes)["metadata"]["name"])
        body["spec"]["containers"] = _containers(rng)
        body["status"] = {"phase": "Running", "startTime": "2026-11-20T09:00:00Z"}
        pods.append(body)
    incoming = pod("incoming")
    incoming["spec"]["containers"] = _containers(rng)
    return {"kind": "placement", "objects": nodes + pods, "pod": incoming}


@needs_oracle
@pytest.mark.parametrize("seed", range(24))
def test_quantities_past_int64_read_as_the_scheduler_reads_them(seed: int) -> None:
    """Node allocatable and pod requests past int64 (``1E18``, ``2E18``, ``9223372036854776``
    cpu, ``13835058055282163712m``, ``9Ei``, ``1e40`` memory, sub-milli sums): feasibility,
    reasons and scores are the v1.35.4 scheduler's, for each scoring strategy."""
    case = _past_int64_case(seed)
    for scoring in _SCORING:
        assert _differences(case, scoring) == [], (seed, scoring)


@needs_oracle
@pytest.mark.parametrize(
    ("node_cpu", "fits"),
    [("1E18", False), ("1E16", False), ("2E18", False), ("9223372036854776", False), ("4", True)],
)
def test_a_node_past_int64_holds_nothing_as_in_the_scheduler(node_cpu: str, fits: bool) -> None:
    """A node whose cpu MilliValue overflows reads as 0 or a wrapped negative amount
    (positiveScaleInt64): a 1-cpu pod fits nowhere, in Verdict as in the scheduler."""
    case = {
        "kind": "placement",
        "objects": [node("n1", cpu=node_cpu, memory="8Gi", pods="110")],
        "pod": pod("incoming", cpu="1"),
    }
    assert _differences(case, None) == []
    assert _oracle(case)["nodes"][0]["feasible"] is fits


@needs_oracle
@pytest.mark.parametrize(
    "cpus",
    [
        ["9223372036854776"],  # int64MultiplyScale1000 wraps: a negative request
        ["1E18", "500u"],  # Add overflows into an inf.Dec at scale 6; scaledValue rounds up
        ["13835058055282163712m"],  # inf.Dec: the low 64 bits
        ["9Ei"],  # maxAllowed = Dec{MaxInt64, 0}: MilliValue wraps the product by 1000
        ["9223372036854775", "9223372036854775"],  # int64Amount sum fits; *1000 wraps
        ["500u", "500u", "250u"],  # sub-milli sum: 1.25m rounds up to 2m once
    ],
)
def test_pod_totals_past_int64_match_the_scheduler(cpus: list[str]) -> None:
    """A pod's total (PodRequests' Quantity.Add, then MilliValue once) on a 4-cpu node and
    on a node of 2**63-1 millicores with ``1e40`` memory (Value 0): feasibility and every
    strategy's scores (or the invalid score the scheduler names) are the scheduler's."""
    incoming = pod("incoming")
    incoming["spec"]["containers"] = [
        {"name": f"c{i}", "image": "nginx", "resources": {"requests": {"cpu": c, "memory": "1Gi"}}}
        for i, c in enumerate(cpus)
    ]
    case = {
        "kind": "placement",
        "objects": [
            node("n1", cpu="4", memory="8Gi", pods="110"),
            node("n2", cpu=f"{MAX}m", memory="1e40", pods="110"),
        ],
        "pod": incoming,
    }
    for scoring in _SCORING:
        assert _differences(case, scoring) == [], scoring


# Spellings the API server does not serve as written: it stores String(), and that is what
# the scheduler parses. Near int64's edge their sums overflow differently.
_CPU_SPELLINGS = ["1.5k", "92233720368547758e2", "0.5", "46116860184273879.04e2", "1.5e20", "2"]
_MEMORY_SPELLINGS = ["1.5Gi", "0.5e-9", "92233720368547758e2", "1.5e20", "4.5Ei", "1Gi"]


def _served(case: dict) -> dict:
    """``case`` as the API server would serve its objects: every quantity as String()."""
    served = json.loads(json.dumps(case))
    for obj in [*served["objects"], served["pod"]]:
        for c in obj.get("spec", {}).get("containers", []):
            requests = c.get("resources", {}).get("requests", {})
            for name, text in requests.items():
                requests[name] = str(parse_quantity(text))
    return served


def _spelled_case(seed: int) -> dict:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", cpu=rng.choice(["4", f"{MAX}m"]), memory=str(MAX)) for i in range(3)]
    pods = []
    for i in range(6):
        body = pod(f"p{i}", rng.choice(nodes)["metadata"]["name"])
        body["spec"]["containers"] = [
            {
                "name": f"c{j}",
                "image": "x",
                "resources": {
                    "requests": {
                        "cpu": rng.choice(_CPU_SPELLINGS),
                        "memory": rng.choice(_MEMORY_SPELLINGS),
                    }
                },
            }
            for j in range(2)
        ]
        body["status"] = {"phase": "Running", "startTime": "2026-11-20T09:00:00Z"}
        pods.append(body)
    incoming = pod("incoming", cpu=rng.choice(_CPU_SPELLINGS), memory="1Gi")
    return {"kind": "placement", "objects": nodes + pods, "pod": incoming}


@needs_oracle
@pytest.mark.parametrize("seed", range(10))
def test_quantities_are_read_as_the_api_server_serves_them(seed: int) -> None:
    """Verdict reads each quantity as its String() (what the scheduler gets from the API
    server), so its answer on the objects as written is the real scheduler's on the objects
    as served."""
    case = _spelled_case(seed)
    served = _served(case)
    assert verdict_placement(case) == verdict_placement(served)
    assert placement_differences(served) == []


def test_a_spelling_changes_the_sum_the_scheduler_sees() -> None:
    """``1.5k`` parses to int64Amount{15, 2} but is served as ``1500`` ({1500, 0}): with
    ``92233720368547758e2`` the written pair sums without overflow (and MilliValue then gives
    up: 0), the served pair overflows into a big decimal whose MilliValue wraps."""
    busy = pod("busy", "n1")
    busy["spec"]["containers"] = [
        {"name": "a", "image": "x", "resources": {"requests": {"cpu": "1.5k"}}},
        {"name": "b", "image": "x", "resources": {"requests": {"cpu": "92233720368547758e2"}}},
    ]
    busy["status"] = {"phase": "Running"}
    case = {"kind": "placement", "objects": [node("n1", cpu="4"), busy], "pod": pod("in", cpu="1")}
    mine = verdict_placement(case)["nodes"][0]
    assert (mine["feasible"], mine["reasons"]) == (False, ["Insufficient cpu"])
    if BINARY.exists():
        assert placement_differences(_served(case)) == []
        assert _oracle(case)["nodes"][0]["feasible"] is True  # as written: not what it sees
