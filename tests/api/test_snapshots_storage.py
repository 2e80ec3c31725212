"""POST /v1/snapshots with the storage kinds the scheduler's volume plugins read: counted in
the summary; a malformed one is a 422 naming the field, and nothing is stored."""

from __future__ import annotations

import copy

import pytest

from tests.conftest import kube_list, node, pod
from tests.ingest.test_storage_objects import ALL


def _cluster() -> dict:
    return kube_list(node("n1"), pod("a", "n1", cpu="100m"), *copy.deepcopy(ALL))


def test_storage_objects_are_counted(api) -> None:
    response = api.post("/v1/snapshots", json=_cluster(), role="decide")
    assert response.status_code == 201, response.json
    counts = response.json["counts"]
    storage = (
        "persistentVolumes",
        "persistentVolumeClaims",
        "storageClasses",
        "csiNodes",
        "csiDrivers",
        "csiStorageCapacities",
        "volumeAttachments",
    )
    assert {key: counts[key] for key in storage} == dict.fromkeys(storage, 1)
    assert (counts["nodes"], counts["pods"]) == (1, 1)


@pytest.mark.parametrize(
    ("index", "mutate", "path"),
    [
        (
            2,
            lambda o: o["spec"]["capacity"].update(storage="ten"),
            "items[2].spec.capacity.storage",
        ),
        (
            3,
            lambda o: o["spec"].update(accessModes=["ReadWriteSome"]),
            "items[3].spec.accessModes[0]",
        ),
        (4, lambda o: o.update(volumeBindingMode="Later"), "items[4].volumeBindingMode"),
        (
            2,
            lambda o: o["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
                "matchExpressions"
            ][0].update(operator="Gt", values=["x"]),
            "items[2].spec.nodeAffinity.required.nodeSelectorTerms[0].matchExpressions[0].values",
        ),
        (
            3,
            lambda o: o["spec"].update(volumeAttributesClassName="Gold"),
            "items[3].spec.volumeAttributesClassName",
        ),
    ],
    ids=[
        "pv-quantity",
        "pvc-access-mode",
        "binding-mode",
        "pv-node-affinity",
        "pvc-attributes-class",
    ],
)
def test_bad_storage_objects_are_422_and_store_nothing(api, index, mutate, path) -> None:
    cluster = _cluster()
    mutate(cluster["items"][index])
    response = api.post("/v1/snapshots", json=cluster, role="decide")
    assert response.status_code == 422
    assert response.headers["Content-Type"] == "application/problem+json"
    assert path in [e["path"] for e in response.json["errors"]]
    assert api.get("/v1/snapshots", role="read").json["items"] == []
