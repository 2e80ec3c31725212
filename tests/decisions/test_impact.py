"""Impact (decisions/impact.py) through POST /v1/impact: replays of the stored history under a
change, counted and summarised, a keyset page at a time; bad input is a 4xx naming the field
and nothing is stored."""

from __future__ import annotations

import pytest

from service.decisions.impact import summary
from service.extensions import extensions
from tests.conftest import pod
from tests.decisions.helpers import (
    SCHEDULER_CONFIGURATION,
    place,
    pod_level_pod,
    releases_apart_snapshot,
    stored_snapshot,
)


def _impact(api, body, role="read"):
    return api.post("/v1/impact", json=body, role=role)


def _admit(api, snapshot_id, name="small"):
    response = api.post(
        "/v1/decisions/admission",
        json={"snapshotId": snapshot_id, "nodeName": "n1", "pod": pod(name, cpu="100m")},
        role="decide",
    )
    assert response.status_code == 201, response.json
    return response.json


def _history(api) -> dict:
    """Two placements recorded under 1.36 that 1.37 places elsewhere, one it places alike,
    and an admission no release decides differently."""
    snapshot_id = releases_apart_snapshot(api)
    return {
        "snapshot": snapshot_id,
        "moved": [place(api, snapshot_id, "1.36", pod_level_pod(f"web-{i}"))["id"] for i in (1, 2)],
        "same": place(api, snapshot_id, "1.36", pod("plain", cpu="100m"))["id"],
        "admission": _admit(api, snapshot_id)["id"],
    }


def _records(api) -> list[str]:
    return [r["id"] for r in api.get("/v1/decisions?limit=1000", role="read").json["items"]]


def test_an_upgrade_over_the_history_counts_and_says_what_changes(api):
    history = _history(api)
    before = _records(api)
    answer = _impact(api, {"kubernetesVersion": "1.37"}).json
    assert (answer["examined"], answer["unchanged"], answer["changed"], answer["failed"]) == (
        4,
        2,
        2,
        0,
    )
    assert answer["byKind"] == {
        "admission": {"examined": 1, "changed": 0, "failed": 0},
        "placement": {"examined": 3, "changed": 2, "failed": 0},
    }
    assert [c["decisionId"] for c in answer["changes"]] == history["moved"][::-1]  # newest first
    change = answer["changes"][0]
    assert change["kind"] == "placement" and change["subject"] == "default/web-2"
    assert change["summary"].startswith("selected node n1 → n2")
    assert {"path": "result.selectedNode", "stored": "n1", "replayed": "n2"} in change[
        "differences"
    ]
    assert answer["failures"] == [] and answer["nextCursor"] is None
    assert _records(api) == before  # nothing stored


def test_pages_follow_the_cursor_and_add_up(api):
    _history(api)
    seen, cursor, pages = [], None, 0
    while True:
        body = {"kubernetesVersion": "1.37", "limit": 1}
        if cursor:
            body["cursor"] = cursor
        answer = _impact(api, body).json
        pages += 1
        assert answer["examined"] == 1
        seen += [c["decisionId"] for c in answer["changes"]]
        cursor = answer["nextCursor"]
        if cursor is None:
            break
    assert pages == 4 and len(seen) == 2


def test_a_filter_narrows_the_history(api):
    history = _history(api)
    by_kind = _impact(api, {"kubernetesVersion": "1.37", "filter": {"kind": "admission"}}).json
    assert by_kind["examined"] == 1 and by_kind["changed"] == 0
    by_pod = _impact(api, {"kubernetesVersion": "1.37", "filter": {"pod": "default/web-1"}}).json
    assert [c["decisionId"] for c in by_pod["changes"]] == [history["moved"][0]]


