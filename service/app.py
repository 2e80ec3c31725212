"""The application factory: wires blueprints, errors, auth, metrics and the database."""

from __future__ import annotations

import logging

from flask import Flask

from service.config import Settings
from service.extensions import Extensions
from service.store import migrate
from service.store.db import Database
from service.store.snapshots import ClusterCache


def create_app(config: dict | Settings | None = None) -> Flask:
    settings = config if isinstance(config, Settings) else Settings.from_env(config)
    app = Flask(__name__, instance_path=settings.INSTANCE_PATH)
    app.config["VERDICT"] = settings
    app.config["TESTING"] = settings.TESTING
    app.config["MAX_CONTENT_LENGTH"] = None  # snapshot bodies are bounded by their own reader

    from service.api import logs

    logs.configure(settings.LOG_LEVEL)
    if not settings.AUTH_ENABLED:
        logging.getLogger("verdict.auth").warning(
            "development mode: auth is OFF (VERDICT_AUTH_ENABLED=false); "
            "only loopback clients are served"
        )
    from service.ingest.body import NATIVE

    if not NATIVE:
        logging.getLogger("verdict.ingest").warning(
            "the C body reader (service/ingest/_body.c) is not built: large request bodies "
            "are read about 10 times slower; reinstall where a C compiler is available "
            "(verdict_body_reader_native is 0 in /metrics)"
        )
    db = Database(settings.DATABASE_URL)
    if settings.AUTO_MIGRATE and db.is_sqlite and migrate.is_empty(db):
        migrate.upgrade(db.url)
    from service.store.preload import Preloader
    from service.store.warm import warm

    cache = ClusterCache(settings.SNAPSHOT_CACHE_SIZE, settings.SNAPSHOT_CACHE_PODS)
    preloader = Preloader(
        db,
        cache,
        count=settings.PRELOAD_SNAPSHOTS,
        interval=settings.PRELOAD_INTERVAL,
        warm=warm,
    )
    from service.decisions.simulation import SimulationLimits

    limits = SimulationLimits(settings.SIMULATION_MAX_STEPS, settings.SIMULATION_MAX_SECONDS)
    Extensions(db=db, cache=cache, preloader=preloader, limits=limits).install(app)

    from service.api import (
        audit,
        auth,
        decisions,
        docs,
        errors,
        history,
        impact,
        load,
        metrics,
        ops,
        snapshots,
        versions,
    )
    from service.api.requests import reject_nul_in_query
    from service.console import views as console

    metrics.register(app)
    logs.register(app)
    load.register(app)
    app.before_request(reject_nul_in_query)
    auth.register(app)
    errors.register(app)
    # Every blueprint the same way; one that needs setup does it as it is registered
    # (Blueprint.record_once: audit's signing key, the console's session and CSRF).
    for blueprint in (
        ops.bp,
        docs.bp,
        snapshots.bp,
        history.bp,
        decisions.bp,
        audit.bp,
        versions.bp,
        impact.bp,
        console.bp,
    ):
        app.register_blueprint(blueprint)
    if settings.CORS_ORIGINS:
        from flask_cors import CORS

        CORS(
            app,
            origins=settings.CORS_ORIGINS,
            expose_headers=["X-Request-ID", "X-Decision-ID", "ETag", "Location"],
        )
    return app
