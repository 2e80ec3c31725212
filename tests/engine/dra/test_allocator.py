"""The structured allocator (service/engine/dra/allocator.py) through DynamicResources'
Filter: which devices each node would give the pod's claims, and why a node has none."""

from __future__ import annotations

from service.engine.objects import Cluster
from service.engine.scheduler.placement import place
from service.engine.version import settings_for
from service.ingest.kube import pod_from_object
from tests.conftest import node, pod, snapshot_from_objects

GPU = "gpu.example.com"


def _slice(node_name: str, devices: list[dict], *, name: str = "", count: int = 1, gen: int = 1):
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name or f"{node_name}-gpu"},
        "spec": {
            "driver": GPU,
            "pool": {"name": node_name, "generation": gen, "resourceSliceCount": count},
            "nodeName": node_name,
            "devices": devices,
        },
    }


def _gpu(name: str, model: str = "h100", root: str = "p0", memory: str = "80Gi") -> dict:
    return {
        "name": name,
        "attributes": {
            "model": {"string": model},
            "resource.kubernetes.io/pcieRoot": {"string": root},
        },
        "capacity": {"memory": {"value": memory}},
    }


CLASS = {
    "apiVersion": "resource.k8s.io/v1",
    "kind": "DeviceClass",
    "metadata": {"name": "gpu"},
    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{GPU}"'}}]},
}


def _claim(requests: list[dict], constraints: list[dict] | None = None, name: str = "want"):
    devices: dict = {"requests": requests}
    if constraints:
        devices["constraints"] = constraints
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": devices},
    }


def _held(name: str, node_name: str, devices: list[str], admin: bool = False) -> dict:
    claim = _claim(
        [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": len(devices)}}], name=name
    )
    claim["status"] = {
        "allocation": {
            "devices": {
                "results": [
                    {
                        "request": "r",
                        "driver": GPU,
                        "pool": node_name,
                        "device": d,
                        **({"adminAccess": True} if admin else {}),
                    }
                    for d in devices
                ]
            }
        }
    }
    return claim


def _place(objects: list[dict], claims=("want",)):
    incoming = pod("in", cpu="100m")
    incoming["spec"]["resourceClaims"] = [
        {"name": f"c{i}", "resourceClaimName": c} for i, c in enumerate(claims)
    ]
    cluster = Cluster(snapshot_from_objects([CLASS, *objects]))
    return place(cluster, pod_from_object(incoming), settings=settings_for("1.35"))


def _devices(out, node_name: str) -> list[tuple[str, str]] | None:
    entry = next(n for n in out.nodes if n.node_name == node_name)
    if not entry.feasible:
        return None
    return [(d.request, d.device) for d in entry.allocation["want"]]


def test_devices_in_use_are_skipped_and_the_first_free_ones_taken() -> None:
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("g0"), _gpu("g1"), _gpu("g2")]),
            _held("busy", "a", ["g0"]),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 2}}]),
        ]
    )
    assert _devices(out, "a") == [("r", "g1"), ("r", "g2")]
    assert out.selected_node == "a"


def test_too_few_free_devices_is_unresolvable() -> None:
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("g0"), _gpu("g1")]),
            _held("busy", "a", ["g0"]),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 2}}]),
        ]
    )
    (entry,) = out.nodes
    assert (entry.status.code, entry.reasons) == (
        "UnschedulableAndUnresolvable",
        ["cannot allocate all claims"],
    )


def test_admin_access_devices_do_not_count_as_in_use() -> None:
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("g0")]),
            _held("watcher", "a", ["g0"], admin=True),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu"}}]),
        ]
    )
    assert _devices(out, "a") == [("r", "g0")]


def test_match_attribute_backtracks_to_devices_sharing_the_value() -> None:
    devices = [_gpu("g0", root="p0"), _gpu("g1", root="p1"), _gpu("g2", root="p1")]
    out = _place(
        [
            node("a"),
            _slice("a", devices),
            _claim(
                [{"name": "r", "exactly": {"deviceClassName": "gpu", "count": 2}}],
                [{"matchAttribute": "resource.kubernetes.io/pcieRoot"}],
            ),
        ]
    )
    assert _devices(out, "a") == [("r", "g1"), ("r", "g2")]


