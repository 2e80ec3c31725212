"""pyproject.toml's dependencies: what the service imports is declared, and what only the
tests use (openapi-core, the contract checker) is not installed with the service."""

from __future__ import annotations

import ast
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
# Import name -> distribution name, where they differ.
DISTRIBUTIONS = {
    "yaml": "pyyaml",
    "celpy": "cel-python",
    "psycopg": "psycopg",
    "prometheus_client": "prometheus-client",
    "flask_cors": "flask-cors",
    "flask_swagger_ui": "flask-swagger-ui",
    "flask_wtf": "flask-wtf",
    "pydantic_settings": "pydantic-settings",
    "pythonjsonlogger": "python-json-logger",
    "openapi_core": "openapi-core",
    "cel": "common-expression-language",
}


def _names(requirements: list[str]) -> set[str]:
    return {r.split(">")[0].split("=")[0].split("[")[0].strip().lower() for r in requirements}


def _service_imports() -> set[str]:
    found = set()
    for path in (REPO / "service").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.add(node.module.split(".")[0])
    return found - set(sys.stdlib_module_names) - {"service"}


def test_every_third_party_import_of_the_service_is_declared():
    declared = _names(PROJECT["dependencies"])
    missing = {
        DISTRIBUTIONS.get(name, name)
        for name in _service_imports()
        if DISTRIBUTIONS.get(name, name).lower() not in declared
    }
    assert not missing, f"imported by service/ but not in [project] dependencies: {missing}"


def test_test_only_libraries_are_not_installed_with_the_service():
    runtime = _names(PROJECT["dependencies"])
    assert "openapi-core" not in runtime and "openapi-core" in _names(
        PROJECT["optional-dependencies"]["test"]
    )
    assert "openapi_core" not in _service_imports()
