"""The plugins' shared helpers: DefaultNormalizeScore held to its literal form."""

from __future__ import annotations

import random

import pytest

from service.engine.scheduler.plugins.helper import default_normalize_score


def _literal(max_priority: int, reverse: bool, scores: list[int]) -> list[int]:
    """helper.DefaultNormalizeScore, node by node."""
    highest = max(scores, default=0)
    if highest <= 0:
        return [max_priority] * len(scores) if reverse else list(scores)
    out = []
    for score in scores:
        scaled = max_priority * score // highest
        out.append(max_priority - scaled if reverse else scaled)
    return out


@pytest.mark.parametrize("seed", range(40))
def test_default_normalize_score_equals_the_literal_form(seed):
    rng = random.Random(seed)
    pool = rng.choice(([0, 1], [0, 1, 2, 5], [-3, 0, 7], [0], [2**63 - 1, 0, 5], [-(2**63), -1]))
    scores = [rng.choice(pool) for _ in range(rng.randint(0, 40))]
    for reverse in (False, True):
        got = list(scores)
        default_normalize_score(100, reverse, got)
        assert got == _literal(100, reverse, scores)
