"""resource.k8s.io objects at ingest (service/ingest/kube/resource.py): read in v1, v1beta2 and
v1beta1 alike, validated as the API server validates them (422 naming the field, nothing
stored), counted in a snapshot's summary."""

from __future__ import annotations

import copy

import pytest
import yaml
from msgspec.structs import replace

from service.engine import objects as m
from service.ingest.errors import IngestError
from tests.conftest import kube_list, node, pod, snapshot_from_objects

CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]},
}
SLICE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceSlice",
    "metadata": {"name": "n1-gpu"},
    "spec": {
        "driver": "gpu.example.com",
        "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "nodeName": "n1",
        "devices": [
            {
                "name": "gpu-0",
                "attributes": {
                    "model": {"string": "h100"},
                    "index": {"int": 0},
                    "healthy": {"bool": True},
                    "driverVersion": {"version": "2.1.0"},
                },
                "capacity": {"memory": {"value": "80Gi"}},
            }
        ],
    },
}
CLAIM = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaim",
    "metadata": {"name": "want", "namespace": "default"},
    "spec": {
        "devices": {
            "requests": [
                {"name": "gpu", "exactly": {"deviceClassName": "gpu", "count": 2}},
                {
                    "name": "nic",
                    "firstAvailable": [
                        {"name": "fast", "deviceClassName": "gpu", "allocationMode": "All"},
                        {"name": "slow", "deviceClassName": "gpu"},
                    ],
                },
            ],
            "constraints": [
                {"requests": ["gpu", "nic/fast"], "matchAttribute": "gpu.example.com/model"}
            ],
        }
    },
}
TEMPLATE = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "ResourceClaimTemplate",
    "metadata": {"name": "tmpl", "namespace": "default"},
    "spec": {"spec": copy.deepcopy(CLAIM["spec"])},
}


def test_objects_are_read() -> None:
    snap = snapshot_from_objects([CLASS, SLICE, CLAIM, TEMPLATE])
    (device,) = snap.resource_slices[0].devices
    assert device.attributes["driverVersion"] == m.DeviceAttribute("version", "2.1.0")
    assert device.attributes["healthy"] == m.DeviceAttribute("bool", True)
    assert device.capacity == {"memory": "80Gi"}
    gpu, nic = snap.resource_claims[0].spec.requests
    assert gpu.exactly == m.DeviceSubRequest("gpu", "gpu", count=2)
    assert [s.name for s in nic.first_available] == ["fast", "slow"]
    assert nic.first_available[0].count is None  # mode All
    assert nic.first_available[1].count == 1  # ExactCount's default
    assert snap.resource_claim_templates[0].spec == snap.resource_claims[0].spec
    assert snap.device_classes[0].selectors == ('device.driver == "gpu.example.com"',)


def test_v1beta1_is_converted() -> None:
    """v1beta1 keeps a request's device fields on the request and a device's under basic."""
    beta_slice = copy.deepcopy(SLICE)
    beta_slice["apiVersion"] = "resource.k8s.io/v1beta1"
    device = beta_slice["spec"]["devices"][0]
    device["basic"] = {"attributes": device.pop("attributes"), "capacity": device.pop("capacity")}
    beta_claim = copy.deepcopy(CLAIM)
    beta_claim["apiVersion"] = "resource.k8s.io/v1beta1"
    beta_claim["spec"]["devices"]["requests"][0] = {
        "name": "gpu",
        "deviceClassName": "gpu",
        "count": 2,
    }
    beta = snapshot_from_objects([beta_slice, beta_claim])
    v1 = snapshot_from_objects([SLICE, CLAIM])
    # the same objects, each knowing the version it was written in (a release may not serve it)
    assert [s.api_version for s in beta.resource_slices + beta.resource_claims] == ["v1beta1"] * 2
    as_v1 = [replace(o, api_version="v1") for o in beta.resource_slices + beta.resource_claims]
    assert as_v1 == [*v1.resource_slices, *v1.resource_claims]


def _errors(obj: dict) -> list[tuple[str, str]]:
    with pytest.raises(IngestError) as exc:
        snapshot_from_objects([obj])
    return [(e.path, e.message) for e in exc.value.errors]


def _paths(obj: dict) -> list[str]:
    return [path for path, _ in _errors(obj)]


def test_count_zero_is_refused() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["requests"][0]["exactly"]["count"] = 0
    assert _errors(claim) == [
        (
            "objects[0].spec.devices.requests[0].exactly.count",
            "Invalid value: 0: must be greater than zero",
        )
    ]


def test_a_request_needs_exactly_or_first_available() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["requests"][0] = {"name": "gpu"}
    assert _paths(claim) == ["objects[0].spec.devices.requests[0]"]


def test_invalid_cel_is_refused() -> None:
    cls = copy.deepcopy(CLASS)
    cls["spec"]["selectors"][0]["cel"]["expression"] = "device.driver =="
    ((path, message),) = _errors(cls)
    assert path == "objects[0].spec.selectors[0].cel.expression"
    assert message.startswith("Invalid value: compilation failed: ")


