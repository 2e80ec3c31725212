"""The auditors' web console (placeholder until the pages land)."""

from __future__ import annotations

from flask import Flask


def register(app: Flask) -> None:
    return None
