"""Capacity's group fast path (engine/scheduler/score_groups.py) against full cycles, on
random clusters made to move what it keeps: nodes that fill up (the feasible set, the
normalizations and the spread domains change), TaintToleration, NodeAffinity,
InterPodAffinity and ImageLocality scores that differ across nodes, zones of different
sizes, nodes without the zone label, nodes holding nominated pods. Every run goes until a replica does not fit,
so the stop reason is compared too."""

from __future__ import annotations

import random

import msgspec
import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.capacity import capacity
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.random_clusters import IMAGES
from tests.oracles import seeds

PROFILES = {DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)}
_ZONE = "topology.kubernetes.io/zone"
_APPS = ("capacity", "web", "db")


def _node(rng: random.Random, i: int) -> dict:
    labels = {"kubernetes.io/hostname": f"n{i}", "tier": rng.choice(("gold", "silver", "iron"))}
    if rng.random() < 0.85:  # zones of different sizes; some nodes without the label
        labels[_ZONE] = rng.choices(("a", "b", "c"), weights=(6, 3, 1))[0]
    if rng.random() < 0.5:
        labels["rack"] = rng.choice(("r1", "r2"))
    spec: dict = {}
    taints = [
        {"key": key, "effect": "PreferNoSchedule"} for key in ("spot", "old") if rng.random() < 0.3
    ]
    if rng.random() < 0.1:
        taints.append({"key": "dedicated", "effect": "NoSchedule"})
    if taints:
        spec["taints"] = taints
    if rng.random() < 0.05:
        spec["unschedulable"] = True
    alloc = {
        "cpu": rng.choice(("1", "2", "4")),
        "memory": rng.choice(("2Gi", "4Gi")),
        "pods": rng.choice(("110", "110", "6")),
    }
    status: dict = {"allocatable": alloc, "capacity": alloc}
    if rng.random() < 0.6:  # ImageLocality's scores differ across nodes
        status["images"] = [
            {"names": names, "sizeBytes": size}
            for names, size, _ in rng.sample(IMAGES, rng.randint(1, 3))
        ]
    return {
        "kind": "Node",
        "metadata": {"name": f"n{i}", "labels": labels},
        "spec": spec,
        "status": status,
    }


def _term(rng: random.Random) -> dict:
    return {
        "labelSelector": {"matchLabels": {"app": rng.choice(_APPS)}},
        "topologyKey": rng.choice((_ZONE, "kubernetes.io/hostname", "rack")),
    }


def _pod(rng: random.Random, i: int, node: str | None) -> dict:
    spec: dict = {
        "containers": [
            {
                "name": "c",
                "resources": {
                    "requests": {
                        "cpu": f"{rng.choice((100, 250, 500))}m",
                        "memory": rng.choice(("128Mi", "512Mi")),
                    }
                },
            }
        ],
        "priority": 0,
        "schedulerName": "default-scheduler",
    }
    if rng.random() < 0.25:  # existing terms the replicas match: InterPodAffinity's scores
        kind = rng.choice(("podAffinity", "podAntiAffinity"))
        preferred = [{"weight": rng.randint(1, 100), "podAffinityTerm": _term(rng)}]
        entry: dict = {"preferredDuringSchedulingIgnoredDuringExecution": preferred}
        if kind == "podAntiAffinity" and rng.random() < 0.3:
            entry["requiredDuringSchedulingIgnoredDuringExecution"] = [_term(rng)]
        spec["affinity"] = {kind: entry}
    status: dict = {"phase": "Running"}
    if node is None:  # a pending pod nominated to a node, outranking the replicas
        spec["priority"] = 1000
        status = {"phase": "Pending", "nominatedNodeName": f"n{rng.randint(0, 5)}"}
    else:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "metadata": {
            "name": f"p{i}",
            "namespace": "default",
            "uid": f"uid-p{i}",
            "labels": {"app": rng.choice(_APPS)},
        },
        "spec": spec,
        "status": status,
    }


