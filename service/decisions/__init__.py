"""Decision kinds: the glue between a validated request and the pure engine.

Each module here declares one kind (its request schema, how to decide, which nodes and pods
the decision is about) and registers it. The HTTP API, the offline CLI and replay all go
through the same registry, so a decision computed three ways is computed one way.
"""

from service.decisions.base import KINDS, DecisionInputError, DecisionKind, Subjects, register

__all__ = ["KINDS", "DecisionInputError", "DecisionKind", "Subjects", "load_kinds", "register"]


def load_kinds() -> dict[str, DecisionKind]:
    """Import every kind module so that it registers itself; return the registry."""
    import importlib
    import pkgutil

    import service.decisions as package

    for info in pkgutil.iter_modules(package.__path__):
        if info.name != "base" and not info.name.startswith("_"):
            importlib.import_module(f"service.decisions.{info.name}")
    return KINDS
