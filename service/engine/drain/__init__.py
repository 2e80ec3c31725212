"""kubectl drain and what follows it: the drain's pod filters (filters.py), the Eviction
API's PodDisruptionBudget check (eviction_api.py), the controllers' recreated pods
(recreation.py), and the drain of a list of nodes over a snapshot (drain.py); see
docs/decisions/drain.md."""

from service.engine.drain.drain import DrainPlan, NodeDrain, PodFate, drain_nodes
from service.engine.drain.filters import DrainOptions

__all__ = ["DrainOptions", "DrainPlan", "NodeDrain", "PodFate", "drain_nodes"]
