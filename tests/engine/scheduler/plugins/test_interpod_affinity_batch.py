"""InterPodAffinity's fast paths held to the plain ones they replace, on random clusters:
filter_nodes to Filter node by node, score_nodes to Score node by node, NormalizeScore to
its per-score arithmetic, the term groups' hooks (matching_groups) to matching every group,
pod_terms' memo to parsing, the topology domains shared between views to the nodes' own
labels, and the groups carried by a queue run (with their hooks) to those built anew."""

from __future__ import annotations

import random

import msgspec
import pytest

from service.engine.objects import (
    Cluster,
    Container,
    LabelSelector,
    LabelSelectorRequirement,
    Namespace,
    Node,
    Pod,
    PodAffinityTerm,
    Snapshot,
    WeightedPodAffinityTerm,
)
from service.engine.scheduler.framework import MAX_NODE_SCORE, CycleState, pod_info
from service.engine.scheduler.plugins import interpod_affinity as ipa
from service.engine.scheduler.plugins.interpod_affinity import (
    EXISTING_ANTI_TERMS,
    EXISTING_TERMS,
    InterPodAffinity,
    matching_groups,
    pod_terms,
)
from service.engine.scheduler.profile import InterPodAffinityArgs
from service.engine.scheduler.queue import WorkingCluster
from service.engine.scheduler.snapshot import scheduler_view
from service.engine.version import DEFAULT_SETTINGS

KEYS = ("kubernetes.io/hostname", "zone", "region", "rack", "absent")
LABELS = {"app": ("web", "db", "cache"), "tier": ("fe", "be"), "track": ("a", "b", "c")}
NAMESPACES = ("default", "ns-a", "ns-b")


def _selector(rng: random.Random) -> LabelSelector | None:
    roll = rng.random()
    if roll < 0.08:
        return None  # selects nothing
    if roll < 0.15:
        return LabelSelector()  # selects everything
    match_labels = {}
    for key in rng.sample(sorted(LABELS), rng.randint(0, 2)):
        match_labels[key] = rng.choice(LABELS[key])
    expressions = []
    for key in rng.sample(sorted(LABELS), rng.randint(0, 2)):
        op = rng.choice(("In", "NotIn", "Exists", "DoesNotExist"))
        values = ()
        if op in ("In", "NotIn"):
            values = tuple(rng.sample(LABELS[key], rng.randint(1, len(LABELS[key]))))
        expressions.append(LabelSelectorRequirement(key, op, values))
    return LabelSelector(match_labels, tuple(expressions))


def _term(rng: random.Random) -> PodAffinityTerm:
    namespaces: tuple[str, ...] = ()
    if rng.random() < 0.3:
        namespaces = tuple(rng.sample(NAMESPACES, rng.randint(1, 2)))
    ns_selector = None
    roll = rng.random()
    if roll < 0.1:
        ns_selector = LabelSelector()
    elif roll < 0.2:
        ns_selector = LabelSelector({"team": rng.choice(("x", "y"))})
    key = rng.choice(KEYS[:4]) if rng.random() < 0.95 else "absent"
    return PodAffinityTerm(key, _selector(rng), namespaces, ns_selector)


def _terms(rng: random.Random, chance: float) -> dict:
    out: dict = {}
    if rng.random() >= chance:
        return out
    for field in ("pod_affinity_required", "pod_anti_affinity_required"):
        if rng.random() < 0.4:
            out[field] = tuple(_term(rng) for _ in range(rng.randint(1, 2)))
    for field in ("pod_affinity_preferred", "pod_anti_affinity_preferred"):
        if rng.random() < 0.4:
            out[field] = tuple(
                WeightedPodAffinityTerm(rng.randint(1, 100), _term(rng))
                for _ in range(rng.randint(1, 2))
            )
    return out


def _labels(rng: random.Random) -> dict[str, str]:
    return {k: rng.choice(v) for k, v in LABELS.items() if rng.random() < 0.6}


def _pod(rng: random.Random, name: str, node: str = "", chance: float = 0.4) -> Pod:
    return Pod(
        namespace=rng.choice(NAMESPACES),
        name=name,
        uid=name,
        node_name=node,
        labels=_labels(rng),
        phase="Running" if node else "Pending",
        containers=(Container("c"),),
        **_terms(rng, chance),
    )


