"""Capacity (engine/scheduler/capacity.py): the replicas' names and UIDs, the collector
paused during a run."""

from __future__ import annotations

import gc
import uuid

import pytest

from service.engine.objects import Cluster
from service.engine.scheduler.capacity import _UID_NAMESPACE, capacity, replica
from service.engine.scheduler.profile import DEFAULT_SCHEDULER_NAME, default_profile
from service.engine.version import DEFAULT_SETTINGS
from service.ingest.kube import pod_from_object
from tests.conftest import snapshot_from_objects
from tests.engine.scheduler.helpers import pod
from tests.engine.scheduler.test_score_groups import filling_case


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


@pytest.mark.parametrize("how", ["groups", "incremental", "full"])
def test_a_capacity_run_pauses_the_collector_and_leaves_no_cyclic_garbage(how: str) -> None:
    """capacity() runs with the collector paused (it makes no cyclic garbage for it to
    find: nothing is left for gc.collect() after a run on any of its paths), but not with
    fresh_views, and leaves it as it found it, enabled or not, also when the run raises."""
    objects, template = filling_case(3)
    cluster = Cluster(snapshot_from_objects(objects))
    profiles = {DEFAULT_SCHEDULER_NAME: default_profile(DEFAULT_SETTINGS)}
    states = []
    kwargs = {"incremental": how != "full", "tie_break_seed": 1 if how == "incremental" else None}
    run = capacity(
        cluster,
        [pod_from_object(template)],
        profiles=profiles,
        settings=DEFAULT_SETTINGS,
        between_steps=lambda: states.append(gc.isenabled()),
        **kwargs,
    )
    assert run.templates[0].replicas > 0
    assert (run.grouped > 0) == (how == "groups")
    assert states and not any(states)
    assert gc.isenabled()

    # the collector off from before a run to the count: an automatic collection in
    # between would free the garbage and hide it. Twice: what an earlier run left is freed
    # by weakref callbacks during the first collection (caches keyed weakly on its views)
    # and found only by the second
    gc.collect()
    gc.collect()
    gc.disable()
    try:
        del run
        capacity(cluster, [pod_from_object(template)], profiles=profiles,
                 settings=DEFAULT_SETTINGS, **kwargs)  # fmt: skip
        assert not gc.isenabled()
        assert gc.collect() == 0
    finally:
        gc.enable()

    states.clear()  # every step's view built anew leaves cyclic garbage: not paused then
    capacity(
        cluster,
        [pod_from_object(template)],
        profiles=profiles,
        settings=DEFAULT_SETTINGS,
        max_replicas=2,
        fresh_views=True,
        between_steps=lambda: states.append(gc.isenabled()),
    )
    assert states and all(states)

    def fail() -> None:
        raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        capacity(cluster, [pod_from_object(template)], profiles=profiles,
                 settings=DEFAULT_SETTINGS, between_steps=fail)  # fmt: skip
    assert gc.isenabled()
