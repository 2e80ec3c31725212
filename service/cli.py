"""The `verdict` command line, built on click (Flask's own CLI toolkit): every command and
option has help, choices are listed, and errors name the option or file they are about and
never print a traceback (main() turns the expected failures into one line and an exit code).
"""

from __future__ import annotations

import contextlib
import gzip
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import orjson

# The decision kinds, as the URL names them (POST /v1/decisions/<kind>); checked against the
# registry when a decision is computed, listed here so that `--help` stays fast.
DECISION_KINDS = (
    "admission",
    "capacity",
    "drain",
    "eviction",
    "node-eviction-rate",
    "placement",
    "preemption",
    "schedule",
)
ROLES = ("read", "decide", "admin")


class SettingsProblem(click.ClickException):
    """The VERDICT_* environment cannot be read: a usage error (exit 2), not a crash."""

    exit_code = 2

    def format_message(self) -> str:
        return f"settings: {self.message}"


def _settings():
    from service.config import Settings

    try:
        return Settings.from_env()
    except ValueError as exc:
        raise SettingsProblem(str(exc)) from None


def _database(settings=None, *, migrate_if_empty: bool = False):
    from service.store import migrate
    from service.store.db import Database

    db = Database((settings or _settings()).DATABASE_URL)
    if migrate_if_empty and migrate.is_empty(db):
        migrate.upgrade(db.url)
    return db


def _where(db) -> str:
    """The database a command uses, password hidden, for the user to see which one it is."""
    return db.engine.url.render_as_string(hide_password=True)


def _read_file(path: str) -> tuple[bytes, str]:
    data = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    is_yaml = path.endswith((".yaml", ".yml")) or data.lstrip()[:1] not in (b"{", b"[")
    return data, "application/yaml" if is_yaml else "application/json"


def _read_object(path: str, option: str):
    """A JSON or YAML mapping from a file; a file that is neither names ``option``."""
    from service.ingest.body import YAML_JSON_LIMIT
    from service.ingest.errors import IngestError
    from service.ingest.yaml_json import yaml_to_json

    data, content_type = _read_file(path)
    try:
        if content_type == "application/yaml":  # read as the API reads YAML bodies
            data = bytes(yaml_to_json(data, limit=YAML_JSON_LIMIT))
        value = orjson.loads(data)
    except IngestError as exc:
        raise click.BadParameter(f"{path}: {exc}", param_hint=option) from None
    except orjson.JSONDecodeError as exc:
        raise click.BadParameter(
            f"{path} is not valid JSON or YAML: {exc}", param_hint=option
        ) from None
    if not isinstance(value, dict):
        raise click.BadParameter(f"{path} does not hold a mapping", param_hint=option)
    return value


def _print(payload) -> None:
    sys.stdout.write(orjson.dumps(payload, option=orjson.OPT_INDENT_2).decode() + "\n")


class Time(click.ParamType):
    """An RFC 3339 time (``2026-11-20T10:00:00Z``) or a date (midnight UTC)."""

    name = "TIME"

    def convert(self, value, param, ctx):
        if isinstance(value, datetime):
            return value
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            self.fail(
                f"{value!r} is not a time; write 2026-11-20T10:00:00Z or 2026-11-20", param, ctx
            )
        if moment.tzinfo is None:
            return moment.replace(tzinfo=UTC)
        try:
            return moment.astimezone(UTC)  # the instant, whatever offset it was written in
        except OverflowError:
            self.fail(f"{value!r} is outside the years 1 to 9999 in UTC", param, ctx)


TIME = Time()
READABLE = click.Path(exists=True, dir_okay=False, allow_dash=True)


HELP = """Verdict: the decisions Kubernetes itself would make on a given cluster state.

\b
Start here:
  verdict serve                     the HTTP service (API, /docs, /console)
  verdict keys create --role admin  an API key (its secret is printed once)
  verdict decide KIND --snapshot FILE --request FILE
                                    a decision offline, nothing stored

Settings are VERDICT_* environment variables (docs/operations.md).
"""


@click.group(help=HELP, context_settings={"help_option_names": ["-h", "--help"]})
def cli() -> None:
    pass


# ------------------------------------------------------------------------------ serve


def _serve_option(name: str, default, kind, help_text: str):
    """An option of `verdict serve`, also read from VERDICT_<NAME>, its default shown."""
    env = f"VERDICT_{name.upper()}"
    return click.option(
        f"--{name}",
        envvar=env,
        type=kind,
        default=default,
        show_default=True,
        help=f"{help_text} (env {env}).",
    )


