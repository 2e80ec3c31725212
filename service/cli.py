"""`verdict`: serve, db, keys, decide (offline), snapshot import, history export/prune, audit."""

from __future__ import annotations

import argparse
import gzip
import os
import sys
import tempfile
from datetime import datetime
from pathlib import Path

import orjson
import yaml


def _settings():
    from service.config import Settings

    return Settings.from_env()


def _read_file(path: str) -> tuple[bytes, str]:
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    is_yaml = path.endswith((".yaml", ".yml")) or data.lstrip()[:1] not in (b"{", b"[")
    return data, "application/yaml" if is_yaml else "application/json"


def _read_object(path: str):
    data, content_type = _read_file(path)
    return yaml.safe_load(data) if content_type == "application/yaml" else orjson.loads(data)


def _print(payload) -> None:
    sys.stdout.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode() + "\n")


def cmd_serve(args) -> int:
    from gunicorn.app.base import BaseApplication

    from service.app import create_app
    from service.store import migrate
    from service.store.db import Database

    settings = _settings()
    db = Database(settings.DATABASE_URL)
    migrate.upgrade(db.url)  # idempotent; done once here, before workers fork
    db.dispose()
    if args.workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="verdict-metrics-")

    class Verdict(BaseApplication):
        def load_config(self):
            self.cfg.set("bind", f"{args.host}:{args.port}")
            self.cfg.set("workers", args.workers)
            self.cfg.set("threads", args.threads)
            self.cfg.set("timeout", 300)
            self.cfg.set("accesslog", None)
            self.cfg.set("child_exit", _child_exit)

        def load(self):
            # Runs in each worker after the fork: the warming thread belongs to the worker.
            app = create_app()
            app.extensions["verdict.preloader"].start()
            if "verdict.checkpoint_signer" in app.extensions:
                app.extensions["verdict.checkpoint_signer"].start()
            return app

    Verdict().run()
    return 0


def _child_exit(_server, worker) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


def cmd_db(args) -> int:
    from service.store import migrate
    from service.store.db import Database

    db = Database(_settings().DATABASE_URL)
    if args.action == "upgrade":
        migrate.upgrade(db.url, args.revision or "head")
    elif args.action == "downgrade":
        migrate.downgrade(db.url, args.revision or "-1")
    print(
        f"database at revision {migrate.current_revision(db)} (head {migrate.head_revision(db.url)})"
    )
    return 0


def cmd_keys(args) -> int:
    from service.store import keys, migrate
    from service.store.db import Database

    db = Database(_settings().DATABASE_URL)
    if migrate.is_empty(db):
        migrate.upgrade(db.url)
    with db.session(write=True) as session:
        if args.action == "create":
            key, secret = keys.create(session, args.role, args.name or "")
            print(f"created key {key.id} with role {key.role}; the secret is shown once:")
            print(secret)
        elif args.action == "list":
            for key in keys.list_keys(session):
                state = "revoked" if key.revoked_at else "active"
                print(f"{key.id}\t{key.role}\t{state}\t{key.name}")
        elif args.action == "revoke":
            if not keys.revoke(session, args.id):
                print(f"no key {args.id}", file=sys.stderr)
                return 1
            print(f"revoked {args.id}")
    return 0


