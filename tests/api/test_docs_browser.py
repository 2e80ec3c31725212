"""The docs page in a real Chromium against a real `verdict serve`: Swagger UI 5 renders the
OpenAPI 3.1 document, and each decision's example works as it is in "Try it out".

Skipped only when no Chromium is installed and CI is not set; in CI a missing browser fails."""

from __future__ import annotations

import subprocess

from tests.console.helpers import CHROMIUM, require_chromium
from tests.serve.helpers import VERDICT, server  # noqa: F401  (the real server fixture)

sync_api = require_chromium()


OPERATIONS = [
    ("snapshots", "createSnapshot"),
    ("decisions", "decideAdmission"),
    ("decisions", "decidePlacement"),
    ("decisions", "decidePreemption"),
    ("decisions", "decideEviction"),
    ("decisions", "decideNodeEvictionRate"),
    ("decisions", "decideDrain"),
]


def test_try_it_out_with_each_example_answers_201(server):  # noqa: F811
    base, env = server
    key = subprocess.run(
        [VERDICT, "keys", "create", "--role", "decide"], env=env, capture_output=True, text=True
    ).stdout.splitlines()[-1]
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox"]
        )
        try:
            page = browser.new_page()
            page.set_default_timeout(60_000)  # Swagger UI on a loaded CI machine
            page.goto(f"{base}/docs")
            page.get_by_role("button", name="Authorize").first.click()
            page.locator(".modal-ux input").first.fill(key)
            page.locator(".modal-ux button.modal-btn.authorize").click()
            page.locator(".modal-ux button.btn-done").click()
            for tag, operation in OPERATIONS:
                block = page.locator(f"#operations-{tag}-{operation}")
                block.locator(".opblock-summary").first.click()
                block.get_by_role("button", name="Try it out").click()
                block.get_by_role("button", name="Execute").click()
                status = block.locator(".live-responses-table tr.response .response-col_status")
                status.first.wait_for()
                assert status.first.inner_text().strip().startswith("201"), operation
        finally:
            browser.close()
