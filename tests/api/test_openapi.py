"""openapi/openapi.yaml: a valid document, in step with the Flask routes, and a contract
checker (tests/contract.py) that really rejects what the document does not describe."""

from __future__ import annotations

import json
import re

import pytest
from openapi_spec_validator import OpenAPIV31SpecValidator, validate
from werkzeug.exceptions import MethodNotAllowed, NotFound

from tests.contract import load_spec, validate_exchange, validate_instance

HTTP_METHODS = ("get", "put", "post", "delete", "patch", "head", "options", "trace")
SAMPLE_ID = "3f6c2a1e-8d4b-4c2a-9e1f-0a1b2c3d4e5f"
IGNORED_ENDPOINTS = {"static"}
IGNORED_PREFIXES = ("/docs/assets/", "/console")  # the console is HTML, not the API
MISMATCH = re.escape("does not match openapi.yaml")
PROBLEM_SCHEMAS = {"#/components/schemas/Problem", "#/components/schemas/ValidationProblem"}


def operations(spec: dict):
    for path, item in spec["paths"].items():
        for method in HTTP_METHODS:
            if method in item:
                yield path, method, item[method]


def resolve(spec: dict, obj: dict) -> dict:
    while "$ref" in obj:
        section, name = obj["$ref"].split("/")[-2:]
        obj = spec["components"][section][name]
    return obj


# ---------------------------------------------------------------- (a) the document itself


def test_spec_is_valid_openapi_31():
    spec = load_spec()
    assert spec["openapi"].startswith("3.1.")
    validate(spec, cls=OpenAPIV31SpecValidator)


def test_operation_ids_are_unique():
    ids = [op["operationId"] for _, _, op in operations(load_spec())]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


def test_every_error_response_is_problem_json():
    spec = load_spec()
    bad = []
    for path, method, op in operations(spec):
        for code, response in op["responses"].items():
            if int(code) < 400:
                continue
            content = resolve(spec, response).get("content", {})
            if list(content) != ["application/problem+json"]:
                bad.append(f"{method.upper()} {path} {code}: {list(content)}")
                continue
            schema = content["application/problem+json"]["schema"]
            if schema.get("$ref") not in PROBLEM_SCHEMAS:
                bad.append(f"{method.upper()} {path} {code}: not a Problem schema")
    assert not bad, "\n".join(bad)


def test_every_operation_takes_and_echoes_the_request_id():
    spec = load_spec()
    bad = []
    for path, method, op in operations(spec):
        params = spec["paths"][path].get("parameters", []) + op.get("parameters", [])
        if {"$ref": "#/components/parameters/RequestId"} not in params:
            bad.append(f"{method.upper()} {path}: no X-Request-ID parameter")
        for code, response in op["responses"].items():
            if "X-Request-ID" not in resolve(spec, response).get("headers", {}):
                bad.append(f"{method.upper()} {path} {code}: X-Request-ID not echoed")
    assert not bad, "\n".join(bad)


# Change nothing: auditors may replay and ask for the impact of a change.
READ_ONLY_POSTS = {"/v1/decisions/{id}/replay", "/v1/impact"}


def test_security_roles():
    """Public operations say so; every other operation needs exactly one documented role."""
    spec = load_spec()
    public = {"/", "/healthz", "/readyz", "/metrics", "/openapi.json", "/docs"}
    expected_role = {"get": "read", "post": "decide", "delete": "admin"}
    for path, method, op in operations(spec):
        if path in public:
            assert op["security"] == [], path
            continue
        role = "read" if path in READ_ONLY_POSTS else expected_role[method]
        assert op["security"] == [{"bearerAuth": [role]}], (method, path)
        assert {"401", "403"} <= set(op["responses"]), (method, path)


