"""A node's zone (service.engine.topology): the lifecycle controller's zone key
(GetZoneKey) and the zone shown for a node, and why they differ on a relabelled node."""

from __future__ import annotations

import pytest

from service.engine.nodelifecycle.config import NodeLifecycleConfig
from service.engine.nodelifecycle.timeline import plan_evictions
from service.engine.objects import Cluster
from service.engine.summary import node_view
from service.engine.topology import zone_key, zone_key_parts, zone_label
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"


@pytest.mark.parametrize(
    ("labels", "key"),
    [
        pytest.param({}, "", id="no labels"),
        pytest.param({"other": "x"}, "", id="no zone labels"),
        pytest.param({GA_ZONE: "z"}, ":\x00:z", id="zone only"),
        pytest.param({GA_REGION: "r"}, "r:\x00:", id="region only"),
        pytest.param({GA_ZONE: "z", BETA_ZONE: ""}, "", id="empty beta label wins (presence)"),
        pytest.param(
            {GA_ZONE: "z", GA_REGION: "r", BETA_REGION: "rb"}, "rb:\x00:z", id="independent"
        ),
    ],
)
def test_zone_key(labels, key):
    assert zone_key(labels) == key
    region, zone = zone_key_parts(labels)
    assert (region + ":\x00:" + zone if region or zone else "") == key


@pytest.mark.parametrize(
    ("labels", "zone"),
    [
        pytest.param({}, "", id="no labels"),
        pytest.param({GA_ZONE: "z"}, "z", id="GA label"),
        pytest.param({BETA_ZONE: "b"}, "b", id="beta label only (labelled before v1.17)"),
        pytest.param({GA_ZONE: "", BETA_ZONE: "b"}, "b", id="empty GA label"),
        pytest.param({GA_ZONE: "z", BETA_ZONE: ""}, "z", id="empty beta label"),
    ],
)
def test_zone_label(labels, zone):
    assert zone_label(labels) == zone


def test_a_relabelled_node_is_shown_in_its_ga_zone_and_grouped_by_its_beta_zone():
    # The kubelet writes both labels with one value (kubelet_node_status.go initialNode); a
    # node relabelled by hand to a new GA zone keeps its old beta label. The nodes view
    # (zone_label) shows the GA label, the well-known one, while the node lifecycle
    # controller groups the node by component-helpers topology.GetZoneKey, which reads the
    # beta labels first: the node stays in the beta label's zone (key, region and zone).
    node = {
        "kind": "Node",
        "metadata": {
            "name": "n1",
            "labels": {GA_ZONE: "eu-1b", BETA_ZONE: "eu-1a", GA_REGION: "eu-1"},
        },
        "status": {
            "allocatable": {"cpu": "1", "memory": "1Gi", "pods": "10"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
    cluster = Cluster(snapshot_from_objects([node]))
    n1 = cluster.node("n1")
    assert node_view(cluster, n1, settings=DEFAULT_SETTINGS)["zone"] == "eu-1b"
    assert zone_key(n1.labels) == "eu-1:\x00:eu-1a"
    plan = plan_evictions(cluster, 1_800_000_000 * 10**9, NodeLifecycleConfig())
    assert [(z.key, z.region, z.zone) for z in plan.zones] == [("eu-1:\x00:eu-1a", "eu-1", "eu-1a")]
