"""PodRef, the way every result names a pod (the contract's PodRef, openapi/openapi.yaml:
namespace, name, uid, nodeName, priority, qosClass)."""

from __future__ import annotations

from service.engine.objects import Pod
from service.engine.qos import get_pod_qos
from service.engine.version import EngineSettings


def pod_ref(pod: Pod, *, settings: EngineSettings) -> dict:
    """The pod as results name it; its QoS class as ``settings``' release computes it."""
    return {
        "namespace": pod.namespace,
        "name": pod.name,
        "uid": pod.uid,
        "nodeName": pod.node_name,
        "priority": pod.priority if pod.priority is not None else 0,
        "qosClass": get_pod_qos(pod, settings=settings),
    }
