"""``schedulerConfiguration`` (ingest/kubescheduler_config.py) over HTTP: the cluster's own KubeSchedulerConfiguration picks
the profile by the pod's schedulerName and changes the answer as the real scheduler's
configuration would; a malformed one is a 422 naming the field, and records nothing."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import kube_list, node, pod

API = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}


def _snapshot(api) -> str:
    cluster = kube_list(
        node("big", cpu="8", memory="16Gi"),
        node("small", cpu="2", memory="4Gi"),
        pod("busy", "small", cpu="1", memory="1Gi"),
    )
    return api.post("/v1/snapshots", json=cluster, role="decide").json["id"]


def _place(api, snap, config, scheduler_name=None, **extra):
    incoming = pod("p", cpu="500m", memory="512Mi")
    if scheduler_name:
        incoming["spec"]["schedulerName"] = scheduler_name
    body = {"snapshotId": snap, "pod": incoming, "schedulerConfiguration": config, **extra}
    return api.post("/v1/decisions/placement", json=body, role="decide", validate=False)


MOST_ALLOCATED = {
    **API,
    "profiles": [
        {
            "schedulerName": "bin-packing",
            "pluginConfig": [
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "scoringStrategy": {
                            "type": "MostAllocated",
                            "resources": [
                                {"name": "cpu", "weight": 1},
                                {"name": "memory", "weight": 1},
                            ],
                        }
                    },
                }
            ],
            "plugins": {"score": {"disabled": [{"name": "NodeResourcesBalancedAllocation"}]}},
        },
        {"schedulerName": "default-scheduler"},
    ],
}


def test_the_pods_scheduler_name_picks_the_profile(api):
    snap = _snapshot(api)
    spread = _place(api, snap, MOST_ALLOCATED).json
    packed = _place(api, snap, MOST_ALLOCATED, scheduler_name="bin-packing").json
    assert spread["result"]["selectedNode"] == "big"
    assert packed["result"]["selectedNode"] == "small"
    assert "NodeResourcesBalancedAllocation" not in packed["result"]["weights"]
    assert packed["request"]["schedulerConfiguration"] == MOST_ALLOCATED
    replay = api.post(f"/v1/decisions/{packed['id']}/replay", role="decide").json
    assert replay["matches"] is True


def test_yaml_text_and_multi_point_weights(api):
    snap = _snapshot(api)
    config = {
        **API,
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "NodeResourcesFit", "weight": 7}]}},
            }
        ],
    }
    record = _place(api, snap, yaml.safe_dump(config)).json
    assert record["result"]["weights"]["NodeResourcesFit"] == 7
    big = record["result"]["nodes"][0]
    assert big["total"] == sum(record["result"]["weights"][p] * s for p, s in big["scores"].items())


def test_start_index_with_percentage_of_nodes_to_score(api):
    snap = _snapshot(api)
    config = {**API, "percentageOfNodesToScore": 50}
    result = _place(api, snap, config, options={"startIndex": 1}).json["result"]
    # below 100 nodes the scheduler looks for every feasible node, from index 1, wrapping
    assert result["numNodesToFind"] == 2 and result["nextStartIndex"] == 1
    assert all(n.get("examined", True) for n in result["nodes"])


@pytest.mark.parametrize(
    ("config", "path", "words"),
    [
        (
            {**API, "profiles": [{"plugins": {"score": {"enabled": [{"name": "Nope"}]}}}]},
            "schedulerConfiguration.profiles[0].plugins.score.enabled[0]",
            'ScorePlugin "Nope" does not exist',
        ),
        (
            {
                **API,
                "profiles": [{"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}],
            },
            "schedulerConfiguration.profiles[0].plugins.filter.enabled[0]",
            "does not extend FilterPlugin",
        ),
        (
            {
                **API,
                "profiles": [
                    {
                        "plugins": {
                            "multiPoint": {"enabled": [{"name": "ImageLocality", "weight": 2**31}]}
                        }
                    }
                ],
            },
            "schedulerConfiguration.profiles[0].plugins.multiPoint.enabled[0].weight",
            "int32",
        ),
        (
            {**API, "percentageOfNodesToScore": 101},
            "schedulerConfiguration.percentageOfNodesToScore",
            "not in valid range [0-100]",
        ),
        (
            {**API, "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]},
            "schedulerConfiguration.profiles[1].schedulerName",
            "Duplicate value",
        ),
        (
            {**API, "profiles": [{}, {"schedulerName": "b"}]},
            "schedulerConfiguration.profiles[0].schedulerName",
            "Required value",
        ),
        (
            {**API, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
            "schedulerConfiguration.apiVersion",
            "must be",
        ),
        ({**API, "profile": []}, "schedulerConfiguration.profile", 'unknown field "profile"'),
        (
            {
                **API,
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "DefaultPreemption",
                                "args": {"minCandidateNodesPercentage": 150},
                            }
                        ]
                    }
                ],
            },
            "schedulerConfiguration.profiles[0].pluginConfig[0].args.minCandidateNodesPercentage",
            "not in valid range [0, 100]",
        ),
        (
            {
                **API,
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "NodeResourcesFit",
                                "args": {
                                    "scoringStrategy": {
                                        "type": "LeastAllocated",
                                        "resources": [{"name": "cpu", "weight": 101}],
                                    }
                                },
                            }
                        ]
                    }
                ],
            },
            "schedulerConfiguration.profiles[0].pluginConfig[0].args.scoringStrategy.resources[0].weight",
            "(0, 100]",
        ),
        (
            {
                **API,
                "profiles": [
                    {
                        "pluginConfig": [
                            {
                                "name": "PodTopologySpread",
                                "args": {
                                    "defaultingType": "List",
                                    "defaultConstraints": [
                                        {
                                            "maxSkew": 0,
                                            "topologyKey": "zone",
                                            "whenUnsatisfiable": "DoNotSchedule",
                                        }
                                    ],
                                },
                            }
                        ]
                    }
                ],
            },
            "schedulerConfiguration.profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew",
            "greater than zero",
        ),
        (
            {
                **API,
                "profiles": [
                    {
                        "pluginConfig": [
                            {"name": "NodeAffinity", "args": {}},
                            {"name": "NodeAffinity", "args": {}},
                        ]
                    }
                ],
            },
            "schedulerConfiguration.profiles[0].pluginConfig[1]",
            "Duplicate value",
        ),
        (
            {**API, "profiles": [{"plugins": {"queueSort": {"disabled": [{"name": "*"}]}}}]},
            "schedulerConfiguration.profiles[0].plugins.queueSort",
            "only one queue sort plugin",
        ),
        (
            {**API, "extenders": [{"urlPrefix": "http://x"}]},
            "schedulerConfiguration.extenders",
            "not modelled",
        ),
        ("kind: [unclosed", "schedulerConfiguration", "invalid YAML"),
        (42, "schedulerConfiguration", "KubeSchedulerConfiguration"),
    ],
)
def test_bad_configuration_is_refused_and_records_nothing(api, config, path, words):
    snap = _snapshot(api)
    response = _place(api, snap, config)
    assert response.status_code == 422, response.json
    errors = {e["path"]: e["message"] for e in response.json["errors"]}
    assert path in errors, errors
    assert words in errors[path]
    assert api.get("/v1/decisions", role="read").json["items"] == []


def test_conflicting_options_and_unknown_scheduler(api):
    snap = _snapshot(api)
    both = _place(api, snap, API, scoring={"strategy": "MostAllocated"})
    assert both.status_code == 422
    assert [e["path"] for e in both.json["errors"]] == ["schedulerConfiguration"]
    other = _place(api, snap, API, scheduler_name="gpu-scheduler")
    assert other.status_code == 422
    assert [e["path"] for e in other.json["errors"]] == ["pod.spec.schedulerName"]
    assert api.get("/v1/decisions", role="read").json["items"] == []


def test_preemption_reads_the_configurations_default_preemption_args(api):
    nodes = [node(f"n{i}", cpu="1") for i in range(4)]
    pods = [pod(f"low{i}", f"n{i}", cpu="900m", priority=0) for i in range(4)]
    snap = api.post("/v1/snapshots", json=kube_list(*nodes, *pods), role="decide").json["id"]
    config = {
        **API,
        "profiles": [
            {
                "pluginConfig": [
                    {
                        "name": "DefaultPreemption",
                        "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 2},
                    }
                ]
            }
        ],
    }
    body = {"snapshotId": snap, "pod": pod("high", cpu="500m", priority=100)}
    default = api.post("/v1/decisions/preemption", json=body, role="decide").json["result"]
    configured = api.post(
        "/v1/decisions/preemption", json={**body, "schedulerConfiguration": config}, role="decide"
    ).json["result"]
    overridden = api.post(
        "/v1/decisions/preemption",
        json={
            **body,
            "schedulerConfiguration": config,
            "options": {"minCandidateNodesAbsolute": 3},
        },
        role="decide",
    ).json["result"]
    assert default["numCandidates"] == 4
    assert configured["numCandidates"] == 2 and len(configured["candidates"]) == 2
    assert overridden["numCandidates"] == 3
