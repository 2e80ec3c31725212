"""Helpers the plugins share: the score plugins' (upstream pkg/scheduler/framework/plugins/
helper), and the volume plugins' ReadsWholePods."""

from __future__ import annotations

from typing import TYPE_CHECKING

from service.engine.objects import Pod
from service.engine.scheduler.framework import ReadsWholePods

if TYPE_CHECKING:
    from service.engine.scheduler.snapshot import SchedulerView

__all__ = ["ReadsPodVolumes", "default_normalize_score"]


class ReadsPodVolumes(ReadsWholePods):
    """A volume plugin: for a pod with volumes it reads the storage objects and the view's
    pods' volumes, which a restored view does not hold."""

    def reads_whole_pods(self, pod: Pod, view: SchedulerView) -> bool:
        return bool(pod.volumes)


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
