"""What operators read in /metrics (api/metrics.py): build info, ingest, snapshot cache,
decisions by kind and outcome."""

from __future__ import annotations

from prometheus_client.parser import text_string_to_metric_families

from tests.api.helpers import snapshot_with_stats
from tests.conftest import pod


def _samples(api) -> dict:
    text = api.get("/metrics", role=None).get_data(as_text=True)
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def _value(samples: dict, name: str, **labels) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_metrics_count_ingest_cache_and_decisions_by_outcome(api):
    before = _samples(api)
    snapshot_id = snapshot_with_stats(api)
    for _ in range(2):
        api.post(
            "/v1/decisions/eviction",
            json={"snapshotId": snapshot_id, "nodeName": "n1", "now": "2026-11-20T10:00:00Z"},
        )
    api.post(
        "/v1/decisions/admission",
        json={"snapshotId": snapshot_id, "pod": pod("b", "n1", cpu="100")},
    )
    after = _samples(api)
    infos = [k for k in after if k[0] == "verdict_build_info"]
    assert len(infos) == 1 and after[infos[0]] == 1
    assert {"version", "engine_version", "python"} == {k for k, _ in infos[0][1]}

    def delta(name, **labels):
        return _value(after, name, **labels) - _value(before, name, **labels)

    assert delta("verdict_ingest_bytes_count") == 1 and delta("verdict_ingest_bytes_sum") > 500
    assert delta("verdict_ingest_duration_seconds_count") == 1
    # The stored snapshot is in the cache from the start: three reads, three hits.
    assert delta("verdict_snapshot_cache_total", result="hit") == 3
    assert delta("verdict_decisions_total", kind="eviction", outcome="evict") == 2
    assert delta("verdict_decisions_total", kind="admission", outcome="rejected") == 1
