"""service/bundled.py: the top-level migrations/ and openapi/ found from a checkout, and the
in-package copies a wheel carries preferred over them."""

from pathlib import Path

import pytest

from service import bundled

REPO = Path(__file__).resolve().parents[1]


def test_a_checkout_reads_the_top_level_folders():
    assert bundled.openapi_path() == REPO / "openapi" / "openapi.yaml"
    assert bundled.migrations_path() == REPO / "migrations"
    assert not (REPO / "service" / "openapi.yaml").exists()


def test_the_in_package_copy_wins_and_a_stale_folder_does_not(tmp_path, monkeypatch):
    package = tmp_path / "site" / "service"
    (package / "migrations" / "__pycache__").mkdir(parents=True)  # left behind by the move
    (package / "openapi").mkdir()
    (package / "openapi" / "openapi.yaml").write_text("openapi: 3.1.0\n")
    (tmp_path / "site" / "migrations").mkdir()
    (tmp_path / "site" / "migrations" / "env.py").write_text("")
    monkeypatch.setattr(bundled, "PACKAGE", package)
    assert bundled.openapi_path() == package / "openapi" / "openapi.yaml"
    assert bundled.migrations_path() == tmp_path / "site" / "migrations"


def test_neither_copy_is_a_clear_error(tmp_path, monkeypatch):
    monkeypatch.setattr(bundled, "PACKAGE", tmp_path / "service")
    with pytest.raises(FileNotFoundError, match=r"openapi/openapi\.yaml"):
        bundled.openapi_path()
