"""The API server's name, namespace and label rules (ingest/names.py), through POST
/v1/snapshots: what it refuses is a 422 naming the field and stores nothing; what it accepts
is stored."""

from __future__ import annotations

import pytest

from tests.api.helpers import LONG, with_metadata
from tests.conftest import kube_list, node, pod


@pytest.mark.parametrize(
    ("item", "path"),
    [
        (with_metadata(pod("p", "n1"), name=LONG), "items[1].metadata.name"),
        (with_metadata(pod("p", "n1"), name="Upper"), "items[1].metadata.name"),
        (with_metadata(pod("p", "n1"), name="a_b"), "items[1].metadata.name"),
        (with_metadata(pod("p", "n1"), namespace="a.b"), "items[1].metadata.namespace"),
        (with_metadata(pod("p", "n1"), namespace="x" * 64), "items[1].metadata.namespace"),
        (with_metadata(pod("p", "n1"), labels={"app": "-bad"}), "items[1].metadata.labels.app"),
        (with_metadata(pod("p", "n1"), labels={"app": "v" * 64}), "items[1].metadata.labels.app"),
        (with_metadata(pod("p", "n1"), labels={"a/b/c": "v"}), "items[1].metadata.labels['a/b/c']"),
        (with_metadata(pod("p", "n1"), labels={"/app": "v"}), "items[1].metadata.labels['/app']"),
        (
            with_metadata(pod("p", "n1"), labels={LONG: "v"}),
            f"items[1].metadata.labels[{LONG[:80]!r}]",
        ),
        (
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}},
            "items[1].metadata.name",
        ),
        (
            {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "1svc"}},
            "items[1].metadata.name",
        ),
    ],
)
def test_names_and_labels_the_api_server_refuses_are_a_422(api, item, path):
    response = api.post("/v1/snapshots", json=kube_list(node("n1"), item), role="decide")
    assert response.status_code == 422, response.json
    assert path in [e["path"] for e in response.json["errors"]]
    assert api.get("/v1/snapshots", role="read").json["items"] == []


def test_names_and_labels_the_api_server_accepts_are_stored(api):
    accepted = with_metadata(
        pod("p-1.x", "n1", namespace="team-a"),
        labels={"example.com/app": "web_1.2-x", "empty": "", "a" * 63: "b" * 63},
    )
    cluster = kube_list(node("ip-10-0-0-1.eu-west-1.compute.internal"), accepted)
    assert api.post("/v1/snapshots", json=cluster, role="decide").status_code == 201
