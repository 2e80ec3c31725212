"""The scheduler view stored with each snapshot: written on ingest, restored for placement and
preemption on a snapshot this process has not decoded (the rest of the snapshot decoded only
when read), ignored when missing or stored in another format, and written by the warming
thread for the rows that lack it; its fingerprint names its format, pinned to what it holds."""

from __future__ import annotations

import hashlib

import msgspec
import orjson
import zstandard
from sqlalchemy import select, update

from service.engine.objects import Cluster
from service.engine.scheduler import snapshot as scheduler_snapshot
from service.engine.scheduler.snapshot import view_release
from service.engine.version import DEFAULT_SETTINGS
from service.extensions import extensions
from service.store import snapshots as store
from service.store.models import SnapshotRow
from service.store.preload import Preloader
from service.store.scheduler_view import FINGERPRINT, FORMAT, StoredView
from service.store.snapshots import ClusterCache
from tests.conftest import kube_list, node, pod, snapshot_from_objects

PREEMPTOR = pod("urgent", cpu="2", priority=1000)


def _snapshot_body() -> dict:
    return kube_list(
        node("n1", cpu="4"),
        node("n2", cpu="4"),
        pod("a", "n1", cpu="2", priority=10),
        pod("b", "n1", cpu="1500m", priority=5),
        pod("c", "n2", cpu="3", priority=100),
    )


def _store(api) -> str:
    response = api.post("/v1/snapshots", json=_snapshot_body())
    assert response.status_code == 201
    return response.get_json()["id"]


def _decide(api, kind: str, snapshot_id: str, **params) -> dict:
    response = api.post(f"/v1/decisions/{kind}", json={"snapshotId": snapshot_id, **params})
    assert response.status_code == 201, response.get_json()
    return response.get_json()


def _forget(app, snapshot_id: str) -> None:
    """What a process that has not seen the snapshot yet holds: nothing."""
    extensions(app).cache.drop(snapshot_id)


def _row_view(app, snapshot_id: str) -> bytes | None:
    with extensions(app).db.session() as session:
        return session.scalar(
            select(SnapshotRow.scheduler_view).where(SnapshotRow.id == snapshot_id)
        )


def _set_row_view(app, snapshot_id: str, blob: bytes | None) -> None:
    with extensions(app).db.session(write=True) as session:
        session.execute(
            update(SnapshotRow).where(SnapshotRow.id == snapshot_id).values(scheduler_view=blob)
        )


def test_ingest_stores_the_view_under_the_engine_fingerprint(app, api):
    snapshot_id = _store(api)
    blob = _row_view(app, snapshot_id)
    assert blob is not None and bytes(blob).startswith(store.VIEW_HEADER)
    stored = store.decode_view(bytes(blob))
    assert [n.name for n in stored.nodes] == ["n1", "n2"]
    assert [[pi.name for pi in pods] for pods in stored.node_pods] == [["a", "b"], ["c"]]


def test_scheduler_decisions_restore_the_view_without_decoding_the_pods(app, api):
    snapshot_id = _store(api)
    warm = _decide(api, "preemption", snapshot_id, pod=PREEMPTOR)
    placed = _decide(api, "placement", snapshot_id, pod=PREEMPTOR)
    _forget(app, snapshot_id)

    cold = _decide(api, "preemption", snapshot_id, pod=PREEMPTOR)
    cluster = extensions(app).cache.get(snapshot_id)
    assert not cluster.snapshot_loaded
    assert cold["result"] == warm["result"]
    assert cold["result"]["nominatedNodeName"] == "n1"
    assert [v["name"] for v in cold["result"]["victims"]] == ["b"]
    assert _decide(api, "placement", snapshot_id, pod=PREEMPTOR)["result"] == placed["result"]
    replay = api.post(f"/v1/decisions/{cold['id']}/replay").get_json()
    assert replay["matches"], replay["differences"]
    assert not cluster.snapshot_loaded

    # Any other reader decodes the snapshot then, in the same Cluster.
    admitted = _decide(api, "admission", snapshot_id, nodeName="n1", pod=pod("x", cpu="1"))
    assert admitted["result"]["admitted"] is False
    assert cluster.snapshot_loaded
    assert extensions(app).cache.get(snapshot_id) is cluster
    listed = api.get(f"/v1/snapshots/{snapshot_id}/pods?node=n1")
    assert {p["name"] for p in listed.get_json()["items"]} == {"a", "b"}


