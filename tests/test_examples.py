"""examples/ and the docs: every example request, and every `bash` block of README.md and
docs/, run as written against a real `verdict serve` (so that they cannot rot).

A page's ```bash blocks run in order in one shell, from a folder that holds the repository's
`examples/` and the virtualenv as `.venv` (so that `examples/...` and `.venv/bin/verdict`
read as they do from the repository root, and files the commands write land outside it),
with `set -eo pipefail` and every curl failing on an HTTP error. The README's first hour
starts its own server (VERDICT_PORT is a free port); the docs' pages share one, with `KEY` (a
decide key) and `SNAP` (examples/cluster.yaml stored) set as the first hour sets them. The
port 8080 written in the pages is replaced by the server's. ```sh blocks are shown only."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
from pathlib import Path

import orjson
import pytest
import yaml

from tests.fake_kubectl import BIN_DIR
from tests.serve.helpers import VERDICT, call, free_port, server, serving, sqlite_env  # noqa: F401

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = REPO / "examples"


def _key(env: dict, role: str) -> str:
    done = subprocess.run(
        [VERDICT, "keys", "create", "--role", role], env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_every_example_runs_against_a_real_server(server, tmp_path):  # noqa: F811
    """As the README runs it: from the repository, the verdict command named relative to it."""
    base, env = server
    run_env = {
        **env,
        "VERDICT_URL": base,
        "VERDICT_KEY": _key(env, "decide"),
        "VERDICT": os.path.relpath(VERDICT, REPO),
        "VERDICT_EXAMPLES_OUT": str(tmp_path),
    }
    done = subprocess.run(
        ["bash", "examples/run.sh"], cwd=REPO, env=run_env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-3000:]
    # The capture lists the node that did not answer, and keeps the rest.
    assert "node node-2: stats: kubectl exited 1" in done.stderr
    # Every call ran, in order.
    calls = [line for line in done.stderr.splitlines() if line.startswith("== ")]
    assert len(calls) == 18 and calls[-1] == "== GET /v1/decisions/export?since=2026-01-01"
    assert "== POST /v1/impact" in calls
    # The eviction answer (YAML) decided with node-1's captured kubelet configuration.
    result = yaml.safe_load((tmp_path / "eviction.yaml").read_text())["result"]
    assert result["configSource"] == "snapshot" and result["nowSource"] == "capturedAt"
    assert result["nodeConditions"] == ["MemoryPressure"]
    assert '"matches":true' in done.stdout


def test_capture_posts_to_a_server(server):  # noqa: F811
    base, env = server
    capture_env = {
        **env,
        "PATH": f"{BIN_DIR}{os.pathsep}{env['PATH']}",
        "FAKE_KUBECTL_DIR": str(EXAMPLES / "kubectl" / "answers"),
        "VERDICT_KEY": _key(env, "decide"),
    }
    done = subprocess.run(
        [VERDICT, "capture", "--server", base, "--cluster", "example"],
        env=capture_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    summary = orjson.loads(done.stdout)
    assert summary["cluster"] == "example" and summary["counts"]["stats"] == 1
    assert summary["capturedAt"] is not None
    capture_env["VERDICT_KEY"] = "vk_wrong"
    done = subprocess.run(
        [VERDICT, "capture", "--server", base], env=capture_env, capture_output=True, text=True
    )
    assert done.returncode == 1 and "answered 401" in done.stderr and "Traceback" not in done.stderr


DECISION_KINDS = (
    "admission",
    "placement",
    "preemption",
    "eviction",
    "node-eviction-rate",
    "schedule",
    "capacity",
)


def _operation_example(spec: dict, path: str) -> dict:
    content = spec["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    ref = content["examples"]["example"]["$ref"].rsplit("/", 1)[-1]
    return spec["components"]["examples"][ref]["value"]


def test_the_openapi_examples_are_the_example_files():
    from tests.contract import load_spec

    spec = load_spec()
    cluster = yaml.safe_load((EXAMPLES / "cluster.yaml").read_text())
    assert _operation_example(spec, "/v1/snapshots") == cluster
    for kind in DECISION_KINDS:
        request = yaml.safe_load((EXAMPLES / f"{kind}.yaml").read_text())
        assert request.pop("snapshotId") == "SNAPSHOT_ID"
        assert _operation_example(spec, f"/v1/decisions/{kind}") == {"snapshot": cluster, **request}


def test_the_openapi_examples_work_as_they_are(api):
    """What the docs page's "Try it out" sends: the example body, unchanged."""
    from tests.contract import load_spec

    spec = load_spec()
    response = api.post("/v1/snapshots", json=_operation_example(spec, "/v1/snapshots"))
    assert response.status_code == 201, response.json
    for kind in DECISION_KINDS:
        path = f"/v1/decisions/{kind}"
        response = api.post(path, json=_operation_example(spec, path), role="decide")
        assert response.status_code == 201, (kind, response.json)