def test_a_scheduler_configuration_the_pods_scheduler_lacks_is_a_failure_with_its_reason(api):
    snapshot_id = releases_apart_snapshot(api)
    stray = place(api, snapshot_id, "1.37", pod_level_pod("batch-job", schedulerName="batch"))
    place(api, snapshot_id, "1.37")
    response = _impact(api, {"schedulerConfiguration": SCHEDULER_CONFIGURATION})
    assert response.status_code == 200, response.json
    answer = response.json
    assert (answer["examined"], answer["failed"]) == (2, 1)
    assert answer["failures"][0]["decisionId"] == stray["id"]
    assert answer["failures"][0]["reason"].startswith("pod.spec.schedulerName: no profile")


def test_a_kubelet_configuration_changes_eviction_decisions_only(api):
    snapshot_id = stored_snapshot(api)
    response = api.post(
        "/v1/decisions/eviction", json={"snapshotId": snapshot_id, "nodeName": "n1"}
    )
    assert response.status_code == 201
    answer = _impact(
        api, {"kubeletConfiguration": {"evictionHard": {"memory.available": "500Mi"}}}
    ).json
    assert answer["changed"] == 1
    assert answer["changes"][0]["subject"] == "node n1"
    assert answer["changes"][0]["summary"].startswith("eviction victim none → busy")


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({}, "kubernetesVersion"),
        ({"kubernetesVersion": "1.99"}, "kubernetesVersion"),
        ({"kubernetesVersion": "1.37", "filter": {"kind": "prune"}}, "filter.kind"),
        ({"kubernetesVersion": "1.37", "filter": {"color": "red"}}, "filter.color"),
        ({"kubernetesVersion": "1.37", "filter": {"pod": "web"}}, "filter.pod"),
        ({"kubernetesVersion": "1.37", "filter": {"snapshotId": "x"}}, "filter.snapshotId"),
        ({"kubernetesVersion": "1.37", "filter": {"since": "yesterday"}}, "filter.since"),
        (
            {
                "kubernetesVersion": "1.37",
                "filter": {"since": "2026-11-20T00:00:00Z", "until": "2026-11-19T00:00:00Z"},
            },
            "filter.until",
        ),
        ({"kubernetesVersion": "1.37", "limit": 0}, "limit"),
        ({"kubernetesVersion": "1.37", "limit": 1001}, "limit"),
        ({"kubernetesVersion": "1.37", "cursor": "not-a-cursor"}, "cursor"),
        (
            {
                "schedulerConfiguration": {
                    **SCHEDULER_CONFIGURATION,
                    "percentageOfNodesToScore": 101,
                }
            },
            "schedulerConfiguration.percentageOfNodesToScore",
        ),
        (
            {"kubeletConfiguration": {"evictionHard": {"memory.free": "1Gi"}}},
            "kubeletConfiguration",
        ),
        ({"kubernetesVersion": "1.37", "filter": {"nodeName": "nowhere"}}, "filter"),
    ],
)
def test_bad_input_is_a_422_naming_the_field_and_stores_nothing(api, body, path):
    _history(api)
    before = _records(api)
    response = _impact(api, body)
    assert response.status_code == 422, response.json
    paths = [e["path"] for e in response.json["errors"]]
    assert any(p == path or p.startswith(path + ".") for p in paths), paths
    assert _records(api) == before


def test_a_cursor_from_another_query_is_refused(api):
    _history(api)
    first = _impact(api, {"kubernetesVersion": "1.37", "limit": 1}).json
    other = {"kubernetesVersion": "1.35", "limit": 1, "cursor": first["nextCursor"]}
    response = _impact(api, other)
    assert response.status_code == 422
    assert response.json["errors"][0]["path"] == "cursor"
    narrowed = {
        "kubernetesVersion": "1.37",
        "filter": {"kind": "placement"},
        "cursor": first["nextCursor"],
    }
    assert _impact(api, narrowed).json["errors"][0]["path"] == "cursor"
    same = {"kubernetesVersion": "1.37", "limit": 2, "cursor": first["nextCursor"]}
    assert _impact(api, same).status_code == 200  # the page size may change