def _template(rng: random.Random) -> dict:
    spec: dict = {
        "containers": [
            {
                "name": "c",
                "image": rng.choice(IMAGES)[2],
                "resources": {
                    "requests": {
                        "cpu": f"{rng.choice((200, 300, 500))}m",
                        "memory": rng.choice(("256Mi", "512Mi", "1Gi")),
                    }
                },
            }
        ],
        "priority": 0,
        "schedulerName": "default-scheduler",
    }
    own = {"matchLabels": {"app": "capacity"}}
    keys = [_ZONE] if rng.random() < 0.7 else [_ZONE, "rack"]
    if rng.random() < 0.9:
        spec["topologySpreadConstraints"] = [
            {"maxSkew": rng.choice((1, 1, 2)), "topologyKey": key, "labelSelector": own,
             "whenUnsatisfiable": "ScheduleAnyway"}
            for key in keys
        ]  # fmt: skip
    if rng.random() < 0.6:
        spec["affinity"] = {
            "nodeAffinity": {
                "preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": rng.randint(1, 100), "preference": {"matchExpressions": [
                        {"key": "tier", "operator": "In", "values": [tier]}]}}
                    for tier in rng.sample(("gold", "silver"), rng.choice((1, 2)))
                ]
            }
        }  # fmt: skip
    if rng.random() < 0.5:
        spec["tolerations"] = [{"key": "spot", "operator": "Exists"}]
    return {
        "kind": "Pod",
        "metadata": {"name": "replica", "namespace": "default", "uid": "uid-replica",
                     "labels": {"app": "capacity"}},
        "spec": spec,
        "status": {"phase": "Pending"},
    }  # fmt: skip


def filling_case(seed: int) -> tuple[list[dict], dict]:
    """A small cluster the template's replicas fill, and the template."""
    rng = random.Random(f"score-groups/{seed}")
    nodes = [_node(rng, i) for i in range(rng.randint(4, 24))]
    pods = []
    for i in range(rng.randint(0, 3 * len(nodes))):
        pods.append(_pod(rng, i, rng.choice(nodes)["metadata"]["name"]))
    if rng.random() < 0.3:
        pods.append(_pod(rng, len(pods), None))
    return [*nodes, *pods], _template(rng)


def _answer(run) -> tuple:
    return (
        run.placements,
        [(t.replicas, dict(t.per_node), t.stop, t.message, t.reasons) for t in run.templates],
        [(u.name, u.requested_after, u.pods_after) for u in run.nodes],
        run.ties,
    )


def _runs(objects: list[dict], template: dict) -> list:
    pod = pod_from_object(template)
    return [
        capacity(Cluster(snapshot_from_objects(objects)), [pod], profiles=PROFILES,
                 settings=DEFAULT_SETTINGS, incremental=incremental, fresh_views=not incremental)
        for incremental in (True, False)
    ]  # fmt: skip


@pytest.mark.parametrize("seed", seeds(40))
def test_grouped_capacity_places_every_replica_as_full_cycles_do(seed: int) -> None:
    objects, template = filling_case(seed)
    fast, full = _runs(objects, template)
    assert _answer(fast) == _answer(full)
    assert full.grouped == 0
    placed = fast.templates[0].replicas
    # every template here qualifies: the group path decides every placement
    assert fast.grouped == fast.incremental == placed
    assert fast.templates[0].stop == "Unschedulable"


@pytest.mark.parametrize("seed", seeds(10))
def test_the_replicas_pod_infos_are_those_built_from_their_pods(seed: int) -> None:
    """The group path re-labels the first replica's PodInfo for the next ones: in the
    cluster it leaves, every pod's PodInfo is the one pod_info builds from the pod."""
    from service.engine.scheduler.framework import pod_info
    from service.engine.scheduler.snapshot import scheduler_view

    fast, _ = _runs(*filling_case(seed))
    assert fast.grouped > 1
    for ni in scheduler_view(fast.cluster, DEFAULT_SETTINGS).nodes:
        for pi in ni.pods:
            built = pod_info(pi.pod, DEFAULT_SETTINGS)
            assert msgspec.structs.asdict(pi) == msgspec.structs.asdict(built)


