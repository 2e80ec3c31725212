"""kubectl drain's filters (engine/drain/filters.py): each filter under each option, their
order, and the first non-deleting filter deciding."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from service.engine.drain.filters import (
    DAEMONSET_FATAL,
    DAEMONSET_WARNING,
    LOCAL_STORAGE_FATAL,
    LOCAL_STORAGE_WARNING,
    UNMANAGED_FATAL,
    UNMANAGED_WARNING,
    DrainOptions,
    pod_delete_status,
)
from service.ingest.kube import request_pod
from tests.engine.drain.helpers import owned

EMPTY_DIR = [{"name": "scratch", "emptyDir": {}}]
MEMORY_DIR = [{"name": "shm", "emptyDir": {"medium": "Memory"}}]


def _status(obj: dict, now=None, **options):
    return pod_delete_status(request_pod(obj), DrainOptions(**options), now)


def test_a_replicated_pod_is_deleted_without_a_word():
    s = _status(owned("a", "n1", "ReplicaSet"))
    assert (s.delete, s.reason, s.message) == (True, "Okay", "")


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, (False, "Error", DAEMONSET_FATAL)),
        ({"ignore_daemonsets": True}, (False, "Warning", DAEMONSET_WARNING)),
        ({"force": True}, (False, "Error", DAEMONSET_FATAL)),
    ],
)
def test_a_daemonset_pod_is_never_deleted(options, expected):
    s = _status(owned("ds", "n1", "DaemonSet"), **options)
    assert (s.delete, s.reason, s.message) == expected
    assert s.rule == "DaemonSet"


def test_a_finished_daemonset_pod_is_deleted():
    s = _status(owned("ds", "n1", "DaemonSet", phase="Succeeded"))
    assert s.delete and s.reason == "Okay"


def test_a_mirror_pod_is_skipped_silently_whatever_the_options():
    obj = owned("static", "n1", None)
    obj["metadata"]["annotations"] = {"kubernetes.io/config.mirror": "abc"}
    for options in ({}, {"force": True}):
        s = _status(obj, **options)
        assert (s.delete, s.reason, s.rule) == (False, "Skip", "MirrorPod")


@pytest.mark.parametrize("volumes", [EMPTY_DIR, MEMORY_DIR])
def test_an_emptydir_of_any_medium_is_local_storage(volumes):
    obj = owned("cache", "n1", "ReplicaSet", volumes=volumes)
    s = _status(obj)
    assert (s.delete, s.reason, s.message) == (False, "Error", LOCAL_STORAGE_FATAL)
    # Allowed: deleted; the unreplicated filter runs after it and its Okay drops the warning
    # (filters.go's TODO), as kubectl prints nothing for a replicated pod.
    s = _status(obj, delete_emptydir_data=True)
    assert (s.delete, s.reason, s.message) == (True, "Okay", "")


def test_the_local_storage_warning_survives_only_when_last():
    from service.engine.drain.filters import local_storage

    obj = request_pod(owned("cache", "n1", "ReplicaSet", volumes=EMPTY_DIR))
    s = local_storage(obj, DrainOptions(delete_emptydir_data=True))
    assert (s.delete, s.reason, s.message) == (True, "Warning", LOCAL_STORAGE_WARNING)


def test_a_hostpath_is_not_local_storage_for_drain():
    obj = owned("hp", "n1", "ReplicaSet", volumes=[{"name": "h", "hostPath": {"path": "/x"}}])
    assert _status(obj).reason == "Okay"


def test_a_bare_pod_needs_force():
    s = _status(owned("bare", "n1", None))
    assert (s.delete, s.reason, s.message) == (False, "Error", UNMANAGED_FATAL)
    s = _status(owned("bare", "n1", None), force=True)
    assert (s.delete, s.reason, s.message) == (True, "Warning", UNMANAGED_WARNING)


def test_a_finished_bare_pod_with_emptydir_is_deleted():
    obj = owned("done", "n1", None, phase="Failed", volumes=EMPTY_DIR)
    assert _status(obj).reason == "Okay"


def test_the_first_error_wins_local_storage_before_unreplicated():
    obj = owned("bare", "n1", None, volumes=EMPTY_DIR)
    assert _status(obj).message == LOCAL_STORAGE_FATAL
    # With emptyDir allowed, the unreplicated filter decides, dropping the earlier warning.
    assert _status(obj, delete_emptydir_data=True).message == UNMANAGED_FATAL
    s = _status(obj, delete_emptydir_data=True, force=True)
    assert (s.delete, s.message) == (True, UNMANAGED_WARNING)


def test_a_daemonset_pod_with_emptydir_is_decided_by_the_daemonset_filter():
    obj = owned("ds", "n1", "DaemonSet", volumes=EMPTY_DIR)
    assert _status(obj, ignore_daemonsets=True).message == DAEMONSET_WARNING


def test_skip_wait_for_delete_timeout_skips_pods_deleted_long_enough_ago():
    deleted = datetime(2026, 11, 20, 9, 0, tzinfo=UTC)
    obj = owned("gone", "n1", None)
    obj["metadata"]["deletionTimestamp"] = "2026-11-20T09:00:00Z"
    later = deleted + timedelta(seconds=30, milliseconds=900)
    assert _status(obj, later, skip_wait_for_delete_timeout=30).reason == "Error"  # 30 > 30
    s = _status(obj, later + timedelta(seconds=1), skip_wait_for_delete_timeout=30)
    assert (s.delete, s.reason, s.rule) == (False, "Skip", "SkipDeleted")
    assert _status(obj, later + timedelta(hours=1)).reason == "Error"  # default 0: never