@cli.command()
@_serve_option("host", "127.0.0.1", click.STRING, "Address to listen on")
@_serve_option("port", 8080, click.IntRange(1, 65535), "Port to listen on")
@_serve_option("workers", 2, click.IntRange(min=1), "gunicorn worker processes")
@_serve_option(
    "connections", 1000, click.IntRange(min=1), "Client connections one worker holds at once"
)
@_serve_option(
    "header-timeout", 10, click.IntRange(min=1), "Seconds a request's headers may take to arrive"
)
@_serve_option(
    "idle-timeout", 30, click.IntRange(min=1), "Seconds a client may leave a read or write waiting"
)
def serve(
    host: str, port: int, workers: int, connections: int, header_timeout: int, idle_timeout: int
) -> int:
    """Run the HTTP service under gunicorn (gevent workers: slow clients are timed out and
    never hold a worker), migrating the database first."""
    from service import serving

    serving.prepare_psycopg()  # before anything imports psycopg
    from gunicorn.app.base import BaseApplication

    from service.api import logs
    from service.app import create_app
    from service.extensions import extensions
    from service.store import migrate

    db = _database()
    click.echo(f"verdict: database {_where(db)}", err=True)
    migrate.upgrade(db.url)  # idempotent; done once here, before workers fork
    db.dispose()
    if workers > 1 and not os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="verdict-metrics-")

    class Verdict(BaseApplication):
        def load_config(self):
            self.cfg.set("bind", f"{host}:{port}")
            self.cfg.set("workers", workers)
            serving.configure(self.cfg, connections, header_timeout, idle_timeout)
            self.cfg.set("timeout", 300)
            # gunicorn 25+ opens a control socket at one per-user path; several `verdict
            # serve` on one machine (hosts of one installation, tests) would share it.
            self.cfg.set("control_socket_disable", True)
            self.cfg.set("accesslog", "-")
            self.cfg.set("errorlog", "-")
            self.cfg.set("logger_class", logs.GunicornLogger)
            self.cfg.set("child_exit", _child_exit)

        def load(self):
            # Runs in each worker after the fork: the warming thread belongs to the worker.
            app = create_app()
            ext = extensions(app)
            ext.preloader.start()
            if ext.checkpoint_signer is not None:
                ext.checkpoint_signer.start()
            return logs.with_gunicorn_access_log(app)

    Verdict().run()
    return 0


def _child_exit(_server, worker) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid)


# --------------------------------------------------------------------------------- db


@cli.command()
@click.argument("action", type=click.Choice(["upgrade", "downgrade", "current"]))
@click.argument("revision", required=False)
def db(action: str, revision: str | None) -> int:
    """Database migrations: upgrade (default head), downgrade (default one step), current."""
    from alembic.util import CommandError

    from service.store import migrate

    database = _database()
    click.echo(f"verdict: database {_where(database)}", err=True)
    try:
        if action == "upgrade":
            migrate.upgrade(database.url, revision or "head")
        elif action == "downgrade":
            migrate.downgrade(database.url, revision or "-1")
    except CommandError as exc:
        # Alembic's words name the revision ("Can't locate revision identified by 'x'").
        raise click.BadParameter(str(exc), param_hint="REVISION") from None
    head = migrate.head_revision(database.url)
    click.echo(f"database at revision {migrate.current_revision(database)} (head {head})")
    return 0


# ------------------------------------------------------------------------------- keys


@cli.group()
def keys() -> None:
    """API keys: create, list, revoke."""


@keys.command("create")
@click.option(
    "--role",
    required=True,
    type=click.Choice(ROLES),
    help="read: snapshots and history; decide: also decisions; admin: everything.",
)
@click.option("--name", default="", help="A label to recognise the key by.")
def keys_create(role: str, name: str) -> int:
    """Create a key; its secret is printed once, alone on the last line."""
    from service.store import keys as store

    db = _database(migrate_if_empty=True)
    click.echo(f"verdict: database {_where(db)}", err=True)
    with db.session(write=True) as session:
        key, secret = store.create(session, role, name)
        click.echo(f"created key {key.id} with role {key.role}; the secret is shown once:")
        click.echo(secret)
    return 0


