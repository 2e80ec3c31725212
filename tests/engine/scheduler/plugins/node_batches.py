"""Random clusters and pods for the node-local plugins' batches (FiltersNodes, ScoresNodes):
each batch held to the plugin's per-node form, on a view and on views a queue run derives
from it (new NodeInfos for the nodes bound to, a cordon's new Node objects), so that the
tables kept between them (node_tables.py) are exercised with NodeInfos old and new."""

from __future__ import annotations

import random

import msgspec

from service.engine.objects import (
    Cluster,
    Container,
    ContainerImage,
    ContainerPort,
    Node,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PreferredSchedulingTerm,
    Snapshot,
    Taint,
    Toleration,
)
from service.engine.scheduler.framework import CycleState, FiltersNodes, ScoresNodes
from service.engine.scheduler.profile import DEFAULT_PROFILE, Profile
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.runtime import Framework
from service.engine.version import DEFAULT_SETTINGS, EngineSettings

KEYS = ("zone", "pool", "gpu", "size", "team")
VALUES = ("a", "b", "c", "1", "20", "-3", "", "9223372036854775807", "x1")
EFFECTS = ("NoSchedule", "NoExecute", "PreferNoSchedule")
IMAGES = ("app", "app:v1", "lib/app:v2", "db", "reg:5000/db", "side", "big")
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Bogus")


def _taint(rng: random.Random) -> Taint:
    return Taint(key=rng.choice(KEYS), value=rng.choice(VALUES[:3]), effect=rng.choice(EFFECTS))


def _node(rng: random.Random, i: int) -> Node:
    labels = {k: rng.choice(VALUES) for k in KEYS if rng.random() < 0.6}
    images = tuple(
        ContainerImage(
            names=tuple(rng.sample(IMAGES, rng.randint(1, 2))),
            size_bytes=rng.choice((0, 5, 30, 300, 2000)) * 1024 * 1024,
        )
        for _ in range(rng.randint(0, 3))
    )
    return Node(
        name=f"n{i}" if rng.random() < 0.97 else "",
        labels=labels,
        unschedulable=rng.random() < 0.15,
        taints=tuple(_taint(rng) for _ in range(rng.choice((0, 0, 0, 1, 2)))),
        allocatable={"cpu": 64000, "memory": 2**40, "pods": 110},
        images=images,
    )


def _ports(rng: random.Random) -> tuple[ContainerPort, ...]:
    return tuple(
        ContainerPort(
            container_port=80,
            host_port=rng.choice((80, 443, 8080)),
            protocol=rng.choice(("TCP", "UDP")),
            host_ip=rng.choice(("", "0.0.0.0", "10.0.0.1")),
        )
        for _ in range(rng.choice((0, 0, 1, 2)))
    )


def _requirement(rng: random.Random) -> NodeSelectorRequirement:
    op = rng.choice(OPERATORS)
    count = {"Exists": 0, "DoesNotExist": 0, "Gt": 1, "Lt": 1}.get(op, rng.randint(1, 2))
    if rng.random() < 0.1:
        count = rng.randint(0, 2)  # the wrong number of values: the term does not parse
    return NodeSelectorRequirement(rng.choice(KEYS), op, tuple(rng.sample(VALUES, count)))


def _term(rng: random.Random, n: int) -> NodeSelectorTerm:
    fields = ()
    if rng.random() < 0.2:
        fields = (
            NodeSelectorRequirement(
                "metadata.name", rng.choice(("In", "NotIn", "Exists")), (f"n{rng.randrange(n)}",)
            ),
        )
    return NodeSelectorTerm(tuple(_requirement(rng) for _ in range(rng.randint(0, 2))), fields)


def _toleration(rng: random.Random) -> Toleration:
    op = rng.choice(("", "Equal", "Exists", "Exists", "Lt", "Gt"))
    return Toleration(
        key="" if op == "Exists" and rng.random() < 0.2 else rng.choice(KEYS),
        operator=op,
        value=rng.choice(VALUES) if op != "Exists" else "",
        effect=rng.choice(("", *EFFECTS)),
        toleration_seconds=rng.choice((None, 30, 300)),
    )


def random_pod(rng: random.Random, n: int, i: int = 0) -> Pod:
    """A pod reading the node-local plugins' inputs at random."""
    containers = tuple(
        Container(name=f"c{j}", image=rng.choice(IMAGES), ports=_ports(rng))
        for j in range(rng.randint(1, 3))
    )
    init = tuple(
        Container(name=f"i{j}", image=rng.choice(IMAGES)) for j in range(rng.choice((0, 0, 1)))
    )
    required = None
    if rng.random() < 0.5:
        required = tuple(_term(rng, n) for _ in range(rng.randint(0, 2)))
    preferred = None
    if rng.random() < 0.5:
        preferred = tuple(
            PreferredSchedulingTerm(rng.choice((0, 1, 50, 100)), _term(rng, n))
            for _ in range(rng.randint(0, 3))
        )
    return Pod(
        namespace="default",
        name=f"p{i}",
        uid=f"u{i}",
        node_name=f"n{rng.randrange(n)}" if rng.random() < 0.1 else "",
        containers=containers,
        init_containers=init,
        node_selector={k: rng.choice(VALUES) for k in rng.sample(KEYS, rng.choice((0, 0, 1, 2)))},
        required_node_affinity=required,
        preferred_node_affinity=preferred,
        tolerations=tuple(_toleration(rng) for _ in range(rng.choice((0, 1, 2, 3)))),
    )


