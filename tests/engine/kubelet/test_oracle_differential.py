"""Verdict's kubelet against the kubelet's own v1.35 code (kubelet-oracle) on random states
from tests/engine/kubelet/random_states.py: admission (admit, reason, message, every
generalFilter failure, the victims in kill order) and one eviction pass (observations,
thresholds observed and met, node conditions, the reclaim signal, the ranking with ties as
groups, the victim among ``victimCandidates``). Skipped where the oracle is absent;
``VERDICT_ORACLE_SEEDS=2000`` widens every test (bench/RESULTS.md has the local figures)."""

from __future__ import annotations

import pytest

from tests.engine.kubelet.oracle import (
    admission_differences,
    eviction_differences,
    needs_oracle,
    run_oracle,
)
from tests.engine.kubelet.random_states import (
    admission_case,
    critical_preemption_case,
    eviction_case,
)
from tests.oracles import seeds

pytestmark = needs_oracle


@pytest.mark.parametrize("seed", seeds(60))
def test_admission_matches_the_kubelet(seed: int) -> None:
    assert admission_differences(admission_case(seed)) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", seeds(50, 10_000))
def test_eviction_matches_the_kubelet(seed: int) -> None:
    assert eviction_differences(eviction_case(seed)) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", seeds(30, 20_000))
def test_eviction_with_tied_pods_matches_the_kubelet(seed: int) -> None:
    """13-16 pods of equal request and few priorities and usages: sort.Sort is not stable
    past 12 items, so the kubelet's order within a tie group is its own."""
    assert eviction_differences(eviction_case(seed, ties=True)) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", seeds(40, 30_000))
def test_critical_preemption_with_resized_pods_matches_the_kubelet(seed: int) -> None:
    """A critical pod failing for cpu or memory on a node where half the pods are resized in
    place: the kubelet's admit handlers see the allocation manager's pods
    (``getAllocatedPods``), so generalFilter counts the larger of the allocated and the
    actuated requests and getPodsToPreempt the allocated ones (``GetResourceRequest`` on the
    allocated spec), never the spec's pending requests. The harness gives the oracle the
    allocated pods (oracle.py ``_as_allocated``); 137 of 200 such cases answer differently
    if the spec is counted instead."""
    assert admission_differences(critical_preemption_case(seed)) == [], f"seed {seed}"


@pytest.mark.parametrize("seed", seeds(30, 40_000))
def test_eviction_with_resized_pods_matches_the_kubelet(seed: int) -> None:
    """The eviction manager ranks the pod manager's pods (``GetActivePods``), spec as the API
    holds it: exceedMemoryRequests and memory read ``GetResourceRequestQuantity`` of the
    desired requests, whatever the resized pods' allocated and actuated ones are."""
    assert eviction_differences(eviction_case(seed, resized=True)) == [], f"seed {seed}"


def _port_pod(name: str, *, sidecar_port: bool, container_port: bool, node: str = "") -> dict:
    port = [{"containerPort": 80, "hostPort": 8080, "protocol": "TCP"}]
    container = {"name": "app", "image": "app", **({"ports": port} if container_port else {})}
    sidecar = {"name": "proxy", "image": "proxy", "restartPolicy": "Always"}
    if sidecar_port:
        sidecar["ports"] = port
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name},
        "spec": {
            "containers": [container],
            "initContainers": [sidecar],
            **({"nodeName": node} if node else {}),
        },
        "status": {"phase": "Running"},
    }


@pytest.mark.parametrize(
    ("incoming_sidecar", "other_sidecar"),
    [(True, True), (True, False), (False, True)],
    ids=["sidecar-sidecar", "sidecar-container", "container-sidecar"],
)
def test_sidecar_host_ports_match_the_v1_35_kubelet(incoming_sidecar, other_sidecar) -> None:
    """kubernetes#132040: a v1.35 kubelet's admission counts sidecars' host ports on both
    sides (Verdict's 1.32 and 1.33 do not: tests/engine/kubelet/test_admission.py)."""
    pod = _port_pod("incoming", sidecar_port=incoming_sidecar, container_port=not incoming_sidecar)
    other = _port_pod(
        "other", sidecar_port=other_sidecar, container_port=not other_sidecar, node="n"
    )
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "n", "labels": {"kubernetes.io/os": "linux"}},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}},
    }
    case = {"mode": "admit", "node": node, "pods": [other], "pod": pod}
    assert admission_differences(case) == []
    assert run_oracle(case)["reason"] == "NodePorts"


@pytest.mark.parametrize("sidecar", [False, True], ids=["container", "sidecar"])
@pytest.mark.parametrize("infeasible", [False, True], ids=["allocated", "infeasible"])
def test_resized_pods_match_the_v1_35_kubelet(sidecar, infeasible) -> None:
    """InPlacePodVerticalScaling (GA in v1.35): the node's resized pod counts max(spec,
    actuated, allocated), or max(actuated, allocated) when its resize is Infeasible
    (engine/resize.py): a 2-cpu pod is refused (OutOfcpu) next to a pod allocated 3 of 4 cpu
    and admitted next to one whose infeasible 3.5-cpu spec runs at 1."""
    from tests.engine.test_resize import _incoming, _node, _resized_pod

    kw = {"spec_cpu": "3500m", "allocated": "1", "infeasible": True} if infeasible else {}
    case = {
        "mode": "admit",
        "node": _node(),
        "pods": [_resized_pod(sidecar=sidecar, **kw)],
        "pod": _incoming(),
    }
    assert admission_differences(case) == []
    assert run_oracle(case)["admit"] is infeasible