@keys.command("list")
def keys_list() -> int:
    """List keys: id, role, state, name (tab-separated)."""
    from service.store import keys as store

    db = _database(migrate_if_empty=True)
    with db.session() as session:
        for key in store.list_keys(session):
            state = "revoked" if key.revoked_at else "active"
            click.echo(f"{key.id}\t{key.role}\t{state}\t{key.name}")
    return 0


@keys.command("revoke")
@click.argument("key_id", metavar="ID")
def keys_revoke(key_id: str) -> int:
    """Revoke the key ID (see `verdict keys list`)."""
    from service.store import keys as store

    db = _database(migrate_if_empty=True)
    with db.session(write=True) as session:
        if not store.revoke(session, key_id):
            raise click.BadParameter(f"no key {key_id}", param_hint="ID")
    click.echo(f"revoked {key_id}")
    return 0


# ---------------------------------------------------------------------------- capture


@cli.command()
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="Write the envelope here, gzipped (- for stdout).",
)
@click.option("--server", help="Post the envelope to this Verdict server (http://host:port).")
@click.option("--key", envvar="VERDICT_KEY", help="API key for --server (env VERDICT_KEY).")
@click.option(
    "--kubeconfig",
    type=click.Path(exists=True, dir_okay=False),
    help="kubeconfig file (default: kubectl's own choice, $KUBECONFIG).",
)
@click.option("--context", "kube_context", help="kubeconfig context to use.")
@click.option("--name", default="", help="Snapshot name.")
@click.option("--cluster", "cluster_name", default="", help="Cluster name stored with it.")
@click.option(
    "--parallel",
    type=click.IntRange(1, 64),
    default=8,
    show_default=True,
    help="Nodes fetched at a time.",
)
@click.option(
    "--timeout",
    type=click.FloatRange(min=0, min_open=True),
    default=30.0,
    show_default=True,
    help="Seconds allowed to each kubectl call.",
)
@click.option("--kubectl", default="kubectl", show_default=True, help="kubectl to run.")
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="With --server, print only the stored snapshot's id; no progress bar.",
)
def capture(
    output,
    server,
    key,
    kubeconfig,
    kube_context,
    name,
    cluster_name,
    parallel,
    timeout,
    kubectl,
    quiet,
) -> int:
    """Capture a cluster through kubectl into a snapshot envelope.

    Reads the objects Verdict uses, then every node's kubelet Summary stats and configz,
    a few nodes at a time. Nodes that fail, time out or answer garbage, and storage kinds
    that cannot be listed (RBAC), are listed on stderr and left out, not fatal. Either
    --output or --server is required.
    """
    from service import capture as capturing

    if bool(output) == bool(server):
        raise click.UsageError("give exactly one of --output FILE or --server URL")
    if server and not key:
        raise click.BadParameter("required with --server (or set VERDICT_KEY)", param_hint="--key")
    kube = capturing.Kubectl(kubectl, kubeconfig=kubeconfig, context=kube_context, timeout=timeout)
    started = datetime.now(UTC)
    with tempfile.TemporaryDirectory(prefix="verdict-capture-") as spool:
        try:
            objects = capturing.fetch_objects(kube, Path(spool) / "objects.json")
            with click.progressbar(
                length=len(objects.node_names),
                label="kubelet stats and configz",
                file=sys.stderr,
                hidden=quiet,
            ) as bar:
                nodes = capturing.fetch_nodes(
                    kube, objects.node_names, parallel=parallel, progress=bar.update
                )
        except capturing.CaptureError as exc:
            raise click.ClickException(str(exc)) from None
        for failure in objects.errors:
            click.echo(
                f"verdict: {failure['kind']}: {failure['message']}; left out (the scheduler's "
                "volume plugins will not see them)",
                err=True,
            )
        for failure in nodes.errors:
            click.echo(f"verdict: node {failure['node']}: {failure['message']}", err=True)
        summary = (
            f"captured {objects.count} objects, {len(objects.node_names)} nodes: "
            f"{len(nodes.stats)} with stats, {len(nodes.configz)} with configz, "
            f"{len(objects.errors) + len(nodes.errors)} errors"
        )
        envelope = {
            "objects": objects,
            "nodes": nodes,
            "name": name,
            "cluster": cluster_name,
            "now": started,
        }
        if output:
            capturing.write(output, **envelope)
            click.echo(f"{summary}; written to {output}", err=True)
            return 0
        try:
            answer = capturing.post(server, key, timeout=max(timeout, 60), **envelope)
        except capturing.CaptureError as exc:
            raise click.ClickException(str(exc)) from None
    if quiet:
        click.echo(answer["id"])
        return 0
    click.echo(summary, err=True)
    _print(answer)
    return 0


