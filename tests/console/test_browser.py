"""The console in a real Chromium (Debian's /usr/bin/chromium, driven by Playwright) against a
real `verdict serve`: sign-in, the decisions list, each kind, replay, checkpoint verification.

Skipped only when no Chromium is installed and CI is not set; in CI a missing browser fails."""

from __future__ import annotations

import subprocess
import time

import orjson
import pytest

from service.store import checkpoints
from tests.conftest import kube_list, node, pod
from tests.console.helpers import CHROMIUM, require_chromium, seed
from tests.serve.helpers import VERDICT, call, serving, sqlite_env

sync_api = require_chromium()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """`verdict serve` on SQLite in a temporary instance folder, with a checkpoint key."""
    home = tmp_path_factory.mktemp("console-server")
    key_file = home / "checkpoint.pem"
    key_file.write_text(checkpoints.generate_pem())
    env = sqlite_env(
        home,
        VERDICT_LOG_LEVEL="WARNING",
        VERDICT_CHECKPOINT_KEY_FILE=str(key_file),
        VERDICT_PRELOAD_SNAPSHOTS="0",
        VERDICT_CHECKPOINT_INTERVAL="1",
    )
    with serving(env, "--workers", "1", stderr=subprocess.PIPE) as served:
        yield _seeded(served.base, env, home)


