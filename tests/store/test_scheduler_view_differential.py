"""A SchedulerView restored from its stored form decides exactly as the view built from the
whole snapshot, without ever decoding the snapshot.

Every placement and preemption result (the full JSON the API returns) is compared between a
fresh Cluster of the snapshot and a Cluster restored from the stored view after a msgpack round
trip, on: the conformance cases' clusters, a hand-built cluster holding every kind of pod the
view treats specially, and generated clusters (bench/generate) with init containers,
overhead, PDBs with disrupted pods, terminating and nominated pods.

The volume plugins on a restored view: a pod with volumes makes the cycle read the storage
objects and the pods' volumes, so the whole snapshot is decoded and the decision is the one the
full view makes; a pod without volumes still never decodes it.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import msgspec
import pytest

from bench.generate import generate
from service.decisions import KINDS
from service.decisions.run import compute
from service.engine.objects import (
    Cluster,
    Container,
    ContainerPort,
    LabelSelector,
    LabelSelectorRequirement,
    OwnerReference,
    PodCondition,
    PodDisruptionBudget,
    Snapshot,
)
from service.engine.qos import get_pod_qos
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import snapshot_from_objects
from service.store.scheduler_view import StoredView, restored_cluster, stored_view
from tests.engine.scheduler.helpers import GI, cluster_of, conformance_group, node, pdb, pod
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
from tests.engine.scheduler.random_dra import random_dra_case

DECODER = msgspec.msgpack.Decoder(StoredView)


class Loads:
    """The deferred snapshot's loader: counts how often the whole snapshot is decoded."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.count = 0

    def __call__(self) -> Snapshot:
        self.count += 1
        return self.snapshot


def restored(snapshot: Snapshot) -> tuple[Cluster, Loads]:
    """A Cluster restored from the stored view of ``snapshot`` (through msgpack)."""
    packed = msgspec.msgpack.encode(
        stored_view(scheduler_view(Cluster(snapshot), settings=DEFAULT_SETTINGS), snapshot)
    )
    loads = Loads(snapshot)
    return restored_cluster(DECODER.decode(packed), loads), loads


def _pod_json(name: str, *, priority: int, cpu: str = "100m", memory: str = "128Mi", **spec):
    containers = [
        {
            "name": "c",
            "resources": {"requests": {"cpu": cpu, "memory": memory}},
            "ports": spec.pop("ports", []),
        }
    ]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": spec.pop("namespace", "default"), "uid": name},
        "spec": {"priority": priority, "containers": containers, **spec},
    }


def _requests(pods: list[dict]) -> list[tuple[str, dict]]:
    """(kind, params) for each pending pod: placement, preemption with every node a
    candidate and with the defaults, with and without StatefulSet holds."""
    out = []
    for p in pods:
        for hold in (False, True):
            out.append(("placement", {"pod": p, "holdStatefulSetUpgrades": hold}))
            out.append(
                (
                    "preemption",
                    {
                        "pod": p,
                        "holdStatefulSetUpgrades": hold,
                        "options": {"minCandidateNodesPercentage": 100},
                    },
                )
            )
        out.append(("preemption", {"pod": p, "options": {"offset": 3}}))
        out.append(
            (
                "placement",
                {"pod": p, "scoring": {"strategy": "MostAllocated"}},
            )
        )
    return out


def assert_same_decisions(snapshot: Snapshot, pods: list[dict]) -> None:
    cluster, loads = restored(snapshot)
    for kind, params in _requests(pods):
        full = compute(KINDS[kind], Cluster(snapshot), params).result
        again = compute(KINDS[kind], cluster, params).result
        assert again == full, (kind, params["pod"]["metadata"]["name"])
    if any(
        "InterPodAffinity" in p.unmodelled or "PodTopologySpread" in p.unmodelled
        for p in snapshot.pods
    ) or any(
        "podAffinity" in (p["spec"].get("affinity") or {})
        or "podAntiAffinity" in (p["spec"].get("affinity") or {})
        or p["spec"].get("topologySpreadConstraints")
        for p in pods
    ):
        # pod affinity and spreading read every pod whole: the snapshot is decoded, once
        assert loads.count <= 1
    else:
        assert loads.count == 0, "a scheduler decision decoded the whole snapshot"


# --- the conformance cases' clusters ---


def _conformance_clusters() -> list:
    params = []
    for prefix in (
        "scheduler.preemption.DryRunPreemption",
        "scheduler.preemption.SelectCandidate",
        "scheduler.DefaultPreemption.PostFilter",
        "scheduler.preemption.Evaluator.Preempt",
    ):
        for case in conformance_group(prefix):
            i = case["input"]
            preemptors = i.get("preemptors") or [i["preemptor"]]
            params.append(
                pytest.param(i["nodes"], i["pods"], i["pdbs"], preemptors, id=case["name"])
            )
    return params