# ----------------------------------------------------------------------------- decide


def _named_cluster(snapshot_file: str | None, snapshot_id: str | None, kind):
    """The cluster given on the command line, resolved as a request's (``decisions.cluster``):
    a stored snapshot by id, or a snapshot file."""
    from service.decisions.cluster import SnapshotNotFound, SnapshotReference, resolve_cluster
    from service.ingest.errors import IngestError
    from service.store.snapshots import ClusterCache

    if snapshot_id:
        reference, db = SnapshotReference(snapshot_id=snapshot_id), _database()
    else:
        data, content_type = _read_file(snapshot_file)
        reference, db = SnapshotReference(data=data, content_type=content_type, field=""), None
    try:
        return resolve_cluster(reference, db=db, cache=ClusterCache(1), scheduler=kind.scheduler)
    except SnapshotNotFound:
        raise click.BadParameter(
            f"no stored snapshot {snapshot_id}", param_hint="--snapshot-id"
        ) from None
    except IngestError as exc:
        raise click.ClickException(f"invalid snapshot {snapshot_file}: {exc}") from None


DECIDE_HELP = f"""Compute a decision offline (no server, nothing stored); prints the result
JSON the API would record. Give --snapshot FILE or --snapshot-id ID.

KIND is one of: {", ".join(DECISION_KINDS)}.

The request is the API's body (the files in examples/ are such bodies): give it whole with
--request FILE, or its parts with --node, --pod (a Pod manifest) and --now, which override
the file's.

\b
  verdict decide admission --snapshot examples/cluster.yaml \\
      --request examples/admission.yaml
  verdict decide schedule --snapshot examples/cluster.yaml \\
      --request examples/schedule.yaml
"""


def _pod_manifest(path: str) -> dict:
    """The Pod manifest --pod names; a request body given there instead (it has a ``pod``
    field and no ``metadata``) is pointed at --request rather than refused as a nameless pod."""
    manifest = _read_object(path, "--pod")
    if "metadata" not in manifest and isinstance(manifest.get("pod"), dict):
        raise click.BadParameter(
            f"{path} is a request body (it has a `pod` field), not a Pod manifest: "
            f"give it with --request {path}",
            param_hint="--pod",
        )
    return manifest


@cli.command(help=DECIDE_HELP, short_help="Compute a decision offline, nothing stored.")
@click.argument("kind", metavar="KIND", type=click.Choice(DECISION_KINDS))
@click.option(
    "--snapshot",
    "snapshot_file",
    type=READABLE,
    help="Snapshot file (JSON or YAML, may be gzipped; - for stdin).",
)
@click.option("--snapshot-id", help="A snapshot stored in the database instead of a file.")
@click.option("--node", help="nodeName.")
@click.option("--pod", type=READABLE, help="Pod manifest file (JSON or YAML).")
@click.option("--now", type=TIME, help="RFC 3339 time (2026-11-20T10:00:00Z) or a date.")
@click.option(
    "--request",
    "request_file",
    type=READABLE,
    help="File with the rest of the request body (JSON or YAML).",
)
@click.option(
    "--max-steps",
    envvar="VERDICT_SIMULATION_MAX_STEPS",
    type=click.IntRange(min=1),
    default=100_000,
    show_default=True,
    help="schedule and capacity: the most scheduling cycles a run may take.",
)
@click.option(
    "--max-seconds",
    envvar="VERDICT_SIMULATION_MAX_SECONDS",
    type=click.IntRange(min=1),
    default=120,
    show_default=True,
    help="schedule and capacity: the most seconds a run may take.",
)
def decide(
    kind, snapshot_file, snapshot_id, node, pod, now, request_file, max_steps, max_seconds
) -> int:
    from marshmallow import ValidationError

    from service.decisions import KINDS, DecisionInputError
    from service.decisions.run import compute
    from service.decisions.simulation import SimulationLimits

    if bool(snapshot_file) == bool(snapshot_id):
        raise click.UsageError("give exactly one of --snapshot FILE or --snapshot-id ID")
    params = _read_object(request_file, "--request") if request_file else {}
    params.pop("snapshotId", None)  # a request written for the API: the snapshot is given here
    if node:
        params["nodeName"] = node
    if pod:
        params["pod"] = _pod_manifest(pod)
    if now:
        params["now"] = now.isoformat()
    decision = KINDS[kind]
    named = _named_cluster(snapshot_file, snapshot_id, decision)
    try:
        outcome = compute(
            decision, named.cluster, params, limits=SimulationLimits(max_steps, max_seconds)
        )
    except ValidationError as exc:
        raise click.ClickException(f"invalid request: {exc.messages}") from None
    except DecisionInputError as exc:
        raise click.ClickException(f"invalid request: {exc.path}: {exc.message}") from None
    _print(outcome.result)
    return 0


