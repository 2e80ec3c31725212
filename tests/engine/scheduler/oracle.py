"""The real kube-scheduler of each release Verdict has an oracle for (``verdict-oracle``:
v1.35.4's framework; ``verdict-oracle-1.34``, ``-1.33``, ``-1.32``: v1.34.1, v1.33.3,
v1.32.5) as a test authority: run a case through it and through Verdict with that release's
settings, and list where they disagree."""

from __future__ import annotations

import json
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from functools import cache
from pathlib import Path

import pytest

from service.decisions.priority import admit_priority
from service.engine.dra import allocator
from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.scheduler.preemption import preempt
from service.engine.scheduler.profile import DefaultPreemptionArgs, Profile, default_profile
from service.engine.version import settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.oracles import needs, oracle_path

# The oracle of each release, in the folder VERDICT_ORACLE_DIR names (tests/oracles.py).
ORACLES = {
    "1.32": "verdict-oracle-1.32",
    "1.33": "verdict-oracle-1.33",
    "1.34": "verdict-oracle-1.34",
    "1.35": "verdict-oracle",
}
RELEASES = tuple(ORACLES)

BINARY = oracle_path(ORACLES["1.35"]) or Path("verdict-oracle-not-configured")
needs_oracle = needs(ORACLES["1.35"])


def releases(*versions: str) -> list:
    """``versions`` (default: every release with an oracle) as pytest params, each skipped
    where its oracle is absent."""
    return [pytest.param(v, id=v, marks=needs(ORACLES[v])) for v in versions or RELEASES]


# The oracle's `--profile restricted`: the default filters Verdict modelled first, and only
# NodeResourcesFit and BalancedAllocation scoring (docs/ORACLES.md).
_RESTRICTED_SCORES = {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}
_RESTRICTED = {
    "NodeUnschedulable",
    "NodeName",
    "TaintToleration",
    "NodeAffinity",
    "NodePorts",
    "NodeResourcesFit",
    "DefaultPreemption",
    *_RESTRICTED_SCORES,
}


@cache
def oracle_profile(name: str, version: str) -> Profile:
    """The oracle's ``full`` profile (the release's default profile) or ``restricted`` one."""
    full = default_profile(settings_for(version))
    if name == "full":
        return full
    return replace(
        full,
        pre_filter=tuple(n for n in full.pre_filter if n in _RESTRICTED),
        filter=tuple(n for n in full.filter if n in _RESTRICTED),
        post_filter=tuple(n for n in full.post_filter if n in _RESTRICTED),
        pre_score=tuple(n for n in full.pre_score if n in _RESTRICTED_SCORES),
        score=tuple((n, w) for n, w in full.score if n in _RESTRICTED_SCORES),
    )


_IGNORED_SCORES: set[str] = set()