@pytest.mark.parametrize(("nodes", "pods", "pdbs", "preemptors"), _conformance_clusters())
def test_conformance_clusters(nodes, pods, pdbs, preemptors) -> None:
    snapshot = cluster_of(nodes, pods, pdbs).snapshot
    pending = []
    for p in preemptors:
        p = {**p, "spec": {k: v for k, v in p["spec"].items() if k != "nodeName"}}
        pending.append(p)
    assert_same_decisions(snapshot, pending)


# --- every kind of pod the view treats specially ---


def _special_snapshot() -> Snapshot:
    sts = OwnerReference(kind="StatefulSet", name="db", uid="sts-uid", controller=True)
    preempted = PodCondition(type="DisruptionTarget", status="True", reason="PreemptionByScheduler")
    nodes = [
        node("n1", cpu=2000, memory=4 * GI, pods=8, extra={"example.com/gpu": 2}),
        node("n2", cpu=2000, memory=4 * GI),
        node("n3", cpu=4000, memory=8 * GI, unschedulable=True),
        node("n4", cpu=1000, memory=2 * GI, labels={"zone": "b"}),
    ]
    pods = [
        pod("web-1", 500, GI, node="n1", priority=10, labels={"app": "web"}, start=100),
        pod("web-2", 500, GI, node="n1", priority=10, labels={"app": "web"}),  # no start
        pod("gpu", 100, GI, node="n1", priority=5, extra={"example.com/gpu": 2}, start=50),
        pod("exporter", 10, 0, node="n2", priority=0, host_ports=(9100,), start=1),
        pod("db-0", 1000, 2 * GI, node="n2", priority=100, owner=sts, deleting=True, start=5),
        pod("old", 300, GI, node="n2", priority=1, deleting=True, start=7),
        pod("done", 1900, GI, node="n4", priority=0, phase="Succeeded"),
        pod("batch", 800, GI, node="n4", priority=1, labels={"tier": "batch"}, start=9),
        pod("ipa", 100, 0, node="n4", priority=2, unmodelled=("InterPodAffinity",), start=3),
        pod("ghost", 100, 0, node="missing", priority=0),
        pod("waiting", 1500, GI, nominated="n1", priority=50),
        pod("waiting-low", 200, GI, nominated="n2", priority=1),
        pod("waiting-2", 100, GI, nominated="n2", priority=40),
        pod("db-0", 1000, 2 * GI, namespace="other", node="n1", priority=3, start=2),
    ]
    # A pod terminating because the scheduler preempted it, on the node another pod is
    # nominated to (PodEligibleToPreemptOthers reads its conditions).
    victim = msgspec.structs.replace(
        pod("victim", 100, 0, node="n1", priority=1, deleting=True, start=4),
        conditions=(preempted,),
    )
    # A pod with two containers, an init container and overhead (the general request path).
    multi = msgspec.structs.replace(
        pod("multi", node="n2", priority=2, start=6, labels={"app": "web", "tier": "x"}),
        containers=(
            Container(name="a", requests={"cpu": 100, "memory": GI}),
            Container(
                name="b",
                requests={"cpu": 50},
                ports=(ContainerPort(container_port=81, host_port=8081, protocol="UDP"),),
            ),
        ),
        init_containers=(Container(name="i", requests={"cpu": 700}),),
        overhead={"cpu": 10, "memory": 1024},
    )
    pdbs = [
        pdb("web", {"app": "web"}, 1, disrupted=("web-2",)),
        PodDisruptionBudget(
            namespace="default",
            name="not-batch",
            selector=LabelSelector(
                match_expressions=(
                    LabelSelectorRequirement(key="tier", operator="NotIn", values=("batch",)),
                )
            ),
            disruptions_allowed=0,
        ),
        pdb("empty", {}, 0),
        pdb("nil", None, 0),
    ]
    return Snapshot(
        nodes=tuple(nodes),
        pods=(*pods, victim, multi),
        pdbs=tuple(pdbs),
        captured_at=datetime(2026, 11, 21, tzinfo=UTC),
    )


