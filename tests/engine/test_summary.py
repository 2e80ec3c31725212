"""The snapshot's pod and node views (engine/summary.py) print each quantity as
resource.Quantity.String() does, and read snapshots stored before exact quantities.

Upstream keeps a quantity exactly and its String() is either the input, when the parser
judged it canonical, or the canonical form (CanonicalizeBytes); PodRequests adds quantities
with Quantity.Add, whose result prints in canonical form in the receiver's format. The rows
below follow apimachinery's quantity_test.go (TestQuantityString, the canonicalization
tables), written out here for the views.
"""

from __future__ import annotations

import msgspec
import orjson
import pytest
import zstandard

from service.engine.objects import Cluster
from service.engine.summary import node_view, pod_view
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.body import parse_snapshot
from service.store.snapshots import decode, encode
from tests.conftest import kube_list, node, pod


def _container(name: str, requests: dict, limits: dict | None = None) -> dict:
    resources = {"requests": requests} | ({"limits": limits} if limits else {})
    return {"name": name, "image": "nginx", "resources": resources}


def _pod_with(name: str, *containers: dict, node_name: str = "n1", **spec) -> dict:
    body = pod(name, node_name)
    body["spec"]["containers"] = list(containers)
    body["spec"].update(spec)
    return body


def _post(api, *items) -> str:
    response = api.post("/v1/snapshots", json=kube_list(*items), role="decide")
    assert response.status_code == 201, response.json
    return response.json["id"]


@pytest.mark.parametrize(
    ("resource", "given", "printed"),
    [
        ("cpu", "80u", "80u"),  # sub-milli cpu is kept, not rounded to 1m
        # Below 1n rounds up to 1n. The issue wrote "0.5e-9 is 1n"; upstream's parse table
        # has 0.5e-9 as 1e-9 in DecimalExponent, whose String() is "1e-9"; "0.5n" is "1n".
        ("cpu", "0.5e-9", "1e-9"),
        ("cpu", "0.5n", "1n"),
        ("cpu", "1E18", "1E18"),  # past int64 millicores; the input was canonical
        ("cpu", "100m", "100m"),
        ("cpu", "1000m", "1"),  # 000 at the end: not kept, canonical form
        ("cpu", "0.1", "100m"),
        ("cpu", "1.5", "1500m"),
        ("cpu", "12e-3", "12e-3"),  # DecimalExponent, kept as written
        ("memory", "1.5Gi", "1536Mi"),
        ("memory", "1Gi", "1Gi"),
        ("memory", "1024Mi", "1Gi"),  # a BinarySI mantissa that is a multiple of 8 is redone
        ("memory", "1023Mi", "1023Mi"),
        ("memory", "1e3", "1e3"),  # DecimalExponent, kept
        ("memory", "1e40", "10e39"),  # exponent lowered to a multiple of three
        ("memory", "9Ei", "9223372036854775807"),  # BinarySI past int64 saturates (maxAllowed)
        ("memory", "128974848", "128974848"),
        ("memory", "129e6", "129e6"),
        ("memory", "129M", "129M"),
        ("memory", "123Mi", "123Mi"),
        ("memory", "0.5", "500m"),  # half a byte: Value() would be 1, String() is 500m
    ],
)
def test_a_container_quantity_prints_as_string_does(api, resource, given, printed):
    snapshot = _post(
        api,
        node("n1"),
        _pod_with("p", _container("app", {resource: given}, {resource: given})),
    )
    (view,) = api.get(f"/v1/snapshots/{snapshot}/pods?node=n1", role="read").json["items"]
    assert view["requests"] == {resource: printed}
    assert view["limits"] == {resource: printed}


def test_sums_print_the_canonical_form_of_the_exact_sum(api):
    snapshot = _post(
        api,
        node("n1", cpu="1E18", memory="1.5Gi"),
        _pod_with(
            "a",
            _container("one", {"cpu": "80u", "memory": "1Gi"}),
            _container("two", {"cpu": "20u"}),
        ),
        _pod_with("b", _container("one", {"cpu": "500m", "memory": "512Mi"})),
        _pod_with("c", _container("one", {"cpu": "0.5n"}), _container("two", {"cpu": "1E18"})),
    )
    pods = {
        p["name"]: p
        for p in api.get(f"/v1/snapshots/{snapshot}/pods?node=n1", role="read").json["items"]
    }
    assert pods["a"]["requests"] == {"cpu": "100u", "memory": "1Gi"}
    assert pods["b"]["requests"] == {"cpu": "500m", "memory": "512Mi"}
    assert pods["c"]["requests"] == {"cpu": "1000000000000000000000000001n"}
    (n1,) = api.get(f"/v1/snapshots/{snapshot}/nodes", role="read").json["items"]
    assert n1["allocatable"]["cpu"] == "1E18"
    assert n1["allocatable"]["memory"] == "1536Mi"
    # 100u + 500m + 1E18 + 1n, added exactly; memory 1Gi + 512Mi in the first pod's BinarySI
    assert n1["requested"] == {"cpu": "1000000000000000000500100001n", "memory": "1536Mi"}


def test_init_containers_and_overhead_add_and_compare_exactly(api):
    snapshot = _post(
        api,
        node("n1"),
        _pod_with(
            "p",
            _container("app", {"cpu": "80u"}),
            initContainers=[_container("init", {"cpu": "90u"})],
            overhead={"cpu": "5u"},
        ),
    )
    (view,) = api.get(f"/v1/snapshots/{snapshot}/pods?node=n1", role="read").json["items"]
    # max(80u, 90u) + 5u
    assert view["requests"] == {"cpu": "95u"}


def _stripped_of_given(value):
    """A stored snapshot as the code before the ``*_given`` maps wrote it."""
    if isinstance(value, dict):
        return {k: _stripped_of_given(v) for k, v in value.items() if not k.endswith("_given")}
    if isinstance(value, list):
        return [_stripped_of_given(v) for v in value]
    return value


def test_a_snapshot_stored_before_exact_quantities_is_still_read():
    body = kube_list(
        node("n1", cpu="2"),
        _pod_with("p", _container("app", {"cpu": "80u", "memory": "1.5Gi"})),
    )
    snapshot = parse_snapshot(orjson.dumps(body)).snapshot
    content, _ = encode(snapshot)
    assert decode(content) == snapshot
    old = msgspec.msgpack.encode(_stripped_of_given(msgspec.msgpack.decode(_zstd(content))))
    cluster = Cluster(decode(zstandard.ZstdCompressor().compress(old)))
    (p,) = cluster.snapshot.pods
    # What the integers say: 80u was kept as 1 millicore, 1.5Gi as its bytes.
    assert pod_view(p, None, settings=DEFAULT_SETTINGS)["requests"] == {
        "cpu": "1m",
        "memory": "1536Mi",
    }
    assert node_view(cluster, cluster.snapshot.nodes[0], settings=DEFAULT_SETTINGS)[
        "requested"
    ] == {
        "cpu": "1m",
        "memory": "1536Mi",
    }


def _zstd(content: bytes) -> bytes:
    return zstandard.ZstdDecompressor().decompress(content)