def _node(rng: random.Random, i: int) -> Node:
    labels = {}
    if rng.random() < 0.9:
        labels["kubernetes.io/hostname"] = f"n{i}"
    if rng.random() < 0.85:
        labels["zone"] = rng.choice(("z1", "z2", "z3"))
    if rng.random() < 0.7:
        labels["region"] = rng.choice(("r1", "r2"))
    if rng.random() < 0.3:
        labels["rack"] = rng.choice(("k1", "k2", "k3", "k4"))
    if rng.random() < 0.05:
        labels = {}
    return Node(name=f"n{i}", labels=labels, allocatable={"pods": 110})


def _cluster(rng: random.Random) -> Cluster:
    nodes = [_node(rng, i) for i in range(rng.randint(1, 30))]
    pods = [
        _pod(rng, f"e{j}", rng.choice(nodes).name, chance=0.5) for j in range(rng.randint(0, 90))
    ]
    namespaces = tuple(
        Namespace(ns, {"team": rng.choice(("x", "y"))}) for ns in NAMESPACES if rng.random() < 0.9
    )
    return Cluster(Snapshot(nodes=tuple(nodes), pods=tuple(pods), namespaces=namespaces))


def _plugin(rng: random.Random) -> InterPodAffinity:
    args = InterPodAffinityArgs(rng.choice((0, 1, 5, 100)), rng.random() < 0.2)
    return InterPodAffinity(args, settings=DEFAULT_SETTINGS)


def _subsets(rng: random.Random, nodes: list) -> list[list]:
    picked = [n for n in nodes if rng.random() < 0.6]
    rng.shuffle(picked)
    return [list(nodes), picked, [], list(reversed(nodes))]


def _normalized(scores: list[int]) -> list[int]:
    """NormalizeScore score by score, as the plugin did before the batch."""
    if not scores:
        return []
    low, high = min(scores), max(scores)
    spread = high - low
    return [
        int(float(MAX_NODE_SCORE) * (float(s - low) / float(spread))) if spread > 0 else 0
        for s in scores
    ]


@pytest.mark.parametrize("seed", range(60))
def test_batch_filter_and_score_equal_the_per_node_forms(seed: int) -> None:
    rng = random.Random(seed)
    view = scheduler_view(_cluster(rng), DEFAULT_SETTINGS, whole_pods=True)
    plugin = _plugin(rng)
    for k in range(6):
        pod = _pod(rng, f"new{k}", chance=0.8)
        state = CycleState(pod, view, DEFAULT_SETTINGS)
        _, status = plugin.pre_filter(state, view.nodes)
        states = [state]
        if not status.is_skip and view.nodes:  # AddPod / RemovePod change the counts
            other = state.clone()
            for ni in rng.sample(view.nodes, min(3, len(view.nodes))):
                for pi in ni.pods[:2]:
                    plugin.remove_pod(other, pi, ni)
                plugin.add_pod(other, pod_info(_pod(rng, "nom", ni.name), DEFAULT_SETTINGS), ni)
            states.append(other)
        for s in states:
            for nodes in _subsets(rng, view.nodes):
                assert plugin.filter_nodes(s, nodes) == [plugin.filter(s, ni, ni) for ni in nodes]
        status = plugin.pre_score(state, view.nodes)
        if status.is_skip:
            continue
        for nodes in _subsets(rng, view.nodes):
            raw = plugin.score_nodes(state, nodes)
            assert raw == [plugin.score(state, ni, ni) for ni in nodes]
            normalized = list(raw)
            plugin.normalize_score(state, nodes, normalized)
            assert normalized == _normalized(raw)


def test_filter_nodes_without_prefilter_state_passes_every_node() -> None:
    """PreFilter skipped (or not run): Filter passes every node, and so does the batch."""
    rng = random.Random(1)
    view = scheduler_view(_cluster(rng), DEFAULT_SETTINGS, whole_pods=True)
    plugin = _plugin(rng)
    state = CycleState(_pod(rng, "new", chance=0), view, DEFAULT_SETTINGS)
    assert plugin.filter_nodes(state, view.nodes) == [None] * len(view.nodes)
    assert plugin.filter_nodes(state, []) == []


def test_score_nodes_without_prescore_computes_it_as_score_does() -> None:
    for seed in range(20):
        rng = random.Random(seed)
        view = scheduler_view(_cluster(rng), DEFAULT_SETTINGS, whole_pods=True)
        plugin = _plugin(rng)
        pod = _pod(rng, "new", chance=1)
        batch = plugin.score_nodes(CycleState(pod, view, DEFAULT_SETTINGS), view.nodes)
        state = CycleState(pod, view, DEFAULT_SETTINGS)
        assert batch == [plugin.score(state, ni, ni) for ni in view.nodes]