PENDING = [
    _pod_json("small", priority=20),
    _pod_json("big", priority=1_000, cpu="1800m", memory="3Gi"),
    _pod_json("porty", priority=1_000, ports=[{"containerPort": 9100, "hostPort": 9100}]),
    _pod_json("udp", priority=1_000, ports=[{"containerPort": 81, "hostPort": 8081}]),
    _pod_json("zone-b", priority=1_000, cpu="900m", nodeSelector={"zone": "b"}),
    _pod_json("never", priority=1_000, cpu="1900m", preemptionPolicy="Never"),
    _pod_json("replacement", priority=1_000, cpu="1", namespace="default")
    | {
        "metadata": {
            "name": "db-0",
            "namespace": "default",
            "uid": "db-0-new",
            "ownerReferences": [
                {
                    "kind": "StatefulSet",
                    "name": "db",
                    "uid": "sts-uid",
                    "controller": True,
                    "apiVersion": "apps/v1",
                }
            ],
        }
    },
    # Fits nowhere; nominated to n1, where a lower-priority pod is being preempted.
    _pod_json("nominated", priority=60, cpu="1900m") | {"status": {"nominatedNodeName": "n1"}},
]


def test_special_pods() -> None:
    assert_same_decisions(_special_snapshot(), PENDING)


# --- generated clusters ---


@pytest.mark.parametrize("seed", [1, 2])
def test_generated_clusters(seed: int) -> None:
    env = generate(24, 700, seed, stats=False)
    snapshot = snapshot_from_objects(env["objects"]["items"], None)
    pending = [
        _pod_json("p-low", priority=0, cpu="3", memory="6Gi"),
        _pod_json("p-mid", priority=100_000, cpu="2", memory="4Gi"),
        _pod_json("p-high", priority=2_000_000_000, cpu="6", memory="16Gi"),
        _pod_json("p-port", priority=1_000_000, ports=[{"containerPort": 9100, "hostPort": 9100}]),
    ]
    assert_same_decisions(snapshot, pending)


# --- the deferred snapshot ---


def test_other_decisions_decode_the_snapshot_once() -> None:
    """Anything but the scheduler reads the snapshot: it is decoded then, once, however many
    threads ask at the same time."""
    snapshot = _special_snapshot()
    cluster, loads = restored(snapshot)
    assert not cluster.snapshot_loaded
    assert cluster.nodes == snapshot.nodes
    assert cluster.pod_count == len(snapshot.pods)
    threads = [threading.Thread(target=lambda: cluster.pods_on("n1")) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert loads.count == 1
    assert cluster.snapshot is snapshot
    assert cluster.pods_on("n1") == tuple(p for p in snapshot.pods if p.node_name == "n1")


def test_a_failed_load_is_tried_again() -> None:
    snapshot = _special_snapshot()
    calls = []

    def load() -> Snapshot:
        calls.append(1)
        if len(calls) == 1:
            raise OSError("lost")
        return snapshot

    packed = msgspec.msgpack.encode(
        stored_view(scheduler_view(Cluster(snapshot), settings=DEFAULT_SETTINGS), snapshot)
    )
    cluster = restored_cluster(DECODER.decode(packed), load)
    with pytest.raises(OSError):
        cluster.snapshot  # noqa: B018
    assert cluster.snapshot is snapshot
    assert len(calls) == 2


def test_stored_pods_keep_the_pod_only_where_the_view_reads_it() -> None:
    snapshot = _special_snapshot()
    stored = stored_view(scheduler_view(Cluster(snapshot), settings=DEFAULT_SETTINGS), snapshot)
    whole = {pi.name for pods in stored.node_pods for pi in pods if pi.pod is not None}
    assert whole == {"exporter", "db-0", "old", "victim", "multi"}
    qos = {pi.uid: pi.qos for pods in stored.node_pods for pi in pods if pi.pod is None}
    assert qos == {
        p.uid: get_pod_qos(p, settings=DEFAULT_SETTINGS) for p in snapshot.pods if p.uid in qos
    }
    assert len(qos) == 6
    assert stored.inter_pod_affinity_in_use
    assert [p.name for p in stored.nominated] == ["waiting", "waiting-low", "waiting-2"]
    assert stored.pod_count == len(snapshot.pods)


# --- the volume plugins on a restored view ---


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


def test_dynamic_resources_decide_the_same_on_a_restored_view() -> None:
    """The claims, classes and slices are kept in the stored view: a pod claiming devices
    is placed and preempted as on the whole snapshot, without decoding it."""
    for seed, kind in ((1, "placement"), (7, "placement"), (3, "preemption"), (11, "preemption")):
        case = random_dra_case(seed, kind)
        snapshot = snapshot_from_objects(case["objects"])
        cluster, loads = restored(snapshot)
        for params in (
            {"pod": case["pod"]},
            {"pod": case["pod"], "options": {"minCandidateNodesPercentage": 100}},
        ):
            if "options" in params and kind == "placement":
                continue
            full = compute(KINDS[kind], Cluster(snapshot), params).result
            again = compute(KINDS[kind], cluster, params).result
            assert again == full, seed
        assert loads.count == 0