def test_first_available_takes_the_first_subrequest_that_fits_and_scores_it() -> None:
    first = {"name": "big", "deviceClassName": "gpu", "count": 2,
             "selectors": [{"cel": {"expression": f'device.attributes["{GPU}"].model == "h100"'}}]}  # fmt: skip
    second = {"name": "small", "deviceClassName": "gpu"}
    out = _place(
        [
            node("a"),
            node("b"),
            _slice("a", [_gpu("g0"), _gpu("g1")]),
            _slice("b", [_gpu("g0", model="l4"), _gpu("g1")]),
            _claim([{"name": "r", "firstAvailable": [first, second]}]),
        ]
    )
    assert _devices(out, "a") == [("r/big", "g0"), ("r/big", "g1")]
    assert _devices(out, "b") == [("r/small", "g0")]
    a, b = out.nodes
    # computeScore: 8 - index of the chosen subrequest (8 and 7), normalized to 100 and 87
    assert (a.scores["DynamicResources"], b.scores["DynamicResources"]) == (100, 87)
    assert out.selected_node == "a"


def test_all_devices_of_an_incomplete_pool_fail_the_cycle() -> None:
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("g0")], count=2),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}}]),
        ]
    )
    assert out.cycle_error is not None
    assert out.cycle_error.message == (
        'running "DynamicResources" filter plugin: claim default/want, request r: asks for all '
        "devices, but resource pool gpu.example.com/a is currently being updated"
    )


def test_a_pool_repeating_a_device_name_is_invalid() -> None:
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("g0")], name="s1", count=2),
            _slice("a", [_gpu("g0")], name="s2", count=2),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu"}}]),
        ]
    )
    (entry,) = out.nodes
    assert entry.reasons == ["invalid resource pools were encountered"]


def test_an_older_generation_of_a_pool_is_ignored() -> None:
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("old")], name="s-old", gen=1),
            _slice("a", [_gpu("new")], name="s-new", gen=2),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu"}}]),
        ]
    )
    assert _devices(out, "a") == [("r", "new")]


def test_a_selector_failing_at_run_time_fails_the_cycle() -> None:
    selector = {"cel": {"expression": f'device.attributes["{GPU}"].missing == 1'}}
    out = _place(
        [
            node("a"),
            _slice("a", [_gpu("g0")]),
            _claim([{"name": "r", "exactly": {"deviceClassName": "gpu", "selectors": [selector]}}]),
        ]
    )
    assert out.cycle_error is not None
    assert out.cycle_error.message == (
        'running "DynamicResources" filter plugin: claim default/want: selector #0: CEL runtime '
        "error: no such key: missing"
    )


def test_an_all_subrequest_continues_as_the_first_subrequest() -> None:
    """Upstream's allocateOne recurses from a device of an "All" subrequest without the
    subrequest's index (v1.35): its next device is looked for as the first subrequest's.
    Here the first asks 4 devices of 2, so the All subrequest cannot finish either: the
    real scheduler answers "cannot allocate all claims" (verdict-oracle agrees)."""
    claim = _claim(
        [
            {
                "name": "r",
                "firstAvailable": [
                    {"name": "s0", "deviceClassName": "gpu", "count": 4},
                    {"name": "s1", "deviceClassName": "gpu", "allocationMode": "All"},
                ],
            }
        ]
    )
    out = _place([node("a"), _slice("a", [_gpu("g0"), _gpu("g1")]), claim])
    assert out.nodes[0].reasons == ["cannot allocate all claims"]


def _model(model: str) -> dict:
    return {"cel": {"expression": f'device.attributes["{GPU}"].model == "{model}"'}}