# --------------------------------------------------------------------------- snapshot


@cli.group()
def snapshot() -> None:
    """Snapshots stored in the database."""


@snapshot.command("import")
@click.argument("file", type=READABLE)
@click.option("--name", help="Snapshot name (default: the envelope's).")
@click.option("--cluster", help="Cluster name (default: the envelope's).")
def snapshot_import(file: str, name: str | None, cluster: str | None) -> int:
    """Store FILE (a List, an array of objects or an envelope; JSON or YAML, may be gzipped)."""
    from service.api.snapshots import summary_json
    from service.ingest.body import parse_snapshot
    from service.ingest.errors import IngestError
    from service.store import snapshots as store

    db = _database(migrate_if_empty=True)
    data, content_type = _read_file(file)
    try:
        parsed = parse_snapshot(data, content_type=content_type)
    except IngestError as exc:
        raise click.ClickException(f"invalid snapshot {file}: {exc}") from None
    with db.session(write=True) as session:
        row = store.save(
            session,
            parsed.snapshot,
            name=name or parsed.name,
            cluster=cluster or parsed.cluster,
            labels=parsed.labels,
            key_id=None,
        )
        _print(summary_json(row))
    return 0


# ---------------------------------------------------------------------------- history


@cli.group()
def history() -> None:
    """Decision records: export, prune."""


@history.command("export")
@click.option("--since", type=TIME, help="Only records created at or after this time.")
@click.option(
    "--output",
    type=click.Path(dir_okay=False, writable=True),
    help="File to write (default: stdout).",
)
def history_export(since: datetime | None, output: str | None) -> int:
    """Write the records as NDJSON, oldest first."""
    from service.store import records

    db = _database()
    out = open(output, "wb") if output else sys.stdout.buffer  # noqa: SIM115
    with db.session() as session:
        for row in records.iterate(session, since):
            out.write(orjson.dumps(records.to_json(row)) + b"\n")
    out.flush()
    return 0


def _interactive() -> bool:
    return sys.stdin.isatty()


class _DryRun(Exception):
    """Raised inside the prune's transaction to roll it back."""


@history.command("prune")
@click.option("--before", required=True, type=TIME, help="Remove records older than this.")
@click.option("--dry-run", is_flag=True, help="Say how many records would go; change nothing.")
@click.option(
    "--yes", "-y", is_flag=True, help="Do not ask for confirmation (only asked on a terminal)."
)
def history_prune(before: datetime, dry_run: bool, yes: bool) -> int:
    """Remove the oldest records (a prefix of the chain) and record the prune. On a terminal
    it asks first; scripts (no terminal) are not asked."""
    from service.engine.version import ENGINE_VERSION
    from service.store import records

    db = _database()
    click.echo(f"verdict: database {_where(db)}", err=True)
    if dry_run:
        # The prune itself, rolled back: the count is exactly what a real prune removes.
        try:
            with db.session(write=True) as session:
                row = records.prune(session, before, ENGINE_VERSION)
                deleted = records.to_json(row)["result"]["deleted"]
                raise _DryRun
        except _DryRun:
            pass
        click.echo(f"would remove {deleted} records older than {before.isoformat()}")
        return 0
    if not yes and _interactive():
        click.confirm(
            f"Remove the records older than {before.isoformat()}? This cannot be undone",
            abort=True,
            err=True,
        )
    with db.session(write=True) as session:
        row = records.prune(session, before, ENGINE_VERSION)
        _print(records.to_json(row))
    return 0


# ------------------------------------------------------------------------------ audit