def test_the_introduction_says_what_takes_yaml_and_who_may_replay():
    """The intro once said only snapshots take YAML and that replay needs `decide`: what it
    says of both must match the operations it introduces."""
    spec = load_spec()
    intro = spec["info"]["description"]
    takes_yaml = {
        path
        for path, method, op in operations(spec)
        if "application/yaml" in resolve(spec, op.get("requestBody", {})).get("content", {})
    }
    assert "/v1/snapshots" in takes_yaml and "/v1/decisions/admission" in takes_yaml
    assert "Snapshots and decision requests may be sent as YAML" in intro
    replay = spec["paths"]["/v1/decisions/{id}/replay"]["post"]
    assert replay["security"] == [{"bearerAuth": ["read"]}]
    read_line = next(line for line in intro.splitlines() if line.lstrip().startswith("- `read`"))
    assert "replaying a recorded decision" in read_line


def test_protected_operations_document_401_and_403_with_a_bearer_challenge():
    unauthorized = load_spec()["components"]["responses"]["Unauthorized"]
    assert "WWW-Authenticate" in unauthorized["headers"]


@pytest.mark.parametrize(
    ("path", "method", "codes"),
    [
        ("/v1/snapshots", "post", {"201", "400", "413", "415", "422"}),
        ("/v1/snapshots/{id}", "get", {"200", "304", "404"}),
        ("/v1/snapshots/{id}", "delete", {"204", "404", "409"}),
        ("/v1/decisions/admission", "post", {"201", "400", "413", "415", "422"}),
        ("/v1/decisions/{id}/replay", "post", {"200", "404"}),
    ],
)
def test_documented_status_codes(path, method, codes):
    responses = load_spec()["paths"][path][method]["responses"]
    assert codes <= set(responses)


def test_snapshot_upload_media_types_and_gzip():
    op = load_spec()["paths"]["/v1/snapshots"]["post"]
    assert {"application/json", "application/yaml"} <= set(op["requestBody"]["content"])
    params = [resolve(load_spec(), p) for p in op["parameters"]]
    (encoding,) = [p for p in params if p["name"] == "Content-Encoding"]
    pattern = re.compile(encoding["schema"]["pattern"])
    assert all(pattern.match(value) for value in ("gzip", "GZip", "identity"))
    assert not any(pattern.match(value) for value in ("", "br", "gzip, br"))


def test_pagination_parameters():
    spec = load_spec()
    limit = spec["components"]["parameters"]["Limit"]["schema"]
    assert (limit["default"], limit["minimum"], limit["maximum"]) == (50, 1, 1000)
    for path in ("/v1/snapshots", "/v1/decisions", "/v1/snapshots/{id}/nodes"):
        params = spec["paths"][path]["get"]["parameters"]
        assert {"$ref": "#/components/parameters/Limit"} in params
        assert {"$ref": "#/components/parameters/Cursor"} in params


def test_every_decision_kind_has_an_operation_and_a_record_variant():
    spec = load_spec()
    kinds = spec["components"]["schemas"]["DecisionKind"]["enum"]
    mapping = spec["components"]["schemas"]["DecisionRecord"]["discriminator"]["mapping"]
    assert sorted(mapping) == sorted(kinds)
    for kind in kinds:
        op = spec["paths"][f"/v1/decisions/{kind}"]["post"]
        schema = op["responses"]["201"]["content"]["application/json"]["schema"]
        assert schema == {"$ref": mapping[kind]}
        assert op["responses"]["201"]["headers"]["X-Decision-ID"]["$ref"].endswith("XDecisionId")


# ---------------------------------------------------------------- (b) in step with Flask


def _template_shape(template: str) -> str:
    """ "/v1/snapshots/{id}" and "/v1/snapshots/<snapshot_id>" → "/v1/snapshots/{}"."""
    return re.sub(r"<[^>]+>|\{[^}]+\}", "{}", template)


@pytest.fixture(scope="module")
def flask_app(tmp_path_factory):
    from service.app import create_app

    return create_app(
        {
            "DATABASE_URL": "sqlite:///:memory:",
            "AUTH_ENABLED": False,
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path_factory.mktemp("instance")),
        }
    )


