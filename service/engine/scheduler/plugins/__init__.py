"""The in-tree plugins of kube-scheduler's default profile, by name.

``REGISTRY`` maps the name of each plugin Verdict models to its class (one module per
plugin, named after it, as upstream's ``pkg/scheduler/framework/plugins``). Every in-tree
plugin a profile may enable, modelled or not, is in ``profile.IN_TREE``: a profile may
enable a plugin Verdict does not model, and the results then say so (``notModelled``).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from service.engine.scheduler.framework import Plugin
from service.engine.scheduler.plugins.dynamic_resources import DynamicResources
from service.engine.scheduler.plugins.image_locality import ImageLocality
from service.engine.scheduler.plugins.interpod_affinity import InterPodAffinity
from service.engine.scheduler.plugins.node_affinity import NodeAffinity
from service.engine.scheduler.plugins.node_name import NodeName
from service.engine.scheduler.plugins.node_ports import NodePorts
from service.engine.scheduler.plugins.node_unschedulable import NodeUnschedulable
from service.engine.scheduler.plugins.node_volume_limits import NodeVolumeLimits
from service.engine.scheduler.plugins.noderesources.balanced_allocation import (
    NodeResourcesBalancedAllocation,
)
from service.engine.scheduler.plugins.noderesources.fit import NodeResourcesFit
from service.engine.scheduler.plugins.pod_topology_spread import PodTopologySpread
from service.engine.scheduler.plugins.taint_toleration import TaintToleration
from service.engine.scheduler.plugins.volume_binding import VolumeBinding
from service.engine.scheduler.plugins.volume_restrictions import VolumeRestrictions
from service.engine.scheduler.plugins.volume_zone import VolumeZone

__all__ = ["REGISTRY"]

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
            VolumeRestrictions,
            NodeVolumeLimits,
            VolumeBinding,
            VolumeZone,
            NodeResourcesBalancedAllocation,
            ImageLocality,
            InterPodAffinity,
            PodTopologySpread,
            DynamicResources,
        )
    }
)
