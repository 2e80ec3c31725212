"""Filter plugins (reasons, codes, profile order) and the NodeAffinity PreFilter; the
nominated-pods two-pass filter is in test_nominated.py."""

from __future__ import annotations

import pytest

from service.engine.objects import Taint, Toleration
from service.engine.scheduler.framework import SUCCESS, UNRESOLVABLE, UNSCHEDULABLE
from service.engine.scheduler.profile import DEFAULT_PROFILE
from service.engine.scheduler.profile import NodeResourcesFitArgs as FitArgs
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from tests.engine.scheduler.helpers import GI, cluster, cycle, filter_statuses, node, pod

MODELLED_FILTERS = DEFAULT_PROFILE.filter[:6]

NO_SCHEDULE = Taint(key="dedicated", value="db", effect="NoSchedule")
NO_EXECUTE = Taint(key="gpu", value="", effect="NoExecute")
PREFER = Taint(key="soft", value="x", effect="PreferNoSchedule")


@pytest.mark.parametrize(
    ("n", "incoming", "code", "reasons", "plugin"),
    [
        pytest.param(
            node("n", unschedulable=True),
            pod("p", 100),
            UNRESOLVABLE,
            ["node(s) were unschedulable"],
            "NodeUnschedulable",
            id="NodeUnschedulable: cordoned node",
        ),
        pytest.param(
            node("n", unschedulable=True),
            pod(
                "p",
                100,
                tolerations=(
                    Toleration(
                        key="node.kubernetes.io/unschedulable",
                        operator="Exists",
                        effect="NoSchedule",
                    ),
                ),
            ),
            SUCCESS,
            [],
            "",
            id="NodeUnschedulable: tolerated by the unschedulable taint",
        ),
        pytest.param(
            node("n", taints=(NO_SCHEDULE,)),
            pod("p", 100),
            UNRESOLVABLE,
            ["node(s) had untolerated taint(s)"],
            "TaintToleration",
            id="TaintToleration: NoSchedule",
        ),
        pytest.param(
            node("n", taints=(NO_EXECUTE,)),
            pod("p", 100),
            UNRESOLVABLE,
            ["node(s) had untolerated taint(s)"],
            "TaintToleration",
            id="TaintToleration: NoExecute",
        ),
        pytest.param(
            node("n", taints=(PREFER,)),
            pod("p", 100),
            SUCCESS,
            [],
            "",
            id="TaintToleration: PreferNoSchedule never filters",
        ),
        pytest.param(
            node("n", taints=(NO_SCHEDULE,)),
            pod(
                "p",
                100,
                tolerations=(Toleration(key="dedicated", operator="Equal", value="db"),),
            ),
            SUCCESS,
            [],
            "",
            id="TaintToleration: tolerated",
        ),
        pytest.param(
            node("n", labels={"zone": "a"}),
            pod("p", 100, node_selector={"zone": "b"}),
            UNRESOLVABLE,
            ["node(s) didn't match Pod's node affinity/selector"],
            "NodeAffinity",
            id="NodeAffinity: nodeSelector",
        ),
        pytest.param(
            node("n", cpu=1000),
            pod("p", 1500),
            UNRESOLVABLE,
            ["Insufficient cpu"],
            "NodeResourcesFit",
            id="NodeResourcesFit: request above allocatable is unresolvable",
        ),
        pytest.param(
            node("n", pods=0),
            pod("p"),
            UNSCHEDULABLE,
            ["Too many pods"],
            "NodeResourcesFit",
            id="NodeResourcesFit: no pods allocatable",
        ),
        pytest.param(
            node("n", extra={"hugepages-2Mi": 4 * 2 * 1024 * 1024}),
            pod("p", 100, extra={"hugepages-2Mi": 8 * 2 * 1024 * 1024}),
            UNRESOLVABLE,
            ["Insufficient hugepages-2Mi"],
            "NodeResourcesFit",
            id="NodeResourcesFit: hugepages",
        ),
        pytest.param(
            node("n"),
            pod("p", 100, extra={"example.com/gpu": 1}),
            UNRESOLVABLE,
            ["Insufficient example.com/gpu"],
            "NodeResourcesFit",
            id="NodeResourcesFit: extended resource the node lacks",
        ),
    ],
)
def test_filter_reasons(n, incoming, code, reasons, plugin) -> None:
    status = filter_statuses([n], [], incoming)["n"]
    assert status.code == code
    assert list(status.reasons) == reasons
    assert status.plugin == plugin


def test_node_name_filter() -> None:
    cl = cluster([node("a"), node("b")], [])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    fwk, ctx = cycle(pod("p", 100, node="a"), view)
    assert fwk.run_filter_plugins(ctx, view.by_name["a"]).code == SUCCESS
    status = fwk.run_filter_plugins(ctx, view.by_name["b"])
    assert (status.code, status.reasons) == (
        UNRESOLVABLE,
        ("node(s) didn't match the requested node name",),
    )