def test_spec_paths_and_flask_routes_agree(flask_app):
    spec = load_spec()
    adapter = flask_app.url_map.bind("localhost")
    spec_shapes = {(_template_shape(path), method) for path, method, _ in operations(spec)}
    served: set[tuple[str, str]] = set()
    problems = []
    for path, method, _ in operations(spec):
        url = re.sub(r"\{[^}]+\}", SAMPLE_ID, path)
        try:
            rule, _args = adapter.match(url, method=method.upper(), return_rule=True)
        except (NotFound, MethodNotAllowed):
            problems.append(f"{method.upper()} {path}: in openapi.yaml, but no such route")
            continue
        if rule.endpoint in IGNORED_ENDPOINTS:
            problems.append(f"{method.upper()} {path}: only matched by {rule.endpoint}")
            continue
        shape = _template_shape(rule.rule)
        if shape != _template_shape(path) and (shape, method) in spec_shapes:
            # e.g. GET /v1/decisions/export answered by GET /v1/decisions/<decision_id>
            problems.append(f"{method.upper()} {path}: answered by the route {rule.rule}")
        served.add((rule.rule, method))
    for rule in flask_app.url_map.iter_rules():
        if rule.endpoint in IGNORED_ENDPOINTS or rule.rule.startswith(IGNORED_PREFIXES):
            continue
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            if (rule.rule, method.lower()) not in served:
                problems.append(f"{method} {rule.rule} ({rule.endpoint}): not in openapi.yaml")
    assert not problems, "\n".join(problems)


def test_registered_decision_kinds_are_described():
    from service.decisions import KINDS

    registered = set(KINDS)
    described = set(load_spec()["components"]["schemas"]["DecisionKind"]["enum"])
    assert registered <= described, registered - described


# ---------------------------------------------------------------- (c) the checker itself

CREATED = "2026-11-20T10:00:01.123456Z"
SNAPSHOT_ID = "0b0e7c1e-6a4e-4f56-9a53-3f0f3b1b2c3d"
DECISION_ID = "7e967fe7-2cfe-47c7-b4a6-9aa831107750"
DIGEST = "sha256:" + "ab" * 32
JSON = {"Content-Type": "application/json"}
PROBLEM = {"Content-Type": "application/problem+json"}


def pod_ref(name: str, node: str = "node-a", priority: int = 0, qos: str = "Burstable") -> dict:
    return {
        "namespace": "default",
        "name": name,
        "uid": f"uid-{name}",
        "nodeName": node,
        "priority": priority,
        "qosClass": qos,
    }


POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}, "spec": {"containers": []}}

