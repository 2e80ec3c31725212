"""What the generator's tests share: a small generated cluster (cached, generated once per
session), its items by kind, and independent readings of quantities and QoS classes (written
apart from the generator, so that a test does not check the generator against itself)."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from pathlib import Path

from bench.generate import generate, iter_chunks

ROOT = Path(__file__).resolve().parents[3]
NODES, PODS, SEED = 30, 900, 1


@cache
def raw_output(nodes: int = NODES, pods: int = PODS, seed: int = SEED, **kw) -> bytes:
    """The bytes the CLI prints for these arguments."""
    return b"".join(iter_chunks(nodes, pods, seed, **kw))


@cache
def sample_envelope() -> dict:
    """The envelope of the shared sample cluster."""
    return generate(NODES, PODS, SEED)


def items_of(kind: str, envelope: dict | None = None) -> list[dict]:
    """The List items of one kind (of the sample cluster unless ``envelope`` is given)."""
    env = envelope or sample_envelope()
    return [i for i in env["objects"]["items"] if i["kind"] == kind]


def sample_pods() -> list[dict]:
    return items_of("Pod")


def sample_nodes() -> dict[str, dict]:
    return {n["metadata"]["name"]: n for n in items_of("Node")}


_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "k": 10**3, "M": 10**6, "G": 10**9}


def quantity(value: str, *, milli: bool = False) -> int:
    """The quantity formats the generator emits ("250m", "2", "512Mi", "65842512Ki")."""
    if value.endswith("m"):
        n = int(value[:-1])
        return n if milli else n // 1000
    match = re.fullmatch(r"(\d+)([A-Za-z]*)", value)
    assert match, value
    n = int(match[1]) * _SUFFIXES.get(match[2], 1)
    return n * 1000 if milli else n


def expected_qos(pod: dict) -> str:
    """v1qos.GetPodQOS, written independently of the generator."""
    requests: Counter = Counter()
    limits: Counter = Counter()
    guaranteed = True
    spec = pod["spec"]
    for c in spec.get("initContainers", []) + spec["containers"]:
        res = c.get("resources", {})
        for name, value in res.get("requests", {}).items():
            if name in ("cpu", "memory") and quantity(value, milli=True):
                requests[name] += quantity(value, milli=True)
        found = set()
        for name, value in res.get("limits", {}).items():
            if name in ("cpu", "memory") and quantity(value, milli=True):
                found.add(name)
                limits[name] += quantity(value, milli=True)
        if found != {"cpu", "memory"}:
            guaranteed = False
    if not requests and not limits:
        return "BestEffort"
    if guaranteed and requests == limits:
        return "Guaranteed"
    return "Burstable"


def constraints_envelope() -> dict:
    """A cluster large enough for every kind of scheduling constraint to appear."""
    return generate(60, 3000, 2)
