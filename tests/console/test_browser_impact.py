"""The console's impact page in a real Chromium against a real `verdict serve`: a release
chosen in the form, the changes listed with links to each decision and to its side-by-side
replay under that release. (Its own server: it records decisions the other browser tests
count.)"""

from __future__ import annotations

import subprocess

import orjson
import pytest

from tests.conftest import kube_list, node, pod
from tests.console.helpers import CHROMIUM, require_chromium
from tests.serve.helpers import VERDICT, call, serving, sqlite_env

sync_api = require_chromium()


def _pod_level_pod(name: str) -> dict:
    """As tests/decisions/helpers.py's: 1.35 places it on n1, 1.37 on n2."""
    body = pod(name, cpu="100m", memory="64Mi")
    body["spec"]["resources"] = {"requests": {"cpu": "1500m", "memory": "64Mi"}}
    return body


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    home = tmp_path_factory.mktemp("impact-server")
    env = sqlite_env(home, VERDICT_LOG_LEVEL="WARNING", VERDICT_PRELOAD_SNAPSHOTS="0")
    with serving(env, "--workers", "1", stderr=subprocess.PIPE) as served:
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
        headers = {
            "Authorization": f"Bearer {secrets['decide']}",
            "Content-Type": "application/json",
        }

        def post(path, body):
            status, data, _ = call(served.base + path, "POST", orjson.dumps(body), headers)
            assert status == 201, data
            return orjson.loads(data)

        cluster = kube_list(
            node("n1", cpu="2", memory="8Gi"),
            node("n2", cpu="10", memory="8Gi"),
            pod("hog", "n2", cpu="4", memory="1Gi"),
        )
        snapshot_id = post("/v1/snapshots", cluster)["id"]
        moved = post(
            "/v1/decisions/placement",
            {"snapshotId": snapshot_id, "pod": _pod_level_pod("web"), "kubernetesVersion": "1.35"},
        )["id"]
        post(
            "/v1/decisions/admission",
            {"snapshotId": snapshot_id, "nodeName": "n1", "pod": pod("small", cpu="100m")},
        )
        yield {"base": served.base, "secrets": secrets, "moved": moved}


@pytest.fixture(scope="module")
def page(server):
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        context = chromium.new_context(java_script_enabled=False)
        tab = context.new_page()
        tab.set_default_timeout(15_000)
        tab.goto(server["base"] + "/console/impact")
        tab.get_by_label("API key").fill(server["secrets"]["read"])
        tab.get_by_role("button", name="Sign in").click()
        tab.wait_for_url("**/console/impact")
        yield tab
        chromium.close()


def test_the_impact_of_a_release_links_each_change_to_its_decision_and_replay(page, server):
    assert page.get_by_role("heading", name="Impact of an upgrade").is_visible()
    assert page.get_by_role("link", name="Impact").get_attribute("aria-current") == "page"
    page.get_by_label("Kubernetes release").select_option("1.37")
    page.get_by_role("button", name="Show the impact").click()
    status = page.get_by_role("status").inner_text()
    assert status == (
        "2 decision(s) examined: 1 unchanged, 1 changed, 0 failed under Kubernetes 1.37."
    )
    by_kind = page.locator("#by-kind").inner_text()
    assert "placement\t1\t1\t0" in by_kind and "admission\t1\t0\t0" in by_kind
    row = page.locator("#changes tbody tr")
    assert row.count() == 1
    assert "default/web" in row.inner_text() and "selected node n1 → n2" in row.inner_text()
    short = server["moved"][:8]
    page.get_by_role("link", name=f"Side-by-side replay of {short}").click()
    assert page.get_by_role("status").inner_text() == (
        "Under Kubernetes 1.37, the running engine decides differently: "
        + page.locator("table.list tbody tr").count().__str__()
        + " difference(s)."
    )
    assert "1.35 → 1.37" in page.locator("dl.changed").inner_text()
    assert page.get_by_role("heading", name="Replayed result").is_visible()
    page.go_back()
    page.get_by_role("link", name=short, exact=True).click()
    assert page.url.endswith(f"/console/decisions/{server['moved']}")


def test_a_filter_that_matches_nothing_is_said_so(page, server):
    page.goto(server["base"] + "/console/impact?to=1.37&kind=eviction")
    alert = page.get_by_role("alert").inner_text()
    assert alert.startswith("filter: no stored decision matches the filter")
