"""The framework (engine/scheduler/framework.py): a node's Requested adds its pods with Go's
wrapping int64 ``+=``, as NodeInfo.update does; each plugin declares its extension points
and capabilities as the framework's types."""

from __future__ import annotations

import orjson
import pytest

from service.engine.objects import Cluster
from service.engine.quantity import MAX_INT64, wrap_int64
from service.engine.scheduler import framework
from service.engine.scheduler.framework import (
    CanPassEveryNode,
    CountsPods,
    FilterPlugin,
    KeepsVerdict,
    NodeInfo,
    PreFilterExtensions,
    PreFilterPlugin,
    PreScorePlugin,
    ReadsWholePods,
    ScoreExtensions,
    ScorePlugin,
    SumsHostPorts,
    SumsRequests,
    node_info_pods_of,
    pod_info,
)
from service.engine.scheduler.plugins import REGISTRY
from service.engine.scheduler.profile import IN_TREE
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.body import parse_snapshot
from tests.conftest import kube_list, node, pod
from tests.engine.helpers import MAX_MILLI, parsed_pod


def test_node_requested_wraps_like_node_info_update():
    big = parsed_pod(MAX_MILLI)
    infos = [pod_info(big, settings=DEFAULT_SETTINGS) for _ in range(2)]
    assert node_info_pods_of(infos).requested["cpu"] == -2
    snapshot = parse_snapshot(
        orjson.dumps(kube_list(node("n1"), *(pod(n, "n1", cpu=MAX_MILLI) for n in "abc")))
    ).snapshot
    cluster = Cluster(snapshot)
    node_info = NodeInfo(
        cluster.snapshot.nodes[0],
        0,
        [pod_info(p, settings=DEFAULT_SETTINGS) for p in snapshot.pods],
    )
    assert node_info.requested["cpu"] == MAX_INT64 - 2
    state = node_info.base_state().with_pods([pod_info(big, settings=DEFAULT_SETTINGS)])
    assert state.requested["cpu"] == wrap_int64(3 * MAX_INT64 + MAX_INT64)


# --- the extension points and capabilities a plugin declares ---

_POINTS = {
    "preFilter": (PreFilterPlugin, "pre_filter"),
    "filter": (FilterPlugin, "filter"),
    "preScore": (PreScorePlugin, "pre_score"),
    "score": (ScorePlugin, "score"),
}
# Extension points a plugin has upstream that Verdict leaves out, and why.
_LEFT_OUT = {
    ("DynamicResources", "preScore"): "its PreScore only readies Score's state; Verdict's "
    "Score reads the allocations its Filter kept",
}
_METHODS = {
    PreFilterExtensions: "add_pod",
    ScoreExtensions: "normalize_score",
    CanPassEveryNode: "can_reject",
    SumsRequests: "requests_checked",
    SumsHostPorts: "host_ports_wanted",
    CountsPods: "counted_pods",
    KeepsVerdict: "keeps_verdict",
    ReadsWholePods: "reads_whole_pods",
}


def _defines(cls: type, method: str) -> bool:
    """Whether the plugin itself (not a framework interface) defines ``method``."""
    return any(
        method in vars(klass) for klass in cls.__mro__ if klass.__module__ != framework.__name__
    )


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_a_plugin_has_the_extension_points_it_has_upstream_and_declares_them(name):
    """Each plugin derives from the interface of each extension point upstream's registry
    gives it (profile.IN_TREE), and defines that method; a method without its interface
    would never run, since the runtime finds extension points by type."""
    cls = REGISTRY[name]
    for point, (interface, method) in _POINTS.items():
        upstream = point in IN_TREE[name] and (name, point) not in _LEFT_OUT
        assert issubclass(cls, interface) is upstream, (name, point)
        assert _defines(cls, method) is issubclass(cls, interface), (name, method)
    for capability, method in _METHODS.items():
        assert _defines(cls, method) is issubclass(cls, capability), (name, method)


def test_a_capability_is_a_declared_base_class_not_a_method_name():
    """A plugin that merely has a capability's method does not declare it."""

    class Lookalike(FilterPlugin):
        name = "Lookalike"

        def filter(self, state, ni, ns):
            return None

        def keeps_verdict(self, state, ni, victims):
            return True

    assert not issubclass(Lookalike, KeepsVerdict)