def _audit_key(settings):
    from service.store import checkpoints

    key = checkpoints.load_signing_key(settings)
    if key is None:
        raise click.ClickException(
            "no checkpoint key: set VERDICT_CHECKPOINT_KEY_FILE (verdict audit keygen)"
        )
    return key


@cli.group()
def audit() -> None:
    """Signed checkpoints of the record chain."""


@audit.command("keygen")
@click.option(
    "--output",
    required=True,
    type=click.Path(dir_okay=False),
    help="File to create (mode 0600); never overwritten.",
)
def audit_keygen(output: str) -> int:
    """Write a new Ed25519 private key (PEM) and print its public key."""
    from service.store import checkpoints

    try:
        pem = checkpoints.write_new_key(Path(output))
    except FileExistsError:
        raise click.BadParameter(f"{output} exists", param_hint="--output") from None
    public = checkpoints.parse_private_pem(pem, output).public_key()
    sys.stdout.write(f"keyId {checkpoints.key_id(public)}\n{checkpoints.public_pem(public)}")
    return 0


@audit.command("public-key")
def audit_public_key() -> int:
    """Print the configured key's public key."""
    from service.store import checkpoints

    public = _audit_key(_settings()).public_key()
    sys.stdout.write(f"keyId {checkpoints.key_id(public)}\n{checkpoints.public_pem(public)}")
    return 0


@audit.command("checkpoint")
def audit_checkpoint() -> int:
    """Sign a checkpoint now and keep it in the log (refused, exit 1, when the chain
    contradicts the log's newest checkpoint)."""
    from service.store import checkpoints

    settings = _settings()
    try:
        cp = checkpoints.sign_into_log(
            _database(settings), _audit_key(settings), settings.CHECKPOINT_DIR
        )
    except checkpoints.CheckpointError as exc:
        click.echo(f"verdict: {exc.detail}", err=True)
        return 1
    _print(cp)
    return 0


@audit.command("verify")
@click.option(
    "--checkpoint",
    type=click.Path(exists=True, dir_okay=False),
    help="Checkpoint JSON file the chain must extend.",
)
def audit_verify(checkpoint: str | None) -> int:
    """Verify the chain, against every checkpoint in the log (when a key is configured) and
    the given one. Exit 1 when the chain is broken or does not extend one of them, 2 on a bad
    checkpoint."""
    from service.store import checkpoints, records

    settings = _settings()
    db = _database(settings)
    key = checkpoints.load_signing_key(settings) if checkpoint is None else _audit_key(settings)
    if key is None:
        with db.session() as session:
            outcome = records.verify(session)
        _print({"ok": outcome.ok, "records": outcome.records, "firstBadId": outcome.first_bad_id})
        return 0 if outcome.ok else 1
    try:
        cp = None if checkpoint is None else checkpoints.parse(Path(checkpoint).read_bytes())
        with db.session() as session:
            got = checkpoints.verify_against(session, cp, key.public_key(), settings.CHECKPOINT_DIR)
    except checkpoints.CheckpointError as exc:
        click.echo(f"verdict: {exc.path}: {exc.detail}", err=True)
        return 2
    _print(got.to_json())
    return 0 if got.ok else 1


# ----------------------------------------------------------------------------- impact


class Since(Time):
    """A time, or how long ago: ``30d``, ``12h``, ``90m``, ``2w``."""

    name = "TIME|AGE"
    UNITS = {"w": 7 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}

    def convert(self, value, param, ctx):
        if isinstance(value, str) and value[:-1].isdigit() and value[-1:] in self.UNITS:
            return datetime.now(UTC) - timedelta(seconds=int(value[:-1]) * self.UNITS[value[-1]])
        return super().convert(value, param, ctx)


# The impact request's fields, by the option that gives each (errors name the option).
IMPACT_OPTIONS = {
    "kubernetesVersion": "--to",
    "schedulerConfiguration": "--scheduler-config",
    "kubeletConfiguration": "--kubelet-config",
    "filter.kind": "--kind",
    "filter.snapshotId": "--snapshot-id",
    "filter.nodeName": "--node",
    "filter.pod": "--pod",
    "filter.since": "--since",
    "filter.until": "--until",
    "filter": "--kind/--snapshot-id/--node/--pod/--since/--until",
    "limit": "--page-size",
}