def test_capture_quiet_prints_only_the_id(server):  # noqa: F811
    base, env = server
    capture_env = {
        **env,
        "PATH": f"{BIN_DIR}{os.pathsep}{env['PATH']}",
        "FAKE_KUBECTL_DIR": str(EXAMPLES / "kubectl" / "answers"),
    }
    done = subprocess.run(
        [VERDICT, "capture", "-q", "--server", base, "--key", _key(env, "decide")],
        env=capture_env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    snapshot_id = done.stdout.strip()
    assert len(snapshot_id) == 36 and "kubelet stats" not in done.stderr


# ---- the docs' commands

FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
PAGES = ["README.md", *sorted(str(p.relative_to(REPO)) for p in (REPO / "docs").rglob("*.md"))]
DOC_PAGES = [page for page in PAGES if page != "README.md"]
BLOCK_SECONDS = 120
PRELUDE = """set -eo pipefail
curl() {  # fail on an HTTP error, unless the command chose --fail itself
    case " $* " in
        *" -f "* | *" -sf "* | *" --fail "*) command curl "$@" ;;
        *) command curl --fail-with-body "$@" ;;
    esac
}
"""


def bash_blocks(page: str) -> list[str]:
    """The ```bash blocks of ``page``, in order (```sh and other fences are shown only)."""
    text = (REPO / page).read_text(encoding="utf-8")
    return [body for language, body in FENCE.findall(text) if language == "bash"]


def _workdir(tmp_path: Path) -> Path:
    """A folder that reads like the repository root for the docs' commands: `examples/` and
    `.venv` (the virtualenv running the tests) linked in, nothing else to write over."""
    work = tmp_path / "work"
    work.mkdir()
    (work / "examples").symlink_to(EXAMPLES)
    (work / ".venv").symlink_to(Path(VERDICT).parent.parent)
    return work


def run_page(page: str, env: dict, port: int, work: Path) -> subprocess.CompletedProcess:
    """Run ``page``'s bash blocks in one shell, the server's port in place of 8080; a server the
    blocks start in the background is stopped with the shell's process group."""
    script = PRELUDE + "\n".join(bash_blocks(page)).replace("127.0.0.1:8080", f"127.0.0.1:{port}")
    bin_dir = str(Path(VERDICT).parent)
    run_env = {**env, "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}"}
    process = subprocess.Popen(
        ["bash", "-c", script],
        cwd=work,
        env=run_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = process.communicate(timeout=BLOCK_SECONDS)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


def _record_one_of_each_kind(base: str, key: str, snapshot_id: str) -> None:
    for kind in DECISION_KINDS:
        body = (EXAMPLES / f"{kind}.yaml").read_text().replace("SNAPSHOT_ID", snapshot_id)
        status, answer, _ = call(
            f"{base}/v1/decisions/{kind}",
            "POST",
            body.encode(),
            {"Authorization": f"Bearer {key}", "Content-Type": "application/yaml"},
        )
        assert status == 201, (kind, answer)


@pytest.fixture(scope="module")
def docs_server(tmp_path_factory):
    """One server for the docs' pages, with `KEY`, `SNAP` and a decision of each kind stored."""
    home = tmp_path_factory.mktemp("docs-home")
    env = sqlite_env(home, VERDICT_LOG_LEVEL="WARNING")
    with serving(env, "--workers", "2", stderr=subprocess.PIPE) as served:
        key = _key(env, "decide")
        status, answer, _ = call(
            f"{served.base}/v1/snapshots",
            "POST",
            (EXAMPLES / "cluster.yaml").read_bytes(),
            {"Authorization": f"Bearer {key}", "Content-Type": "application/yaml"},
        )
        assert status == 201, answer
        snapshot_id = orjson.loads(answer)["id"]
        _record_one_of_each_kind(served.base, key, snapshot_id)
        yield served, {**env, "KEY": key, "SNAP": snapshot_id}


COMMAND = re.compile(
    r"^\$?\s*(verdict|curl|python3?|pip|docker|kubectl|export|bash|gunicorn|\.venv/)"
)


def test_the_pages_mark_their_blocks():
    """Every block of shell commands is fenced bash (run here) or sh (shown only): an unmarked
    one would be neither tested nor visibly exempt."""
    for page in PAGES:
        text = (REPO / page).read_text(encoding="utf-8")
        unmarked = [
            body[:60]
            for language, body in FENCE.findall(text)
            if language in ("shell", "console") or (not language and COMMAND.match(body))
        ]
        assert not unmarked, (page, unmarked)


def test_the_readme_first_hour_runs_as_written(tmp_path):
    """The first hour's blocks, from a folder like a fresh clone's root (the install done):
    the server they start on the embedded default answers the eviction and every other kind,
    and the replay matches."""
    blocks = bash_blocks("README.md")
    assert blocks and ".venv/bin/verdict serve" in blocks[0]
    port = free_port()
    env = sqlite_env(tmp_path / "home", VERDICT_PORT=str(port), VERDICT_LOG_LEVEL="WARNING")
    done = run_page("README.md", env, port, _workdir(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert '"nodeConditions":["MemoryPressure"]' in done.stdout
    assert '"configSource":"snapshot"' in done.stdout and '"nowSource":"capturedAt"' in done.stdout
    for kind in ("admission", "placement", "preemption", "node-eviction-rate"):
        assert f'"kind":"{kind}"' in done.stdout
    assert done.stdout.rstrip().endswith("}") and '"matches":true' in done.stdout


@pytest.mark.parametrize("page", [page for page in DOC_PAGES if bash_blocks(page)])
def test_every_docs_command_runs_as_written(page, docs_server, tmp_path):
    served, env = docs_server
    done = run_page(page, env, served.port, _workdir(tmp_path))
    assert done.returncode == 0, f"{page}: {done.stderr[-3000:]}"


# ---- the docs' links

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
# Pages other branches write, linked from the README's map before they are merged.
PENDING = {"docs/decisions/schedule.md", "docs/decisions/capacity.md", "docs/decisions/drain.md"}


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for ``page``'s headings: lower case, punctuation dropped, spaces as -."""
    found = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_every_link_in_the_docs_resolves():
    """README's map and every page's links reach a file of the repository, and a heading in it
    when they name one (so that each guide is one click away, and stays so)."""
    broken = []
    for page in PAGES:
        source = REPO / page
        for target in LINK.findall(source.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            linked = (source.parent / path).resolve() if path else source
            name = str(linked.relative_to(REPO)) if linked.is_relative_to(REPO) else str(linked)
            if name in PENDING:
                continue
            if not linked.exists():
                broken.append(f"{page}: {target}")
            elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
                broken.append(f"{page}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_the_readme_two_commands_name_what_exists():
    """The two commands (shown, not run here: they install) read files and extras the
    repository has, and the first hour installs exactly as the first of them does."""
    import tomllib

    readme = (REPO / "README.md").read_text(encoding="utf-8")
    two = readme.split("\n## The two commands", 1)[1].split("\n## ", 1)[0]
    start, tests = [body.strip() for language, body in FENCE.findall(two) if language == "sh"]
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert (REPO / "requirements.lock").is_file()
    assert start.endswith("&& .venv/bin/verdict serve") and "verdict" in project["scripts"]
    assert "-e '.[test]'" in tests and "test" in project["optional-dependencies"]
    hour = readme.split("\n## Your first hour", 1)[1].split("\n## ", 1)[0]
    install = next(body.strip() for language, body in FENCE.findall(hour) if language == "sh")
    assert start == f"{install} && .venv/bin/verdict serve"
