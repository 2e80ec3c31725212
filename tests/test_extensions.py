"""The application's shared objects (service/extensions.py): one typed object per app, reached
through one accessor."""

from __future__ import annotations

import re
from pathlib import Path

import service
from service.extensions import Extensions, extensions
from service.store.db import Database


def test_the_app_holds_one_typed_extensions_object(app):
    ext = extensions(app)
    assert isinstance(ext, Extensions) and isinstance(ext.db, Database)
    assert ext.large_bodies is not None  # api/load.py registered
    with app.app_context():
        assert extensions() is ext


def test_the_service_reaches_its_extensions_only_through_the_accessor():
    """No string-keyed ``app.extensions[...]`` lookups outside service/extensions.py."""
    root = Path(service.__file__).parent
    found = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "extensions.py" and re.search(r"\.extensions\b\s*[\[.]", path.read_text())
    ]
    assert found == []
