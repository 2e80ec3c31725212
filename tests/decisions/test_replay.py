"""Replay (decisions/replay.py) through POST /v1/decisions/{id}/replay: as stored, and under a
change of release or configuration (API 1.2)."""

from __future__ import annotations

import pytest

from tests.conftest import pod
from tests.decisions.helpers import (
    SCHEDULER_CONFIGURATION,
    place,
    pod_level_pod,
    releases_apart_snapshot,
    stored_snapshot,
)


def _replay(api, decision_id: str, **kw):
    return api.post(f"/v1/decisions/{decision_id}/replay", role="read", **kw)


def _records(api) -> int:
    return len(api.get("/v1/decisions?limit=1000", role="read").json["items"])


def test_without_a_body_the_stored_request_is_decided_as_it_was(api):
    record = place(api, releases_apart_snapshot(api), "1.35")
    answer = _replay(api, record["id"]).json
    assert answer["matches"] is True and answer["changed"] == {}


def test_another_release_names_what_was_replaced_and_what_it_decides_differently(api):
    record = place(api, releases_apart_snapshot(api), "1.35")
    assert record["result"]["selectedNode"] == "n1"
    answer = _replay(api, record["id"], json={"kubernetesVersion": "1.37"}).json
    assert answer["changed"] == {"kubernetesVersion": {"stored": "1.35", "replayed": "1.37"}}
    assert answer["matches"] is False and answer["replayed"]["selectedNode"] == "n2"
    assert {"path": "result.selectedNode", "stored": "n1", "replayed": "n2"} in answer[
        "differences"
    ]


def test_a_yaml_body_is_read_as_json(api):
    record = place(api, releases_apart_snapshot(api), "1.37")
    answer = _replay(
        api, record["id"], data=b"kubernetesVersion: '1.35'\n", content_type="application/yaml"
    ).json
    assert answer["changed"]["kubernetesVersion"]["replayed"] == "1.35"
    assert answer["replayed"]["selectedNode"] == "n1"


def test_the_same_value_as_stored_replaces_nothing(api):
    record = place(api, releases_apart_snapshot(api), "1.37")
    answer = _replay(api, record["id"], json={"kubernetesVersion": "1.37"}).json
    assert answer["changed"] == {} and answer["matches"] is True


def test_a_scheduler_configuration_replaces_a_stored_scoring_object(api):
    scoring = {"strategy": "MostAllocated"}
    record = place(api, releases_apart_snapshot(api), "1.37", scoring=scoring)
    answer = _replay(
        api, record["id"], json={"schedulerConfiguration": SCHEDULER_CONFIGURATION}
    ).json
    assert answer["changed"] == {
        "schedulerConfiguration": {"stored": None, "replayed": SCHEDULER_CONFIGURATION},
        "scoring": {"stored": scoring, "replayed": None},
    }
    assert answer["replayed"]["selectedNode"] == "n2"  # the default profile's LeastAllocated


def test_an_eviction_replayed_under_another_kubelet_configuration(api):
    snapshot_id = stored_snapshot(api)
    response = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    )
    record = response.json
    assert record["result"]["victim"] is None  # 300Mi available, the default threshold 100Mi
    config = {"evictionHard": {"memory.available": "500Mi"}}
    answer = _replay(api, record["id"], json={"config": config}).json
    assert answer["changed"] == {"config": {"stored": None, "replayed": config}}
    assert answer["replayed"]["victim"]["name"] == "busy"


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"kubernetesVersion": "1.99"}, "kubernetesVersion"),
        ({"kubernetesVersion": 135}, "kubernetesVersion"),
        ({"release": "1.35"}, "release"),
        ({"config": {"evictionHard": {"memory.available": "1Gi"}}}, "config"),
        (
            {
                "schedulerConfiguration": {
                    **SCHEDULER_CONFIGURATION,
                    "profiles": [
                        {
                            "schedulerName": "default-scheduler",
                            "plugins": {"score": {"enabled": [{"name": "NoSuchPlugin"}]}},
                        }
                    ],
                }
            },
            "schedulerConfiguration.profiles[0].plugins.score.enabled[0]",
        ),
        (
            {
                "schedulerConfiguration": {
                    **SCHEDULER_CONFIGURATION,
                    "profiles": [
                        {
                            "schedulerName": "default-scheduler",
                            "pluginConfig": [
                                {
                                    "name": "NodeResourcesFit",
                                    "args": {"noSuchArgument": 1},
                                }
                            ],
                        }
                    ],
                }
            },
            "schedulerConfiguration.profiles[0].pluginConfig[0].args.noSuchArgument",
        ),
    ],
)
def test_a_change_that_cannot_be_replayed_is_a_422_naming_the_field(api, body, path):
    record = place(api, releases_apart_snapshot(api), "1.37")
    before = _records(api)
    response = _replay(api, record["id"], json=body)
    assert response.status_code == 422, response.json
    assert path in [e["path"] for e in response.json["errors"]], response.json
    assert _records(api) == before


def test_a_change_the_kind_does_not_read_is_a_422(api):
    snapshot_id = releases_apart_snapshot(api)
    admission = api.post(
        "/v1/decisions/admission",
        json={"snapshotId": snapshot_id, "nodeName": "n1", "pod": pod("a", cpu="1")},
        role="decide",
    ).json
    response = _replay(
        api, admission["id"], json={"schedulerConfiguration": SCHEDULER_CONFIGURATION}
    )
    assert response.status_code == 422
    assert response.json["errors"] == [
        {
            "path": "schedulerConfiguration",
            "message": "admission decisions do not read schedulerConfiguration; nothing to replace",
        }
    ]


def test_a_body_that_is_not_an_object_is_a_400(api):
    record = place(api, releases_apart_snapshot(api), "1.37", body=pod_level_pod("x"))
    assert _replay(api, record["id"], json=["1.35"]).status_code == 400


@pytest.mark.parametrize(
    ("kind", "stored", "change", "strict", "replayed", "changed"),
    [
        (
            "admission",
            {"nodeName": "n1"},
            {"kubernetes_version": "1.35"},
            True,
            {"nodeName": "n1", "kubernetesVersion": "1.35"},
            {"kubernetesVersion": {"stored": "1.37", "replayed": "1.35"}},
        ),
        (
            "admission",
            {"nodeName": "n1"},
            {"scheduler_configuration": SCHEDULER_CONFIGURATION},
            False,
            {"nodeName": "n1"},
            {},
        ),
        (
            "placement",
            {"scoring": {"strategy": "MostAllocated"}},
            {"scheduler_configuration": "kind: KubeSchedulerConfiguration"},
            True,
            {"schedulerConfiguration": "kind: KubeSchedulerConfiguration"},
            {
                "schedulerConfiguration": {
                    "stored": None,
                    "replayed": "kind: KubeSchedulerConfiguration",
                },
                "scoring": {"stored": {"strategy": "MostAllocated"}, "replayed": None},
            },
        ),
        (
            "node-eviction-rate",
            {"config": {"nodeEvictionRate": 0.1}},
            {"config": {"nodeEvictionRate": 0.1}},
            True,
            {"config": {"nodeEvictionRate": 0.1}},
            {},
        ),
    ],
)
def test_changed_request(kind, stored, change, strict, replayed, changed):
    from service.decisions import KINDS
    from service.decisions.replay import Change, changed_request

    assert changed_request(KINDS[kind], stored, Change(**change), strict=strict) == (
        replayed,
        changed,
    )
