"""The Eviction API's PodDisruptionBudget check: whether ``POST pods/<name>/eviction``
deletes a pod, and the budget each eviction consumes.

Mirrors kubernetes/kubernetes ``pkg/registry/core/pod/storage/eviction.go`` (v1.35)
``EvictionREST.Create``, ``canIgnorePDB``, ``getPodDisruptionBudgets`` and
``checkAndDecrement``, in their order:

1. A pod that is Succeeded, Failed or Pending, or already being deleted, is deleted without
   looking at budgets.
2. The budgets of the pod's namespace whose selector matches its labels (a nil, empty or
   invalid selector matches nothing). More than one: refused with 500.
3. With one budget and the pod not Ready: under ``unhealthyPodEvictionPolicy: AlwaysAllow``,
   or when ``currentHealthy >= desiredHealthy > 0``, deleted without consuming the budget.
4. Otherwise ``checkAndDecrement``: a status older than the spec (observedGeneration <
   generation) is 429 "still being processed"; ``disruptionsAllowed`` negative, or more than
   2,000 disrupted pods not yet confirmed, is 403; zero is 429 naming the budget with its
   desired and current healthy counts; else the budget's ``disruptionsAllowed`` goes down by
   one and the pod joins its ``disruptedPods``.

``Budgets`` holds what the evictions of one drain have consumed: the API server's copy of
each PDB's status, which the disruption controller does not refresh within the drain.
"""

from __future__ import annotations

from dataclasses import dataclass

from service.engine.labels import selector_matches
from service.engine.objects import Pod, PodDisruptionBudget

__all__ = ["MAX_DISRUPTED_POD_SIZE", "Budgets", "EvictionAnswer", "evict", "is_pod_ready"]

MAX_DISRUPTED_POD_SIZE = 2000  # eviction.go MaxDisruptedPodSize

TOO_MANY_REQUESTS = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_PDBS = (
    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not "
    "support."
)


@dataclass(frozen=True, slots=True)
class EvictionAnswer:
    """The API server's answer: ``code`` 200 (the pod is deleted), 429, 403 or 500; the
    status message and its DisruptionBudget cause; the budget that decided, with its
    ``disruptionsAllowed`` before this eviction; whether this eviction consumed it."""

    code: int
    message: str = ""
    cause: str = ""
    pdb: str = ""
    disruptions_allowed: int | None = None
    consumed: bool = False
    pdb_checked: bool = True  # False: deleted without looking at budgets (canIgnorePDB)

    @property
    def allowed(self) -> bool:
        return self.code == 200


def is_pod_ready(pod: Pod) -> bool:
    """podutil.IsPodReady: the Ready condition is True."""
    return any(c.type == "Ready" and c.status == "True" for c in pod.conditions)


def can_ignore_pdb(pod: Pod) -> bool:
    """canIgnorePDB: terminal or Pending pods, and pods already being deleted."""
    return pod.phase in ("Succeeded", "Failed", "Pending") or pod.deletion_timestamp is not None


_OPERATORS = {"In": True, "NotIn": True, "Exists": False, "DoesNotExist": False}


def selects(pdb: PodDisruptionBudget, pod: Pod) -> bool:
    """getPodDisruptionBudgets' test for one budget: same namespace, a selector
    LabelSelectorAsSelector accepts, not empty, matching the pod's labels."""
    sel = pdb.selector
    if pdb.namespace != pod.namespace or sel is None:
        return False
    if not sel.match_labels and not sel.match_expressions:
        return False  # "a nil or empty selector ... should match nothing"
    for req in sel.match_expressions:
        wants_values = _OPERATORS.get(req.operator)
        if wants_values is None or wants_values != bool(req.values):
            return False  # an invalid selector matches no pod
    return selector_matches(sel, pod.labels)