def test_the_group_path_decides_most_placements_over_the_seeds() -> None:
    placed = grouped = 0
    for seed in range(15):
        fast, _ = _runs(*filling_case(seed))
        placed += fast.templates[0].replicas
        grouped += fast.grouped
    assert placed > 200
    assert grouped >= 0.9 * placed


def test_a_pod_added_to_a_node_sums_as_the_node_summed_anew() -> None:
    """score_groups._with_pod (AddPod by sums) against NodeInfo built from all its pods."""
    from service.engine.scheduler.framework import NodeInfo, pod_info
    from service.engine.scheduler.score_groups import _with_pod
    from tests.engine.scheduler.helpers import node, pod

    n = node("a", 4000)
    infos = [pod_info(pod(f"p{i}", 100 * i, 2**20 * i), DEFAULT_SETTINGS) for i in range(3)]
    extra = pod_info(pod("x", 0, 0), DEFAULT_SETTINGS)  # no requests: the defaults count
    grown = NodeInfo(n, 0, infos[:1])
    for info in [*infos[1:], extra]:
        grown = _with_pod(grown, info)
    anew = NodeInfo(n, 0, [*infos, extra])
    assert [pi.key for pi in grown.pods] == [pi.key for pi in anew.pods]
    assert list(grown.requested.items()) == list(anew.requested.items())
    assert (grown.nz_cpu, grown.nz_mem, grown.pod_count) == (
        anew.nz_cpu,
        anew.nz_mem,
        anew.pod_count,
    )
    assert grown.used_ports == anew.used_ports


def _summed(ni) -> tuple:
    return (
        [pi.key for pi in ni.pods],
        list(ni.requested.items()),
        ni.nz_cpu,
        ni.nz_mem,
        ni.pod_count,
        None if ni.used_ports is None else ni.used_ports._by_ip,
        [pi.key for pi in ni.port_pods],
    )


@pytest.mark.parametrize("seed", range(40))
def test_pods_added_in_place_sum_as_the_node_summed_anew(seed: int) -> None:
    """score_groups._add_pod (a second bind to a node before flush, in place) after
    _with_pod against NodeInfo built from all its pods, on random requests around the
    int64 limits, extended resources, pods without requests and host ports; the NodeInfo
    the first bind copied (the view's) is left as it was, and the lazy orders are redone."""
    from service.engine.scheduler.framework import NodeInfo, pod_info
    from service.engine.scheduler.score_groups import _add_pod, _with_pod
    from tests.engine.scheduler.helpers import node, pod

    rng = random.Random(seed)
    edges = (0, 1, 500, 2**62, 2**63 - 1, 2**63 - 2, 2**64)

    def some_pod(i: int):
        cpu = rng.choice((*edges, rng.randrange(1, 2**63)))
        memory = rng.choice((*edges, rng.randrange(1, 2**63)))
        extra = {"example.com/gpu": rng.choice(edges)} if rng.random() < 0.3 else None
        ports = (8000 + i,) if rng.random() < 0.1 else ()
        made = pod(f"p{i}", cpu, memory, extra=extra, host_ports=ports, priority=rng.randint(0, 3))
        return pod_info(made, DEFAULT_SETTINGS)

    n = node("a", 4000)
    base = NodeInfo(n, 0, [some_pod(i) for i in range(rng.randint(0, 4))])
    before = _summed(base)
    base.pods_by_importance()
    added = [some_pod(100 + i) for i in range(rng.randint(1, 12))]
    grown = _with_pod(base, added[0])
    for info in added[1:]:
        grown.pods_by_importance()  # computed, then stale after the add
        if info.has_ports:
            grown = _with_pod(grown, info)
        else:
            _add_pod(grown, info)
    anew = NodeInfo(n, 0, [*base.pods, *added])
    assert _summed(grown) == _summed(anew)
    assert [pi.key for pi in grown.pods_by_importance()] == [
        pi.key for pi in anew.pods_by_importance()
    ]
    assert grown.cumulative("cpu") == anew.cumulative("cpu")
    assert _summed(base) == before