def run_oracle(case: dict, profile: str = "full", version: str = "1.35") -> dict:
    """The real scheduler's answer for ``case`` (the input format of docs/ORACLES.md), as
    ``version`` decides. A cycle that fails is ``{"error": ...}`` (the oracle exits 2)."""
    binary = oracle_path(ORACLES[version])
    if binary is None:
        raise RuntimeError(f"oracle {ORACLES[version]} is not configured (tests/oracles.py)")
    done = subprocess.run(
        [str(binary), "--profile", profile],
        input=json.dumps(case),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if done.returncode not in (0, 2):
        raise RuntimeError(f"oracle exited {done.returncode}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)


def run_oracles(cases: list[dict], profile: str = "full", version: str = "1.35") -> list[dict]:
    """``run_oracle`` on each case, several at a time: an oracle run spends much of its time
    waiting for its informers to sync, so a walk of many cycles overlaps them."""
    with ThreadPoolExecutor(max_workers=4) as pool:
        return list(pool.map(lambda case: run_oracle(case, profile, version), cases))


# The oracle prefixes RunScorePlugins' error with "score: ".
_INVALID_SCORE = re.compile(r'plugin "(?P<plugin>\w+)" returns an invalid score (?P<score>-?\d+)')


def cycle_error_differences(mine: dict, error: str) -> list[str]:
    """The oracle's cycle error against Verdict's. Filters run in snapshot order on both
    sides, so a filter error is the same text. The weighting step runs over the nodes in
    parallel upstream, so which invalid score is named varies: Verdict's must fail too, and
    the score the oracle names must be one Verdict computed for that plugin."""
    found = mine.get("cycleError")
    invalid = _INVALID_SCORE.search(error)
    feasible = [m["name"] for m in mine["nodes"] if m["feasible"]]
    if (invalid is not None or error.startswith("score: ")) and len(feasible) == 1:
        # The oracle scores every feasible node; schedulePod takes a lone one before any
        # scoring ("When only one node after predicate, just use it"), so the scheduler
        # binds it, and Verdict must select it without failing the cycle.
        if found is None and mine.get("selected") == feasible[0]:
            return []
        return [f"lone feasible node {feasible[0]}: verdict {mine.get('selected')!r}, {found!r}"]
    if found is None:
        return [f"cycle error: verdict none, oracle {error!r}"]
    if invalid is None:
        error = error.removeprefix("score: ")
        # Upstream filters nodes in parallel: the first error to come names any failing node.
        failing = {
            f'running "{m["plugin"]}" filter plugin: {", ".join(m["reasons"])}'
            for m in mine["nodes"]
            if m["code"] == "Error"
        }
        if error in failing and found in failing:
            return []
        return [] if found == error else [f"cycle error: verdict {found!r} oracle {error!r}"]
    plugin, value = invalid["plugin"], int(invalid["score"])
    scores = [m["scores"].get(plugin) for m in mine["nodes"] if m["feasible"]]
    if value not in scores or _INVALID_SCORE.search(found) is None:
        return [f"cycle error: verdict {found!r}, {plugin} scores {scores}; oracle {error!r}"]
    return []


def verdict_placement(case: dict, version: str = "1.35", profile: Profile | None = None) -> dict:
    """Verdict's placement of ``case`` in the oracle's output shape (weighted scores), with
    ``profile`` (default: the release's default profile)."""
    cluster = Cluster(snapshot_from_objects(case["objects"]))
    pod = admit_priority(pod_from_object(case["pod"]), cluster)
    settings = settings_for(version)
    profile = profile or default_profile(settings)
    out = place(cluster, pod, profile=profile, settings=settings)
    nodes = []
    for n in out.nodes:
        entry = {
            "name": n.node_name,
            "feasible": n.feasible,
            "code": n.status.code,
            "reasons": list(n.status.reasons),
            "plugin": n.status.plugin,
        }
        if n.feasible:
            entry["scores"] = {p: out.weights[p] * s for p, s in n.scores.items()}
            entry["total"] = n.total
            entry["draAllocation"] = [
                {"claim": claim, "request": d.request, "driver": d.driver, "pool": d.pool,
                 "device": d.device, **({"adminAccess": True} if d.admin_access else {})}
                for claim, devices in (n.allocation or {}).items()
                for d in devices
            ]  # fmt: skip
        nodes.append(entry)
    error = out.cycle_error.message if out.cycle_error else None
    return {"nodes": nodes, "selected": out.selected_node, "cycleError": error}


def _pools_on(case: dict, node: str) -> int:
    """How many device pools serve ``node``: with two or more, upstream's allocator walks
    them in Go map order, so which device it picks is arbitrary (oracle README)."""
    return len(
        {
            (o["spec"]["driver"], o["spec"]["pool"]["name"])
            for o in case["objects"]
            if o.get("kind") == "ResourceSlice" and o["spec"].get("nodeName") == node
        }
    )


@contextmanager
def _pools_reversed():
    """The DRA allocator walking each node's pools in the reverse order. Upstream walks them
    in Go map order (oracle README): where a node has two pools, either order is the real
    scheduler's, and what the allocator finds (which device, or a selector's runtime error
    on the other pool's device) may depend on it."""
    original = allocator.gather_pools
    allocator.gather_pools = lambda *args: original(*args)[::-1]
    try:
        yield
    finally:
        allocator.gather_pools = original


# While _either_pool_order compares: the oracle's one answer (asked once: its map order is
# drawn anew at every run) and the filter errors Verdict raised under either pool order.
_COMPARING: dict | None = None


def _oracle_once(case: dict, profile: str, version: str) -> dict:
    if _COMPARING is None:
        return run_oracle(case, profile, version)
    if "answer" not in _COMPARING:
        _COMPARING["answer"] = run_oracle(case, profile, version)
    return _COMPARING["answer"]


def _either_pool_order(differences, case: dict, *args) -> list[str]:
    """``differences(case, *args)``, or, when that disagrees on a case with a node of two
    device pools, the same with the pools in the other order (nothing then disagrees),
    against the same oracle answer. Upstream draws the order per node and per Filter call,
    so a cycle error may name a node under either order: it agrees when Verdict fails the
    cycle under both orders and the oracle's error is one Verdict raised under either."""
    global _COMPARING
    _COMPARING = {"failing": set(), "failed": 0}
    try:
        found = differences(case, *args)
        if found and any(_pools_on(case, n["metadata"]["name"]) > 1 for n in _nodes_of(case)):
            with _pools_reversed():
                if not differences(case, *args):
                    return []
            error = _COMPARING["answer"].get("error", "").removeprefix("score: ")
            if error and _COMPARING["failed"] == 2 and error in _COMPARING["failing"]:
                return []
        return found
    finally:
        _COMPARING = None


def _note_failing(mine_errors: list[str], cycle_failed: bool) -> None:
    """What Verdict's filters raised in this order (for _either_pool_order)."""
    if _COMPARING is not None:
        _COMPARING["failing"].update(mine_errors)
        _COMPARING["failed"] += 1 if cycle_failed else 0


def _nodes_of(case: dict) -> list[dict]:
    return [o for o in case["objects"] if o.get("kind") == "Node"]


def placement_differences(case: dict, version: str = "1.35", profile: str = "full") -> list[str]:
    """Every disagreement between Verdict and the real scheduler on a placement case, both
    running ``profile`` (the oracle's ``full`` or ``restricted``); where a node has two
    device pools, either order of them (``_either_pool_order``)."""
    return _either_pool_order(_placement_differences, case, version, profile)


def _placement_differences(case: dict, version: str, profile: str) -> list[str]:
    theirs = _oracle_once(case, profile, version)
    mine = verdict_placement(case, version, oracle_profile(profile, version))
    _note_failing(
        [
            f'running "{m["plugin"]}" filter plugin: {", ".join(m["reasons"])}'
            for m in mine["nodes"]
            if m["code"] == "Error"
        ],
        bool(mine.get("cycleError")),
    )
    if "error" in theirs:
        return cycle_error_differences(mine, theirs["error"])
    diffs: list[str] = []
    if mine["cycleError"]:
        diffs.append(f"cycle error: verdict {mine['cycleError']!r}, oracle none")
    for m, t in zip(mine["nodes"], theirs["nodes"], strict=True):
        name = m["name"]
        for field in ("feasible", "code", "reasons", "plugin"):
            if m[field] != t[field]:
                diffs.append(f"{name}.{field}: verdict {m[field]!r} oracle {t[field]!r}")
        if t["feasible"] and m["feasible"]:
            scores = {p: v for p, v in t["scores"].items() if p not in _IGNORED_SCORES}
            if m["scores"] != scores:
                diffs.append(f"{name}.scores: verdict {m['scores']} oracle {scores}")
            if m["total"] != t["total"]:
                diffs.append(f"{name}.total: verdict {m['total']} oracle {t['total']}")
            theirs_dra = t.get("draAllocation") or []
            if _pools_on(case, name) <= 1 and m["draAllocation"] != theirs_dra:
                diffs.append(
                    f"{name}.draAllocation: verdict {m['draAllocation']} oracle {theirs_dra}"
                )
    selected, best = mine["selected"], theirs["maxSet"] or []
    if (selected is None) != (not best) or (selected is not None and selected not in best):
        diffs.append(f"selected: verdict {selected!r} oracle one of {best}")
    return diffs


def preemption_differences(case: dict, version: str = "1.35", profile: str = "full") -> list[str]:
    """Every disagreement on a preemption case: eligibility, candidates and their victims
    (in order), PDB violations, and the nominated node (one of the oracle's tie set); where a
    node has two device pools, either order of them."""
    return _either_pool_order(_preemption_differences, case, version, profile)


def _preemption_differences(case: dict, version: str, profile: str) -> list[str]:
    answer = _oracle_once(case, profile, version)
    theirs = answer.get("preemption") or {}
    cluster = Cluster(snapshot_from_objects(case["objects"]))
    pod = admit_priority(pod_from_object(case["pod"]), cluster)
    options = case.get("options") or {}
    out = preempt(
        cluster,
        pod,
        profile=oracle_profile(profile, version),
        settings=settings_for(version),
        args=DefaultPreemptionArgs(
            options.get("minCandidateNodesPercentage", 10),
            options.get("minCandidateNodesAbsolute", 100),
        ),
    )
    diffs: list[str] = []
    error = answer.get("error")
    if out.cycle_error is not None:
        _note_failing([out.cycle_error.message], True)
    if error and not _INVALID_SCORE.search(error) and not error.startswith("score: "):
        # a filter's Error fails the cycle: PostFilter never runs
        mine = out.cycle_error.message if out.cycle_error else None
        if mine == error:
            return []
        # Upstream filters nodes in parallel: the first error to come names any failing
        # node. The placement's filters are the preemption cycle's: either may be named.
        placed = verdict_placement(case, version, oracle_profile(profile, version))
        failing = {
            f'running "{m["plugin"]}" filter plugin: {", ".join(m["reasons"])}'
            for m in placed["nodes"]
            if m["code"] == "Error"
        }
        _note_failing(sorted(failing), False)
        if mine in failing and error in failing:
            return []
        return [f"cycle error: verdict {mine!r} oracle {error!r}"]
    if out.cycle_error:
        diffs.append(f"verdict fails the cycle ({out.cycle_error.message}), the oracle does not")
    if not theirs.get("ran"):
        if not out.fits_without_preemption:
            diffs.append("oracle: the pod fits somewhere (no preemption); verdict preempts")
        return diffs
    if out.eligible != theirs["eligible"]:
        diffs.append(f"eligible: verdict {out.eligible} oracle {theirs['eligible']}")
        return diffs
    mine = {
        c.node_name: ([v.name for v in c.victims], c.num_pdb_violations) for c in out.candidates
    }
    oracle = {
        c["nodeName"]: ([v["name"] for v in c["victims"]], c["numPDBViolations"])
        for c in theirs.get("candidates") or ()
    }
    if mine != oracle:
        diffs.append(f"candidates: verdict {mine} oracle {oracle}")
    chosen = out.nominated_node_name or None
    ties = theirs.get("tieSet") or []
    if (chosen is None) != (not ties) or (chosen is not None and chosen not in ties):
        diffs.append(f"nominated: verdict {chosen!r} oracle one of {ties}")
    return diffs