RECORDS = {
    "admission": (
        {"nodeName": "node-a", "pod": POD},
        {
            "admitted": True,
            "reasons": [
                {
                    "reason": "InsufficientResource",
                    "resource": "cpu",
                    "requested": 2000,
                    "used": 3500,
                    "capacity": 4000,
                    "message": "Insufficient cpu",
                }
            ],
            "critical": True,
            "preemption": {
                "victims": [pod_ref("batch", qos="BestEffort")],
                "message": "ok",
            },
            "message": "admitted after preempting 1 pod",
        },
    ),
    "preemption": (
        {"pod": POD, "options": {"offset": 0}, "holdStatefulSetUpgrades": True, "holds": []},
        {
            "eligible": True,
            "nominatedNodeName": "node-a",
            "victims": [pod_ref("batch", priority=10)],
            "numPDBViolations": 0,
            "candidates": [
                {
                    "nodeName": "node-a",
                    "victims": [pod_ref("batch")],
                    "numPDBViolations": 0,
                }
            ],
            "nodes": {
                "node-a": {"status": "Unschedulable", "reasons": ["Insufficient cpu"]},
                "node-b": {"status": "UnschedulableAndUnresolvable", "reasons": ["taint"]},
            },
            "message": "",
        },
    ),
    "placement": (
        {"pod": POD, "scoring": {"strategy": "MostAllocated"}},
        {
            "selectedNode": "node-a",
            "nodes": [
                {
                    "nodeName": "node-a",
                    "feasible": True,
                    "reasons": [],
                    "scores": {"NodeResourcesFit": 62, "NodeResourcesBalancedAllocation": 95},
                    "total": 157,
                },
                {
                    "nodeName": "node-b",
                    "feasible": True,
                    "reasons": [],
                    "scores": {"NodeResourcesFit": 40, "NodeResourcesBalancedAllocation": 90},
                    "total": 130,
                },
                {
                    "nodeName": "node-c",
                    "feasible": False,
                    "reasons": ["Insufficient cpu"],
                    "scores": None,
                    "total": None,
                },
            ],
        },
    ),
    "eviction": (
        {"nodeName": "node-a", "config": {"evictionHard": "memory.available<100Mi"}},
        {
            "signals": {"memory.available": {"available": "50Mi", "capacity": "8Gi"}},
            "thresholdsObserved": [
                {
                    "signal": "memory.available",
                    "operator": "LessThan",
                    "value": "100Mi",
                    "gracePeriod": "0s",
                    "minReclaim": None,
                }
            ],
            "thresholdsMet": [],
            "nodeConditions": ["MemoryPressure"],
            "starvedResource": "memory",
            "ranking": [
                {
                    "pod": pod_ref("batch"),
                    "exceedsRequests": True,
                    "priority": 0,
                    "usage": "1Gi",
                    "request": "0",
                },
                {
                    "pod": pod_ref("new"),
                    "exceedsRequests": False,
                    "priority": 0,
                    "usage": None,
                    "request": "128Mi",
                },
            ],
            "victim": pod_ref("batch"),
            "gracePeriodSeconds": 1,
            "message": "The node was low on resource: memory. ",
            "nodeAllocatable": {"cpu": "4", "memory": "8Gi"},
        },
    ),
    "node-eviction-rate": (
        {"now": CREATED, "config": {"mode": "taint"}},
        {
            "zones": [
                {
                    "key": "eu:\u0000:eu-1a",
                    "region": "eu",
                    "zone": "eu-1a",
                    "state": "PartialDisruption",
                    "nodes": 10,
                    "notReadyNodes": 6,
                    "evictionRate": 0.01,
                }
            ],
            "allZonesFullyDisrupted": False,
            "nodes": [
                {
                    "nodeName": "node-a",
                    "zone": "eu:\u0000:eu-1a",
                    "ready": "Unknown",
                    "taint": "node.kubernetes.io/unreachable",
                    "taintedAt": CREATED,
                },
                {
                    "nodeName": "node-b",
                    "zone": "eu:\u0000:eu-1a",
                    "ready": "True",
                    "taint": None,
                    "taintedAt": None,
                },
            ],
            "pods": [
                {
                    "pod": pod_ref("web"),
                    "evictAt": CREATED,
                    "reason": "untolerated taint",
                },
                {
                    "pod": pod_ref("ds"),
                    "evictAt": None,
                    "reason": "tolerates for ever",
                },
            ],
        },
    ),
}


def record(kind: str, **changes) -> dict:
    request, result = RECORDS[kind]
    out = {
        "id": DECISION_ID,
        "kind": kind,
        "snapshotId": SNAPSHOT_ID,
        "createdAt": CREATED,
        "engineVersion": "0.1.0+k8s-1.37",
        "request": {"snapshotId": SNAPSHOT_ID, **request},
        "result": json.loads(json.dumps(result)),
    }
    out.update(changes)
    return out


def body(value) -> bytes:
    return json.dumps(value).encode()


def decision_headers() -> dict:
    return {**JSON, "X-Decision-ID": DECISION_ID}


@pytest.mark.parametrize("kind", sorted(RECORDS))
def test_a_valid_decision_of_each_kind_passes(kind):
    validate_exchange(
        "POST",
        f"/v1/decisions/{kind}",
        "",
        JSON,
        b"{}",
        201,
        decision_headers(),
        body(record(kind, keyId=None, sequence=1, prevHash="0" * 64, hash="1" * 64)),
    )
    validate_instance("DecisionRecord", record(kind))


def _without(data: dict, dotted: str) -> dict:
    data = json.loads(json.dumps(data))
    *parents, last = dotted.split(".")
    target = data
    for key in parents:
        target = target[int(key)] if isinstance(target, list) else target[key]
    del target[last]
    return data


