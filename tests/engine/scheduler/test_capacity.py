"""Capacity's replicas (engine/scheduler/capacity.py): their names and UIDs."""

from __future__ import annotations

import uuid

from service.engine.scheduler.capacity import _UID_NAMESPACE, replica
from tests.engine.scheduler.helpers import pod


def test_a_replica_is_named_after_its_template_with_a_uuid5_uid() -> None:
    template = pod("web", 100, uid="uid-web", namespace="team")
    for n in (1, 2, 10, 91616):
        r = replica(template, n)
        assert r.name == f"web-{n}"
        assert r.uid == str(uuid.uuid5(_UID_NAMESPACE, f"team/web/uid-web/{n}"))
        assert not r.node_name and not r.nominated_node_name and r.phase == "Pending"


def test_replica_uids_are_uuid5_for_random_templates() -> None:
    """The UID text made from the hashed prefix (every hex digit of the variant, names
    with non-ASCII characters, large n) against the uuid module's."""
    import random

    rng = random.Random(7)
    seen_variants = set()
    for i in range(3000):
        name = "".join(rng.choice("abcé-9") for _ in range(rng.randint(1, 12)))
        template = pod(name, 100, uid=f"u{i}", namespace=rng.choice(("a", "kube-system", "ñ")))
        n = rng.choice((1, 9, 10, rng.randint(1, 10**12)))
        made = replica(template, n)
        expected = uuid.uuid5(_UID_NAMESPACE, f"{template.namespace}/{name}/u{i}/{n}")
        assert made.uid == str(expected)
        assert made.name == f"{name}-{n}"
        seen_variants.add(made.uid[19])
    assert seen_variants == set("89ab")
