"""Run one scheduler plugin as the framework would, for the upstream table tests."""

from __future__ import annotations

from dataclasses import replace

from service.engine.objects import Cluster, Node, Pod, Snapshot
from service.engine.scheduler.framework import Status
from service.engine.scheduler.profile import DEFAULT_PROFILE, Profile
from service.engine.scheduler.runtime import Framework
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS


def only(plugin: str, args: object | None = None, profile: Profile = DEFAULT_PROFILE) -> Profile:
    """``profile`` with ``plugin`` as its only score plugin (weight 1), and its args."""
    out = replace(profile, score=((plugin, 1),))
    if args is not None:
        out = replace(out, args={**out.args, plugin: args})
    return out


def normalized_scores(plugin: str, pod: Pod, nodes: list[Node], pods=(), args=None) -> list[int]:
    """PreScore, Score on every node, NormalizeScore: upstream's expected lists (a plugin
    that skips at PreScore scores every node 0)."""
    view = scheduler_view(
        Cluster(Snapshot(nodes=tuple(nodes), pods=tuple(pods))), settings=DEFAULT_SETTINGS
    )
    fwk = Framework(only(plugin, args), settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod, view)
    fwk.run_pre_score_plugins(state, view.nodes)
    scores = fwk.run_score_plugins(state, view.nodes, view.nodes)
    return scores.normalized.get(plugin, [0] * len(view.nodes))


def filter_status(plugin: str, pod: Pod, node: Node, args=None) -> Status:
    """PreFilter then Filter of the profile's filters on one node (``plugin``'s args set)."""
    profile = (
        DEFAULT_PROFILE
        if args is None
        else replace(DEFAULT_PROFILE, args={**DEFAULT_PROFILE.args, plugin: args})
    )
    view = scheduler_view(Cluster(Snapshot(nodes=(node,), pods=())), settings=DEFAULT_SETTINGS)
    fwk = Framework(profile, settings=DEFAULT_SETTINGS)
    state = fwk.cycle_state(pod, view)
    return fwk.run_filter_plugins(state, view.nodes[0])
