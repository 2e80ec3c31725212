"""What the application builds once and its requests share (the database, the snapshot
cache, the preloader, ...), kept on the Flask app as one typed object and reached through
one accessor, ``extensions()``, instead of string-keyed lookups."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from flask import Flask, current_app

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from service.api.load import Slots
    from service.decisions.simulation import SimulationLimits
    from service.store.checkpoints import IntervalSigner
    from service.store.db import Database
    from service.store.preload import Preloader
    from service.store.snapshots import ClusterCache

_KEY = "verdict"


@dataclass(slots=True)
class Extensions:
    """``create_app`` sets the first three; the API's registrations add the rest."""

    db: Database
    cache: ClusterCache
    preloader: Preloader
    large_bodies: Slots | None = None  # api/load.py: the worker's large-body slots
    in_flight: Slots | None = None  # api/load.py: requests in flight (None: no bound)
    checkpoint_key: Ed25519PrivateKey | None = None  # api/audit.py; None: none configured
    checkpoint_signer: IntervalSigner | None = None  # api/audit.py, started by `verdict serve`
    # api/auth.py: API key digest -> (valid until, (role, key id) or None), per process.
    keys: dict = field(default_factory=dict)
    # how long the decisions running many cycles may run (VERDICT_SIMULATION_MAX_*)
    limits: SimulationLimits | None = None

    def install(self, app: Flask) -> None:
        app.extensions[_KEY] = self


def extensions(app: Flask | None = None) -> Extensions:
    """The Extensions of ``app``, by default of the application handling the request."""
    return (app if app is not None else current_app).extensions[_KEY]
