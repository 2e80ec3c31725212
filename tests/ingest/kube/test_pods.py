"""What the inter-pod affinity and topology spread plugins will read of a pod, kept at ingest
(``ingest/kube/pods.py``): pod (anti-)affinity terms, topology spread constraints; and the API
server's validation of them (422 naming the field)."""

from __future__ import annotations

import pytest

from service.ingest.errors import IngestError
from service.ingest.kube import pod_from_object
from tests.conftest import kube_list, node, pod


def _pod(**spec) -> dict:
    return pod("p", **spec)


TERM = {
    "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web"]}]},
    "topologyKey": "kubernetes.io/hostname",
    "namespaceSelector": {"matchLabels": {"team": "a"}},
    "namespaces": ["other"],
    "matchLabelKeys": ["pod-template-hash"],
}


def test_affinity_terms_and_spread_constraints_are_kept() -> None:
    p = pod_from_object(
        _pod(
            affinity={
                "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [TERM]},
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 40, "podAffinityTerm": TERM}
                    ]
                },
            },
            topologySpreadConstraints=[
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                    "minDomains": 3,
                    "nodeTaintsPolicy": "Honor",
                }
            ],
        )
    )
    (term,) = p.pod_affinity_required
    assert term.topology_key == "kubernetes.io/hostname"
    assert term.namespaces == ("other",)
    assert term.namespace_selector.match_labels == {"team": "a"}
    assert term.label_selector.match_expressions[0].values == ("web",)
    assert term.match_label_keys == ("pod-template-hash",)
    assert p.pod_anti_affinity_preferred[0].weight == 40
    assert p.pod_affinity_preferred == () and p.pod_anti_affinity_required == ()
    (constraint,) = p.topology_spread_constraints
    assert (constraint.max_skew, constraint.min_domains, constraint.node_taints_policy) == (
        1,
        3,
        "Honor",
    )
    assert p.unmodelled == ("InterPodAffinity", "PodTopologySpread")


BAD = [
    pytest.param(
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            **TERM,
                            "labelSelector": {
                                "matchExpressions": [
                                    {"key": "app", "operator": "Near", "values": ["x"]}
                                ]
                            },
                        }
                    ]
                }
            }
        },
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].operator",
        'Unsupported value: "Near"',
        id="label selector with an unknown operator",
    ),
    pytest.param(
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [{**TERM, "topologyKey": ""}]
                }
            }
        },
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
        "can not be empty",
        id="an empty topology key",
    ),
    pytest.param(
        {
            "affinity": {
                "podAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {"weight": 0, "podAffinityTerm": TERM}
                    ]
                }
            }
        },
        "spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
        "1-100",
        id="a preferred term's weight out of range",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {"maxSkew": 0, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        },
        "spec.topologySpreadConstraints[0].maxSkew",
        "must be greater than zero",
        id="maxSkew 0",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "Sometimes"}
            ]
        },
        "spec.topologySpreadConstraints[0].whenUnsatisfiable",
        'Unsupported value: "Sometimes"',
        id="an unknown whenUnsatisfiable",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "zone",
                    "whenUnsatisfiable": "ScheduleAnyway",
                    "minDomains": 2,
                }
            ]
        },
        "spec.topologySpreadConstraints[0].minDomains",
        "can only use minDomains if whenUnsatisfiable=DoNotSchedule",
        id="minDomains with ScheduleAnyway",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "DoNotSchedule"}
            ]
        },
        "spec.topologySpreadConstraints[0].topologyKey",
        "can not be empty",
        id="a spread constraint without a topology key",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {"maxSkew": 1, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"},
                {"maxSkew": 2, "topologyKey": "z", "whenUnsatisfiable": "DoNotSchedule"},
            ]
        },
        "spec.topologySpreadConstraints[0].{topologyKey, whenUnsatisfiable}",
        "Duplicate value",
        id="two constraints on the same key and action",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "z",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "nodeTaintsPolicy": "Sometimes",
                }
            ]
        },
        "spec.topologySpreadConstraints[0].nodeTaintsPolicy",
        'Unsupported value: "Sometimes"',
        id="an unknown node inclusion policy",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "z",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "matchLabelKeys": ["pod-template-hash"],
                }
            ]
        },
        "spec.topologySpreadConstraints[0].matchLabelKeys",
        "must not be specified when labelSelector is not set",
        id="spread matchLabelKeys without a selector",
    ),
    pytest.param(
        {
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "z",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "minDomains": 0,
                }
            ]
        },
        "spec.topologySpreadConstraints[0].minDomains",
        "must be greater than zero",
        id="minDomains 0",
    ),
    pytest.param(
        {
            "affinity": {
                "podAntiAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {**TERM, "topologyKey": "not a/valid/key"}
                    ]
                }
            }
        },
        "spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
        'Invalid value: "not a/valid/key"',
        id="a topology key that is not a label name",
    ),
    pytest.param(
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {**TERM, "namespaces": ["Team_A"]}
                    ]
                }
            }
        },
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].namespace",
        "RFC 1123 label",
        id="a namespace that is not a DNS label",
    ),
    pytest.param(
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "topologyKey": "kubernetes.io/hostname",
                            "matchLabelKeys": ["pod-template-hash"],
                        }
                    ]
                }
            }
        },
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].matchLabelKeys",
        "must not be specified when labelSelector is not set",
        id="affinity matchLabelKeys without a selector",
    ),
    pytest.param(
        {
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                **TERM,
                                "matchLabelKeys": ["tenant"],
                                "mismatchLabelKeys": ["tenant"],
                            },
                        }
                    ]
                }
            }
        },
        "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]"
        ".podAffinityTerm.matchLabelKeys[0]",
        "exists in both matchLabelKeys and mismatchLabelKeys",
        id="a key in both matchLabelKeys and mismatchLabelKeys",
    ),
    pytest.param(
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {**TERM, "mismatchLabelKeys": ["-bad-"]}
                    ]
                }
            }
        },
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".mismatchLabelKeys[0]",
        'Invalid value: "-bad-"',
        id="a mismatchLabelKeys key that is not a label name",
    ),
    pytest.param(
        {
            "affinity": {
                "podAffinity": {
                    "requiredDuringSchedulingIgnoredDuringExecution": [
                        {
                            **TERM,
                            "namespaceSelector": {
                                "matchExpressions": [
                                    {"key": "team", "operator": "Exists", "values": ["a"]}
                                ]
                            },
                        }
                    ]
                }
            }
        },
        "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]"
        ".namespaceSelector.matchExpressions[0].values",
        "may not be specified when `operator` is 'Exists'",
        id="a namespace selector with values for Exists",
    ),
]