@pytest.mark.parametrize(
    ("kind", "missing"),
    [
        ("admission", "result.preemption"),
        ("admission", "result.reasons.0.message"),
        ("preemption", "result.victims.0.qosClass"),
        ("preemption", "result.nodes.node-a.status"),
        ("placement", "result.nodes.1.total"),
        ("eviction", "result.ranking.0.exceedsRequests"),
        ("eviction", "result.nodeAllocatable"),
        ("node-eviction-rate", "result.zones.0.evictionRate"),
        ("node-eviction-rate", "result.pods.1.evictAt"),
        ("admission", "engineVersion"),
        ("placement", "snapshotId"),
    ],
)
def test_a_response_missing_a_required_field_fails(kind, missing):
    with pytest.raises(AssertionError, match=MISMATCH):
        validate_exchange(
            "POST",
            f"/v1/decisions/{kind}",
            "",
            JSON,
            b"{}",
            201,
            decision_headers(),
            body(_without(record(kind), missing)),
        )


@pytest.mark.parametrize(
    ("kind", "path", "value"),
    [
        ("admission", ("result", "admitted"), "yes"),
        ("preemption", ("result", "nodes", "node-a", "status"), "Success"),
        ("placement", ("result", "nodes", 0, "scores", "NodeResourcesFit"), 101),
        ("eviction", ("result", "signals", "memory.available", "available"), 52428800),
        ("node-eviction-rate", ("result", "nodes", 0, "ready"), True),
        ("admission", ("kind",), "eviction"),
        ("admission", ("createdAt",), "yesterday"),
    ],
)
def test_a_response_with_a_wrongly_typed_field_fails(kind, path, value):
    data = record(kind)
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(AssertionError, match=MISMATCH):
        validate_exchange(
            "POST", f"/v1/decisions/{kind}", "", JSON, b"{}", 201, decision_headers(), body(data)
        )


def test_results_may_carry_additional_informative_fields():
    data = record("admission")
    data["result"]["kubeletReason"] = "OutOfcpu"
    data["result"]["reasons"][0]["kubeletReason"] = "OutOfcpu"
    validate_exchange(
        "POST", "/v1/decisions/admission", "", JSON, b"{}", 201, decision_headers(), body(data)
    )


def test_an_undocumented_status_code_fails():
    with pytest.raises(AssertionError, match="status 418 is not documented"):
        validate_exchange("GET", "/healthz", "", {}, b"", 418, JSON, body({"status": "ok"}))
    with pytest.raises(AssertionError, match="status 500 is not documented"):
        problem = {"type": "about:blank", "title": "Internal Server Error", "status": 500}
        validate_exchange("GET", "/v1/decisions", "", {}, b"", 500, PROBLEM, body(problem))


def test_an_undescribed_route_fails():
    with pytest.raises(AssertionError, match="route not described"):
        validate_exchange("GET", "/v1/nothing", "", {}, b"", 200, JSON, b"{}")
    with pytest.raises(AssertionError, match="route not described"):
        validate_exchange("PUT", "/v1/snapshots", "", {}, b"", 200, JSON, b"{}")


def test_a_missing_required_response_header_fails():
    with pytest.raises(AssertionError, match="X-Decision-ID"):
        validate_exchange(
            "POST", "/v1/decisions/admission", "", JSON, b"{}", 201, JSON,
            body(record("admission")),
        )  # fmt: skip
    summary = {
        "id": SNAPSHOT_ID,
        "name": None,
        "cluster": None,
        "labels": {},
        "createdAt": CREATED,
        "capturedAt": None,
        "digest": DIGEST,
        "counts": dict.fromkeys(
            ("nodes", "pods", "podDisruptionBudgets", "priorityClasses", "leases", "stats"), 0
        ),
        "ignored": {},
    }
    path = f"/v1/snapshots/{SNAPSHOT_ID}"
    validate_exchange("GET", path, "", {}, b"", 200, {**JSON, "ETag": f'"{DIGEST}"'}, body(summary))
    with pytest.raises(AssertionError, match="ETag"):
        validate_exchange("GET", path, "", {}, b"", 200, JSON, body(summary))
    with pytest.raises(AssertionError, match="digest"):
        bad = {**summary, "digest": "md5:abc"}
        validate_exchange("GET", path, "", {}, b"", 200, {**JSON, "ETag": '"x"'}, body(bad))


