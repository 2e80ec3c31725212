"""The Dockerfile: a pinned base image, and a CMD that leaves `verdict serve`'s options to the
VERDICT_* environment, so that `docker run -e VERDICT_WORKERS=4` takes effect. The CMD is run
here as the image runs it (no Docker needed), with the image's environment and a -e on top."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

from tests.serve.helpers import VERDICT, free_port, healthz, sqlite_env

DOCKERFILE = (Path(__file__).resolve().parents[1] / "Dockerfile").read_text()
# An exact Python release and Debian suite (python:3.11.13-slim-bookworm), or a digest.
PINNED = re.compile(r"^python:\d+\.\d+\.\d+-slim-[a-z]+$|@sha256:[0-9a-f]{64}$")


def _instruction(name: str) -> list[str]:
    """Every argument of the instruction ``name``, continuation lines joined."""
    joined = DOCKERFILE.replace("\\\n", " ")
    return [line.split(None, 1)[1] for line in joined.splitlines() if line.startswith(name + " ")]


def test_the_base_image_is_pinned():
    images = dict(arg.split("=", 1) for arg in _instruction("ARG") if "=" in arg)
    bases = [base.split()[0] for base in _instruction("FROM")]
    assert bases, "no FROM"
    for base in bases:
        image = images.get(base.strip("${}"), base)
        assert PINNED.search(image), f"{base} ({image}) is not an exact release or a digest"


def _image_env() -> dict[str, str]:
    env = {}
    for line in _instruction("ENV"):
        env |= dict(pair.split("=", 1) for pair in line.split())
    return env


def test_the_cmd_takes_its_options_from_the_environment(tmp_path):
    cmd = json.loads(_instruction("CMD")[-1])
    assert cmd[0] == "verdict" and not any(arg.startswith("--") for arg in cmd)
    image_env = _image_env()
    assert image_env["VERDICT_HOST"] == "0.0.0.0" and image_env["VERDICT_PORT"] == "8080"
    port = free_port()
    env = sqlite_env(tmp_path) | {k: v for k, v in image_env.items() if k.startswith("VERDICT_")}
    # docker run -e ...: on top of the image's; the test's loopback, not every address.
    env |= {
        "VERDICT_INSTANCE_PATH": str(tmp_path),
        "VERDICT_HOST": "127.0.0.1",
        "VERDICT_PORT": str(port),
        "VERDICT_WORKERS": "3",
        "VERDICT_LOG_LEVEL": "INFO",
    }
    log = tmp_path / "serve.log"
    with log.open("wb") as sink:
        process = subprocess.Popen([VERDICT, *cmd[1:]], env=env, stdout=sink, stderr=sink)
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                booted = log.read_text().count("Booting worker")
                if booted >= 3 and healthz(f"http://127.0.0.1:{port}") == 200:
                    break
                time.sleep(0.3)
        finally:
            process.terminate()
            process.wait(timeout=20)
    text = log.read_text()
    assert f"Listening at: http://127.0.0.1:{port}" in text, text[-2000:]
    assert text.count("Booting worker") == 3, text[-2000:]
