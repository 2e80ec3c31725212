"""Profiles built as kube-scheduler builds its framework: runtime framework_test.go
TestNewFrameworkMultiPointExpansion (each row re-expressed with in-tree plugins of the same
extension points: upstream's test plugins are not in the registry), v1 mergePlugins, and the
default profile."""

from __future__ import annotations

import pytest

from service.engine.scheduler.profile import (
    DEFAULT_PLUGIN_ARGS,
    DEFAULT_PROFILE,
    PluginRef,
    PluginSet,
    ProfileError,
    build_profile,
    merge_plugins,
)

QUEUE_AND_BIND = {
    "queueSort": PluginSet((PluginRef("PrioritySort"),)),
    "bind": PluginSet((PluginRef("DefaultBinder"),)),
}


def _sets(**points) -> dict[str, PluginSet]:
    out = dict(QUEUE_AND_BIND)
    for point, (enabled, disabled) in points.items():
        refs = tuple(PluginRef(*e) if isinstance(e, tuple) else PluginRef(e) for e in enabled)
        out[point] = PluginSet(refs, tuple(disabled))
    return merge_plugins(out, defaults={})


def _build(plugins):
    return build_profile("test", plugins, DEFAULT_PLUGIN_ARGS)


@pytest.mark.parametrize(
    ("plugins", "pre_score", "score"),
    [
        pytest.param(
            _sets(multiPoint=([("NodeAffinity", 5)], [])),
            ("NodeAffinity",),
            (("NodeAffinity", 5),),
            id="plugin expansion",
        ),
        pytest.param(
            _sets(
                multiPoint=(["NodeAffinity"], []),
                preScore=([], ["NodeAffinity"]),
                score=([], ["NodeAffinity"]),
            ),
            (),
            (),
            id="disable MultiPoint plugin at some extension points",
        ),
        pytest.param(
            _sets(multiPoint=(["NodeAffinity", "ImageLocality"], [])),
            ("NodeAffinity",),
            (("NodeAffinity", 1), ("ImageLocality", 1)),
            id="Multiple MultiPoint plugins",
        ),
        pytest.param(
            _sets(multiPoint=(["NodeAffinity", "ImageLocality"], []), preScore=([], ["*"])),
            (),
            (("NodeAffinity", 1), ("ImageLocality", 1)),
            id="disable MultiPoint extension",
        ),
        pytest.param(
            _sets(
                multiPoint=(
                    ["NodeResourcesBalancedAllocation", "NodeAffinity", "ImageLocality"],
                    [],
                ),
                score=(["ImageLocality", "NodeAffinity"], []),
            ),
            ("NodeResourcesBalancedAllocation", "NodeAffinity"),
            (("ImageLocality", 1), ("NodeAffinity", 1), ("NodeResourcesBalancedAllocation", 1)),
            id="Reorder MultiPoint plugins (specified extension takes precedence)",
        ),
        pytest.param(
            _sets(
                multiPoint=(["NodeAffinity", "ImageLocality"], []),
                score=(["NodeResourcesBalancedAllocation", "ImageLocality", "NodeAffinity"], []),
            ),
            ("NodeAffinity",),
            (("ImageLocality", 1), ("NodeAffinity", 1), ("NodeResourcesBalancedAllocation", 1)),
            id="Reorder MultiPoint plugins (only when it exists in MultiPoint)",
        ),
        pytest.param(
            _sets(
                multiPoint=(["NodeAffinity", "ImageLocality"], []),
                score=([("ImageLocality", 5), ("NodeAffinity", 3)], []),
            ),
            ("NodeAffinity",),
            (("ImageLocality", 5), ("NodeAffinity", 3)),
            id="Override MultiPoint plugins weights",
        ),
        pytest.param(
            _sets(multiPoint=(["PrioritySort", "DefaultBinder", "ImageLocality"], ["*"])),
            (),
            (("ImageLocality", 1),),
            id="disable and enable MultiPoint plugins with '*'",
        ),
        pytest.param(
            _sets(
                multiPoint=(["NodeAffinity", "ImageLocality"], []),
                score=(
                    [
                        ("ImageLocality", 5),
                        ("NodeResourcesBalancedAllocation", 5),
                        ("NodeAffinity", 3),
                    ],
                    [],
                ),
            ),
            ("NodeAffinity",),
            (("ImageLocality", 5), ("NodeAffinity", 3), ("NodeResourcesBalancedAllocation", 5)),
            id="Override weights and avoid a plugin being loaded multiple times",
        ),
    ],
)
def test_multi_point_expansion(plugins, pre_score, score) -> None:
    profile = _build(plugins)
    assert profile.pre_score == pre_score
    assert profile.score == score


