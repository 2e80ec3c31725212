"""``GET /v1/versions`` (api/versions.py): the releases, the default and each release's
differences from the one before, as the engine's table holds them; read role."""

from __future__ import annotations

import yaml

from service.engine.version import DIFFERENCES, KNOWN_VERSIONS
from tests.contract import SPEC_PATH


def test_the_releases_newest_first_with_their_differences(api):
    body = api.get("/v1/versions", role="read").json
    assert body["default"] == "1.37"
    assert [v["version"] for v in body["versions"]] == list(reversed(KNOWN_VERSIONS))
    by_version = {v["version"]: v["differences"] for v in body["versions"]}
    assert by_version["1.32"] == []  # the oldest release Verdict knows
    upstream = {d["upstream"] for d in by_version["1.35"]}
    assert {"kubernetes#134740", "kubernetes#134711"} <= upstream
    assert {"component": "scheduler", "upstream": "kubernetes#129138"}.items() <= next(
        d for d in by_version["1.33"] if d["upstream"] == "kubernetes#129138"
    ).items()
    assert sum(len(d) for d in by_version.values()) == len(DIFFERENCES)
    for differences in by_version.values():
        for d in differences:
            assert d["component"] in ("scheduler", "kubelet", "nodelifecycle")
            assert d["summary"] and d["upstream"]


def test_needs_a_key(api):
    response = api.get("/v1/versions", role=None)
    assert response.status_code == 401


def test_the_contract_names_the_same_releases(api):
    """openapi's kubernetesVersion enum is the engine's list of releases."""
    spec = yaml.safe_load(SPEC_PATH.read_text())
    option = spec["components"]["schemas"]["VersionOption"]["properties"]["kubernetesVersion"]
    assert option["enum"] == list(KNOWN_VERSIONS)
    assert option["default"] == api.get("/v1/versions", role="read").json["default"]