def twin(rng: random.Random, pod: Pod, n: int, change: int) -> Pod:
    """``pod`` with one of the fields the node-local plugins read changed a little (a
    toleration's effect or seconds, a selector value, a term, an image, a port), so that a
    table key missing a field would give one pod's answers to the other."""
    if change == 0 and pod.tolerations:
        i = rng.randrange(len(pod.tolerations))
        tol = pod.tolerations[i]
        tol = msgspec.structs.replace(
            tol, effect=rng.choice(("", *EFFECTS)), toleration_seconds=rng.choice((None, 1))
        )
        return msgspec.structs.replace(
            pod, tolerations=(*pod.tolerations[:i], tol, *pod.tolerations[i + 1 :])
        )
    if change == 1 and pod.node_selector:
        key = rng.choice(sorted(pod.node_selector))
        return msgspec.structs.replace(
            pod, node_selector={**pod.node_selector, key: rng.choice(VALUES)}
        )
    if change == 2:
        return msgspec.structs.replace(
            pod, required_node_affinity=(_term(rng, n),), preferred_node_affinity=None
        )
    if change == 3:
        terms = (PreferredSchedulingTerm(rng.choice((1, 2)), _term(rng, n)),)
        return msgspec.structs.replace(pod, preferred_node_affinity=terms)
    if change == 4:
        first = msgspec.structs.replace(
            pod.containers[0], image=rng.choice(IMAGES), ports=_ports(rng)
        )
        return msgspec.structs.replace(pod, containers=(first, *pod.containers[1:]))
    return msgspec.structs.replace(pod, node_name=rng.choice(("", f"n{rng.randrange(n)}")))


def random_cluster(rng: random.Random, n: int) -> Cluster:
    nodes = tuple(_node(rng, i) for i in range(n))
    pods = []
    for i in range(n * 2):
        node = rng.choice(nodes)
        if not node.name:
            continue
        pod = random_pod(rng, n, 1000 + i)
        pods.append(msgspec.structs.replace(pod, node_name=node.name))
    return Cluster(Snapshot(nodes=nodes, pods=tuple(pods)))


def check_batches(
    plugin: str,
    seed: int,
    *,
    profile: Profile = DEFAULT_PROFILE,
    settings: EngineSettings = DEFAULT_SETTINGS,
    n: int = 30,
    pods: int = 6,
) -> None:
    """On a random cluster and the views a queue run derives from it (some nodes cordoned,
    pods bound one after the other), ``plugin``'s filter_nodes and score_nodes equal its
    Filter and Score node by node, on every node and on random subsets in random order,
    for random pods (repeated, so that kept tables are reused)."""
    rng = random.Random(seed)
    cluster = random_cluster(rng, n)
    fwk = Framework(profile, settings)
    instance = next(
        p for p in (*fwk.filter_plugins, *(q for q, _ in fwk.score_plugins)) if p.name == plugin
    )
    named = [node.name for node in cluster.nodes if node.name]
    cordoned = rng.sample(named, min(3, len(named)))
    work = WorkingCluster(cluster, settings, cordoned=cordoned)
    incoming = [random_pod(rng, n, i) for i in range(pods)]
    incoming += [twin(rng, pod, n, change) for pod in incoming for change in range(6)]
    for step in range(len(incoming)):
        pod = incoming[rng.randrange(len(incoming))]
        view = work.view
        state = CycleState(pod, view, settings)
        fwk.run_pre_filter_plugins(state)
        fwk.run_pre_score_plugins(state, view.nodes)
        subsets = [view.nodes, rng.sample(view.nodes, rng.randint(0, len(view.nodes)))]
        for nodes in subsets:
            if isinstance(instance, FiltersNodes):
                want = [instance.filter(state, ni, ni) for ni in nodes]
                assert instance.filter_nodes(state, nodes) == want, (seed, step, pod)
            if isinstance(instance, ScoresNodes):
                want = [instance.score(state, ni, ni) for ni in nodes]
                assert list(instance.score_nodes(state, nodes)) == want, (seed, step, pod)
        target = rng.choice([ni for ni in view.nodes if ni.name] or [None])
        if target is not None:
            work.bind(msgspec.structs.replace(pod, name=f"b{step}", uid=f"b{step}"), target.name)