@pytest.mark.parametrize(
    ("plugins", "path", "words"),
    [
        (
            _sets(multiPoint=(["NodeAffinity", "NodeAffinity"], [])),
            "plugins.multiPoint.enabled[1]",
            "already registered",
        ),
        (
            _sets(filter=(["NodeName", "NodeName"], [])),
            "plugins.filter.enabled[1]",
            "already registered",
        ),
        (
            _sets(score=(["Nope"], [])),
            "plugins.score.enabled[0]",
            'ScorePlugin "Nope" does not exist',
        ),
        (
            _sets(filter=(["ImageLocality"], [])),
            "plugins.filter.enabled[0]",
            "does not extend FilterPlugin plugin",
        ),
    ],
)
def test_profiles_the_scheduler_refuses(plugins, path, words) -> None:
    with pytest.raises(ProfileError) as exc:
        _build(plugins)
    assert any(p == path and words in m for p, m in exc.value.errors), exc.value.errors


def test_queue_sort_and_bind_are_required() -> None:
    with pytest.raises(ProfileError) as exc:
        build_profile("x", merge_plugins({}, defaults={}), DEFAULT_PLUGIN_ARGS)
    assert {p for p, _ in exc.value.errors} == {"plugins.queueSort", "plugins.bind"}


def test_merge_plugins_keeps_default_positions_and_disables() -> None:
    """v1 mergePluginSet: a re-configured default keeps its place; disabled ones go; new
    ones follow; "*" drops every default of the set."""
    merged = merge_plugins(
        {
            "multiPoint": PluginSet(
                (PluginRef("ImageLocality", 9), PluginRef("NodeAffinity", 4)),
                ("TaintToleration",),
            )
        }
    )
    names = [r.name for r in merged["multiPoint"].enabled]
    assert "TaintToleration" not in names
    assert names.index("NodeAffinity") < names.index("ImageLocality")
    profile = _build(merged)
    assert dict(profile.score)["ImageLocality"] == 9
    assert dict(profile.score)["NodeAffinity"] == 4
    assert "TaintToleration" not in profile.filter
    everything_off = merge_plugins({"multiPoint": PluginSet((), ("*",))})
    assert everything_off["multiPoint"].enabled == ()


def test_default_profile_is_the_default_plugins_expanded() -> None:
    """getDefaultPlugins (v1.35, DynamicResources on) through the framework's expansion."""
    assert DEFAULT_PROFILE.filter == (
        "NodeUnschedulable",
        "NodeName",
        "TaintToleration",
        "NodeAffinity",
        "NodePorts",
        "NodeResourcesFit",
        "VolumeRestrictions",
        "NodeVolumeLimits",
        "VolumeBinding",
        "VolumeZone",
        "PodTopologySpread",
        "InterPodAffinity",
        "DynamicResources",
    )
    assert DEFAULT_PROFILE.post_filter == ("DynamicResources", "DefaultPreemption")
    assert dict(DEFAULT_PROFILE.score) == {
        "TaintToleration": 3,
        "NodeAffinity": 2,
        "NodeResourcesFit": 1,
        "VolumeBinding": 1,
        "PodTopologySpread": 2,
        "InterPodAffinity": 2,
        "DynamicResources": 2,
        "NodeResourcesBalancedAllocation": 1,
        "ImageLocality": 1,
    }
