"""The scheduler framework's shared types: Status and its codes, the per-decision CycleState,
and the plugin interface.

Mirrors kubernetes/kubernetes ``pkg/scheduler/framework`` (interface.go: Code, Status,
the plugin interfaces; cycle_state.go: CycleState). A plugin is a class named after the
upstream plugin (``name``), built once per decision from its args and the engine settings,
that defines the extension points it has upstream, and only those:

``pre_filter(state, nodes) -> tuple[frozenset[str] | None, Status]``
    PreFilter. The set restricts the nodes Filter runs on (PreFilterResult.NodeNames; None:
    every node). A SKIP status means the plugin's Filter is skipped for this pod; a rejection
    rejects the pod on every node.
``add_pod(state, added, ni)`` / ``remove_pod(state, removed, ni)``
    PreFilterExtensions: update the plugin's PreFilter state when a pod (a PodInfo) is added
    to or removed from node ``ni`` (nominated pods, preemption's victims).
``filter(state, ni, ns) -> Status | None``
    Filter on NodeInfo ``ni`` whose pods are as in NodeState ``ns``; None means Success.
``pre_score(state, nodes) -> Status``
    PreScore over the feasible nodes; SKIP means the plugin's Score is skipped for this pod.
``score(state, ni, ns) -> int``
    Score one feasible node.
``normalize_score(state, nodes, scores)``
    ScoreExtensions.NormalizeScore: rewrite ``scores`` (parallel to ``nodes``) in place.

``state.view`` is the cluster as the scheduler's snapshot holds it (``SchedulerView``): every
node (``view.nodes``), not only those being filtered or scored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from service.engine.version import DEFAULT_SETTINGS, EngineSettings

if TYPE_CHECKING:
    from service.engine.objects import Pod

__all__ = [
    "ERROR",
    "MAX_NODE_SCORE",
    "OK",
    "SKIP",
    "SUCCESS",
    "UNRESOLVABLE",
    "UNSCHEDULABLE",
    "CycleState",
    "Plugin",
    "Status",
]

# --- status codes (framework.Code) ---
SUCCESS = "Success"
UNSCHEDULABLE = "Unschedulable"
UNRESOLVABLE = "UnschedulableAndUnresolvable"
ERROR = "Error"
SKIP = "Skip"

# framework.MaxNodeScore: the top of every Score plugin's normalized range.
MAX_NODE_SCORE = 100


@dataclass(frozen=True, slots=True)
class Status:
    """framework.Status: a code, the reasons, and the plugin that produced it."""

    code: str = SUCCESS
    reasons: tuple[str, ...] = ()
    plugin: str = ""

    @property
    def is_success(self) -> bool:
        return self.code == SUCCESS

    @property
    def is_skip(self) -> bool:
        return self.code == SKIP

    @property
    def is_rejected(self) -> bool:
        return self.code == UNSCHEDULABLE or self.code == UNRESOLVABLE

    @property
    def message(self) -> str:
        return ", ".join(self.reasons)


OK = Status()
SKIPPED = Status(SKIP)


class CycleState:
    """framework.CycleState for one scheduling attempt of one pod: the pod, the engine
    settings, the scheduler's view of the cluster, and what each plugin wrote at PreFilter
    or PreScore (by plugin name)."""

    __slots__ = ("data", "pod", "settings", "view")

    def __init__(self, pod: Pod, view: Any, settings: EngineSettings = DEFAULT_SETTINGS) -> None:
        self.pod = pod
        self.view = view
        self.settings = settings
        self.data: dict[str, Any] = {}

    def read(self, key: str) -> Any:
        return self.data.get(key)

    def write(self, key: str, value: Any) -> None:
        self.data[key] = value

    def clone(self) -> CycleState:
        """CycleState.Clone: plugin states with a ``clone()`` method are copied (those that
        AddPod/RemovePod change); the others are shared, being read-only after PreFilter."""
        copy = CycleState(self.pod, self.view, self.settings)
        copy.data = {
            key: value.clone() if hasattr(value, "clone") else value
            for key, value in self.data.items()
        }
        return copy


class Plugin:
    """Base of the plugin classes (see the module docstring for the extension points)."""

    name: ClassVar[str] = ""

    def __init__(self, args: object | None = None, settings: EngineSettings = DEFAULT_SETTINGS):
        self.args = args
        self.settings = settings
