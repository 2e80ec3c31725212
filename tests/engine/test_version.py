"""Releases as settings objects (engine/version.py): each built from the oldest by its named
differences, the newest equal to the engine's defaults, every difference a real change."""

from __future__ import annotations

from dataclasses import fields

import pytest

from service.engine.objects import Container, Pod
from service.engine.qos import compute_pod_qos
from service.engine.scheduler.placement import place
from service.engine.scheduler.plugins.noderesources.resource_allocation import balance_change_score
from service.engine.version import (
    BASELINE,
    COMPONENTS,
    DEFAULT_SETTINGS,
    DIFFERENCES,
    KNOWN_VERSIONS,
    differences_in,
    settings_for,
)
from tests.engine.kubelet.helpers import k8s_pod
from tests.engine.scheduler.helpers import GI, cluster, node


def test_the_newest_release_is_the_default() -> None:
    assert settings_for(KNOWN_VERSIONS[-1]) is DEFAULT_SETTINGS
    assert settings_for(KNOWN_VERSIONS[0]) == BASELINE


@pytest.mark.parametrize("difference", DIFFERENCES, ids=lambda d: f"{d.release}-{d.setting}")
def test_each_difference_changes_its_setting_in_its_release(difference) -> None:
    before = KNOWN_VERSIONS[KNOWN_VERSIONS.index(difference.release) - 1]
    assert getattr(settings_for(difference.release), difference.setting) == difference.value
    assert getattr(settings_for(before), difference.setting) != difference.value
    assert difference.component in COMPONENTS
    assert difference.upstream


def test_every_switch_is_named_by_a_difference() -> None:
    """A setting that differs between two releases changes only through the table."""
    named = {d.setting for d in DIFFERENCES}
    for f in fields(DEFAULT_SETTINGS):
        if f.name == "kubernetes_version":
            continue
        values = {getattr(settings_for(v), f.name) for v in KNOWN_VERSIONS}
        assert len(values) == 1 or f.name in named, f.name


def test_an_unknown_release_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        settings_for("1.31")
    with pytest.raises(KeyError):
        differences_in("1.38")


# --- 1.36 and 1.37 have no oracle: one hand-made case per difference -------------------------


def test_qos_per_container_from_1_37() -> None:
    """ComputePodQOS (core/v1/helper/qos, v1.37): two containers whose cpu requests and
    limits cancel out in the sums (1/2 and 2/1) are Guaranteed by 1.36's aggregate
    algorithm and Burstable by 1.37's per-container one."""

    def container(name: str, request: int, limit: int) -> Container:
        memory = 1 << 30
        return Container(
            name=name,
            requests={"cpu": request, "memory": memory},
            limits={"cpu": limit, "memory": memory},
        )

    pod = Pod(
        namespace="ns",
        name="p",
        uid="u",
        containers=(container("a", 1000, 2000), container("b", 2000, 1000)),
    )
    assert compute_pod_qos(pod, settings=settings_for("1.36")) == "Guaranteed"
    assert compute_pod_qos(pod, settings=settings_for("1.37")) == "Burstable"


def test_fit_score_reads_pod_level_resources_from_1_37() -> None:
    """NodeResourcesFit's score (noderesources/fit.go, v1.37) with pod-level requests of
    200m/256Mi over containers of 3 cpu and about 1.1Gi on an 8 cpu, 1Gi node: 1.35 and 1.36
    score the containers (31), 1.37 the pod-level requests (86)."""
    incoming = k8s_pod(
        {
            "metadata": {"name": "incoming", "namespace": "default"},
            "spec": {
                "resources": {"requests": {"cpu": "200m", "memory": "256Mi"}},
                "containers": [
                    {"name": "c0", "resources": {"requests": {"cpu": "1.5", "memory": "128Mi"}}},
                    {"name": "c1", "resources": {"requests": {"cpu": "1500m", "memory": "1G"}}},
                ],
            },
        },
        defaulted=True,
    )
    nodes = [node("n7", cpu=8000, memory=GI), node("n8", cpu=8000, memory=GI)]
    scores = {}
    for version in ("1.35", "1.36", "1.37"):
        out = place(cluster(nodes, []), incoming, settings=settings_for(version))
        scores[version] = out.nodes[0].scores["NodeResourcesFit"]
    assert scores == {"1.35": 31, "1.36": 31, "1.37": 86}


def test_balanced_allocation_scores_the_change_from_1_36() -> None:
    """kubernetes#135573 (v1.36): NodeResourcesBalancedAllocation scores the change the pod
    makes to the node's balance. A node at 1000m/1Gi of 4000m/4Gi (balanced, 100) that the
    pod keeps balanced (2000m/2Gi, 100) scores 100 up to 1.35 and 75 from 1.36."""
    nodes = [node("a", cpu=4000, memory=4 * GI)]
    pods = [
        k8s_pod(
            {
                "metadata": {"name": "busy"},
                "spec": {
                    "nodeName": "a",
                    "containers": [
                        {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
                    ],
                },
            }
        )
    ]
    incoming = k8s_pod(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
                ]
            },
        }
    )
    scores = {
        v: place(cluster(nodes, pods), incoming, settings=settings_for(v))
        .nodes[0]
        .scores["NodeResourcesBalancedAllocation"]
        for v in KNOWN_VERSIONS
    }
    assert scores == {"1.32": 100, "1.33": 100, "1.34": 100, "1.35": 100, "1.36": 75, "1.37": 75}


@pytest.mark.parametrize(
    ("with_pod", "without_pod", "score"),
    [(100, 100, 75), (50, 100, 50), (100, 50, 100), (93, 87, 78), (93, 100, 71)],
)
def test_balance_change_score(with_pod, without_pod, score) -> None:
    """balancedResourceScorer since v1.36 (kubernetes#135573): 75 for no change, 50 from
    perfectly balanced to perfectly unbalanced, 100 the other way round."""
    assert balance_change_score(with_pod, without_pod) == score