def test_a_subrequest_is_validated_under_the_previous_subrequests_index() -> None:
    """Allocate (v1.35) numbers a firstAvailable subrequest only after validateDeviceRequest,
    so an "All" subrequest selects under the previous subrequest's key and reuses that one's
    answers: s1 (all h100) gets s0's devices (all l4), the one in use among them fails it
    quietly, and s2 places the pod next to r0 (placement seed 11341; verdict-oracle agrees).
    Checked fresh, s1's first h100 would break the constraint and fail the cycle."""
    claim = _claim(
        [
            {"name": "r0", "exactly": {"deviceClassName": "gpu", "selectors": [_model("l4")]}},
            {
                "name": "r1",
                "firstAvailable": [
                    {
                        "name": "s0",
                        "deviceClassName": "gpu",
                        "allocationMode": "All",
                        "selectors": [_model("l4")],
                    },
                    {
                        "name": "s1",
                        "deviceClassName": "gpu",
                        "allocationMode": "All",
                        "selectors": [_model("h100")],
                    },
                    {"name": "s2", "deviceClassName": "gpu"},
                ],
            },
        ],
        [{"matchAttribute": "resource.kubernetes.io/pcieRoot", "requests": ["r0", "r1"]}],
    )
    devices = [_gpu("g0", "h100", "p0"), _gpu("g1", "l4", "p1"), _gpu("g2", "h100", "p1")]
    out = _place([node("a"), _slice("a", devices), claim])
    assert out.cycle_error is None
    assert _devices(out, "a") == [("r0", "g1"), ("r1/s2", "g2")]


def test_the_search_does_not_read_what_validation_selected() -> None:
    """Allocate drops validation's selector answers before the search (a fresh
    deviceMatchesRequest), so an ExactCount first subrequest is searched with its own
    selectors even though the "All" subrequest after it was validated under its key: s0
    (an l4) gets g1, not the h100 s1's selectors chose (verdict-oracle agrees)."""
    claim = _claim(
        [
            {
                "name": "r",
                "firstAvailable": [
                    {"name": "s0", "deviceClassName": "gpu", "selectors": [_model("l4")]},
                    {
                        "name": "s1",
                        "deviceClassName": "gpu",
                        "allocationMode": "All",
                        "selectors": [_model("h100")],
                    },
                ],
            }
        ]
    )
    out = _place([node("a"), _slice("a", [_gpu("g0", "h100"), _gpu("g1", "l4")]), claim])
    assert _devices(out, "a") == [("r/s0", "g1")]


def _opaque(params: dict) -> dict:
    return {"opaque": {"driver": GPU, "parameters": params}}


def test_the_allocation_carries_class_then_claim_configuration() -> None:
    """Allocate's "Populate configs" (v1.35): the class's entry once, naming every request of
    that class (the subrequest chosen, for firstAvailable); the claim's entry for all
    requests once, and one naming two requests once per request it names."""
    gpu_class = {**CLASS, "spec": {**CLASS["spec"], "config": [_opaque({"mode": "class"})]}}
    claim = _claim(
        [
            {"name": "a", "exactly": {"deviceClassName": "gpu"}},
            {
                "name": "b",
                "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu", "count": 5},
                    {"name": "one", "deviceClassName": "gpu"},
                ],
            },
        ]
    )
    claim["spec"]["devices"]["config"] = [
        {"requests": ["a", "b/one"], **_opaque({"mode": "both"})},
        _opaque({"mode": "all"}),
    ]
    incoming = pod("in", cpu="100m")
    incoming["spec"]["resourceClaims"] = [{"name": "c0", "resourceClaimName": "want"}]
    objects = [gpu_class, node("n"), _slice("n", [_gpu("g0"), _gpu("g1")]), claim]
    out = place(
        Cluster(snapshot_from_objects(objects)),
        pod_from_object(incoming),
        settings=settings_for("1.35"),
    )
    (entry,) = out.nodes
    assert [(d.request, d.device) for d in entry.allocation["want"]] == [
        ("a", "g0"),
        ("b/one", "g1"),
    ]
    config = [(c.source, c.requests, c.parameters) for c in entry.allocation_config["want"]]
    assert config == [
        ("FromClass", ("a", "b/one"), '{"mode":"class"}'),
        ("FromClaim", ("a", "b/one"), '{"mode":"both"}'),
        ("FromClaim", ("a", "b/one"), '{"mode":"both"}'),
        ("FromClaim", (), '{"mode":"all"}'),
    ]