def cmd_decide(args) -> int:
    """Offline: snapshot file in, the same result JSON the API records, out."""
    from marshmallow import ValidationError

    from service.decisions import DecisionInputError, load_kinds
    from service.decisions.run import compute
    from service.engine.objects import Cluster
    from service.ingest.body import parse_snapshot
    from service.ingest.errors import IngestError

    kinds = load_kinds()
    kind = kinds.get(args.kind)
    if kind is None:
        print(
            f"unknown decision kind {args.kind}; known: {', '.join(sorted(kinds))}", file=sys.stderr
        )
        return 2
    params = _read_object(args.request) if args.request else {}
    if args.node:
        params["nodeName"] = args.node
    if args.pod:
        params["pod"] = _read_object(args.pod)
    if args.now:
        params["now"] = args.now
    try:
        data, content_type = _read_file(args.snapshot)
        cluster = Cluster(parse_snapshot(data, content_type=content_type).snapshot)
        outcome = compute(kind, cluster, params)
    except IngestError as exc:
        print(f"invalid snapshot: {exc}", file=sys.stderr)
        return 1
    except ValidationError as exc:
        print(f"invalid request: {exc.messages}", file=sys.stderr)
        return 1
    except DecisionInputError as exc:
        print(f"invalid request: {exc.path}: {exc.message}", file=sys.stderr)
        return 1
    _print(outcome.result)
    return 0


def cmd_snapshot(args) -> int:
    from service.api.snapshots import summary_json
    from service.ingest.body import parse_snapshot
    from service.store import migrate
    from service.store import snapshots as store
    from service.store.db import Database

    db = Database(_settings().DATABASE_URL)
    if migrate.is_empty(db):
        migrate.upgrade(db.url)
    data, content_type = _read_file(args.file)
    parsed = parse_snapshot(data, content_type=content_type)
    with db.session(write=True) as session:
        row = store.save(
            session,
            parsed.snapshot,
            name=args.name or parsed.name,
            cluster=args.cluster or parsed.cluster,
            labels=parsed.labels,
            key_id=None,
        )
        _print(summary_json(row))
    return 0


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    if moment.tzinfo is None:
        from datetime import UTC

        moment = moment.replace(tzinfo=UTC)
    return moment


def cmd_history(args) -> int:
    from service.engine.version import ENGINE_VERSION
    from service.store import records
    from service.store.db import Database

    db = Database(_settings().DATABASE_URL)
    if args.action == "export":
        out = open(args.output, "wb") if args.output else sys.stdout.buffer  # noqa: SIM115
        with db.session() as session:
            for row in records.iterate(session, _parse_time(args.since) if args.since else None):
                out.write(orjson.dumps(records.to_json(row)) + b"\n")
        out.flush()
        return 0
    with db.session(write=True) as session:
        row = records.prune(session, _parse_time(args.before), ENGINE_VERSION)
        _print(records.to_json(row))
    return 0


def _audit_key(settings):
    from service.store import checkpoints

    key = checkpoints.load_signing_key(settings)
    if key is None:
        raise SystemExit(
            "no checkpoint key: set VERDICT_CHECKPOINT_KEY_FILE (verdict audit keygen)"
        )
    return key