def test_errors_must_be_problem_json():
    problem = {
        "type": "https://verdict.dev/problems/422",
        "title": "Unprocessable Content",
        "status": 422,
        "detail": "nodeName: not in the snapshot",
        "errors": [{"path": "nodeName", "message": "not in the snapshot"}],
    }
    args = ("POST", "/v1/decisions/admission", "", JSON, b"{}", 422)
    validate_exchange(*args, PROBLEM, body(problem))
    with pytest.raises(AssertionError, match="problem\\+json"):
        validate_exchange(*args, JSON, body(problem))
    with pytest.raises(AssertionError, match="does not match"):  # 422 names the field
        validate_exchange(*args, PROBLEM, body({**problem, "errors": []}))
    with pytest.raises(AssertionError, match="does not match"):
        validate_exchange(*args, PROBLEM, body(_without(problem, "title")))


def test_pages_need_next_cursor():
    page = {"items": [record("placement")], "nextCursor": None}
    validate_exchange("GET", "/v1/decisions", "limit=1", {}, b"", 200, JSON, body(page))
    with pytest.raises(AssertionError, match="nextCursor"):
        validate_exchange("GET", "/v1/decisions", "", {}, b"", 200, JSON, body({"items": []}))


def test_ndjson_export_lines_are_records():
    lines = b"\n".join(body(record(kind)) for kind in sorted(RECORDS)) + b"\n"
    ndjson = {"Content-Type": "application/x-ndjson"}
    validate_exchange("GET", "/v1/decisions/export", "", {}, b"", 200, ndjson, lines)
    validate_exchange("GET", "/v1/decisions/export", "", {}, b"", 200, ndjson, b"")
    broken = lines + body(_without(record("eviction"), "result.victim")) + b"\n"
    with pytest.raises(AssertionError, match="NDJSON line 6"):
        validate_exchange("GET", "/v1/decisions/export", "", {}, b"", 200, ndjson, broken)
    with pytest.raises(AssertionError, match="not JSON"):
        validate_exchange("GET", "/v1/decisions/export", "", {}, b"", 200, ndjson, b"{oops\n")


def test_non_json_bodies_are_checked_for_status_and_content_type_only():
    text = {"Content-Type": "text/plain; version=0.0.4; charset=utf-8"}
    validate_exchange("GET", "/metrics", "", {}, b"", 200, text, b"# HELP x\nx 1\n")
    html = {"Content-Type": "text/html; charset=utf-8"}
    validate_exchange("GET", "/docs", "", {}, b"", 200, html, b"<!DOCTYPE html>")
    with pytest.raises(AssertionError, match="content type application/json is not documented"):
        validate_exchange("GET", "/metrics", "", {}, b"", 200, JSON, b"{}")


def test_not_modified_has_no_body():
    path = f"/v1/snapshots/{SNAPSHOT_ID}/nodes"
    validate_exchange("GET", path, "", {"If-None-Match": '"x"'}, b"", 304, {"ETag": '"x"'}, b"")


# ---------------------------------------------------------------- request bodies as documented

LIST = {"apiVersion": "v1", "kind": "List", "items": []}
T0 = "2026-11-20T10:00:00Z"