def _impact_error(errors: list[dict]) -> click.ClickException:
    """An impact request error as the options the user typed."""
    lines = []
    for error in errors:
        path = error["path"]
        option = next(
            (o for p, o in IMPACT_OPTIONS.items() if path == p or path.startswith(p + ".")), None
        )
        where = f"{option} ({path})" if option and option != path else path
        lines.append(f"{where}: {error['message']}")
    return click.ClickException("; ".join(lines))


class _ImpactOutput:
    """Where the changes go as pages arrive: nothing is kept but the counts, so memory stays
    flat however many decisions are examined."""

    def __init__(self, out) -> None:
        self.out = out
        self.totals = {"examined": 0, "unchanged": 0, "changed": 0, "failed": 0}
        self.by_kind: dict[str, dict[str, int]] = {}

    def page(self, answer: dict) -> None:
        for name in self.totals:
            self.totals[name] += answer[name]
        for kind, counts in answer["byKind"].items():
            mine = self.by_kind.setdefault(kind, dict.fromkeys(counts, 0))
            for name, value in counts.items():
                mine[name] += value
        for change in answer["changes"]:
            self.change(change)
        for failure in answer["failures"]:
            self.failure(failure)

    def summary(self) -> dict:
        return {**self.totals, "byKind": self.by_kind}


class _TableOutput(_ImpactOutput):
    ROW = "{:<8}  {:<18}  {:<40}  {}\n"

    def __init__(self, out, clear) -> None:
        super().__init__(out)
        self.clear = clear  # wipes the progress bar's line before a row is written
        self.header = False

    def _row(self, *cells) -> None:
        self.clear()
        if not self.header:
            self.header = True
            self.out.write(self.ROW.format("DECISION", "KIND", "SUBJECT", "CHANGE"))
        self.out.write(self.ROW.format(*cells))
        self.out.flush()

    def change(self, entry: dict) -> None:
        subject = entry["subject"] if len(entry["subject"]) <= 40 else entry["subject"][:39] + "…"
        self._row(entry["decisionId"][:8], entry["kind"], subject, entry["summary"])

    def failure(self, entry: dict) -> None:
        self._row(entry["decisionId"][:8], entry["kind"], "", f"FAILED: {entry['reason']}")

    def finish(self) -> None:
        self.clear()
        t = self.totals
        self.out.write(
            f"\n{t['examined']} examined: {t['unchanged']} unchanged, {t['changed']} changed, "
            f"{t['failed']} failed\n"
        )
        for kind, counts in sorted(self.by_kind.items()):
            self.out.write(
                f"  {kind:<18}  {counts['examined']} examined, {counts['changed']} changed, "
                f"{counts['failed']} failed\n"
            )


class _NdjsonOutput(_ImpactOutput):
    """One line per change (``"type": "change"``) or failure (``"failure"``), then the
    totals (``"summary"``)."""

    def _line(self, kind: str, entry: dict) -> None:
        self.out.write(orjson.dumps({"type": kind, **entry}).decode() + "\n")

    def change(self, entry: dict) -> None:
        self._line("change", entry)

    def failure(self, entry: dict) -> None:
        self._line("failure", entry)

    def finish(self) -> None:
        self._line("summary", self.summary())


class _JsonOutput(_ImpactOutput):
    """One document, the API's answer over every page: the changes are written as they come,
    the failures held in a temporary file until the changes are done."""

    def __init__(self, out) -> None:
        super().__init__(out)
        self.failures = tempfile.SpooledTemporaryFile(1 << 20, mode="w+")  # noqa: SIM115
        self.first = {"change": True, "failure": True}
        self.out.write('{"changes": [')

    def _item(self, kind: str, entry: dict, out) -> None:
        out.write(("" if self.first[kind] else ",") + orjson.dumps(entry).decode())
        self.first[kind] = False

    def change(self, entry: dict) -> None:
        self._item("change", entry, self.out)

    def failure(self, entry: dict) -> None:
        self._item("failure", entry, self.failures)

    def finish(self) -> None:
        self.out.write('], "failures": [')
        self.failures.seek(0)
        while chunk := self.failures.read(1 << 16):
            self.out.write(chunk)
        self.failures.close()
        rest = orjson.dumps(self.summary()).decode()
        self.out.write("], " + rest[1:] + "\n")


