"""Which Kubernetes behaviour the engine mirrors, in one place.

Where Kubernetes changed a decision between releases, the engine reads the switch from
``EngineSettings`` instead of scattering version checks; a future ``kubernetesVersion``
request option only has to build a different settings object.
"""

from __future__ import annotations

from dataclasses import dataclass

ENGINE_VERSION = "0.1.0+k8s-1.37"
DEFAULT_KUBERNETES_VERSION = "1.37"


@dataclass(frozen=True, slots=True)
class EngineSettings:
    kubernetes_version: str = DEFAULT_KUBERNETES_VERSION
    # PodLevelResources feature gate (beta, on by default since 1.34).
    pod_level_resources: bool = True
    # ComputePodQOS: "shape" (per-container, 1.37) or "aggregate" (up to 1.36).
    qos_algorithm: str = "shape"
    # NodeResourcesFit's Score reads the incoming pod's pod-level resources (v1.35 builds its
    # resourceAllocationScorer without them; its Filter and BalancedAllocation read them).
    fit_score_pod_level_resources: bool = True


DEFAULT_SETTINGS = EngineSettings()
