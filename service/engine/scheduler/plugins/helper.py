"""Helpers the score plugins share (upstream pkg/scheduler/framework/plugins/helper)."""

from __future__ import annotations

__all__ = ["default_normalize_score"]


def default_normalize_score(max_priority: int, reverse: bool, scores: list[int]) -> None:
    """DefaultNormalizeScore: scale to 0..``max_priority`` by the highest score (integer
    division), reversed if asked; all zero stays zero, or becomes ``max_priority`` reversed."""
    highest = max(scores, default=0)
    if highest <= 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    for i, score in enumerate(scores):
        scaled = max_priority * score // highest
        scores[i] = max_priority - scaled if reverse else scaled
