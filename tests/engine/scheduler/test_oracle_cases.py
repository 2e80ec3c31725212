"""The cases of tests/conformance/scheduler-oracle.json, where the real scheduler and
an earlier Verdict disagreed: each through the engine with kubernetesVersion 1.35 and the
oracle's restricted profile, against the recorded answer; and, where the oracle binary is
present, through the full default profile against the live answer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from service.decisions.placement import scoring_profile
from tests.engine.scheduler.oracle import needs_oracle, placement_differences, verdict_placement

CASES = Path(__file__).resolve().parents[2] / "conformance" / "scheduler-oracle.json"
_RESTRICTED_SCORES = {"NodeResourcesFit", "NodeResourcesBalancedAllocation"}


def _cases() -> list:
    if not CASES.exists():
        return [pytest.param(None, marks=pytest.mark.skip(reason=f"{CASES} is absent"))]
    return [pytest.param(c, id=c["name"]) for c in json.loads(CASES.read_text())["cases"]]


def _restricted(scoring: dict | None):
    """The oracle's restricted profile: the default filters Verdict modelled before, and
    NodeResourcesFit and BalancedAllocation scores (configured by ``scoring``)."""
    profile = scoring_profile(scoring)
    return replace(
        profile, score=tuple((n, w) for n, w in profile.score if n in _RESTRICTED_SCORES)
    )


@pytest.mark.parametrize("case", _cases())
def test_recorded_answer(case: dict) -> None:
    got = verdict_placement(
        case["case"], case["kubernetesVersion"], _restricted(case["case"].get("scoring"))
    )
    want = case["expected"]
    for mine, theirs in zip(got["nodes"], want["nodes"], strict=True):
        assert {k: mine.get(k) for k in theirs} == theirs
    assert (got["selected"] in want["maxSet"]) if want["maxSet"] else got["selected"] is None


@needs_oracle
@pytest.mark.parametrize("case", _cases())
def test_live_full_profile(case: dict) -> None:
    live = dict(case["case"], scoring=None)  # the full profile ignores `scoring`
    assert placement_differences(live, case["kubernetesVersion"]) == []