def test_a_row_without_a_usable_view_is_decoded_in_full(app, api):
    snapshot_id = _store(api)
    expected = _decide(api, "preemption", snapshot_id, pod=PREEMPTOR)["result"]
    blob = bytes(_row_view(app, snapshot_id))
    other_code = blob[:4] + bytes(b ^ 0xFF for b in blob[4:12]) + blob[12:]
    damaged = blob[: len(store.VIEW_HEADER) + 40] + b"\x00" * 64
    for stale in (None, other_code, damaged):
        _set_row_view(app, snapshot_id, stale)
        _forget(app, snapshot_id)
        assert _decide(api, "preemption", snapshot_id, pod=PREEMPTOR)["result"] == expected
        assert extensions(app).cache.get(snapshot_id).snapshot_loaded
        with extensions(app).db.session() as session:
            # Missing or made by other code: the warming thread rewrites it. Damage behind a
            # valid header is only noticed on reading, and costs a full decode each time.
            assert store.view_outdated(session, snapshot_id) is (stale is not damaged)


def test_the_warming_thread_writes_the_view_a_row_lacks(app, api):
    from service.store.warm import warm

    snapshot_id = _store(api)
    _set_row_view(app, snapshot_id, None)
    db = extensions(app).db
    preloader = Preloader(db, ClusterCache(size=2), count=1, interval=0.05, warm=warm)
    assert preloader.run_once() == [snapshot_id]
    with db.session() as session:
        assert not store.view_outdated(session, snapshot_id)
    # Another process now restores it.
    cache = ClusterCache(size=2)
    with db.session() as session:
        cluster = store.load_cluster(session, cache, snapshot_id, scheduler=True)
    assert not cluster.snapshot_loaded
    assert [
        ni.name
        for ni in scheduler_snapshot.scheduler_view(cluster, settings=DEFAULT_SETTINGS).nodes
    ] == ["n1", "n2"]


def test_non_scheduler_loads_decode_in_full(app, api):
    snapshot_id = _store(api)
    cache = ClusterCache(size=2)
    with extensions(app).db.session() as session:
        cluster = store.load_cluster(session, cache, snapshot_id)
    assert cluster.snapshot_loaded


def test_cache_accounting_does_not_decode_deferred_snapshots(app, api):
    first, second = _store(api), _store(api)
    cache = ClusterCache(size=4, max_pods=3)  # room for one snapshot's 3 pods
    with extensions(app).db.session() as session:
        one = store.load_cluster(session, cache, first, scheduler=True)
        store.load_cluster(session, cache, second, scheduler=True)
    assert first not in cache and second in cache
    assert not one.snapshot_loaded
    assert isinstance(one, Cluster) and one.pod_count == 3


# --- the fingerprint names what a stored view holds, and only that ---

