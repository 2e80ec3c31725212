"""The application factory: wires blueprints, errors, auth, metrics and the database."""

from __future__ import annotations

import logging

from flask import Flask

from service.config import Settings
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
    db = Database(settings.DATABASE_URL)
    if settings.AUTO_MIGRATE and db.is_sqlite and migrate.is_empty(db):
        migrate.upgrade(db.url)
    app.extensions["verdict.db"] = db
    app.extensions["verdict.cache"] = ClusterCache(
        settings.SNAPSHOT_CACHE_SIZE, settings.SNAPSHOT_CACHE_PODS
    )
    from service.store.preload import Preloader
    from service.store.warm import warm

    app.extensions["verdict.preloader"] = Preloader(
        db,
        app.extensions["verdict.cache"],
        count=settings.PRELOAD_SNAPSHOTS,
        interval=settings.PRELOAD_INTERVAL,
        warm=warm,
    )

    from service.api import (
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
    )
    from service.api.requests import reject_nul_in_query

    metrics.register(app)
    logs.register(app)
    load.register(app)
    app.before_request(reject_nul_in_query)
    auth.register(app)
    errors.register(app)
    app.register_blueprint(ops.bp)
    app.register_blueprint(docs.docs_bp)
    app.register_blueprint(snapshots.bp)
    app.register_blueprint(history.bp)
    app.register_blueprint(decisions.bp)
    app.register_blueprint(impact.bp)
    from service import console
    from service.api import audit

    audit.register(app)
    console.register(app)
    if settings.CORS_ORIGINS:
        from flask_cors import CORS

        CORS(
            app,
            origins=settings.CORS_ORIGINS,
            expose_headers=["X-Request-ID", "X-Decision-ID", "ETag", "Location"],
        )
    return app
