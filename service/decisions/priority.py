"""Priority admission for pods given in a request, as kube-apiserver would apply it.

Pods read from a cluster already carry spec.priority; a manifest written by hand often has
only priorityClassName (or nothing). Mirrors plugin/pkg/admission/priority (k8s 1.35):
the named class (built-in system classes included) or the global default class sets
priority and, when the pod has none, preemptionPolicy; no class at all means priority 0.
"""

from __future__ import annotations

import msgspec

from service.decisions.base import DecisionInputError
from service.engine.objects import Cluster, Pod

SYSTEM_PRIORITY_CLASSES = {
    "system-node-critical": 2000001000,
    "system-cluster-critical": 2000000000,
}
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


def admit_priority(pod: Pod, cluster: Cluster, path: str = "pod") -> Pod:
    if pod.priority is not None:
        return pod
    classes = cluster.priority_classes_by_name
    name = pod.priority_class_name
    policy = None
    if name:
        found = classes.get(name)
        if found is not None:
            value, policy = found.value, found.preemption_policy
        elif name in SYSTEM_PRIORITY_CLASSES:
            value = SYSTEM_PRIORITY_CLASSES[name]
        else:
            raise DecisionInputError(
                f"{path}.spec.priorityClassName", f"no PriorityClass with name {name} was found"
            )
    else:
        default = next((pc for pc in cluster.priority_classes if pc.global_default), None)
        value = default.value if default else 0
        policy = default.preemption_policy if default else None
        name = default.name if default else ""
    return msgspec.structs.replace(
        pod,
        priority=value,
        priority_class_name=name,
        preemption_policy=pod.preemption_policy or policy or DEFAULT_PREEMPTION_POLICY,
    )
