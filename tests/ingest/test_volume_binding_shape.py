"""``VolumeBindingArgs.shape`` per release (issue 26): kube-scheduler's
ValidateVolumeBindingArgs refuses a shape while its feature gate is off by default
(VolumeCapacityPriority in v1.32.5, StorageCapacityScoring in v1.33.3 to v1.35.4 and 1.36) and
accepts it from 1.37, where StorageCapacityScoring is on. Refused alike on placement, on a
replay with a body and on impact: a 422 problem+json naming the field, nothing stored."""

from __future__ import annotations

import pytest

from service.engine.version import KNOWN_VERSIONS, settings_for
from service.ingest.kubescheduler_config import SchedulerConfigError, scheduler_profiles
from tests.decisions.helpers import SCHEDULER_CONFIGURATION, place, releases_apart_snapshot

SHAPE = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
SHAPE_PATH = "schedulerConfiguration.profiles[0].pluginConfig[2].args.shape"
REFUSED = {
    "1.32": "VolumeCapacityPriority",
    "1.33": "StorageCapacityScoring",
    "1.34": "StorageCapacityScoring",
    "1.35": "StorageCapacityScoring",
    "1.36": "StorageCapacityScoring",
}


def _config(shape) -> dict:
    """The default profile with VolumeBinding's args third in its pluginConfig."""
    args = {"bindTimeoutSeconds": 300, "shape": shape}
    return {
        **SCHEDULER_CONFIGURATION,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {"name": "NodeAffinity", "args": {}},
                    {"name": "DefaultPreemption", "args": {}},
                    {"name": "VolumeBinding", "args": args},
                ],
            }
        ],
    }


def _volume_binding_shape(version: str, shape):
    profiles = scheduler_profiles(_config(shape), settings_for(version))
    return profiles["default-scheduler"].args["VolumeBinding"].shape


def test_every_release_is_listed() -> None:
    assert [*REFUSED, "1.37"] == list(KNOWN_VERSIONS)


@pytest.mark.parametrize(("version", "gate"), REFUSED.items())
def test_a_shape_is_refused_while_its_gate_is_off(version, gate) -> None:
    with pytest.raises(SchedulerConfigError) as caught:
        _volume_binding_shape(version, SHAPE)
    assert caught.value.errors == [
        (
            SHAPE_PATH,
            'Invalid value: [{"Utilization":0,"Score":10},{"Utilization":100,"Score":0}]: '
            f"unexpected field `shape`, remove it or turn on the feature gate {gate}",
        )
    ]


@pytest.mark.parametrize("version", REFUSED)
def test_an_empty_shape_is_refused_too_while_the_gate_is_off(version) -> None:
    """Go decodes [] as an empty, non-nil slice: ``args.Shape != nil`` holds."""
    with pytest.raises(SchedulerConfigError) as caught:
        _volume_binding_shape(version, [])
    assert [path for path, _ in caught.value.errors] == [SHAPE_PATH]
    assert caught.value.errors[0][1].startswith("Invalid value: []: unexpected field `shape`")


def test_from_1_37_a_shape_is_accepted_and_validated() -> None:
    assert _volume_binding_shape("1.37", SHAPE) == ((0, 10), (100, 0))
    with pytest.raises(SchedulerConfigError) as caught:
        _volume_binding_shape("1.37", [{"utilization": 0, "score": 11}])
    assert caught.value.errors == [(f"{SHAPE_PATH}[0].score", "not in valid range [0, 10]")]


def test_from_1_37_an_empty_shape_is_the_default_shape() -> None:
    """SetDefaults_VolumeBindingArgs gives a shape of no points the default one."""
    assert _volume_binding_shape("1.37", []) is None


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
def test_a_null_shape_is_no_shape_in_every_release(version) -> None:
    assert _volume_binding_shape(version, None) is None


# --- over HTTP: placement, replay with a body, impact --------------------------------------


def _decisions(api) -> list[str]:
    return [r["id"] for r in api.get("/v1/decisions?limit=1000", role="read").json["items"]]


def _assert_refused(response) -> None:
    assert response.status_code == 422, response.json
    assert response.headers["Content-Type"] == "application/problem+json"
    assert SHAPE_PATH in [e["path"] for e in response.json["errors"]], response.json


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
def test_placement_refuses_or_accepts_a_shape_as_its_release(api, version) -> None:
    snapshot_id = releases_apart_snapshot(api)
    response = api.post(
        "/v1/decisions/placement",
        json={
            "snapshotId": snapshot_id,
            "pod": {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}},
            "kubernetesVersion": version,
            "schedulerConfiguration": _config(SHAPE),
        },
        role="decide",
        validate=False,
    )
    if version in REFUSED:
        _assert_refused(response)
        assert _decisions(api) == []
    else:
        assert response.status_code == 201, response.json


def test_a_replay_under_a_release_that_refuses_the_shape_is_a_422(api) -> None:
    record = place(api, releases_apart_snapshot(api), "1.37")
    before = _decisions(api)
    body = {"kubernetesVersion": "1.36", "schedulerConfiguration": _config(SHAPE)}
    _assert_refused(api.post(f"/v1/decisions/{record['id']}/replay", json=body, role="read"))
    assert _decisions(api) == before
    accepted = api.post(
        f"/v1/decisions/{record['id']}/replay",
        json={"schedulerConfiguration": _config(SHAPE)},
        role="read",
    )
    assert accepted.status_code == 200, accepted.json


def test_a_replay_of_a_decision_stored_under_a_refusing_release_is_a_422(api) -> None:
    """No kubernetesVersion in the body: the stored release (1.35) reads the configuration."""
    record = place(api, releases_apart_snapshot(api), "1.35")
    response = api.post(
        f"/v1/decisions/{record['id']}/replay",
        json={"schedulerConfiguration": _config(SHAPE)},
        role="read",
    )
    _assert_refused(response)


@pytest.mark.parametrize("version", KNOWN_VERSIONS)
def test_impact_refuses_or_accepts_a_shape_as_its_release(api, version) -> None:
    place(api, releases_apart_snapshot(api), "1.37")
    before = _decisions(api)
    body = {"kubernetesVersion": version, "schedulerConfiguration": _config(SHAPE)}
    response = api.post("/v1/impact", json=body, role="read")
    if version in REFUSED:
        _assert_refused(response)
    else:
        assert response.status_code == 200, response.json
        assert response.json["failed"] == 0
    assert _decisions(api) == before


def test_impact_without_a_release_fails_the_decisions_whose_release_refuses_it(api) -> None:
    """Each decision is replayed under its stored release: the 1.35 one cannot read the
    shape (failed, with the field in its reason), the 1.37 one can."""
    snapshot_id = releases_apart_snapshot(api)
    old = place(api, snapshot_id, "1.35")
    place(api, snapshot_id, "1.37")
    answer = api.post(
        "/v1/impact", json={"schedulerConfiguration": _config(SHAPE)}, role="read"
    ).json
    assert (answer["examined"], answer["failed"]) == (2, 1)
    assert answer["failures"][0]["decisionId"] == old["id"]
    assert SHAPE_PATH in answer["failures"][0]["reason"]
