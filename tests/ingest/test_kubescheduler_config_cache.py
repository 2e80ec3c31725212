"""A KubeSchedulerConfiguration read once per document and release
(``kubescheduler_config.scheduler_profiles``' cache): an impact or a simulation reads one
configuration for every decision. The cached answer must be the fresh reading's."""

from __future__ import annotations

import orjson
import pytest

from service.engine.version import settings_for
from service.ingest import kubescheduler_config as ksc
from service.ingest.kubescheduler_config import SchedulerConfigError, scheduler_profiles
from tests.decisions.helpers import SCHEDULER_CONFIGURATION
from tests.ingest.test_volume_binding_shape import SHAPE, _config


def test_a_document_read_again_comes_from_the_cache_per_release(monkeypatch) -> None:
    """The same document is read once per release; the answer is the one a fresh reading
    gives, each caller gets its own dict, and another release reads it again (1.36 refuses
    the shape that 1.37 accepts)."""
    monkeypatch.setattr(ksc, "_READ", type(ksc._READ)())
    reads = []
    real = ksc._read_profiles
    monkeypatch.setattr(ksc, "_read_profiles", lambda *a: reads.append(a) or real(*a))
    config = _config(SHAPE)
    first = scheduler_profiles(config, settings_for("1.37"))
    first.clear()
    again = scheduler_profiles(_config(SHAPE), settings_for("1.37"))
    assert again == real(config, settings_for("1.37"), "schedulerConfiguration")
    assert len(reads) == 1
    with pytest.raises(SchedulerConfigError):
        scheduler_profiles(config, settings_for("1.36"))
    with pytest.raises(SchedulerConfigError):
        scheduler_profiles(config, settings_for("1.36"))
    assert len(reads) == 3  # a refusal is not kept


@pytest.mark.parametrize(
    "config",
    [
        {**SCHEDULER_CONFIGURATION, "profiles": ({"schedulerName": "default-scheduler"},)},
        {**SCHEDULER_CONFIGURATION, "percentageOfNodesToScore": float("nan")},
    ],
    ids=["a tuple for an array", "NaN"],
)
def test_a_document_its_json_text_does_not_hold_is_read_each_time(config) -> None:
    """A tuple is not an array and NaN is not null to the reader, though orjson writes them
    so: such a document must not share a cached reading with its JSON text's."""
    assert ksc._cache_key(config, settings_for("1.37"), "schedulerConfiguration") is None
    text_twin = orjson.loads(orjson.dumps(config))
    scheduler_profiles(text_twin, settings_for("1.37"))  # cached (or refused) by its text
    with pytest.raises(SchedulerConfigError):
        scheduler_profiles(config, settings_for("1.37"))
