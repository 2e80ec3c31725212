"""bench/generate/workloads.py: about a third of the application workloads declare
scheduling constraints, in every form the plugins read."""

from __future__ import annotations

from tests.bench.generate.helpers import (
    constraints_envelope,
    items_of,
)


def test_about_a_third_of_workloads_declare_scheduling_constraints() -> None:
    env = constraints_envelope()
    controllers = items_of("ReplicaSet", env) + items_of("StatefulSet", env)
    app = [c for c in controllers if c["metadata"]["namespace"] not in ("kube-system",)]
    declaring = 0
    seen = set()
    for c in app:
        spec = c["spec"]["template"]["spec"]
        affinity = spec.get("affinity") or {}
        kinds = {
            "requiredAnti": "requiredDuringSchedulingIgnoredDuringExecution"
            in affinity.get("podAntiAffinity", {}),
            "preferredAnti": "preferredDuringSchedulingIgnoredDuringExecution"
            in affinity.get("podAntiAffinity", {}),
            "spread": bool(spec.get("topologySpreadConstraints")),
            "preferredNode": "preferredDuringSchedulingIgnoredDuringExecution"
            in affinity.get("nodeAffinity", {}),
        }
        seen.update(k for k, v in kinds.items() if v)
        declaring += any(kinds.values())
    assert seen == {"requiredAnti", "preferredAnti", "spread", "preferredNode"}
    assert 0.25 <= declaring / len(app) <= 0.5
    assert items_of("Service", env)
    taints = [t for n in items_of("Node", env) for t in n["spec"].get("taints") or ()]
    assert any(t["effect"] == "PreferNoSchedule" for t in taints)
