"""The build hook that puts the top-level `migrations/` and `openapi/` inside the package.

Everything else is declared in pyproject.toml. The sources stay at the repository's top level
(the commissioned layout); a wheel carries copies at `service/migrations` and
`service/openapi`, where service/bundled.py finds them once installed. An editable install
copies nothing: it reads the top-level folders in place.
"""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
# Folder -> the file patterns shipped from it (no bytecode, no editor leftovers).
BUNDLED = {
    "migrations": ("*.py", "*.mako", "versions/*.py"),
    "openapi": ("*.yaml",),
}


class BuildWithBundled(build_py):
    """build_py, then the bundled folders copied under service/ in the build tree."""

    def run(self) -> None:
        super().run()
        if self.editable_mode:
            return
        for folder, patterns in BUNDLED.items():
            for pattern in patterns:
                for source in sorted((ROOT / folder).glob(pattern)):
                    target = Path(
                        self.build_lib, "service", folder, source.relative_to(ROOT / folder)
                    )
                    self.mkpath(str(target.parent))
                    self.copy_file(str(source), str(target))


setup(cmdclass={"build_py": BuildWithBundled})
