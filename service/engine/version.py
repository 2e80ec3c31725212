"""Which Kubernetes behaviour the engine mirrors, in one place.

Where Kubernetes changed a decision between releases, the engine reads the switch from
``EngineSettings`` instead of scattering version checks. A request's ``kubernetesVersion``
picks the release (``settings_for``), and every engine entry point takes the settings as a
required argument: a caller that forgets the release fails instead of answering as the
newest one. ``DEFAULT_SETTINGS`` is the newest release, named explicitly where Verdict
answers as it (the snapshot views, the stored scheduler view).
"""

from __future__ import annotations

from dataclasses import dataclass

ENGINE_VERSION = "0.1.0+k8s-1.37"
DEFAULT_KUBERNETES_VERSION = "1.37"
KNOWN_VERSIONS = ("1.35", "1.37")


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


# Where a release differs from the newest, what it does instead (README "Kubernetes versions").
_RELEASES = {
    "1.35": EngineSettings(
        kubernetes_version="1.35",
        qos_algorithm="aggregate",
        fit_score_pod_level_resources=False,
    ),
    "1.37": DEFAULT_SETTINGS,
}


def settings_for(version: str) -> EngineSettings:
    """The engine settings of a Kubernetes release Verdict knows (KeyError otherwise)."""
    return _RELEASES[version]
