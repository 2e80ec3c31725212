"""The `verdict` command: offline decisions (same result as the API), keys, history."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import yaml

from service.cli import DECISION_KINDS, main
from service.extensions import extensions
from service.store import records
from tests.conftest import kube_list, node, pod
from tests.store.helpers import OFFSET_TIMES, append_at_hours


@pytest.fixture
def cluster_file(tmp_path):
    cluster = kube_list(
        node("n1", cpu="2"),
        pod("busy", "n1", cpu="1500m", memory="1Gi", priority=0),
    )
    envelope = {
        "objects": cluster,
        "capturedAt": "2026-11-20T10:00:00Z",
        "stats": {
            "n1": {
                "node": {
                    "nodeName": "n1",
                    "memory": {"availableBytes": 50 * 2**20, "workingSetBytes": 7 * 2**30},
                },
                "pods": [
                    {
                        "podRef": {
                            "name": "busy",
                            "namespace": "default",
                            "uid": "uid-default-busy",
                        },
                        "memory": {"workingSetBytes": 2**30},
                    }
                ],
            }
        },
    }
    path = tmp_path / "cluster.json"
    path.write_bytes(orjson.dumps(envelope))
    return path


def _run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_decide_admission_offline_matches_the_api(api, cluster_file, tmp_path, capsys):
    pod_file = tmp_path / "pod.yaml"
    pod_file.write_text(yaml.safe_dump(pod("new", cpu="1", memory="64Mi")))
    code, out, _ = _run(
        capsys,
        "decide",
        "admission",
        "--snapshot",
        str(cluster_file),
        "--node",
        "n1",
        "--pod",
        str(pod_file),
    )
    assert code == 0
    offline = orjson.loads(out)
    assert offline["admitted"] is False and offline["reasons"][0]["resource"] == "cpu"
    snapshot = api.post(
        "/v1/snapshots",
        data=cluster_file.read_bytes(),
        content_type="application/json",
        role="decide",
    ).json
    online = api.post(
        "/v1/decisions/admission",
        json={
            "snapshotId": snapshot["id"],
            "nodeName": "n1",
            "pod": pod("new", cpu="1", memory="64Mi"),
        },
        role="decide",
    ).json["result"]
    assert offline == online


@pytest.mark.parametrize(
    ("kind", "extra", "check"),
    [
        ("eviction", ["--node", "n1"], lambda r: r["nodeConditions"] == ["MemoryPressure"]),
        (
            "node-eviction-rate",
            ["--now", "2026-11-20T10:00:00Z"],
            lambda r: r["zones"][0]["state"] == "Normal",
        ),
        ("placement", ["--pod", "POD"], lambda r: r["selectedNode"] is None),
        ("preemption", ["--pod", "POD"], lambda r: r["nominatedNodeName"] == "n1"),
    ],
)
def test_decide_every_kind_offline(cluster_file, tmp_path, capsys, kind, extra, check):
    pod_file = tmp_path / "pending.json"
    pod_file.write_bytes(orjson.dumps(pod("pending", cpu="1", memory="64Mi", priority=100)))
    argv = [str(pod_file) if a == "POD" else a for a in extra]
    code, out, err = _run(capsys, "decide", kind, "--snapshot", str(cluster_file), *argv)
    assert code == 0, err
    assert check(orjson.loads(out))


def test_decide_reports_bad_input(cluster_file, tmp_path, capsys):
    pod_file = tmp_path / "pod.json"
    pod_file.write_bytes(orjson.dumps(pod("x", cpu="1")))
    code, out, err = _run(
        capsys,
        "decide",
        "admission",
        "--snapshot",
        str(cluster_file),
        "--node",
        "nope",
        "--pod",
        str(pod_file),
    )
    assert code == 1 and out == ""
    assert "nodeName" in err


def test_decide_checks_the_pod_as_the_api_server_would(cluster_file, tmp_path, capsys):
    pod_file = tmp_path / "pod.json"
    pod_file.write_bytes(orjson.dumps(pod("Not_A_Name", cpu="1")))
    code, out, err = _run(
        capsys, "decide", "admission", "--snapshot", str(cluster_file), "--node", "n1",
        "--pod", str(pod_file),
    )  # fmt: skip
    assert code == 1 and out == ""
    assert "metadata.name" in err and "Traceback" not in err


def test_keys_and_history(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    code, out, _ = _run(capsys, "keys", "create", "--role", "decide", "--name", "ci")
    assert code == 0 and out.strip().splitlines()[-1].startswith("vk_")
    assert _run(capsys, "keys", "list")[1].count("decide") == 1
    code, out, _ = _run(capsys, "history", "prune", "--before", "2020-01-01T00:00:00Z")
    assert code == 0 and orjson.loads(out)["kind"] == "prune"
    export = tmp_path / "out.ndjson"
    assert _run(capsys, "history", "export", "--output", str(export))[0] == 0
    lines = [orjson.loads(line) for line in export.read_bytes().splitlines()]
    assert [r["kind"] for r in lines] == ["prune"]


def test_audit_keygen_checkpoint_and_verify(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'cli.db'}")
    monkeypatch.setenv("VERDICT_INSTANCE_PATH", str(tmp_path))
    assert _run(capsys, "db", "upgrade")[0] == 0
    key_file = tmp_path / "checkpoint.pem"
    code, out, _ = _run(capsys, "audit", "keygen", "--output", str(key_file))
    assert code == 0 and out.startswith("keyId ed25519:") and "BEGIN PUBLIC KEY" in out
    assert key_file.stat().st_mode & 0o777 == 0o600
    monkeypatch.setenv("VERDICT_CHECKPOINT_KEY_FILE", str(key_file))
    assert _run(capsys, "audit", "public-key")[1] == out
    _run(capsys, "history", "prune", "--before", "2020-01-01T00:00:00Z")  # one record
    code, out, _ = _run(capsys, "audit", "checkpoint")
    cp_file = tmp_path / "cp.json"
    cp_file.write_text(out)
    assert code == 0 and orjson.loads(out)["size"] == 1
    code, out, _ = _run(capsys, "audit", "verify", "--checkpoint", str(cp_file))
    assert code == 0 and orjson.loads(out)["extendsCheckpoint"] is True
    cp_file.write_text('{"size": 1}')
    code, _, err = _run(capsys, "audit", "verify", "--checkpoint", str(cp_file))
    assert code == 2 and "checkpoint.headHash" in err


# --- the CLI's idiom: help, choices, errors without tracebacks ------------------------------


def _commands(group, prefix=()):
    import click

    for name, command in group.commands.items():
        yield (*prefix, name), command
        if isinstance(command, click.Group):
            yield from _commands(command, (*prefix, name))


def test_every_command_and_option_has_help(capsys):
    from service.cli import cli

    for path, command in _commands(cli):
        assert command.help, path
        for param in command.params:
            if param.param_type_name == "option":
                assert param.help, (path, param.name)
        code, out, _ = _run(capsys, *path, "--help")
        assert code == 0 and out.startswith(f"Usage: verdict {' '.join(path)}")
    out = _run(capsys, "keys", "create", "--help")[1]
    assert "[read|decide|admin]" in out


def test_a_bad_choice_names_the_option_without_a_traceback(capsys, cluster_file):
    code, out, err = _run(capsys, "keys", "create", "--role", "root")
    assert code == 2 and out == ""
    assert "Invalid value for '--role'" in err and "'read', 'decide', 'admin'" in err
    assert "Traceback" not in err
    code, _, err = _run(capsys, "decide", "scheduling", "--snapshot", str(cluster_file))
    assert code == 2 and "Invalid value for 'KIND': 'scheduling' is not one of" in err


def test_the_listed_decision_kinds_are_the_registered_ones():
    from service.cli import DECISION_KINDS
    from service.decisions import KINDS

    assert sorted(DECISION_KINDS) == sorted(KINDS)


def test_a_missing_file_names_the_option(capsys, tmp_path):
    code, _, err = _run(capsys, "decide", "admission", "--snapshot", str(tmp_path / "nope.json"))
    assert code == 2 and "'--snapshot'" in err and "nope.json" in err and "does not exist" in err


def test_settings_errors_are_a_message_and_exit_2(monkeypatch, capsys):
    monkeypatch.setenv("VERDICT_SNAPSHOT_CACHE_SIZE", "many")
    code, out, err = _run(capsys, "keys", "list")
    assert code == 2 and out == ""
    assert err.startswith("Error: settings: ") and "Traceback" not in err


def test_keys_create_and_db_say_which_database(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'where.db'}")
    code, _, err = _run(capsys, "keys", "create", "--role", "read")
    assert code == 0 and f"database sqlite:///{tmp_path / 'where.db'}" in err
    assert f"sqlite:///{tmp_path / 'where.db'}" in _run(capsys, "db", "current")[2]


def _two_records(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'prune.db'}")
    assert _run(capsys, "db", "upgrade")[0] == 0
    for _ in range(2):  # each prune is itself a record
        assert _run(capsys, "history", "prune", "--before", "2020-01-01")[0] == 0


def test_history_prune_dry_run_changes_nothing(monkeypatch, tmp_path, capsys):
    _two_records(monkeypatch, tmp_path, capsys)
    code, out, _ = _run(capsys, "history", "prune", "--before", "2999-01-01", "--dry-run")
    assert code == 0 and out.startswith("would remove 2 records")
    _run(capsys, "history", "export", "--output", str(tmp_path / "all.ndjson"))
    assert len((tmp_path / "all.ndjson").read_bytes().splitlines()) == 2


def test_history_prune_asks_on_a_terminal(monkeypatch, tmp_path, capsys):
    from click.testing import CliRunner

    from service import cli

    _two_records(monkeypatch, tmp_path, capsys)
    monkeypatch.setattr(cli, "_interactive", lambda: True)
    runner = CliRunner()
    answer = runner.invoke(cli.cli, ["history", "prune", "--before", "2999-01-01"], input="n\n")
    assert answer.exit_code == 1 and "Remove the records older than" in answer.output
    _run(capsys, "history", "export", "--output", str(tmp_path / "kept.ndjson"))
    assert len((tmp_path / "kept.ndjson").read_bytes().splitlines()) == 2
    answer = runner.invoke(cli.cli, ["history", "prune", "--before", "2999-01-01"], input="y\n")
    assert answer.exit_code == 0
    assert orjson.loads(answer.stdout[answer.stdout.index("{") :])["result"]["deleted"] == 2


def test_a_malformed_time_says_how_to_write_one(capsys):
    code, _, err = _run(capsys, "history", "prune", "--before", "yesterday")
    assert code == 2 and "'--before'" in err and "2026-11-20T10:00:00Z" in err


def test_decide_on_a_stored_snapshot(monkeypatch, tmp_path, cluster_file, capsys):
    monkeypatch.setenv("VERDICT_DATABASE_URL", f"sqlite:///{tmp_path / 'stored.db'}")
    code, out, _ = _run(capsys, "snapshot", "import", str(cluster_file))
    assert code == 0
    snapshot_id = orjson.loads(out)["id"]
    stored = _run(capsys, "decide", "eviction", "--snapshot-id", snapshot_id, "--node", "n1")
    from_file = _run(capsys, "decide", "eviction", "--snapshot", str(cluster_file), "--node", "n1")
    assert stored[0] == 0 and orjson.loads(stored[1]) == orjson.loads(from_file[1])
    code, _, err = _run(capsys, "decide", "eviction", "--snapshot-id", "nope", "--node", "n1")
    assert code == 2 and "--snapshot-id: no stored snapshot nope" in err
    code, _, err = _run(capsys, "decide", "eviction", "--node", "n1")
    assert code == 2 and "--snapshot FILE or --snapshot-id ID" in err


@pytest.mark.parametrize(("moment", "before"), OFFSET_TIMES)
def test_history_prune_compares_instants(app, database_url, monkeypatch, capsys, moment, before):
    """`--before 10:06+14:00` is two hours ago, not the end of the day: the records older than
    that instant go, on both databases (issue 24)."""
    ids = append_at_hours(extensions(app).db)
    monkeypatch.setenv("VERDICT_DATABASE_URL", database_url)
    code, out, _ = _run(capsys, "history", "prune", "--before", moment, "--dry-run")
    assert code == 0 and out.startswith(f"would remove {before} records")
    code, out, _ = _run(capsys, "history", "prune", "--before", moment)
    assert code == 0 and orjson.loads(out)["result"]["deleted"] == before
    assert orjson.loads(out)["request"]["before"].endswith("Z")
    with extensions(app).db.session() as session:
        kept = [row.id for row in records.iterate(session)]
    assert kept[:-1] == ids[before:]  # and the prune's own record


def test_a_time_past_the_utc_range_is_a_usage_error(capsys):
    code, _, err = _run(capsys, "history", "prune", "--before", "9999-12-31T23:59:59-14:00")
    assert code == 2 and "outside the years 1 to 9999 in UTC" in err


@pytest.fixture
def impact_history(api, database_url, monkeypatch):
    """The history of tests/decisions/test_impact.py (two of four decisions change under
    1.37), with the CLI pointed at its database."""
    from tests.decisions.test_impact import _history

    history = _history(api)
    monkeypatch.setenv("VERDICT_DATABASE_URL", database_url)
    return history


def test_impact_as_ndjson_json_and_a_table(impact_history, capsys):
    code, out, _ = _run(capsys, "impact", "--to", "1.37", "--output", "ndjson", "--page-size", "1")
    lines = [orjson.loads(line) for line in out.splitlines()]
    assert code == 0 and [line["type"] for line in lines] == ["change", "change", "summary"]
    assert {line["decisionId"] for line in lines[:2]} == set(impact_history["moved"])
    assert lines[-1]["examined"] == 4 and lines[-1]["byKind"]["placement"]["changed"] == 2
    code, out, _ = _run(capsys, "impact", "--to", "1.37", "--output", "json", "--since", "30d")
    document = orjson.loads(out)
    assert (document["examined"], document["changed"], len(document["changes"])) == (4, 2, 2)
    assert document["failures"] == []
    code, out, _ = _run(capsys, "impact", "--to", "1.37", "--kind", "placement")
    assert "selected node n1 → n2" in out
    assert "3 examined: 1 unchanged, 2 changed, 0 failed" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--to", "1.99"], "--to (kubernetesVersion): unknown Kubernetes version"),
        (["--to", "1.37", "--pod", "web"], "--pod (filter.pod): expected namespace/name"),
        (["--to", "1.37", "--since", "0s"], "no stored decision matches the filter"),
        (["--kind", "placement"], "--to (kubernetesVersion): name a change"),
    ],
)
def test_impact_errors_name_the_option(impact_history, capsys, argv, message):
    code, out, err = _run(capsys, "impact", *argv)
    assert code == 1 and out == "" and message in err


def test_impact_shows_a_progress_bar_on_a_terminal(impact_history, tmp_path):
    import os
    import subprocess
    import sys

    leader, follower = os.openpty()
    done = subprocess.run(
        [sys.executable, "-m", "service.cli", "impact", "--to", "1.37", "--page-size", "1"],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=os.environ,
        timeout=120,
    )
    os.close(follower)
    shown = os.read(leader, 1 << 16).decode()
    os.close(leader)
    assert done.returncode == 0 and "Replaying" in shown and "4/4" in shown
    assert "2 changed" in done.stdout.decode()


# --- what a first-day user types, run as they run it (a process of its own) ----------------

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _verdict(tmp_path, *argv, env=None) -> subprocess.CompletedProcess:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")}
    environ |= {"VERDICT_INSTANCE_PATH": str(tmp_path / "instance"), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "service.cli", *argv],
        capture_output=True,
        text=True,
        env=environ,
        timeout=120,
    )


@pytest.mark.parametrize(
    ("argv", "env", "words"),
    [
        (("db", "downgrade", "nosuchrev"), {}, ["REVISION", "nosuchrev"]),
        (("db", "upgrade", "nosuchrev"), {}, ["REVISION", "nosuchrev"]),
        (
            ("keys", "list"),
            {"VERDICT_DATABASE_URL": "notaurl"},
            ["VERDICT_DATABASE_URL", "not a database URL"],
        ),
        (("serve",), {"VERDICT_DATABASE_URL": "notaurl"}, ["VERDICT_DATABASE_URL", "sqlite:///"]),
        (
            ("keys", "list"),
            {"VERDICT_DATABASE_URL": "mysql://u@db/verdict"},
            ["SQLite and PostgreSQL", "mysql"],
        ),
        (
            (
                "decide",
                "admission",
                "--snapshot",
                str(EXAMPLES / "cluster.yaml"),
                "--pod",
                str(EXAMPLES / "admission.yaml"),
            ),
            {},
            ["--pod", "request body", "--request"],
        ),
    ],
    ids=[
        "downgrade-unknown",
        "upgrade-unknown",
        "not-a-url",
        "serve-not-a-url",
        "mysql",
        "request-as-pod",
    ],
)
def test_first_day_mistakes_are_one_line_not_a_traceback(tmp_path, argv, env, words):
    done = _verdict(tmp_path, *argv, env=env)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
    for word in words:
        assert word in done.stderr, done.stderr


def test_the_help_lists_the_decision_kinds_and_no_developer_notes(tmp_path):
    top = _verdict(tmp_path, "--help").stdout
    assert "verdict serve" in top and "click" not in top and "traceback" not in top
    decide_help = _verdict(tmp_path, "decide", "--help").stdout
    assert all(kind in decide_help for kind in DECISION_KINDS)
    assert "--request examples/admission.yaml" in decide_help


def test_the_example_request_runs_as_the_decide_help_shows(tmp_path):
    done = _verdict(
        tmp_path,
        "decide",
        "admission",
        "--snapshot",
        str(EXAMPLES / "cluster.yaml"),
        "--request",
        str(EXAMPLES / "admission.yaml"),
    )
    assert done.returncode == 0, done.stderr
    assert "admitted" in orjson.loads(done.stdout)


@pytest.mark.parametrize(
    ("kind", "check"),
    [
        ("schedule", lambda r: [s["outcome"] for s in r["steps"]]
         == ["bound", "bound", "unschedulable"]),
        ("capacity", lambda r: r["replicas"] == 7 and r["stopReason"]["nodeCounts"]
         == {"Insufficient cpu": 2}),
    ],
)  # fmt: skip
def test_schedule_and_capacity_examples_run_offline(tmp_path, kind, check):
    done = _verdict(
        tmp_path,
        "decide",
        kind,
        "--snapshot",
        str(EXAMPLES / "cluster.yaml"),
        "--request",
        str(EXAMPLES / f"{kind}.yaml"),
    )
    assert done.returncode == 0, done.stderr
    assert check(orjson.loads(done.stdout))


def test_decide_schedule_stops_at_the_configured_steps(tmp_path):
    done = _verdict(
        tmp_path,
        "decide",
        "schedule",
        "--snapshot",
        str(EXAMPLES / "cluster.yaml"),
        "--request",
        str(EXAMPLES / "schedule.yaml"),
        "--max-steps",
        "1",
    )
    assert done.returncode == 0, done.stderr
    result = orjson.loads(done.stdout)
    assert result["truncated"] is True and len(result["steps"]) == 1
    assert result["pending"] == ["shop/api-2", "jobs/etl-1"]