def cmd_audit(args) -> int:
    """keygen, public-key, checkpoint, verify [--checkpoint FILE]; verify exits 1 when the
    chain is broken or does not extend the checkpoint, 2 on a bad checkpoint."""
    from service.store import checkpoints, records
    from service.store.db import Database

    if args.action == "keygen":
        pem = checkpoints.generate_pem()
        fd = os.open(args.output, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(pem)
        public = checkpoints.parse_private_pem(pem, args.output).public_key()
        sys.stdout.write(f"keyId {checkpoints.key_id(public)}\n{checkpoints.public_pem(public)}")
        return 0
    settings = _settings()
    if args.action == "public-key":
        public = _audit_key(settings).public_key()
        sys.stdout.write(f"keyId {checkpoints.key_id(public)}\n{checkpoints.public_pem(public)}")
        return 0
    db = Database(settings.DATABASE_URL)
    if args.action == "checkpoint":
        with db.session() as session:
            cp = checkpoints.sign(session, _audit_key(settings))
        checkpoints.append_log(settings.CHECKPOINT_DIR, cp)
        _print(cp)
        return 0
    if args.checkpoint is None:
        with db.session() as session:
            outcome = records.verify(session)
        _print({"ok": outcome.ok, "records": outcome.records, "firstBadId": outcome.first_bad_id})
        return 0 if outcome.ok else 1
    public = _audit_key(settings).public_key()
    try:
        cp = checkpoints.parse(Path(args.checkpoint).read_bytes())
        with db.session() as session:
            got = checkpoints.verify_against(session, cp, public, settings.CHECKPOINT_DIR)
    except checkpoints.CheckpointError as exc:
        sys.stderr.write(f"verdict: {exc.path}: {exc.detail}\n")
        return 2
    _print(
        {
            "ok": got.ok,
            "records": got.records,
            "firstBadId": got.first_bad_id,
            "extendsCheckpoint": got.extends,
        }
    )
    return 0 if got.ok and got.extends else 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="verdict", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the HTTP service under gunicorn")
    serve.add_argument("--host", default=os.environ.get("VERDICT_HOST", "127.0.0.1"))
    serve.add_argument("--port", type=int, default=int(os.environ.get("VERDICT_PORT", "8080")))
    serve.add_argument("--workers", type=int, default=int(os.environ.get("VERDICT_WORKERS", "2")))
    serve.add_argument("--threads", type=int, default=int(os.environ.get("VERDICT_THREADS", "4")))
    serve.set_defaults(func=cmd_serve)

    db = sub.add_parser("db", help="database migrations")
    db.add_argument("action", choices=["upgrade", "downgrade", "current"])
    db.add_argument("revision", nargs="?")
    db.set_defaults(func=cmd_db)

    keys = sub.add_parser("keys", help="API keys")
    keys_sub = keys.add_subparsers(dest="action", required=True)
    create = keys_sub.add_parser("create")
    create.add_argument("--role", required=True, choices=["read", "decide", "admin"])
    create.add_argument("--name")
    keys_sub.add_parser("list")
    revoke = keys_sub.add_parser("revoke")
    revoke.add_argument("id")
    keys.set_defaults(func=cmd_keys)

    decide = sub.add_parser("decide", help="compute a decision offline (no server, nothing stored)")
    decide.add_argument("kind")
    decide.add_argument(
        "--snapshot",
        required=True,
        help="snapshot file (JSON or YAML, may be gzipped; - for stdin)",
    )
    decide.add_argument("--node", help="nodeName")
    decide.add_argument("--pod", help="pod manifest file (JSON or YAML)")
    decide.add_argument("--now", help="RFC 3339 time")
    decide.add_argument("--request", help="file with the rest of the request body (JSON or YAML)")
    decide.set_defaults(func=cmd_decide)

    snapshot = sub.add_parser("snapshot", help="snapshots")
    snapshot_sub = snapshot.add_subparsers(dest="action", required=True)
    imp = snapshot_sub.add_parser("import")
    imp.add_argument("file")
    imp.add_argument("--name")
    imp.add_argument("--cluster")
    snapshot.set_defaults(func=cmd_snapshot)

    history = sub.add_parser("history", help="decision records")
    history_sub = history.add_subparsers(dest="action", required=True)
    export = history_sub.add_parser("export")
    export.add_argument("--since")
    export.add_argument("--output")
    prune = history_sub.add_parser("prune")
    prune.add_argument("--before", required=True)
    history.set_defaults(func=cmd_history)

    audit = sub.add_parser("audit", help="signed checkpoints of the record chain")
    audit_sub = audit.add_subparsers(dest="action", required=True)
    keygen = audit_sub.add_parser("keygen", help="write a new Ed25519 private key (PEM)")
    keygen.add_argument("--output", required=True, help="file to create (mode 0600)")
    audit_sub.add_parser("public-key", help="print the configured key's public key")
    audit_sub.add_parser("checkpoint", help="sign a checkpoint now and keep it in the log")
    check = audit_sub.add_parser("verify", help="verify the chain, against a checkpoint if given")
    check.add_argument("--checkpoint", help="checkpoint JSON file")
    audit.set_defaults(func=cmd_audit)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