def test_the_read_role_may_ask_and_no_key_may_not(api):
    _history(api)
    assert _impact(api, {"kubernetesVersion": "1.37"}, role="read").status_code == 200
    assert _impact(api, {"kubernetesVersion": "1.37"}, role=None).status_code == 401


def test_a_yaml_body_is_read_as_json(api):
    _history(api)
    response = api.post(
        "/v1/impact",
        data=b"kubernetesVersion: '1.37'\nfilter:\n  kind: placement\n",
        content_type="application/yaml",
        role="read",
    )
    assert response.status_code == 200 and response.json["changed"] == 2
    bad = api.post(
        "/v1/impact",
        data=b"kubernetesVersion: '1.99'\n",
        content_type="application/yaml",
        role="read",
    )
    assert bad.status_code == 422 and bad.json["errors"][0]["path"] == "kubernetesVersion"


def _ref(name):
    return {"namespace": "default", "name": name}


@pytest.mark.parametrize(
    ("kind", "stored", "replayed", "expected"),
    [
        ("placement", {"selectedNode": "n3"}, {"selectedNode": "n7"}, "selected node n3 → n7"),
        ("placement", {"selectedNode": "n3"}, {"selectedNode": None}, "selected node n3 → none"),
        (
            "preemption",
            {"victims": [_ref("a"), _ref("b")]},
            {"victims": [_ref("c")]},
            "victims [a, b] → [c]",
        ),
        (
            "admission",
            {"admitted": True},
            {"admitted": False, "kubeletReason": "OutOfcpu"},
            "admitted → rejected (OutOfcpu)",
        ),
        (
            "admission",
            {"admitted": False, "kubeletReason": "OutOfcpu"},
            {"admitted": False, "kubeletReason": "OutOfmemory"},
            "rejected (OutOfcpu) → rejected (OutOfmemory)",
        ),
        ("eviction", {"victim": _ref("x")}, {"victim": _ref("y")}, "eviction victim x → y"),
        (
            "eviction",
            {"victim": {"namespace": "kube-system", "name": "x"}},
            {"victim": None},
            "eviction victim kube-system/x → none",
        ),
        (
            "node-eviction-rate",
            {"zones": [{"key": "r:\x00:eu-1a", "zone": "eu-1a", "evictionRate": 0.1}]},
            {"zones": [{"key": "r:\x00:eu-1a", "zone": "eu-1a", "evictionRate": 0.01}]},
            "zone eu-1a rate 0.1 → 0.01",
        ),
        ("placement", {"message": "a"}, {"message": "b"}, "message changed"),
    ],
)
def test_summary_says_what_a_person_cares_about(kind, stored, replayed, expected):
    differences = [{"path": f"result.{k}", "stored": None, "replayed": None} for k in stored]
    assert summary(kind, stored, replayed, differences) == expected


def test_a_later_page_after_a_prune_is_empty_not_an_error(api, app):
    from datetime import UTC, datetime, timedelta

    from service.engine.version import ENGINE_VERSION
    from service.store import records

    _history(api)
    first = _impact(api, {"kubernetesVersion": "1.37", "limit": 1}).json
    with extensions(app).db.session(write=True) as session:
        records.prune(session, datetime.now(UTC) + timedelta(days=1), ENGINE_VERSION)
    later = {"kubernetesVersion": "1.37", "limit": 1, "cursor": first["nextCursor"]}
    answer = _impact(api, later).json
    assert (answer["examined"], answer["changes"], answer["nextCursor"]) == (0, [], None)


def test_a_page_past_its_time_stops_early_and_the_cursor_continues(api, monkeypatch):
    from service.decisions import impact

    history = _history(api)
    monkeypatch.setattr(impact, "PAGE_SECONDS", 0.0)
    seen, cursor = [], None
    while True:
        body = {"kubernetesVersion": "1.37", **({"cursor": cursor} if cursor else {})}
        answer = _impact(api, body).json
        assert answer["examined"] == 1
        seen += [c["decisionId"] for c in answer["changes"]]
        cursor = answer["nextCursor"]
        if cursor is None:
            break
    assert sorted(seen) == sorted(history["moved"])


