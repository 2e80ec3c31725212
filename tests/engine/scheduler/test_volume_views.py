"""The volume plugins on a view restored from its stored form: a pod with volumes makes the
cycle read the storage objects and the pods' volumes, so the whole snapshot is decoded and
the decision is the one the full view makes; a pod without volumes still never decodes it."""

from __future__ import annotations

from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.objects import Cluster
from service.ingest.kube import snapshot_from_objects
from tests.engine.scheduler.plugins.volumes import (
    BIND_COMPLETED,
    ZONE,
    claim_volume,
    k8s_csi_node,
    k8s_node,
    k8s_pod,
    k8s_pv,
    k8s_pvc,
)
from tests.store.test_scheduler_view_differential import restored


def _snapshot():
    objects = [
        k8s_node("n1", {ZONE: "a"}),
        k8s_node("n2", {ZONE: "b"}),
        k8s_csi_node("n2", {"ebs.csi.aws.com": 1}),
        k8s_pvc("data", volume_name="pv", annotations=BIND_COMPLETED),
        k8s_pv(
            "pv", labels={ZONE: "b"}, csi=("ebs.csi.aws.com", "h-pv"), claim=("default", "data")
        ),
        k8s_pvc(
            "old",
            volume_name="pv-old",
            annotations=BIND_COMPLETED,
            access_modes=["ReadWriteOncePod"],
        ),
        k8s_pv("pv-old", csi=("ebs.csi.aws.com", "h-old"), claim=("default", "old")),
        k8s_pod("holder", [claim_volume("old")], node="n2"),
    ]
    return snapshot_from_objects(objects)


def _pod(*claims):
    pod = k8s_pod("incoming", [claim_volume(c) for c in claims])
    pod["spec"]["priority"] = 100
    pod["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "100m"}}
    return pod


def test_a_pod_with_volumes_decides_as_on_the_whole_snapshot() -> None:
    snapshot = _snapshot()
    for kind, claims in (("placement", ("data",)), ("preemption", ("old",))):
        params = {"pod": _pod(*claims)}
        want = compute(KINDS[kind], Cluster(snapshot), params).result
        cluster, loads = restored(snapshot)
        got = compute(KINDS[kind], cluster, params).result
        assert got == want
        assert loads.count == 1
    # the zonal volume in zone b is on n2, where the CSI limit (1) is taken by "holder"
    placement = compute(KINDS["placement"], Cluster(snapshot), {"pod": _pod("data")}).result
    assert [(n["nodeName"], n["reasons"]) for n in placement["nodes"]] == [
        ("n1", ["node(s) had no available volume zone"]),
        ("n2", ["node(s) exceed max volume count"]),
    ]
    preemption = compute(KINDS["preemption"], Cluster(snapshot), {"pod": _pod("old")}).result
    assert preemption["nominatedNodeName"] == "n2"
    assert [v["name"] for v in preemption["victims"]] == ["holder"]


def test_a_pod_without_volumes_never_decodes_the_snapshot() -> None:
    cluster, loads = restored(_snapshot())
    result = compute(KINDS["placement"], cluster, {"pod": _pod()}).result
    assert result["notModelled"] == []
    assert loads.count == 0