def test_a_selector_the_type_checker_refuses_names_the_field() -> None:
    cls = copy.deepcopy(CLASS)
    cls["spec"]["selectors"].append({"cel": {"expression": 'device.attributes["x"].y + 1 == "a"'}})
    assert _errors(cls) == [
        (
            "objects[0].spec.selectors[1].cel.expression",
            "Invalid value: compilation failed: ERROR: <input>: found no matching overload for "
            "'_==_' applied to '(int, string)'",
        )
    ]


def test_a_selector_over_the_cost_limit_names_the_field() -> None:
    claim = copy.deepcopy(CLAIM)
    nested = "device.attributes.all(d, true)"
    for var in "cba":
        nested = f"device.attributes.all({var}, {nested})"
    claim["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [
        {"cel": {"expression": nested}}
    ]
    assert _errors(claim) == [
        (
            "objects[0].spec.devices.requests[0].exactly.selectors[0].cel.expression",
            "Forbidden: too complex, exceeds cost limit",
        )
    ]


@pytest.mark.parametrize(
    ("config", "path", "message"),
    [
        ({"opaque": {"driver": "gpu.example.com", "parameters": [1]}}, "opaque.parameters",
         "Invalid value: <value omitted>: must be a valid JSON object"),
        ({"opaque": {"driver": "gpu.example.com"}}, "opaque.parameters", "Required value"),
        ({"requests": ["gpu"]}, "opaque", "Required value"),
        ({"opaque": {"driver": "gpu.example.com", "parameters": {"x": "y" * 10240}}},
         "opaque.parameters", "Too long: may not be more than 10240 bytes"),
        ({"requests": ["nope"], "opaque": {"driver": "gpu.example.com", "parameters": {}}},
         "requests[0]", 'Invalid value: "nope": must be the name of a request in the claim or '
         "the name of a request and a subrequest separated by '/'"),
        ({"requests": ["gpu", "gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {}}},
         "requests[1]", 'Duplicate value: "gpu"'),
        ({"opaque": {"driver": "Not_A_Driver", "parameters": {}}}, "opaque.driver", None),
    ],
)  # fmt: skip
def test_claim_configuration_is_checked(config, path, message) -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["config"] = [config]
    ((got_path, got_message),) = _errors(claim)
    assert got_path == f"objects[0].spec.devices.config[0].{path}"
    assert message is None or got_message == message


def test_class_and_claim_configuration_is_kept() -> None:
    cls = copy.deepcopy(CLASS)
    cls["spec"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["config"] = [
        {"requests": ["nic/fast"], "opaque": {"driver": "gpu.example.com", "parameters": {}}}
    ]
    snap = snapshot_from_objects([cls, claim])
    assert snap.device_classes[0].config == (m.DeviceConfiguration("gpu.example.com", '{"a":1}'),)
    assert snap.resource_claims[0].spec.config == (
        m.DeviceConfiguration("gpu.example.com", "{}", ("nic/fast",)),
    )
    bad = copy.deepcopy(CLASS)
    bad["spec"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": "x"}}]
    assert _paths(bad) == ["objects[0].spec.config[0].opaque.parameters"]


def test_an_over_long_selector_is_refused() -> None:
    cls = copy.deepcopy(CLASS)
    cls["spec"]["selectors"][0]["cel"]["expression"] = "true && " * 1300 + "true"
    assert _errors(cls) == [
        (
            "objects[0].spec.selectors[0].cel.expression",
            "Too long: may not be more than 10240 bytes",
        )
    ]


def test_duplicate_device_names_in_a_slice_are_refused() -> None:
    bad = copy.deepcopy(SLICE)
    bad["spec"]["devices"].append(copy.deepcopy(bad["spec"]["devices"][0]))
    assert _errors(bad) == [("objects[0].spec.devices[1].name", 'Duplicate value: "gpu-0"')]


@pytest.mark.parametrize(
    ("mutate", "path"),
    [
        (lambda s: s["spec"]["pool"].update(resourceSliceCount=0), "spec.pool.resourceSliceCount"),
        (lambda s: s["spec"].update(allNodes=True), "spec"),
        (lambda s: s["spec"].pop("nodeName"), "spec"),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update(v={"version": "1.0"}),
            "spec.devices[0].attributes[v].version",
        ),
        (
            lambda s: s["spec"]["devices"][0]["attributes"].update(v={"int": 1, "bool": True}),
            "spec.devices[0].attributes[v]",
        ),
        (
            lambda s: s["spec"]["devices"][0]["capacity"].update(m={"value": "lots"}),
            "spec.devices[0].capacity[m].value",
        ),
        (lambda s: s["spec"].update(driver="Not_A_Driver"), "spec.driver"),
    ],
)
def test_bad_slices_name_the_field(mutate, path) -> None:
    bad = copy.deepcopy(SLICE)
    mutate(bad)
    assert f"objects[0].{path}" in _paths(bad)


def test_constraints_name_requests_of_the_claim() -> None:
    claim = copy.deepcopy(CLAIM)
    claim["spec"]["devices"]["constraints"][0]["requests"] = ["other"]
    claim["spec"]["devices"]["constraints"][0]["matchAttribute"] = "model"
    assert _paths(claim) == [
        "objects[0].spec.devices.constraints[0].requests[0]",
        "objects[0].spec.devices.constraints[0].matchAttribute",
    ]


def test_another_api_group_is_refused() -> None:
    other = copy.deepcopy(CLASS)
    other["apiVersion"] = "resource.k8s.io/v1alpha3"
    assert _paths(other) == ["objects[0].apiVersion"]


def test_pod_resource_claims_are_read_and_checked() -> None:
    p = pod("gpu", "n1")
    p["spec"]["resourceClaims"] = [
        {"name": "a", "resourceClaimName": "want"},
        {"name": "b", "resourceClaimTemplateName": "tmpl"},
    ]
    p["status"]["resourceClaimStatuses"] = [{"name": "b", "resourceClaimName": "gpu-b-x"}]
    (read,) = snapshot_from_objects([p]).pods
    assert read.resource_claims == (
        m.PodResourceClaim("a", resource_claim_name="want"),
        m.PodResourceClaim("b", resource_claim_template_name="tmpl"),
    )
    assert read.resource_claim_statuses == {"b": "gpu-b-x"}
    p["spec"]["resourceClaims"].append({"name": "a"})
    assert _paths(p) == [
        "objects[0].spec.resourceClaims[2].name",
        "objects[0].spec.resourceClaims[2]",
    ]


def test_snapshot_counts_and_refusals_through_the_api(api) -> None:
    cluster = kube_list(node("n1"), CLASS, SLICE, CLAIM, TEMPLATE)
    response = api.post("/v1/snapshots", json=cluster, role="decide")
    assert response.status_code == 201, response.json
    counts = response.json["counts"]
    assert (
        counts["resourceClaims"],
        counts["resourceClaimTemplates"],
        counts["deviceClasses"],
        counts["resourceSlices"],
    ) == (1, 1, 1, 1)
    bad = copy.deepcopy(CLAIM)
    bad["spec"]["devices"]["requests"][0]["exactly"]["count"] = 0
    response = api.post("/v1/snapshots", json=kube_list(node("n1"), bad), role="decide")
    assert response.status_code == 422
    assert "items[1].spec.devices.requests[0].exactly.count" in [
        e["path"] for e in response.json["errors"]
    ]
    assert len(api.get("/v1/snapshots", role="read").json["items"]) == 1


def _bad_claim(mutate) -> dict:
    claim = copy.deepcopy(CLAIM)
    mutate(claim["spec"]["devices"])
    return claim


def _nested_all(depth: int) -> str:
    inner = "true"
    for var in "abcd"[:depth]:
        inner = f"device.attributes.all({var}, {inner})"
    return inner


def _selector(expression: str):
    def mutate(devices: dict) -> None:
        devices["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": expression}}]

    return mutate


_SELECTOR = "items[1].spec.devices.requests[0].exactly.selectors[0].cel.expression"


@pytest.mark.parametrize("as_yaml", [False, True], ids=["json", "yaml"])
@pytest.mark.parametrize(
    ("bad", "path"),
    [
        (_bad_claim(_selector("device.driver ==")), _SELECTOR),
        (_bad_claim(_selector('device.attributes["x"].y + 1 == "a"')), _SELECTOR),
        (_bad_claim(_selector(_nested_all(4))), _SELECTOR),
        (
            _bad_claim(lambda d: d["requests"][0]["exactly"].update(count=0)),
            "items[1].spec.devices.requests[0].exactly.count",
        ),
        (
            _bad_claim(lambda d: d.update(config=[{"opaque": {"driver": "x", "parameters": 1}}])),
            "items[1].spec.devices.config[0].opaque.parameters",
        ),
        (
            {
                **SLICE,
                "spec": {
                    **SLICE["spec"],
                    "devices": [copy.deepcopy(d) for d in SLICE["spec"]["devices"] * 2],
                },
            },
            "items[1].spec.devices[1].name",
        ),
    ],
    ids=["invalid-cel", "type-error", "cost-limit", "count-0", "config", "duplicate-device"],
)
def test_the_issues_bad_inputs_are_a_422_naming_the_field(api, bad, path, as_yaml) -> None:
    """Issue 29's bad input, through POST /v1/snapshots in JSON and YAML: a 422
    problem+json naming the field, nothing stored. (A class that does not exist and a pool
    whose slices disagree on their generation are the scheduler's to answer:
    tests/engine/scheduler/plugins/test_dynamic_resources.py and
    tests/engine/dra/test_allocator.py.)"""
    body = kube_list(node("n1"), bad)
    if as_yaml:
        response = api.post(
            "/v1/snapshots", data=yaml.safe_dump(body), content_type="application/yaml",
            role="decide",
        )  # fmt: skip
    else:
        response = api.post("/v1/snapshots", json=body, role="decide")
    assert response.status_code == 422, response.json
    assert response.content_type.startswith("application/problem+json")
    assert path in [e["path"] for e in response.json["errors"]]
    assert api.get("/v1/snapshots", role="read").json["items"] == []