@pytest.mark.parametrize(
    ("schema", "value", "valid"),
    [
        ("AdmissionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n", "pod": POD}, True),
        ("AdmissionRequest", {"snapshot": LIST, "nodeName": "n", "pod": POD}, True),
        ("AdmissionRequest", {"snapshotId": SNAPSHOT_ID, "snapshot": LIST, "nodeName": "n",
                              "pod": POD}, False),
        ("AdmissionRequest", {"nodeName": "n", "pod": POD}, False),
        ("AdmissionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n", "pod": POD,
                              "extra": 1}, False),
        ("AdmissionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n"}, False),
        ("PreemptionRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD, "options": {"offset": 3},
                               "holdStatefulSetUpgrades": True,
                               "holds": [{"nodeName": "n", "name": "web-0",
                                          "requests": {"cpu": "1", "memory": 1e9}}]}, True),
        ("PreemptionRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD, "options": None}, True),
        ("PreemptionRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD,
                               "options": {"random": True}}, False),
        ("PreemptionRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD,
                               "holds": [{"nodeName": "n"}]}, False),
        ("PlacementRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD, "scoring": None}, True),
        ("PlacementRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD,
                              "scoring": {"strategy": "RequestedToCapacityRatio",
                                          "resources": [{"name": "cpu", "weight": 2}],
                                          "shape": [{"utilization": 0, "score": 10},
                                                    {"utilization": 100, "score": 0}]}}, True),
        ("PlacementRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD,
                              "scoring": {"strategy": "Random"}}, False),
        ("PlacementRequest", {"snapshotId": SNAPSHOT_ID, "pod": POD,
                              "scoring": {"shape": [{"utilization": 0, "score": 11}]}}, False),
        ("EvictionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n"}, True),
        ("EvictionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n", "now": T0,
                             "config": {"evictionHard": "memory.available<100Mi",
                                        "evictionSoft": {"nodefs.available": "15%"},
                                        "evictionSoftGracePeriod": "nodefs.available=1m30s",
                                        "kubeReserved": {"cpu": "100m"},
                                        "enforceNodeAllocatable": ["pods"],
                                        "filesystemLayout": "split"},
                             "firstObserved": {"nodefs.available": T0}}, True),
        ("EvictionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n",
                             "config": {"evictionHard": None}}, True),
        ("EvictionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n",
                             "config": {"filesystemLayout": "zfs"}}, False),
        ("EvictionRequest", {"snapshotId": SNAPSHOT_ID, "nodeName": "n",
                             "firstObserved": {"memory.available": "an hour ago"}}, False),
        ("NodeEvictionRateRequest", {"snapshotId": SNAPSHOT_ID, "now": T0,
                                     "config": {"nodeEvictionRate": 0.1, "mode": "legacy",
                                                "podEvictionTimeout": "5m",
                                                "applyDefaultTolerations": True}}, True),
        ("NodeEvictionRateRequest", {"snapshotId": SNAPSHOT_ID,
                                     "config": {"nodeMonitorGracePeriod": "fifty"}}, False),
        ("NodeEvictionRateRequest", {"snapshotId": SNAPSHOT_ID,
                                     "config": {"mode": "eager"}}, False),
        ("SnapshotBody", {"name": "prod", "cluster": "eu1", "labels": {"env": "prod"},
                          "objects": [{"kind": "Node", "metadata": {"name": "n"}}],
                          "stats": {"n": {"node": {}}}, "capturedAt": T0}, True),
        ("SnapshotBody", {**LIST, "items": [{"kind": "Pod", "metadata": {"name": "p"}}]}, True),
        ("SnapshotBody", [{"kind": "Node", "metadata": {"name": "n"}}], True),
        ("SnapshotBody", {"name": "no objects"}, False),
    ],
)  # fmt: skip
def test_request_body_schemas(schema, value, valid):
    if valid:
        validate_instance(schema, value)
    else:
        with pytest.raises(AssertionError):
            validate_instance(schema, value)


def _release_enums(node, path=""):
    """Every enum given for a ``kubernetesVersion`` (or the KubernetesRelease schema)."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = f"{path}/{key}"
            named = key in ("kubernetesVersion", "KubernetesRelease")
            if named and isinstance(value, dict) and "enum" in value:
                yield here, value["enum"]
            yield from _release_enums(value, here)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _release_enums(item, f"{path}/{i}")


def test_every_release_enum_lists_the_releases_verdict_knows():
    from service.engine.version import KNOWN_VERSIONS

    found = list(_release_enums(load_spec()))
    assert found, "no kubernetesVersion enum in the document"
    for where, enum in found:
        assert tuple(enum) == tuple(KNOWN_VERSIONS), where
