"""The checkpoint log read from its end (store/checkpoints.py): every signing looks at the
newest kept checkpoint."""

from __future__ import annotations

import base64

import orjson

from service.store import checkpoints


def _signed(key, size: int) -> dict:
    cp = {
        "size": size,
        "headHash": "h" * 64,
        "headId": f"id-{size}",
        "time": "2026-11-27T00:00:00.000000Z",
        "keyId": checkpoints.key_id(key.public_key()),
    }
    cp["signature"] = base64.b64encode(key.sign(checkpoints.canonical_text(cp))).decode()
    return cp


def test_latest_is_the_last_line_that_verifies(tmp_path):
    key = checkpoints.parse_private_pem(checkpoints.generate_pem(), "test")
    other = checkpoints.parse_private_pem(checkpoints.generate_pem(), "test")
    lines = [orjson.dumps(_signed(key, size)) for size in range(1, 1500)]  # several blocks
    lines += [b"not json", b"", b'{"size": 1}', orjson.dumps(_signed(other, 5000))]
    (tmp_path / checkpoints.LOG_NAME).write_bytes(b"\n".join(lines))  # no final newline
    newest = checkpoints.latest(str(tmp_path), key.public_key())
    assert newest["size"] == 1499
    assert checkpoints.read_log(str(tmp_path), key.public_key())[-1] == newest
    assert checkpoints.latest(str(tmp_path / "none"), key.public_key()) is None
