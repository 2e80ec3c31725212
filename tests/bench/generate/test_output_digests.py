"""The generator's output, pinned: sha256 of what ``python -m bench.generate`` prints for fixed
seeds and every output mode (envelope, ``--list``, ``--no-stats``, ``--volumes``,
``--captured-at``).

The digests were recorded from the single-file generator before it was split into modules,
so any change of behaviour (an extra random draw, a reordered key, a new field) fails here.
A deliberate change of the generated cluster must record new digests and say why in its
commit; bench/RESULTS.md's numbers were measured on the output these digests name.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

from bench.generate import main

ROOT = Path(__file__).resolve().parents[3]

CASES = (
    (
        "--nodes 50 --pods 1500 --seed 1",
        "cada195ffa25c0fe62fc69006a452aa34a44b262a84cacee18e072a0b27f9d36",
    ),
    (
        "--nodes 50 --pods 1500 --seed 1 --list",
        "fc207fb319ea94c023993c91823dafa4dad259cc4a50721c7cb6d636d5cb44fd",
    ),
    (
        "--nodes 50 --pods 1500 --seed 1 --no-stats",
        "74eb77b43d7447342605901155e3c99214536fc7fe452ebbccf0a270b05914a5",
    ),
    (
        "--nodes 50 --pods 1500 --seed 1 --volumes",
        "2d2f12892d658420a7cccaa9e8130b0049e122def8ac9b3d47c2ea1d44310f75",
    ),
    (
        "--nodes 50 --pods 1500 --seed 1 --volumes --list",
        "e6d7dfb8cc4dfd003628211e83559b23babe607b41e1fcedb8b898816a871581",
    ),
    (
        "--nodes 50 --pods 1500 --seed 2",
        "b83630b3d2a6ee74cb92c1087d3ff0fcfac397947ccad0cb1d883283e09b8e12",
    ),
    (
        "--nodes 50 --pods 1500 --seed 2 --list",
        "379af34ab9989542eec38c66e05fb08b9f30c42203c9eb550c945c68fce2dff4",
    ),
    (
        "--nodes 50 --pods 1500 --seed 2 --no-stats",
        "8cbb6450593eae9c6a054dd2da14954f85192281a2bc77b17d04c60f8de7e243",
    ),
    (
        "--nodes 50 --pods 1500 --seed 2 --volumes",
        "96e5e208f2b6d47f1436b064a1177bce5ffc3fd912248f1b244359d2f7c249d3",
    ),
    (
        "--nodes 50 --pods 1500 --seed 2 --volumes --list",
        "d2643832042df849f443a8f6cce7b33620ab79623007be441e8e9f738a0b4de4",
    ),
    (
        "--nodes 50 --pods 1500 --seed 3",
        "c8d8ff2531a30c4a56cdf635fec0834fd8d3d0f493cf0f2a1d6d0ff72252fbe4",
    ),
    (
        "--nodes 50 --pods 1500 --seed 3 --list",
        "a0c2c9159e62ba3002e75bbd78bc6f7f92095a7d8efa4164a9899617dbf6c606",
    ),
    (
        "--nodes 50 --pods 1500 --seed 3 --no-stats",
        "3fafe0f8c15d28fb69304671d5b2cfa7bee78c4cb96971874322df6012bc23a4",
    ),
    (
        "--nodes 50 --pods 1500 --seed 3 --volumes",
        "cff35ddf435d0684ab8bce5ce85adc9150018e38e4cde1fa58b26e391b6a7f26",
    ),
    (
        "--nodes 50 --pods 1500 --seed 3 --volumes --list",
        "c6e5b92c6b566a2b1f51a24b3018739154948fac563c794386496da8e2daa225",
    ),
    (
        "--nodes 8 --pods 120 --seed 7",
        "52036bf8d57b6f292167f707a7026ba3e391e2acf4a7248b68a9885913ac0549",
    ),
    (
        "--nodes 8 --pods 120 --seed 7 --volumes --no-stats",
        "1efc6ebdb51436ef51762e60ebf69d8733b5953cfd26bed8180ca53a8382e92f",
    ),
    (
        "--nodes 1 --pods 0 --seed 1",
        "b6485fa34cc25a08649cbfbb205de35ca98d291605c1713d4df2944a135a27ff",
    ),
    (
        "--nodes 3 --pods 400 --seed 5",
        "d101f89c927a915f82781338a6c7f44a86ea9cf6c3d46c5b8583ecda75596b9b",
    ),
    (
        "--nodes 200 --pods 6000 --seed 4",
        "7b926645290c46fea5a9ed2c5e5a44d5b65f287a724a49cae5bbdcef337618f9",
    ),
    (
        "--nodes 900 --pods 2000 --seed 9 --list",
        "3e62e61ab729347f15488141f2f9ec7698b35f512b1536c76bbcd01f0a490898",
    ),
    (
        "--nodes 50 --pods 1500 --seed 1 --captured-at 2026-11-21T10:00:00+00:00",
        "8444a61818bf1d70e3c59e393bb92520138d36f5a47bf986c37edfc9f9687ade",
    ),
    (
        "--nodes 50 --pods 1500 --seed 2 --captured-at 2025-01-02T03:04:05Z --volumes",
        "1e8d45fd29d78fe18bd34016c9cf12160231add856661ff1bff4b013cc3b4361",
    ),
)


@pytest.mark.parametrize(("argv", "digest"), CASES, ids=[argv for argv, _ in CASES])
def test_output_digest(argv: str, digest: str, capsysbinary: pytest.CaptureFixture[bytes]) -> None:
    assert main(argv.split()) == 0
    out = capsysbinary.readouterr().out
    assert hashlib.sha256(out).hexdigest() == digest


def test_the_module_entry_point_prints_the_same_bytes() -> None:
    """``python -m bench.generate`` (what README.md and bench/RESULTS.md run) is ``main``."""
    argv, digest = CASES[3]  # the envelope with --volumes
    out = subprocess.run(
        [sys.executable, "-m", "bench.generate", *argv.split()],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    assert hashlib.sha256(out).hexdigest() == digest