@pytest.mark.parametrize(
    "scores",
    [
        [],
        [7],
        [3, 3, 3],
        [0, -5, 10, 10, -5],
        [-(2**63), 2**63 - 1, 0],
        [2**62, 2**62 + 1, 2**62 + 3],
        list(range(-300, 300, 7)),
    ],
)
def test_normalize_score_equals_the_arithmetic_score_by_score(scores: list[int]) -> None:
    got = list(scores)
    InterPodAffinity(settings=DEFAULT_SETTINGS).normalize_score(None, [], got)  # type: ignore[arg-type]
    assert got == _normalized(scores)


def test_normalize_score_random_lists() -> None:
    rng = random.Random(7)
    plugin = InterPodAffinity(settings=DEFAULT_SETTINGS)
    for _ in range(200):
        scores = [rng.choice((rng.randint(-50, 50), rng.randint(-(10**9), 10**9)))
                  for _ in range(rng.randint(0, 40))]  # fmt: skip
        got = list(scores)
        plugin.normalize_score(None, [], got)  # type: ignore[arg-type]
        assert got == _normalized(scores)


@pytest.mark.parametrize("seed", range(40))
def test_matching_groups_equal_matching_every_group(seed: int) -> None:
    rng = random.Random(seed)
    view = scheduler_view(_cluster(rng), DEFAULT_SETTINGS, whole_pods=True)
    anti = ipa._existing_anti_terms(view)
    terms = ipa._existing_terms(view)
    namespace_labels = view.namespace_labels
    for k in range(20):
        pod = _pod(rng, f"new{k}")
        ns_labels = namespace_labels.get(pod.namespace, {})
        for groups in (anti, terms):
            found = [id(e) for e in matching_groups(groups, pod, ns_labels)]
            assert len(found) == len(set(found))
            expected = {id(e) for e in groups.values() if e[0].matches(pod, ns_labels)}
            assert set(found) == expected


def test_pod_terms_memo_equals_parsing() -> None:
    rng = random.Random(3)
    for i in range(300):
        pod = _pod(rng, f"p{i}", chance=0.9)
        assert pod_terms(pod) == ipa._parse_terms(pod)
        twin = msgspec.structs.replace(pod, name="twin", labels={})
        assert pod_terms(twin) is pod_terms(pod)  # the same terms, parsed once
        moved = msgspec.structs.replace(pod, namespace="elsewhere")
        assert pod_terms(moved) == ipa._parse_terms(moved)


def test_pod_terms_memo_is_bounded(monkeypatch) -> None:
    monkeypatch.setattr(ipa, "_TERMS_MEMO", {})
    monkeypatch.setattr(ipa, "_TERMS_MEMO_KEPT", 5)
    rng = random.Random(4)
    for i in range(40):
        pod = _pod(rng, f"p{i}", chance=1)
        assert pod_terms(pod) == ipa._parse_terms(pod)
        assert len(ipa._TERMS_MEMO) <= 5


def test_views_with_other_labels_do_not_share_domains() -> None:
    """The topology domains are shared only with views whose nodes carry the same labels
    index by index: a node relabelled (same count, same names) gets domains of its own."""
    rng = random.Random(11)
    for _ in range(30):
        cluster = _cluster(rng)
        snapshot = cluster.snapshot
        nodes = list(snapshot.nodes)
        i = rng.randrange(len(nodes))
        nodes[i] = msgspec.structs.replace(nodes[i], labels=_node(rng, 99).labels)
        other = Cluster(msgspec.structs.replace(snapshot, nodes=tuple(nodes)))
        plugin = _plugin(rng)
        for c in (cluster, other, cluster):
            view = scheduler_view(c, DEFAULT_SETTINGS, whole_pods=True)
            for k in range(3):
                pod = _pod(rng, f"new{k}", chance=1)
                state = CycleState(pod, view, DEFAULT_SETTINGS)
                if not plugin.pre_filter(state, view.nodes)[1].is_skip:
                    assert plugin.filter_nodes(state, view.nodes) == [
                        plugin.filter(state, ni, ni) for ni in view.nodes
                    ]
                if not plugin.pre_score(state, view.nodes).is_skip:
                    assert plugin.score_nodes(state, view.nodes) == [
                        plugin.score(state, ni, ni) for ni in view.nodes
                    ]


