"""Errors found while reading Kubernetes objects, each naming the offending field."""

from __future__ import annotations

from dataclasses import dataclass

MAX_REPORTED_ERRORS = 50


@dataclass(frozen=True, slots=True)
class FieldError:
    path: str  # e.g. "objects.items[3].spec.containers[0].resources.requests.cpu"
    message: str


class IngestError(Exception):
    """Input that cannot become a snapshot; answered as 422 (or 400 for unreadable bodies)."""

    def __init__(self, errors: list[FieldError], *, status: int = 422) -> None:
        super().__init__("; ".join(f"{e.path}: {e.message}" for e in errors[:3]))
        self.errors = errors[:MAX_REPORTED_ERRORS]
        self.status = status

    @classmethod
    def one(cls, path: str, message: str, *, status: int = 422) -> IngestError:
        return cls([FieldError(path, message)], status=status)

    def prefixed(self, prefix: str) -> IngestError:
        """The same errors with their paths placed under ``prefix``."""
        if not prefix:
            return self
        joined = [
            FieldError(
                f"{prefix}{'' if e.path.startswith('[') else '.'}{e.path}" if e.path else prefix,
                e.message,
            )
            for e in self.errors
        ]
        return IngestError(joined, status=self.status)