def _seeded(base: str, env: dict, home) -> dict:
    """Keys of the read and decide roles, and the console's sample data posted through the API."""
    secrets = {}
    for role in ("read", "decide"):
        created = subprocess.run(
            [VERDICT, "keys", "create", "--role", role],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        secrets[role] = created.stdout.strip().splitlines()[-1]

    def post(path, body):
        headers = {
            "Authorization": f"Bearer {secrets['decide']}",
            "Content-Type": "application/json",
        }
        status, data, _ = call(base + path, "POST", orjson.dumps(body), headers)
        return status, orjson.loads(data)

    snapshot_id, ids = seed(post)
    return {"base": base, "secrets": secrets, "snapshot": snapshot_id, "ids": ids, "home": home}


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def page(browser, server):
    """One signed-in page for the module, signed in with the read role by keyboard only."""
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    tab.goto(server["base"] + "/console/decisions")
    assert "/console/sign-in" in tab.url
    assert tab.locator(":focus").get_attribute("id") == "api_key"  # focused on arrival
    tab.keyboard.type(server["secrets"]["read"])
    tab.keyboard.press("Enter")
    tab.wait_for_url("**/console/decisions")
    yield tab
    context.close()


def test_sign_in_rejects_a_bad_key(browser, server):
    context = browser.new_context()
    tab = context.new_page()
    tab.goto(server["base"] + "/console/sign-in")
    tab.get_by_label("API key").fill("vk_not-a-key")
    tab.get_by_role("button", name="Sign in").click()
    assert tab.get_by_role("alert").inner_text() == "That API key is not valid or has been revoked."
    context.close()


def test_decisions_list_and_filter(page, server):
    page.goto(server["base"] + "/console/decisions")
    assert page.get_by_role("heading", name="Decisions").is_visible()
    page.keyboard.press("Tab")  # the first stop is the skip link
    assert page.locator(":focus").inner_text() == "Skip to content"
    rows = page.locator("table.list tbody tr")
    assert rows.count() == 5
    assert "5 decision(s)" in page.locator("caption").inner_text()
    page.get_by_label("Kind").select_option("eviction")
    page.get_by_role("button", name="Filter").click()
    assert rows.count() == 1 and "evicts default/busy" in rows.first.inner_text()


def test_each_kind_as_a_person_sees_it(page, server):
    ids, base = server["ids"], server["base"]
    page.goto(f"{base}/console/decisions/{ids['admission']}")
    assert page.locator(".verdict").inner_text() == "Rejected"
    assert "Insufficient cpu" in page.get_by_role("table").first.inner_text()
    page.goto(f"{base}/console/decisions/{ids['preemption']}")
    assert "Nominated node: n1" in page.locator(".verdict").inner_text()
    others = page.locator("table", has_text="Why the other nodes were not chosen")
    assert "Insufficient cpu" in others.inner_text()
    page.goto(f"{base}/console/decisions/{ids['placement']}")
    assert "Selected node: n2" in page.locator(".verdict").inner_text()
    chart = page.locator("figure.chart svg")
    assert chart.is_visible() and chart.bounding_box()["width"] > 300
    assert "NodeResourcesFit" in page.locator("table", has_text="scores per plugin").inner_text()
    page.goto(f"{base}/console/decisions/{ids['eviction']}")
    assert "Evicts default/busy" in page.locator(".verdict").inner_text()
    signals = page.locator("table", has_text="Signals against thresholds").inner_text()
    assert "memory.available" in signals and "met" in signals
    page.goto(f"{base}/console/decisions/{ids['node-eviction-rate']}")
    assert page.locator("figure.chart svg").is_visible()
    assert "default/stranded" in page.locator("table", has_text="Pod evictions").inner_text()


def test_replay_side_by_side(page, server):
    page.goto(f"{server['base']}/console/decisions/{server['ids']['placement']}")
    page.get_by_role("button", name="Replay with the running engine").click()
    assert page.get_by_role("status").inner_text() == "The running engine decides the same."
    assert page.get_by_role("heading", name="Stored result").is_visible()
    assert page.get_by_role("heading", name="Replayed result").is_visible()


def test_chain_sign_and_verify_a_checkpoint(page, server, tmp_path):
    deadline = time.monotonic() + 10
    while True:  # the interval signer (every second) keeps the head's checkpoint in the log
        page.goto(server["base"] + "/console/chain")
        latest = page.locator("#latest")
        if latest.count() or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert orjson.loads(latest.inner_text())["size"] == 5
    page.get_by_role("button", name="Sign a checkpoint now").click()
    checkpoint = page.locator("#signed").inner_text()
    assert orjson.loads(checkpoint)["size"] == 5
    page.get_by_label("Checkpoint JSON").fill(checkpoint)
    page.get_by_role("button", name="Verify").click()
    status = page.get_by_role("status").first.inner_text()
    assert "The chain is intact (5 record(s) checked). It extends the checkpoint." in status
    # Upload a tampered checkpoint: refused, named.
    tampered = tmp_path / "checkpoint.json"
    tampered.write_text(checkpoint.replace('"size": 5', '"size": 3'))
    page.get_by_label("Or upload a checkpoint file").set_input_files(str(tampered))
    page.get_by_role("button", name="Verify").click()
    assert "signature does not verify" in page.get_by_role("alert").inner_text()


def test_snapshot_pages_and_sign_out(page, server):
    page.goto(f"{server['base']}/console/snapshots")
    page.get_by_role("link").filter(has_text="Z").first.click()  # the stored time links it
    assert page.get_by_role("heading", name="Snapshot console test").is_visible()
    page.get_by_role("link", name="n1", exact=True).click()
    assert "default/busy" in page.get_by_role("table").inner_text()
    page.get_by_role("button", name="Sign out").click()
    assert "/console/sign-in" in page.url


def _tied_snapshot() -> dict:
    """Four pods the kubelet's memory ranking cannot order on n1, and three nodes of zone z1
    whose kubelets said NotReady, queued by one pass: their taint slots are drawn."""
    gi = 2**30
    names = ["t0", "t1", "t2", "t3"]
    not_ready = {
        "conditions": [
            {
                "type": "Ready",
                "status": "False",
                "lastHeartbeatTime": "2026-11-20T09:59:58Z",
                "lastTransitionTime": "2026-11-20T09:50:00Z",
            }
        ]
    }
    zone = {"topology.kubernetes.io/zone": "z1"}
    nodes = [node("n1", labels=zone)] + [
        node(f"down{i}", labels=zone, status=not_ready) for i in range(3)
    ]
    nodes += [node(f"up{i}", labels=zone) for i in range(6)]
    return {
        "capturedAt": "2026-11-20T10:00:00Z",
        "objects": kube_list(*nodes, *(pod(n, "n1", memory="100Mi", priority=0) for n in names)),
        "stats": {
            "n1": {
                "node": {
                    "nodeName": "n1",
                    "memory": {"availableBytes": 50 * 2**20, "workingSetBytes": 7 * gi},
                },
                "pods": [
                    {
                        "podRef": {"name": n, "namespace": "default", "uid": f"uid-default-{n}"},
                        "memory": {"workingSetBytes": 300 * 2**20},
                    }
                    for n in names
                ],
            }
        },
    }


@pytest.fixture
def own_page(browser, server):
    """A page signed in on its own (the module's page may have signed out)."""
    context = browser.new_context(java_script_enabled=False)
    tab = context.new_page()
    tab.set_default_timeout(15_000)
    tab.goto(server["base"] + "/console/sign-in")
    tab.get_by_label("API key").fill(server["secrets"]["read"])
    tab.keyboard.press("Enter")
    tab.wait_for_url("**/console/decisions")
    yield tab
    context.close()


def test_ties_as_a_person_sees_them(own_page, server):
    """Eviction: the tie group in the ranking and every pod the kubelet might evict; node
    lifecycle: the nodes sharing a slot group."""
    page = own_page
    headers = {
        "Authorization": f"Bearer {server['secrets']['decide']}",
        "Content-Type": "application/json",
    }
    base = server["base"]
    status, data, _ = call(base + "/v1/snapshots", "POST", orjson.dumps(_tied_snapshot()), headers)
    assert status == 201, data
    snapshot = orjson.loads(data)["id"]
    ids = {}
    for kind, body in (
        ("eviction", {"snapshotId": snapshot, "nodeName": "n1"}),
        ("node-eviction-rate", {"snapshotId": snapshot, "now": "2026-11-20T10:00:00Z"}),
    ):
        status, data, _ = call(f"{base}/v1/decisions/{kind}", "POST", orjson.dumps(body), headers)
        assert status == 201, data
        ids[kind] = orjson.loads(data)["id"]

    page.goto(f"{base}/console/decisions/{ids['eviction']}")
    assert "Evicts default/t0" in page.locator(".verdict").inner_text()
    ties = page.locator("p.ties").inner_text()
    assert "may evict any of default/t0, default/t1, default/t2, default/t3" in ties
    ranking = page.locator("table", has_text="Ranking for memory")
    assert "pods of one tie group may come in any order" in ranking.inner_text()
    rows = ranking.locator("tbody tr")
    assert rows.count() == 4
    assert all(rows.nth(i).locator("td").last.inner_text() == "tie 1" for i in range(4))

    page.goto(f"{base}/console/decisions/{ids['node-eviction-rate']}")
    nodes = page.locator("table", has_text="Nodes;")
    assert "take its taint times in an unspecified order" in nodes.inner_text()
    for i in range(3):
        row = nodes.locator("tr", has=page.locator("th", has_text=f"down{i}"))
        assert row.locator("td").last.inner_text() == "slot group 1"
    healthy = nodes.locator("tr", has=page.locator("th", has_text="up0"))
    assert healthy.locator("td").last.inner_text() == ""