def test_a_successor_view_shares_the_domains() -> None:
    rng = random.Random(5)
    cluster = _cluster(rng)
    work = WorkingCluster(cluster, DEFAULT_SETTINGS)
    first = ipa._topology(work.view)
    work.bind(_pod(rng, "bound"), work.view.nodes[0].name)
    assert ipa._topology(work.view) is first
    assert first.nodes == [ni.node for ni in work.view.nodes]
    nodes = list(work.view.nodes)  # a node relabelled: not the same domains
    nodes[0] = ipa.NodeInfo(msgspec.structs.replace(nodes[0].node, labels={"x": "y"}), 0, [])
    assert not first.holds(nodes)
    cordoned = WorkingCluster(cluster, DEFAULT_SETTINGS, cordoned=[work.view.nodes[-1].name])
    assert cordoned.view.nodes[-1].node.unschedulable  # a new Node, the same labels
    assert ipa._topology(cordoned.view) is first


def _hooks(groups) -> dict:
    return {hook: keys for hook, keys in groups.hooks.items() if keys}


@pytest.mark.parametrize("seed", range(15))
def test_groups_carried_by_a_run_keep_hooks_equal_to_those_built_anew(seed: int) -> None:
    """Binding and removing pods with terms step by step (existing_terms_after) leaves the
    groups and their hooks as built over the cluster after the steps."""
    rng = random.Random(seed)
    cluster = _cluster(rng)
    work = WorkingCluster(cluster, DEFAULT_SETTINGS)
    base = work.view
    base.derived(EXISTING_ANTI_TERMS, lambda: ipa._existing_anti_terms(base))
    base.derived(EXISTING_TERMS, lambda: ipa._existing_terms(base))
    for k in range(8):
        work.bind(_pod(rng, f"b{k}", chance=0.9), rng.choice(work.view.nodes).name)
    gone = [p for p in cluster.snapshot.pods if rng.random() < 0.3]
    work = WorkingCluster(cluster, DEFAULT_SETTINGS, deleted=gone)
    for k in range(8):
        work.bind(_pod(rng, f"c{k}", chance=0.9), rng.choice(work.view.nodes).name)
    fresh = scheduler_view(Cluster(work.cluster.snapshot), DEFAULT_SETTINGS, whole_pods=True)
    carried = work.view._derived
    built = (ipa._existing_anti_terms(fresh), ipa._existing_terms(fresh))
    assert _hooks(carried[EXISTING_ANTI_TERMS]) == _hooks(built[0])
    assert _hooks(carried[EXISTING_TERMS]) == _hooks(built[1])
    assert {k: (c, len(p)) for k, (_, c, p) in carried[EXISTING_ANTI_TERMS].items()} == {
        k: (c, len(p)) for k, (_, c, p) in built[0].items()
    }
    assert {k: c for k, (_, c) in carried[EXISTING_TERMS].items()} == {
        k: c for k, (_, c) in built[1].items()
    }


def test_the_first_pod_of_a_group_may_go_to_any_node_with_the_keys() -> None:
    """No pod anywhere matches the affinity and the pod matches its own terms: every node
    carrying the terms' keys passes (satisfyPodAffinity), the others do not."""
    own = LabelSelector({"app": "web"})
    term = PodAffinityTerm("zone", own)
    pod = Pod("default", "new", labels={"app": "web"}, pod_affinity_required=(term,))
    nodes = (
        Node("a", labels={"zone": "z1"}),
        Node("b", labels={}),
        Node("c", labels={"zone": "z2", "region": "r"}),
    )
    view = scheduler_view(Cluster(Snapshot(nodes=nodes)), DEFAULT_SETTINGS, whole_pods=True)
    plugin = InterPodAffinity(settings=DEFAULT_SETTINGS)
    state = CycleState(pod, view, DEFAULT_SETTINGS)
    assert plugin.pre_filter(state, view.nodes)[1].is_success
    verdicts = plugin.filter_nodes(state, view.nodes)
    assert verdicts == [plugin.filter(state, ni, ni) for ni in view.nodes]
    assert [v is None for v in verdicts] == [True, False, True]
    other = msgspec.structs.replace(pod, labels={"app": "db"})  # not its own match: none pass
    state = CycleState(other, view, DEFAULT_SETTINGS)
    plugin.pre_filter(state, view.nodes)
    verdicts = plugin.filter_nodes(state, view.nodes)
    assert verdicts == [plugin.filter(state, ni, ni) for ni in view.nodes]
    assert all(v is not None for v in verdicts)


