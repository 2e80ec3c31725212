"""SnapshotBuilder's first look at each List item (service/ingest/kube/builder.py)."""

from __future__ import annotations

import pytest

from service.ingest.body import parse_snapshot
from service.ingest.errors import IngestError


@pytest.mark.parametrize("metadata", ["-2628698", "null", "[1]", '"n"'])
@pytest.mark.parametrize("kind", ["Node", "SomethingVerdictIgnores"])
def test_metadata_that_is_not_an_object_is_a_422_naming_it(kind, metadata):
    """An item of a kind Verdict ignores was counted as ignored whatever its metadata (the
    fuzzer's `"metadata": -2628698` got a 201, where the contract says an object)."""
    body = f'{{"items": [{{"kind": "{kind}", "apiVersion": "v1", "metadata": {metadata}}}]}}'
    with pytest.raises(IngestError) as raised:
        parse_snapshot(body.encode())
    assert raised.value.status == 422
    assert [e.path for e in raised.value.errors] == ["items[0].metadata"]


def test_an_ignored_kind_with_object_metadata_is_still_counted_as_ignored():
    body = b'{"items": [{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c"}}]}'
    assert parse_snapshot(body).snapshot is not None
