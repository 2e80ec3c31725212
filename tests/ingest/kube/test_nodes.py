"""kubelet Summary stats at the edge (service.ingest.wire/kube): decoded straight into the
model's stats structs, and read back from a snapshot stored by the code before that change.

``fixtures/stats_snapshot.stored`` is ``store.snapshots.encode`` of
``fixtures/stats_snapshot.json`` as main wrote it when the wire still had its own copy of
every stats struct (commit 6d862d4); its digest was STORED_DIGEST.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from service.engine.objects import ContainerStats, FsStats, MemoryStats, RlimitStats
from service.ingest.body import parse_snapshot
from service.ingest.errors import IngestError
from service.store.snapshots import decode, encode

FIXTURES = Path(__file__).resolve().parent / "fixtures"
STORED_DIGEST = "sha256:54ba88157c1acda31dd7a48fbeacf87509b2063ff8c19c6327e53c4a2a176974"


def _parsed():
    return parse_snapshot((FIXTURES / "stats_snapshot.json").read_bytes()).snapshot


def test_a_snapshot_stored_before_decodes_to_what_ingest_gives_now():
    stored = decode((FIXTURES / "stats_snapshot.stored").read_bytes())
    assert stored == _parsed()
    assert stored.stats["node-1"].pods[0].process_count == 42


def test_the_stored_form_and_its_digest_are_unchanged():
    _, digest = encode(_parsed())
    assert digest == STORED_DIGEST


def test_every_field_lands_in_the_model_types():
    stats = _parsed().stats["node-1"]
    assert type(stats.memory) is MemoryStats
    assert stats.memory.available_bytes == 1073741824
    assert stats.memory.rss_bytes == 5000000000
    assert type(stats.fs) is FsStats
    assert (stats.fs.inodes_free, stats.fs.inodes, stats.fs.inodes_used) == (1000, 100000, 99000)
    assert stats.image_fs.used_bytes == 45000000000
    assert stats.container_fs.capacity_bytes == 60000000000
    assert type(stats.rlimit) is RlimitStats
    assert (stats.rlimit.max_pid, stats.rlimit.num_of_running_processes) == (4194304, 1200)
    assert stats.allocatable_memory.working_set_bytes == 6500000000  # systemContainers "pods"
    pod = stats.pods[0]
    assert (pod.namespace, pod.name, pod.uid) == ("default", "web", "u-web")
    (container,) = pod.containers
    assert type(container) is ContainerStats
    assert type(container.logs) is FsStats
    assert (container.rootfs.used_bytes, container.logs.inodes_used) == (1000000, 3)
    assert [(v.name, v.pvc) for v in pod.volumes] == [("cache", False), ("data", True)]
    assert pod.ephemeral_storage.inodes_used == 133


def test_a_wrong_type_names_the_wire_field():
    body = (
        (FIXTURES / "stats_snapshot.json")
        .read_bytes()
        .replace(b'"maxpid": 4194304', b'"maxpid": "x"')
    )
    with pytest.raises(IngestError) as err:
        parse_snapshot(body)
    assert [e.path for e in err.value.errors] == ["stats.node-1.node.rlimit.maxpid"]