# For each FORMAT: the sha256 of StoredView's shape (its msgspec JSON schema, nested model
# types included) and of the msgpack a fixed cluster's stored view encodes to (_pinned()).
# A change to either without a new FORMAT fails here: bump FORMAT in
# service/store/scheduler_view.py and pin the new digests under it.
PINNED = {
    # 3: the resource.k8s.io claims, classes and slices joined the view.
    3: (
        "b17d55f85042bf714e7a4b8eedb24ae093eb7e9e23ba23220a3911f97e6fea7f",
        "8efcd629c56db4c6e949b7fd4642da1c38ec0d919857d239918217281d66bf0c",
    ),
    # 4: a resized pod's PodInfo counts the requests its status gives it (engine/resize.py),
    # and the release reading names the resize switches; the model's PodDisruptionBudget keeps
    # what the Eviction API reads (healthy counts, generations, unhealthyPodEvictionPolicy) and
    # Pod its emptyDir volumes (kubectl drain); each resource.k8s.io object keeps its
    # apiVersion, classes and claims their config.
    4: (
        "dac2500e6b45df41166f387bede89872ed91fab228f2bf74e53eb20b9754890e",
        "8efcd629c56db4c6e949b7fd4642da1c38ec0d919857d239918217281d66bf0c",
    ),
}


def _pinned_cluster() -> Cluster:
    """Pods of every shape a stored view keeps: with and without requests, pod-level
    resources, init containers and overhead, host ports, a terminating StatefulSet pod, a
    nominated pod, a PDB and a PriorityClass, Namespaces, Services and controllers."""
    sts = {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db",
                                "uid": "u-db", "controller": True}]}  # fmt: skip
    terminating = pod("db-0", "n2", cpu="1")
    terminating["metadata"] |= sts | {
        "deletionTimestamp": "2026-11-20T09:00:00Z",
        "labels": {"app": "db"},
    }
    nominated = pod("waiting", cpu="3", priority=50)
    nominated["status"]["nominatedNodeName"] = "n1"
    ported = pod("ported", "n1", cpu="100m")
    ported["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    objects = [
        node("n1", cpu="4"),
        node("n2", cpu="8", memory="16Gi"),
        pod("plain", "n1"),
        pod("sized", "n1", cpu="500m", memory="1Gi", limits={"cpu": "1", "memory": "1Gi"}),
        pod(
            "pod-level",
            "n2",
            resources={"requests": {"cpu": "2", "memory": "2Gi"}},
            initContainers=[{"name": "init", "image": "busybox"}],
            overhead={"cpu": "50m"},
            priority=10,
        ),
        ported,
        terminating,
        nominated,
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
         "metadata": {"name": "db", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": "db"}}},
         "status": {"disruptionsAllowed": 0}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
         "metadata": {"name": "high"}, "value": 1000},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "default"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "db", "namespace": "default"},
         "spec": {"selector": {"app": "db"}}},
        {"apiVersion": "apps/v1", "kind": "StatefulSet",
         "metadata": {"name": "db", "namespace": "default"},
         "spec": {"selector": {"matchLabels": {"app": "db"}}}},
    ]  # fmt: skip
    return Cluster(snapshot_from_objects(objects))


def test_the_stored_shape_and_content_are_those_their_format_names():
    """What a stored view holds changes only with FORMAT, and so does its fingerprint: a new
    field, type or order in the stored structs, or another value derived into them, fails
    here until FORMAT is bumped (the digests are pinned per FORMAT)."""
    schema = orjson.dumps(msgspec.json.schema(StoredView), option=orjson.OPT_SORT_KEYS)
    blob = store.encode_view(_pinned_cluster())
    assert blob is not None
    packed = zstandard.ZstdDecompressor().decompress(blob[len(store.VIEW_HEADER) :])
    got = (hashlib.sha256(schema).hexdigest(), hashlib.sha256(packed).hexdigest())
    assert got == PINNED.get(FORMAT), "the stored view changed: bump FORMAT and pin it"


def test_the_fingerprint_reads_no_source():
    """A docstring or refactoring keeps stored views usable: the fingerprint is the format
    and the newest release's reading of the view, nothing read from the code."""
    digest = hashlib.sha256(f"{FORMAT}:{view_release(DEFAULT_SETTINGS)}".encode()).digest()
    assert store.VIEW_HEADER.endswith(FINGERPRINT) and FINGERPRINT == digest[:8]