@pytest.mark.parametrize(("spec", "path", "words"), BAD)
def test_invalid_scheduling_constraints_are_refused(spec, path, words) -> None:
    with pytest.raises(IngestError) as exc:
        pod_from_object(_pod(**spec))
    messages = {e.path: e.message for e in exc.value.errors}
    assert path in messages, messages
    assert words in messages[path]


@pytest.mark.parametrize(("spec", "path", "words"), BAD)
def test_through_the_api_nothing_is_stored(api, spec, path, words) -> None:
    body = kube_list(node("n1"), pod("bad", "n1", **spec))
    response = api.post("/v1/snapshots", json=body, role="decide")
    assert response.status_code == 422, response.json
    assert any(e["path"] == f"items[1].{path}" for e in response.json["errors"]), response.json
    assert api.get("/v1/snapshots", role="read").json["items"] == []


@pytest.mark.parametrize(("spec", "path", "words"), BAD)
def test_a_decision_on_such_a_pod_is_refused_and_records_nothing(api, spec, path, words) -> None:
    snapshot = api.post("/v1/snapshots", json=kube_list(node("n1")), role="decide").json["id"]
    body = {"snapshotId": snapshot, "pod": pod("incoming", **spec)}
    response = api.post("/v1/decisions/placement", json=body, role="decide", validate=False)
    assert response.status_code == 422, response.json
    messages = {e["path"]: e["message"] for e in response.json["errors"]}
    assert f"pod.{path}" in messages, messages
    assert words in messages[f"pod.{path}"]
    assert api.get("/v1/decisions", role="read").json["items"] == []


def test_the_ready_condition_and_every_emptydir_are_kept_for_drains():
    """The Eviction API reads podutil.IsPodReady; kubectl drain's hasLocalStorage counts an
    emptyDir of any medium. Other conditions are left out."""
    from tests.conftest import pod as pod_object
    from tests.conftest import snapshot_from_objects as snap

    obj = pod_object("p", "n1")
    obj["spec"]["volumes"] = [
        {"name": "disk", "emptyDir": {}},
        {"name": "shm", "emptyDir": {"medium": "Memory"}},
        {"name": "conf", "configMap": {"name": "c"}},
    ]
    obj["status"]["conditions"] = [
        {"type": "Ready", "status": "False"},
        {"type": "PodScheduled", "status": "True"},
    ]
    (read,) = snap([obj]).pods
    assert [(c.type, c.status) for c in read.conditions] == [("Ready", "False")]
    assert read.empty_dir_names == ("disk", "shm")