class Budgets:
    """The PDBs of a snapshot as the API server holds them during one drain: each eviction
    consumes from here, so a later eviction sees what the earlier ones left."""

    def __init__(self, pdbs: tuple[PodDisruptionBudget, ...]) -> None:
        self._by_namespace: dict[str, list[PodDisruptionBudget]] = {}
        for pdb in pdbs:
            self._by_namespace.setdefault(pdb.namespace, []).append(pdb)
        self._allowed = {(p.namespace, p.name): p.disruptions_allowed for p in pdbs}
        self._disrupted = {(p.namespace, p.name): set(p.disrupted_pods) for p in pdbs}

    def matching(self, pod: Pod) -> list[PodDisruptionBudget]:
        return [p for p in self._by_namespace.get(pod.namespace, ()) if selects(p, pod)]

    def allowed(self, pdb: PodDisruptionBudget) -> int:
        return self._allowed[(pdb.namespace, pdb.name)]

    def consumed(self) -> dict[tuple[str, str], int]:
        """disruptionsAllowed now, by (namespace, name), for the budgets that changed."""
        return {
            key: n
            for by_ns in self._by_namespace.values()
            for p in by_ns
            if (n := self._allowed[(key := (p.namespace, p.name))]) != p.disruptions_allowed
        }

    def check_and_decrement(self, pdb: PodDisruptionBudget, pod: Pod) -> EvictionAnswer:
        """checkAndDecrement on the budget as the earlier evictions left it."""
        key = (pdb.namespace, pdb.name)
        allowed = self._allowed[key]
        seen = {"pdb": pdb.name, "disruptions_allowed": allowed}
        if pdb.observed_generation < pdb.generation:
            return EvictionAnswer(
                429,
                TOO_MANY_REQUESTS,
                f"The disruption budget {pdb.name} is still being processed by the server.",
                **seen,
            )
        if allowed < 0:
            return EvictionAnswer(
                403, _forbidden(pdb, "pdb disruptions allowed is negative"), **seen
            )
        if len(self._disrupted[key]) > MAX_DISRUPTED_POD_SIZE:
            return EvictionAnswer(
                403,
                _forbidden(
                    pdb,
                    "DisruptedPods map too big - too many evictions not confirmed by PDB "
                    "controller",
                ),
                **seen,
            )
        if allowed == 0:
            return EvictionAnswer(
                429,
                TOO_MANY_REQUESTS,
                f"The disruption budget {pdb.name} needs {pdb.desired_healthy} healthy pods "
                f"and has {pdb.current_healthy} currently",
                **seen,
            )
        self._allowed[key] = allowed - 1
        self._disrupted[key].add(pod.name)
        return EvictionAnswer(200, consumed=True, **seen)


def _forbidden(pdb: PodDisruptionBudget, why: str) -> str:
    """errors.NewForbidden's message for the poddisruptionbudget resource."""
    return f'poddisruptionbudgets.policy "{pdb.name}" is forbidden: {why}'


def evict(pod: Pod, budgets: Budgets) -> EvictionAnswer:
    """EvictionREST.Create for ``pod``, consuming from ``budgets`` when it is allowed."""
    if can_ignore_pdb(pod):
        return EvictionAnswer(200, pdb_checked=False)
    pdbs = budgets.matching(pod)
    if len(pdbs) > 1:
        names = ", ".join(p.name for p in pdbs)
        return EvictionAnswer(500, MULTIPLE_PDBS, cause=f"matching budgets: {names}")
    if not pdbs:
        return EvictionAnswer(200)
    pdb = pdbs[0]
    if not is_pod_ready(pod):
        always = pdb.unhealthy_pod_eviction_policy == "AlwaysAllow"
        healthy_enough = pdb.current_healthy >= pdb.desired_healthy and pdb.desired_healthy > 0
        if always or healthy_enough:
            return EvictionAnswer(200, pdb=pdb.name, disruptions_allowed=budgets.allowed(pdb))
    return budgets.check_and_decrement(pdb, pod)
