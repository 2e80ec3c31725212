"""The contract, fuzzed (issue 14): schemathesis generates requests for every operation of
openapi/openapi.yaml and sends them to a real `verdict serve` (SQLite, or PostgreSQL when
VERDICT_TEST_DATABASE_URL is set). No 5xx, every response as the spec describes it, and
every 405 names the allowed methods in ``Allow``."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

schemathesis = pytest.importorskip("schemathesis")
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402
from cryptography.hazmat.primitives.serialization import (  # noqa: E402
    Encoding,
    NoEncryption,
    PrivateFormat,
)
from hypothesis import HealthCheck, settings  # noqa: E402
from schemathesis import checks  # noqa: E402

from tests.conftest import TEST_DATABASE_URL  # noqa: E402
from tests.serve.helpers import VERDICT, serving  # noqa: E402

SPEC = Path(__file__).resolve().parents[2] / "openapi" / "openapi.yaml"
# About a minute per database on a quiet machine (23 operations).
EXAMPLES_PER_OPERATION = int(os.environ.get("VERDICT_TEST_FUZZ_EXAMPLES", "25"))

schema = schemathesis.openapi.from_path(SPEC)
# Valid and invalid requests alike: what the spec forbids must be refused with a 4xx.
# (Unknown query parameters are ignored, as HTTP APIs do: not generated as negative data.)
schema.config.generation.update(
    modes=list(schemathesis.GenerationMode), allow_extra_parameters=False
)


@pytest.fixture(scope="module")
def live_server(tmp_path_factory, database_url):
    tmp = tmp_path_factory.mktemp("fuzz")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("VERDICT_")},
        "VERDICT_INSTANCE_PATH": str(tmp),
        "VERDICT_LOG_LEVEL": "ERROR",
        "VERDICT_PRELOAD_SNAPSHOTS": "0",
        "VERDICT_MAX_IN_FLIGHT": "0",
        # The audit operations answer 503 without a checkpoint key: give them one.
        "VERDICT_CHECKPOINT_KEY": Ed25519PrivateKey.generate()
        .private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
        .decode(),
    }
    if TEST_DATABASE_URL:
        env["VERDICT_DATABASE_URL"] = database_url
    key = (
        subprocess.run(
            [VERDICT, "keys", "create", "--role", "admin"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )
    with serving(env, "--workers", "1") as served:
        yield served.base, key


def allow_on_405(ctx, response, case):
    """Every 405 says which methods the path does allow (RFC 9110 section 15.5.6)."""
    if response.status_code == 405:
        names = {name.lower() for name in response.headers}
        assert "allow" in names, f"405 without Allow on {case.method} {case.path}"


@schema.parametrize()
@settings(
    max_examples=EXAMPLES_PER_OPERATION,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,
)
def test_every_operation_answers_as_the_spec_says(case, live_server):
    base, key = live_server
    case.call_and_validate(
        base_url=base,
        headers={"Authorization": f"Bearer {key}"},
        checks=[
            checks.not_a_server_error,
            checks.status_code_conformance,
            checks.content_type_conformance,
            checks.response_schema_conformance,
            checks.response_headers_conformance,
            checks.negative_data_rejection,
            allow_on_405,
        ],
        timeout=30,
    )