def test_a_replay_equal_to_the_stored_text_is_not_walked(api, monkeypatch):
    """Unchanged decisions match their stored JSON text byte for byte (both databases keep
    it as written), so only the changed ones are parsed and walked for differences."""
    from service.decisions import impact

    _history(api)
    walked = []
    real = impact.differences
    monkeypatch.setattr(impact, "differences", lambda a, b: walked.append(a) or real(a, b))
    answer = _impact(api, {"kubernetesVersion": "1.37"}).json
    assert answer["changed"] == 2 and len(walked) == 2


def test_a_page_yields_only_under_gevent_and_once_per_slice(api, monkeypatch):
    """time.sleep(0) is gevent's cooperative switch under `verdict serve`; elsewhere it is a
    system call that gives the core away, so a page outside gevent never makes it."""
    from service.decisions import cooperative, impact

    _history(api)
    slept = []
    monkeypatch.setattr(impact.time, "sleep", lambda s: slept.append(s))
    assert _impact(api, {"kubernetesVersion": "1.37"}).json["examined"] == 4
    assert slept == []
    monkeypatch.setattr(cooperative, "under_gevent", lambda: True)
    monkeypatch.setattr(cooperative, "YIELD_SECONDS", 0.0)
    assert _impact(api, {"kubernetesVersion": "1.37"}).json["examined"] == 4
    assert slept == [0, 0, 0, 0]
    monkeypatch.setattr(cooperative, "YIELD_SECONDS", 3600.0)
    slept.clear()
    _impact(api, {"kubernetesVersion": "1.37"})
    assert slept == []


def _examined(monkeypatch, stored: dict, replayed: dict):
    """One Page.examine of a placement stored as ``stored`` (its JSON text, as written) and
    replayed as ``replayed``: the page, and whether the replayed result was encoded."""
    from service.decisions import impact
    from service.store.db import strict_json
    from service.store.records import ReplayRow

    encoded = []
    monkeypatch.setattr(impact, "decide_again", lambda *a, **k: (replayed, {}))
    monkeypatch.setattr(impact, "strict_json", lambda v: encoded.append(v) or strict_json(v))
    row = ReplayRow(1, "d1", "placement", "s1", {"pod": {}}, strict_json(stored))
    page = impact.Page()
    page.examine(None, None, impact.ImpactQuery(kubernetes_version="1.36"), row, None)
    return page, bool(encoded)


@pytest.mark.parametrize(
    ("stored", "replayed", "changed", "encoded"),
    [
        ({"n": [1, 2], "s": "a"}, {"n": [1, 2], "s": "a"}, 0, False),  # equal values
        ({"n": [1, 2.0]}, {"n": [1.0, 2]}, 0, False),  # the walk takes 1 and 1.0 alike
        ({"n": [1, 2]}, {"n": (1, 2)}, 0, True),  # a tuple: the same text
        ({"n": [1, 2], "s": "a"}, {"n": [1, 3], "s": "a"}, 1, False),  # ints differ
        ({"s": "a"}, {"s": "b"}, 1, False),
        ({"b": True}, {"b": False}, 1, False),
        ({"f": 1.5}, {"f": 2.5}, 1, True),  # floats: the text is compared first
        ({"n": None}, {"n": 1}, 1, True),
        ({"n": [1]}, {"n": (2,)}, 1, True),
    ],
)
def test_a_change_is_told_from_the_same_text_without_encoding_where_it_can(
    monkeypatch, stored, replayed, changed, encoded
):
    """Changed when the values differ, the walk finds a difference and the JSON texts
    differ; the replayed result is encoded to compare texts only when no difference
    between two ints, strings or booleans already proves that they differ."""
    page, was_encoded = _examined(monkeypatch, stored, replayed)
    assert (page.changed, was_encoded) == (changed, encoded)
