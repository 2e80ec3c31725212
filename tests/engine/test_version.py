"""Releases as settings objects (engine/version.py): each built from the oldest by its named
differences, the newest equal to the engine's defaults, every difference a real change."""

from __future__ import annotations

from dataclasses import fields

import pytest

from service.engine.version import (
    BASELINE,
    COMPONENTS,
    DEFAULT_SETTINGS,
    DIFFERENCES,
    KNOWN_VERSIONS,
    differences_in,
    settings_for,
)


def test_the_newest_release_is_the_default() -> None:
    assert settings_for(KNOWN_VERSIONS[-1]) == DEFAULT_SETTINGS
    assert settings_for(KNOWN_VERSIONS[0]) == BASELINE


@pytest.mark.parametrize("difference", DIFFERENCES, ids=lambda d: f"{d.release}-{d.setting}")
def test_each_difference_changes_its_setting_in_its_release(difference) -> None:
    before = KNOWN_VERSIONS[KNOWN_VERSIONS.index(difference.release) - 1]
    assert getattr(settings_for(difference.release), difference.setting) == difference.value
    assert getattr(settings_for(before), difference.setting) != difference.value
    assert difference.component in COMPONENTS
    assert difference.upstream


def test_every_switch_is_named_by_a_difference() -> None:
    """A setting that differs between two releases changes only through the table."""
    named = {d.setting for d in DIFFERENCES}
    for f in fields(DEFAULT_SETTINGS):
        if f.name == "kubernetes_version":
            continue
        values = {getattr(settings_for(v), f.name) for v in KNOWN_VERSIONS}
        assert len(values) == 1 or f.name in named, f.name


def test_an_unknown_release_is_a_key_error() -> None:
    with pytest.raises(KeyError):
        settings_for("1.31")
    with pytest.raises(KeyError):
        differences_in("1.38")