@cli.command()
@click.option("--to", "version", help="The Kubernetes release to replay under (e.g. 1.35).")
@click.option(
    "--scheduler-config",
    type=READABLE,
    help="A KubeSchedulerConfiguration file for placement and preemption decisions.",
)
@click.option(
    "--kubelet-config",
    type=READABLE,
    help="A KubeletConfiguration file (or eviction settings) for eviction decisions.",
)
@click.option("--kind", type=click.Choice(DECISION_KINDS), help="Only decisions of this kind.")
@click.option("--snapshot-id", help="Only decisions on this snapshot.")
@click.option("--node", help="Only decisions about this node.")
@click.option("--pod", help="Only decisions about this pod (namespace/name).")
@click.option("--since", type=Since(), help="Only decisions since this time or age (30d, 12h).")
@click.option("--until", type=Since(), help="Only decisions before this time or age.")
@click.option(
    "--output",
    "output_format",
    type=click.Choice(["table", "json", "ndjson"]),
    default="table",
    show_default=True,
    help="A table for people, one JSON document, or one JSON line per change.",
)
@click.option(
    "--page-size",
    type=click.IntRange(1, 1000),
    default=500,
    show_default=True,
    help="Decisions replayed per page (memory is bounded by one page).",
)
def impact(
    version,
    scheduler_config,
    kubelet_config,
    kind,
    snapshot_id,
    node,
    pod,
    since,
    until,
    output_format,
    page_size,
) -> int:
    """What a Kubernetes upgrade or a configuration change would decide differently: every
    stored decision the filters match is replayed under the change and compared with what
    was decided (POST /v1/impact, page after page, on the server's database). Nothing is
    stored. A progress bar is shown on a terminal."""
    from marshmallow import ValidationError

    from service.api.errors import flatten_messages
    from service.decisions.impact import (
        ImpactRequestSchema,
        NothingMatches,
        count_matching,
        impact_page,
    )
    from service.store.snapshots import ClusterCache

    settings = _settings()
    body: dict = {"limit": page_size, "filter": {}}
    if version:
        body["kubernetesVersion"] = version
    if scheduler_config:
        body["schedulerConfiguration"] = _read_object(scheduler_config, "--scheduler-config")
    if kubelet_config:
        body["kubeletConfiguration"] = _read_object(kubelet_config, "--kubelet-config")
    given = {"kind": kind, "snapshotId": snapshot_id, "nodeName": node, "pod": pod}
    body["filter"] = {k: v for k, v in given.items() if v is not None}
    for name, moment in (("since", since), ("until", until)):
        if moment is not None:
            body["filter"][name] = moment.isoformat()
    schema = ImpactRequestSchema()
    try:
        query = schema.load(body)
    except ValidationError as exc:
        raise _impact_error(flatten_messages(exc.messages)) from None
    db = _database(settings)
    cache = ClusterCache(settings.SNAPSHOT_CACHE_SIZE, settings.SNAPSHOT_CACHE_PODS)
    total = count_matching(db, query)
    if total == 0:
        raise click.ClickException(NothingMatches().message)
    interactive = sys.stderr.isatty()
    bar = click.progressbar(length=total, label="Replaying", file=sys.stderr, show_pos=True)

    def clear() -> None:
        if interactive:
            sys.stderr.write("\r\033[K")

    outputs = {"json": _JsonOutput, "ndjson": _NdjsonOutput}
    out = (
        _TableOutput(sys.stdout, clear)
        if output_format == "table"
        else outputs[output_format](sys.stdout)
    )
    with bar if interactive else contextlib.nullcontext(bar):
        while True:
            try:
                answer = impact_page(db, cache, query)
            except NothingMatches as exc:  # pruned since it was counted
                raise click.ClickException(exc.message) from None
            out.page(answer)
            if interactive:
                bar.update(answer["examined"])
            if answer["nextCursor"] is None:
                break
            query = schema.load({**body, "cursor": answer["nextCursor"]})
    out.finish()
    sys.stdout.flush()
    return 0


# ------------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; the exit code is returned (the console script exits with it)."""
    from sqlalchemy.exc import OperationalError

    try:
        code = cli.main(args=argv, prog_name="verdict", standalone_mode=False)
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except click.Abort:
        click.echo("Aborted.", err=True)
        return 1
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except OperationalError as exc:
        click.echo(f"Error: database: {exc.orig}", err=True)
        return 1
    except OSError as exc:
        click.echo(f"Error: {exc.filename or ''}: {exc.strerror or exc}", err=True)
        return 1
    return code if isinstance(code, int) else 0


if __name__ == "__main__":
    sys.exit(main())
