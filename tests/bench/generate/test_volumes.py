"""bench/generate/volumes.py (``bench.generate --volumes``): about a fifth of the pods are
StatefulSet replicas whose claims are bound to zonal volumes in their node's zone, every
node has a CSINode, the output is deterministic and the cluster without ``--volumes`` is
unchanged by the hook."""

from __future__ import annotations

from collections import Counter

import orjson

from bench.generate import iter_chunks
from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object, snapshot_from_objects


def _items(volumes: bool) -> list[dict]:
    return orjson.loads(b"".join(iter_chunks(60, 1500, 3, list_only=True, volumes=volumes)))[
        "items"
    ]


def test_statefulset_replicas_claim_bound_zonal_volumes() -> None:
    items = _items(True)
    kinds = Counter(i["kind"] for i in items)
    pods = [i for i in items if i["kind"] == "Pod"]
    claiming = [
        p for p in pods if any("persistentVolumeClaim" in v for v in p["spec"].get("volumes", ()))
    ]
    assert 0.15 < len(claiming) / len(pods) < 0.3
    assert kinds["PersistentVolumeClaim"] == kinds["PersistentVolume"] == len(claiming)
    assert kinds["CSINode"] == kinds["Node"]
    snapshot = snapshot_from_objects(items)
    zone_of = {n.name: n.labels.get("topology.kubernetes.io/zone") for n in snapshot.nodes}
    pvs = {pv.name: pv for pv in snapshot.persistent_volumes}
    claims = {(c.namespace, c.name): c for c in snapshot.persistent_volume_claims}
    for pod in snapshot.pods:
        for v in pod.volumes:
            claim = claims[(pod.namespace, v.claim_name)]
            assert claim.bind_completed
            pv = pvs[claim.volume_name]
            assert (pv.claim_namespace, pv.claim_name) == (pod.namespace, claim.name)
            if pod.node_name and zone_of[pod.node_name]:
                assert pv.labels["topology.kubernetes.io/zone"] == zone_of[pod.node_name]


def test_a_replica_coming_back_goes_to_its_volume_zone() -> None:
    snapshot = snapshot_from_objects(_items(True))
    pvc = snapshot.persistent_volume_claims[0]
    zone = next(pv for pv in snapshot.persistent_volumes if pv.name == pvc.volume_name).labels[
        "topology.kubernetes.io/zone"
    ]
    pod = pod_from_object(
        {
            "kind": "Pod",
            "metadata": {"name": "replica", "namespace": pvc.namespace},
            "spec": {
                "containers": [{"name": "c", "resources": {"requests": {"cpu": "10m"}}}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": pvc.name}}],
                "tolerations": [{"operator": "Exists"}],
            },
        }
    )
    out = place(Cluster(snapshot), pod, settings=DEFAULT_SETTINGS)
    nodes = {n.name: n for n in snapshot.nodes}
    feasible = [n.node_name for n in out.nodes if n.feasible]
    assert feasible
    assert {nodes[name].labels.get("topology.kubernetes.io/zone") for name in feasible} == {zone}


def test_the_output_is_deterministic_and_the_plain_cluster_has_no_storage() -> None:
    assert _items(True) == _items(True)
    plain = _items(False)
    assert not [i for i in plain if i["kind"] in ("PersistentVolume", "CSINode")]