def test_the_random_cases_reject_and_score() -> None:
    """The tests above are worth running: their cases reject nodes for each of the three
    reasons and score nodes apart."""
    reasons: set[str] = set()
    distinct = 0
    for seed in range(20):
        rng = random.Random(seed)
        view = scheduler_view(_cluster(rng), DEFAULT_SETTINGS, whole_pods=True)
        plugin = _plugin(rng)
        for k in range(6):
            state = CycleState(_pod(rng, f"new{k}", chance=0.8), view, DEFAULT_SETTINGS)
            if not plugin.pre_filter(state, view.nodes)[1].is_skip:
                reasons.update(v.reasons[0] for v in plugin.filter_nodes(state, view.nodes) if v)
            if not plugin.pre_score(state, view.nodes).is_skip:
                distinct += len(set(plugin.score_nodes(state, view.nodes))) > 2
    assert len(reasons) == 3
    assert distinct >= 10


@pytest.mark.parametrize("seed", range(20))
def test_clones_share_counts_until_changed_and_never_see_each_others_changes(seed: int) -> None:
    """CycleState.clone shares the PreFilter counts copy-on-write: AddPod / RemovePod on a
    clone, or on the original after it, change that state only: each ends as a state of its
    own given the same AddPod / RemovePod would."""
    rng = random.Random(seed)
    view = scheduler_view(_cluster(rng), DEFAULT_SETTINGS, whole_pods=True)
    plugin = _plugin(rng)
    pod = _pod(rng, "new", chance=1)
    state = CycleState(pod, view, DEFAULT_SETTINGS)
    if plugin.pre_filter(state, view.nodes)[1].is_skip:
        return

    def changes() -> list:
        out = []
        for _ in range(rng.randint(0, 3)):
            ni = rng.choice(view.nodes)
            out.append(
                (plugin.add_pod, pod_info(_pod(rng, "nom", ni.name, 1), DEFAULT_SETTINGS), ni)
            )
            out.extend((plugin.remove_pod, p, ni) for p in ni.pods[:1])
        return out

    def counts(x: CycleState) -> tuple:
        s = x.data[plugin.name]
        return (s.existing_anti, s.affinity_counts, s.anti_counts)

    clones = [(state.clone(), changes()) for _ in range(3)]
    for clone, steps in clones:
        for run, pi, ni in steps:
            run(clone, pi, ni)
    late = changes()
    for run, pi, ni in late:
        run(state, pi, ni)
    for x, steps in (*clones, (state, late)):
        alone = CycleState(pod, view, DEFAULT_SETTINGS)
        plugin.pre_filter(alone, view.nodes)
        for run, pi, ni in steps:
            run(alone, pi, ni)
        assert counts(x) == counts(alone)


def test_groups_built_on_the_base_view_are_copied_by_a_run_not_rebuilt() -> None:
    """existing_term_groups on the snapshot's view: a queue run's first step copies them
    (the base's stay as they were) and its views hold what is built anew after it."""
    rng = random.Random(21)
    cluster = _cluster(rng)
    base = scheduler_view(cluster, DEFAULT_SETTINGS, whole_pods=True)
    anti, terms = ipa.existing_term_groups(base)
    assert ipa.existing_term_groups(base) == (anti, terms)
    assert base._derived[EXISTING_ANTI_TERMS] is anti and base._derived[EXISTING_TERMS] is terms
    before = ({k: (dict(c), len(p)) for k, (_, c, p) in anti.items()},
              {k: {q: list(v) for q, v in c.items()} for k, (_, c) in terms.items()})  # fmt: skip
    work = WorkingCluster(cluster, DEFAULT_SETTINGS)
    assert work.view is base
    for k in range(5):
        work.bind(_pod(rng, f"b{k}", chance=1), rng.choice(work.view.nodes).name)
    assert EXISTING_TERMS in work.view._derived  # carried from the base, not built
    after = ({k: (dict(c), len(p)) for k, (_, c, p) in anti.items()},
             {k: {q: list(v) for q, v in c.items()} for k, (_, c) in terms.items()})  # fmt: skip
    assert after == before
    fresh = scheduler_view(Cluster(work.cluster.snapshot), DEFAULT_SETTINGS, whole_pods=True)
    carried = work.view._derived
    assert {k: c for k, (_, c) in carried[EXISTING_TERMS].items()} == {
        k: c for k, (_, c) in ipa._existing_terms(fresh).items()
    }