def test_node_ports_conflict_is_unschedulable() -> None:
    statuses = filter_statuses(
        [node("a"), node("b")],
        [pod("exporter", 10, node="a", host_ports=(9100,))],
        pod("p", 10, host_ports=(9100,)),
    )
    assert statuses["a"].code == UNSCHEDULABLE
    assert statuses["a"].reasons == ("node(s) didn't have free ports for the requested pod ports",)
    assert statuses["b"].code == SUCCESS


def test_first_rejecting_plugin_decides() -> None:
    """Cordoned, tainted and too small: only NodeUnschedulable, the first in profile order."""
    n = node("n", cpu=100, unschedulable=True, taints=(NO_SCHEDULE,))
    status = filter_statuses([n], [], pod("p", 500))["n"]
    assert status.plugin == "NodeUnschedulable"
    assert status.reasons == ("node(s) were unschedulable",)
    assert MODELLED_FILTERS.index("NodeUnschedulable") < MODELLED_FILTERS.index("TaintToleration")


def test_fit_reports_every_insufficient_resource_in_order() -> None:
    n = node("n", cpu=1000, memory=GI, pods=1, extra={"example.com/a": 1, "example.com/b": 1})
    existing = [pod("e", 900, GI // 2, node="n", extra={"example.com/a": 1, "example.com/b": 1})]
    incoming = pod("p", 200, GI, extra={"example.com/b": 1, "example.com/a": 1})
    status = filter_statuses([n], existing, incoming)["n"]
    assert status.reasons == (
        "Too many pods",
        "Insufficient cpu",
        "Insufficient memory",
        "Insufficient example.com/a",
        "Insufficient example.com/b",
    )
    assert status.code == UNSCHEDULABLE


def test_ignored_extended_resources() -> None:
    incoming = pod("p", 100, extra={"example.com/gpu": 1, "kubernetes.io/x": 1})
    status = filter_statuses([node("n")], [], incoming, FitArgs(frozenset({"example.com/gpu"})))[
        "n"
    ]
    assert status.reasons == ("Insufficient kubernetes.io/x",)
    status = filter_statuses(
        [node("n")], [], incoming, FitArgs(ignored_resource_groups=frozenset({"kubernetes.io"}))
    )["n"]
    # ignoredResourceGroups applies to extended resources only; kubernetes.io/x is not one
    assert status.reasons == ("Insufficient example.com/gpu", "Insufficient kubernetes.io/x")


def test_terminal_pods_do_not_count_but_terminating_pods_do() -> None:
    n = node("n", cpu=1000)
    done = pod("done", 900, node="n", phase="Succeeded")
    assert filter_statuses([n], [done], pod("p", 500))["n"].code == SUCCESS
    leaving = pod("leaving", 900, node="n", deleting=True)
    assert filter_statuses([n], [leaving], pod("p", 500))["n"].reasons == ("Insufficient cpu",)


def test_not_modelled_filters_are_named() -> None:
    cl = cluster([node("n")], [pod("anti", 10, node="n", unmodelled=("InterPodAffinity",))])
    view = scheduler_view(cl, settings=DEFAULT_SETTINGS)
    _, ctx = cycle(pod("p", 10, unmodelled=("PodTopologySpread", "VolumeBinding")), view)
    # every filter of the default profile is modelled (a pod's spread constraints, an existing
    # pod's anti-affinity or the volume marker of snapshots stored before the volume plugins
    # were modelled make none "not modelled")
    assert ctx.not_modelled == ()


# --- NodeAffinity PreFilter (metadata.name pins, as DaemonSet pods carry) ---


def _pinned(*terms):
    from service.engine.objects import NodeSelectorRequirement, NodeSelectorTerm

    return tuple(
        NodeSelectorTerm(
            match_fields=tuple(
                NodeSelectorRequirement(key="metadata.name", operator="In", values=(name,))
                for name in names
            )
        )
        for names in terms
    )


def test_prefilter_result_limits_the_nodes() -> None:
    from msgspec.structs import replace

    ds_pod = replace(pod("ds", 10), required_node_affinity=_pinned(["b"]))
    statuses = filter_statuses([node("a"), node("b"), node("c")], [], ds_pod)
    assert statuses["b"].code == SUCCESS
    for name in ("a", "c"):
        assert statuses[name].code == UNRESOLVABLE
        assert statuses[name].reasons == ("node(s) didn't satisfy plugin(s) [NodeAffinity]",)


def test_prefilter_conflicting_pins() -> None:
    from msgspec.structs import replace

    from service.engine.scheduler.placement import place

    bad = replace(pod("ds", 10), required_node_affinity=_pinned(["a", "b"]))
    cl = cluster([node("a"), node("b")], [])
    out = place(cl, bad, settings=DEFAULT_SETTINGS)
    assert [n.reasons for n in out.nodes] == [["pod affinity terms conflict"]] * 2
    assert out.message == "0/2 nodes are available: pod affinity terms conflict."
