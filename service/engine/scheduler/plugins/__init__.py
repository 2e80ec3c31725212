"""The in-tree plugins of kube-scheduler's default profile, by name.

``REGISTRY`` maps the name of each plugin Verdict models to its class (one module per
plugin, named after it, as upstream's ``pkg/scheduler/framework/plugins``). ``IN_TREE``
names every in-tree plugin a KubeSchedulerConfiguration may enable, with the extension
points it implements upstream (v1.35 ``plugins/registry.go``), modelled or not: a profile
may enable a plugin Verdict does not model, and the results then say so (``notModelled``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from service.engine.scheduler.framework import Plugin
from service.engine.scheduler.plugins.image_locality import ImageLocality
from service.engine.scheduler.plugins.node_affinity import NodeAffinity
from service.engine.scheduler.plugins.node_name import NodeName
from service.engine.scheduler.plugins.node_ports import NodePorts
from service.engine.scheduler.plugins.node_unschedulable import NodeUnschedulable
from service.engine.scheduler.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
)
from service.engine.scheduler.plugins.noderesources.fit import NodeResourcesFit
from service.engine.scheduler.plugins.taint_toleration import TaintToleration

__all__ = ["IN_TREE", "REGISTRY"]

REGISTRY: Mapping[str, type[Plugin]] = MappingProxyType(
    {
        cls.name: cls
        for cls in (
            NodeUnschedulable,
            NodeName,
            TaintToleration,
            NodeAffinity,
            NodePorts,
            NodeResourcesFit,
            NodeResourcesBalancedAllocation,
            ImageLocality,
        )
    }
)

_PRE_FILTER, _FILTER, _POST_FILTER = "preFilter", "filter", "postFilter"
_PRE_SCORE, _SCORE = "preScore", "score"

IN_TREE: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "PrioritySort": ("queueSort",),
        "SchedulingGates": ("preEnqueue",),
        "NodeUnschedulable": (_FILTER,),
        "NodeName": (_FILTER,),
        "TaintToleration": (_FILTER, _PRE_SCORE, _SCORE),
        "NodeAffinity": (_PRE_FILTER, _FILTER, _PRE_SCORE, _SCORE),
        "NodePorts": (_PRE_FILTER, _FILTER),
        "NodeResourcesFit": (_PRE_FILTER, _FILTER, _PRE_SCORE, _SCORE),
        "VolumeRestrictions": (_PRE_FILTER, _FILTER),
        "NodeVolumeLimits": (_PRE_FILTER, _FILTER),
        "VolumeBinding": (_PRE_FILTER, _FILTER, "reserve", "preBind", _PRE_SCORE, _SCORE),
        "VolumeZone": (_PRE_FILTER, _FILTER),
        "PodTopologySpread": (_PRE_FILTER, _FILTER, _PRE_SCORE, _SCORE),
        "InterPodAffinity": (_PRE_FILTER, _FILTER, _PRE_SCORE, _SCORE),
        "DynamicResources": (
            "preEnqueue",
            _PRE_FILTER,
            _FILTER,
            _POST_FILTER,
            "reserve",
            "preBind",
        ),
        "DefaultPreemption": (_POST_FILTER,),
        "NodeResourcesBalancedAllocation": (_PRE_SCORE, _SCORE),
        "ImageLocality": (_SCORE,),
        "DefaultBinder": ("bind",),
    }
)
