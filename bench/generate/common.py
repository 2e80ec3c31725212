"""Constants and small helpers every part of the generator uses: Kubernetes time and quantity
formats, the API server's random names and UIDs, managedFields entries.

Each helper that draws randomness takes the ``random.Random`` it draws from, so that the
caller decides which stream (plan, constraints, render, stats) a choice belongs to.
"""

from __future__ import annotations

import hashlib
import random
import time
from datetime import UTC, datetime

DEFAULT_CAPTURED_AT = "2026-11-20T10:00:00Z"
MAX_NODES = 50_000
MAX_PODS_PER_NODE = 110

KI = 1024
MI = 1024 * KI
GI = 1024 * MI
DAY = 86_400

K8S_VERSION = "v1.31.4"
K8S_OLD_VERSION = "v1.30.8"
ECR = "registry.example.com"


def fmt_time(epoch: int) -> str:
    """metav1.Time: RFC 3339, second precision, UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(epoch))


def fmt_micro_time(epoch: int, micros: int) -> str:
    """metav1.MicroTime."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{micros:06d}Z"


def parse_time(value: str) -> int:
    """Seconds since the epoch of an RFC 3339 time (a time without an offset is UTC)."""
    parsed = datetime.fromisoformat(value)
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp())


def cpu_quantity(millis: int) -> str:
    """Millicores as the API server prints a CPU quantity ("2", "250m")."""
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def mem_quantity(value: int) -> str:
    """Bytes in the largest binary suffix that divides them ("512Mi"), as the API server
    canonicalizes a memory quantity."""
    for suffix, factor in (("Gi", GI), ("Mi", MI), ("Ki", KI)):
        if value % factor == 0:
            return f"{value // factor}{suffix}"
    return str(value)


SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s.io/apimachinery/pkg/util/rand alphabet


def rand_suffix(rng: random.Random, n: int = 5) -> str:
    """A random suffix in the API server's alphabet (generateName, kube-api-access-...)."""
    return "".join(rng.choices(SUFFIX_ALPHABET, k=n))


def new_uid(rng: random.Random) -> str:
    """A random version-4 UUID, as the API server assigns metadata.uid."""
    h = f"{rng.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) & 3]}{h[17:20]}-{h[20:]}"


def rand_hex(rng: random.Random, digits: int) -> str:
    """``digits`` random hex digits (container IDs, machine IDs, hashes)."""
    return f"{rng.getrandbits(digits * 4):0{digits}x}"


def sha256_hex(text: str) -> str:
    """The hex sha256 of ``text``: values derived from names stay put whatever the streams draw."""
    return hashlib.sha256(text.encode()).hexdigest()


def image_digest(image: str) -> str:
    """``repo@sha256:...`` of an image, the same wherever the image appears (containerStatuses,
    node images)."""
    repo = image.rsplit(":", 1)[0]
    return f"{repo}@sha256:{sha256_hex(image)}"


def image_size(image: str) -> int:
    """A stable compressed-image size for ``image`` (node.status.images, imageFs usage)."""
    return 8 * MI + int(sha256_hex("size:" + image)[:8], 16) % (900 * MI)


def weighted_choice(rng: random.Random, table: tuple) -> object:
    """``table`` is ((value, weight), ...)."""
    values = [v for v, _ in table]
    weights = [w for _, w in table]
    return rng.choices(values, weights)[0]


def managed_field(
    manager: str, when: str, fields: dict, *, subresource: str = "", api: str = "v1"
) -> dict:
    """A managedFields entry: an Update by ``manager`` at ``when`` of the field set ``fields``."""
    entry = {
        "apiVersion": api,
        "fieldsType": "FieldsV1",
        "fieldsV1": fields,
        "manager": manager,
        "operation": "Update",
        "time": when,
    }
    if subresource:
        entry["subresource"] = subresource
    return entry


def field_set(*names: str) -> dict:
    """A FieldsV1 set of the top-level fields ``names``."""
    return {f"f:{n}": {} for n in names}


def http_probe(port: int, path: str, initial: int) -> dict:
    """An HTTP GET probe with the API server's defaults filled in, as a List shows it."""
    probe = {
        "failureThreshold": 3,
        "httpGet": {"path": path, "port": port, "scheme": "HTTP"},
        "periodSeconds": 10,
        "successThreshold": 1,
        "timeoutSeconds": 1,
    }
    if initial:
        probe["initialDelaySeconds"] = initial
    return probe


def tcp_probe(port: int) -> dict:
    """A TCP socket probe with the API server's defaults filled in, as a List shows it."""
    return {
        "failureThreshold": 3,
        "periodSeconds": 10,
        "successThreshold": 1,
        "tcpSocket": {"port": port},
        "timeoutSeconds": 1,
    }
