"""Decision kind "eviction" (service.decisions.eviction): request schema, the contract's result,
input errors, defaults, and the time of a pass on a full 110-pod node."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from marshmallow import ValidationError

from service.decisions import KINDS, DecisionInputError
from service.decisions.eviction import EvictionRequestSchema, decide
from service.decisions.run import compute
from service.engine.objects import Cluster
from service.ingest.kube import snapshot_from_objects
from tests.decisions.helpers import CONFIGZ, evict, stored_snapshot

MI = 1024 * 1024
GI = 1024 * MI
CAPTURED = datetime(2026, 11, 20, 10, 0, 0, tzinfo=UTC)


def _node(name="n1", memory="8Gi", storage="100Gi"):
    capacity = {"cpu": "4", "memory": memory, "ephemeral-storage": storage, "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"capacity": capacity, "allocatable": capacity},
    }


def _pod(name, memory=None, *, priority=None, node="n1", phase="Running", grace=None):
    resources = {"requests": {"memory": memory}} if memory else {}
    spec = {"nodeName": node, "containers": [{"name": "c", "resources": resources}]}
    if priority is not None:
        spec["priority"] = priority
    if grace is not None:
        spec["terminationGracePeriodSeconds"] = grace
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
        "status": {"phase": phase},
    }


def _summary(available=50 * MI, working_set=8 * GI - 50 * MI, pods=()):
    return {
        "node": {
            "nodeName": "n1",
            "memory": {"availableBytes": available, "workingSetBytes": working_set},
            "fs": {
                "availableBytes": 80 * GI,
                "capacityBytes": 100 * GI,
                "inodesFree": 900_000,
                "inodes": 1_000_000,
            },
            "rlimit": {"maxpid": 4_194_304, "curproc": 800},
        },
        "pods": [
            {
                "podRef": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
                "memory": {"workingSetBytes": ws},
                "containers": [{"name": "c", "memory": {"workingSetBytes": ws}}],
            }
            for name, ws in pods
        ],
    }


def _cluster(objects, stats=None, captured_at=CAPTURED) -> Cluster:
    return Cluster(snapshot_from_objects(list(objects), stats, captured_at))


PODS = (_pod("small", "1Gi"), _pod("hog", "100Mi"), _pod("idle"))
STATS = {"n1": _summary(pods=(("small", 500 * MI), ("hog", 900 * MI), ("idle", 10 * MI)))}


def _decide(cluster: Cluster, **params) -> dict:
    return compute(KINDS["eviction"], cluster, {"nodeName": "n1", **params}).result


def test_kind_is_registered():
    assert KINDS["eviction"].schema is EvictionRequestSchema
    assert KINDS["eviction"].decide is decide


def test_result_shape_for_a_hard_memory_threshold():
    result = _decide(_cluster([_node(), *PODS], STATS))
    assert set(result) == {
        "signals",
        "thresholdsObserved",
        "thresholdsMet",
        "nodeConditions",
        "starvedResource",
        "ranking",
        "tieGroups",
        "victim",
        "victimCandidates",
        "gracePeriodSeconds",
        "message",
        "nodeAllocatable",
        "evictions",
        "nodeLevelReclaim",
        "now",
        "nowSource",
        "configSource",
        "ignoredConfigFields",
    }
    assert result["signals"]["memory.available"] == {"available": "50Mi", "capacity": "8Gi"}
    assert result["signals"]["nodefs.inodesFree"] == {"available": "900k", "capacity": "1M"}
    assert result["signals"]["pid.available"] == {"available": "4193504", "capacity": "4194304"}
    assert "allocatableMemory.available" not in result["signals"]  # no "pods" system container
    memory = {
        "signal": "memory.available",
        "operator": "LessThan",
        "value": "100Mi",
        "gracePeriod": "0s",
        "minReclaim": None,
        "firstObserved": None,
        "gracePeriodPassed": True,
    }
    assert result["thresholdsObserved"] == [memory]
    assert result["thresholdsMet"] == [memory]
    assert result["nodeConditions"] == ["MemoryPressure"]
    assert result["starvedResource"] == "memory"
    assert [
        (r["pod"]["name"], r["exceedsRequests"], r["usage"], r["request"])
        for r in result["ranking"]
    ] == [
        ("hog", True, "900Mi", "100Mi"),
        ("idle", True, "10Mi", "0"),
        ("small", False, "500Mi", "1Gi"),
    ]
    assert result["victim"] == {
        "namespace": "default",
        "name": "hog",
        "uid": "uid-hog",
        "nodeName": "n1",
        "priority": 0,
        "qosClass": "Burstable",
    }
    assert result["gracePeriodSeconds"] == 1
    assert result["message"] == (
        "The node was low on resource: memory. Threshold quantity: 100Mi, available: 50Mi. "
        "Container c was using 900Mi, request is 100Mi, has larger consumption of memory. "
    )
    assert result["evictions"] == [
        {
            "pod": result["victim"],
            "signal": "memory.available",
            "gracePeriodSeconds": 1,
            "message": result["message"],
        }
    ]
    # defaults: memory.available<100Mi and nodefs.available<10% (float32) reserved
    assert result["nodeAllocatable"] == {
        "cpu": "4",
        "ephemeral-storage": str(100 * GI - int(float(100 * GI) * 0.10000000149011612)),
        "memory": "8092Mi",
        "pods": "110",
    }
    assert result["nodeLevelReclaim"] == []
    assert result["now"] == "2026-11-20T10:00:00Z"


def test_subjects_name_the_node_and_the_victim():
    outcome = compute(KINDS["eviction"], _cluster([_node(), *PODS], STATS), {"nodeName": "n1"})
    assert outcome.subjects.node_names == ["n1"]
    assert outcome.subjects.pods == ["default/hog"]


def test_no_pressure():
    stats = {"n1": _summary(available=4 * GI, pods=(("hog", 900 * MI),))}
    result = _decide(_cluster([_node(), *PODS], stats))
    assert result["thresholdsObserved"] == [] and result["nodeConditions"] == []
    assert result["victim"] is None and result["starvedResource"] is None
    assert result["ranking"] == [] and result["gracePeriodSeconds"] == 0
    assert result["message"] == "no resources are starved"


SOFT = {
    "evictionHard": "",
    "evictionSoft": "memory.available<1Gi",
    "evictionSoftGracePeriod": "memory.available=2m",
    "evictionMaxPodGracePeriod": 90,
}


def test_soft_threshold_grace_not_passed_without_first_observed():
    result = _decide(_cluster([_node(), *PODS], STATS), config=SOFT)
    (observed,) = result["thresholdsObserved"]
    assert observed["gracePeriod"] == "2m0s"
    assert observed["firstObserved"] is None and observed["gracePeriodPassed"] is False
    assert result["thresholdsMet"] == []
    assert result["nodeConditions"] == ["MemoryPressure"]
    assert result["victim"] is None
    assert (
        "grace periods have not passed: memory.available (grace period 2m0s, met for 0s)"
        in (result["message"])
    )


def test_soft_threshold_acts_after_grace_with_pod_grace_period():
    pods = (_pod("hog", "100Mi", grace=30), _pod("small", "1Gi"))
    result = _decide(
        _cluster([_node(), *pods], STATS),
        config=SOFT,
        firstObserved={"memory.available": "2026-11-20T09:57:00Z"},
    )
    (met,) = result["thresholdsMet"]
    assert met["firstObserved"] == "2026-11-20T09:57:00Z" and met["gracePeriodPassed"] is True
    assert result["victim"]["name"] == "hog"
    assert result["gracePeriodSeconds"] == 30  # min(evictionMaxPodGracePeriod 90, pod's 30)


def test_now_defaults_to_captured_at_and_can_be_given():
    cluster = _cluster([_node(), *PODS], STATS)
    given = _decide(cluster, now="2026-11-21T00:00:00+01:00")
    assert given["now"] == "2026-11-20T23:00:00Z"


def test_now_required_without_captured_at():
    cluster = _cluster([_node(), *PODS], STATS, captured_at=None)
    with pytest.raises(DecisionInputError) as err:
        _decide(cluster)
    assert err.value.path == "now"
    assert _decide(cluster, now="2026-11-20T10:00:00Z")["now"] == "2026-11-20T10:00:00Z"


def test_unknown_node():
    with pytest.raises(DecisionInputError) as err:
        _decide(_cluster([_node(), *PODS], STATS), nodeName="nope")
    assert err.value.path == "nodeName"


def test_node_without_stats_is_an_input_error():
    cluster = _cluster([_node(), _node("n2"), *PODS], STATS)
    with pytest.raises(DecisionInputError) as err:
        _decide(cluster, nodeName="n2")
    assert err.value.path == "nodeName"
    assert err.value.message == "snapshot has no kubelet stats for node 'n2'"


def test_first_observed_after_now():
    with pytest.raises(DecisionInputError) as err:
        _decide(
            _cluster([_node(), *PODS], STATS),
            firstObserved={"memory.available": "2026-11-20T10:00:01Z"},
        )
    assert err.value.path == "firstObserved.memory.available"


def test_reservation_beyond_capacity_is_an_input_error():
    with pytest.raises(DecisionInputError) as err:
        _decide(_cluster([_node(), *PODS], STATS), config={"kubeReserved": {"memory": "9Gi"}})
    assert err.value.path == "config"
    assert err.value.message.startswith(
        'invalid Node Allocatable configuration. Resource "memory" has a reservation of'
    )


@pytest.mark.parametrize(
    ("params", "messages"),
    [
        pytest.param(
            {"config": {"evictionHard": "memory.available>1Gi"}},
            {"config": {"evictionHard": ["malformed pair, expect string<string"]}},
            id="bad operator",
        ),
        pytest.param(
            {"config": {"evictionHard": {"memory.available": "0"}}},
            {
                "config": {
                    "evictionHard": ["eviction threshold memory.available must be positive: 0"]
                }
            },
            id="zero quantity",
        ),
        pytest.param(
            {"config": {"evictionSoft": {"memory.available": "1Gi"}}},
            {
                "config": {
                    "evictionSoftGracePeriod": [
                        "grace period must be specified for the soft eviction threshold "
                        "memory.available"
                    ]
                }
            },
            id="soft without grace",
        ),
        pytest.param(
            {"config": {"evictionMinimumReclaim": "nodefs.available=0%"}},
            {
                "config": {
                    "evictionMinimumReclaim": [
                        "eviction percentage minimum reclaim nodefs.available must be positive: 0%"
                    ]
                }
            },
            id="0% min reclaim",
        ),
        pytest.param(
            {"config": {"evictionHrad": "memory.available<1Gi"}},
            {"config": {"evictionHrad": ["Unknown field."]}},
            id="unknown config key",
        ),
        pytest.param(
            {"config": {"evictionHard": {"memory.available": 100}}},
            {
                "config": {
                    "evictionHard": ["Expected a map of strings to strings or a flag string."]
                }
            },
            id="non-string value",
        ),
        pytest.param(
            {"firstObserved": {"mem.available": "2026-11-20T09:00:00Z"}},
            {
                "firstObserved": {
                    "mem.available": {"key": ["unsupported eviction signal mem.available"]}
                }
            },
            id="unknown signal in firstObserved",
        ),
        pytest.param(
            {"config": {"evictionMaxPodGracePeriod": -1}},
            {
                "config": {
                    "evictionMaxPodGracePeriod": [
                        "Must be greater than or equal to 0 and less than or equal to 2147483647."
                    ]
                }
            },
            id="negative max pod grace period",
        ),
    ],
)
def test_request_validation(params, messages):
    with pytest.raises(ValidationError) as err:
        _decide(_cluster([_node(), *PODS], STATS), **params)
    assert err.value.messages == messages


def test_null_config_means_defaults():
    cluster = _cluster([_node(), *PODS], STATS)
    assert _decide(cluster, config=None) == _decide(cluster)


def test_a_full_110_pod_node_is_ranked_whole():
    """One pass on a 110-pod node (bench/bench_eviction.py times it): every pod ranked."""
    pods = [_pod(f"p{i}", "100Mi", priority=i % 3) for i in range(110)]
    stats = {"n1": _summary(pods=tuple((f"p{i}", (i * 7 % 200) * MI) for i in range(110)))}
    cluster = _cluster([_node(), *pods], stats)
    result = compute(KINDS["eviction"], cluster, {"nodeName": "n1"}).result
    assert result["victim"] is not None and len(result["ranking"]) == 110
    assert len({(r["pod"]["namespace"], r["pod"]["name"]) for r in result["ranking"]}) == 110


def test_eviction_uses_the_nodes_captured_configuration(api):
    snapshot_id = stored_snapshot(api, configs={"n1": {"kubeletconfig": CONFIGZ}})
    captured = evict(api, snapshot_id)
    assert captured["configSource"] == "snapshot"
    assert captured["ignoredConfigFields"] == ["enableServer", "maxPods", "syncFrequency"]
    assert captured["nodeConditions"] == ["MemoryPressure"]  # 300Mi < 500Mi
    assert captured["thresholdsMet"][0]["value"] == "500Mi"
    default = evict(api, stored_snapshot(api))
    assert default["configSource"] == "default" and default["nodeConditions"] == []
    given = evict(api, snapshot_id, config={"evictionHard": {"memory.available": "100Mi"}})
    assert given["configSource"] == "request" and given["nodeConditions"] == []


def test_a_captured_configuration_the_kubelet_would_refuse_names_the_node(api):
    snapshot_id = stored_snapshot(api, configs={"n1": {"evictionHard": {"memory.available": "-1"}}})
    response = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["path"].startswith("kubeletConfigs.n1")


def test_a_whole_kubelet_configuration_is_accepted_and_its_unused_fields_listed(api):
    config = {
        "kind": "KubeletConfiguration",
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        **CONFIGZ,
    }
    result = evict(api, stored_snapshot(api), config=config)
    assert result["ignoredConfigFields"] == ["enableServer", "maxPods", "syncFrequency"]
    assert result["nodeConditions"] == ["MemoryPressure"]
    # Without kind/apiVersion the object holds eviction settings only: a typo is refused.
    response = api.post(
        "/v1/decisions/eviction",
        json={"snapshotId": stored_snapshot(api), "nodeName": "n1", "config": {"evictionHrad": {}}},
    )
    assert response.status_code == 422 and "evictionHrad" in response.json["errors"][0]["path"]
    wrong = {**config, "apiVersion": "kubelet.config.k8s.io/v1alpha1"}
    response = api.post(
        "/v1/decisions/eviction",
        json={"snapshotId": stored_snapshot(api), "nodeName": "n1", "config": wrong},
    )
    assert response.status_code == 422 and "apiVersion" in response.json["errors"][0]["path"]


# --- ties (API 1.2): the kubelet's order among pods its comparison cannot separate ---


def _tied_node():
    """issue 30's case: 14 pods, priority (i % 3) * 10, request 100Mi, usage 200Mi for odd i
    and 150Mi for even i. The kubelet's own code evicted m09, Verdict's order says m03: both
    are right, since sort.Sort is not stable past 12 items and its input has no order."""
    pods = [_pod(f"m{i:02d}", "100Mi", priority=(i % 3) * 10) for i in range(14)]
    usage = [(f"m{i:02d}", (200 if i % 2 else 150) * MI) for i in range(14)]
    return _cluster([_node(), *pods], {"n1": _summary(pods=usage)})


def test_tied_pods_are_named_as_groups_and_every_possible_victim_listed():
    result = _decide(_tied_node())
    names = [e["pod"]["name"] for e in result["ranking"]]
    groups = [(g["first"], g["last"], [p["name"] for p in g["pods"]]) for g in result["tieGroups"]]
    # priority 0 first (i % 3 == 0), usage above request 100Mi before 50Mi, and so on.
    assert groups == [
        (0, 1, ["m03", "m09"]),
        (2, 4, ["m00", "m06", "m12"]),
        (5, 7, ["m01", "m07", "m13"]),
        (8, 9, ["m04", "m10"]),
        (10, 11, ["m05", "m11"]),
        (12, 13, ["m02", "m08"]),
    ]
    assert names[:2] == ["m03", "m09"]
    assert result["victim"]["name"] == "m03"  # the deterministic choice: snapshot order
    assert [p["name"] for p in result["victimCandidates"]] == ["m03", "m09"]


def test_a_victim_without_ties_is_its_only_candidate():
    result = _decide(_cluster([_node(), *PODS], STATS))
    assert result["tieGroups"] == []
    assert result["victimCandidates"] == [result["victim"]]


def test_critical_pods_in_the_victims_group_are_not_candidates():
    pods = [_pod("a", "100Mi"), _pod("b", "100Mi"), _pod("c", "100Mi")]
    pods[0]["metadata"]["annotations"] = {"kubernetes.io/config.source": "file"}  # static
    usage = [(p["metadata"]["name"], 300 * MI) for p in pods]
    result = _decide(_cluster([_node(), *pods], {"n1": _summary(pods=usage)}))
    assert [p["name"] for p in result["tieGroups"][0]["pods"]] == ["a", "b", "c"]
    assert result["victim"]["name"] == "b"
    assert [p["name"] for p in result["victimCandidates"]] == ["b", "c"]
