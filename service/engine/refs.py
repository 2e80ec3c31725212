"""PodRef, the way every result names a pod (the contract's PodRef, openapi/openapi.yaml:
namespace, name, uid, nodeName, priority, qosClass)."""

from __future__ import annotations

from service.engine.objects import Pod
from service.engine.qos import get_pod_qos


def pod_ref(pod: Pod) -> dict:
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "nodeName": pod.node_name,
        "priority": pod.priority if pod.priority is not None else 0,
        "qosClass": get_pod_qos(pod),
    }
