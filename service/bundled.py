"""Where the top-level `migrations/` and `openapi/` folders are found at run time.

They live at the repository's top level. The build (setup.py) copies them into the package
(`service/migrations`, `service/openapi`), so that an installed wheel carries them; a source
checkout or an editable install reads them at the top level, beside `service/`.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent


def bundled(relative: str) -> Path:
    """The file `relative` (e.g. "openapi/openapi.yaml"): inside the package when a wheel put it
    there, else at the top level of the source tree. The file itself is looked for, not its
    folder, so that a stale folder of bytecode left behind by the move is not taken for it."""
    for root in (PACKAGE, PACKAGE.parent):
        candidate = root / relative
        if candidate.is_file():
            return candidate
    raise FileNotFoundError(f"{relative} is neither in the package nor beside it ({PACKAGE})")


def openapi_path() -> Path:
    return bundled("openapi/openapi.yaml")


def migrations_path() -> Path:
    return bundled("migrations/env.py").parent
