"""Decision kinds: the glue between a validated request and the pure engine.

The job of this package, and of each module in it:

- one module per kind (``admission``, ``eviction``, ``node_eviction_rate``, ``placement``,
  ``preemption``) declares ``DECISION``: its request schema (marshmallow, the body minus
  ``snapshotId``/``snapshot``), ``decide`` (the loaded request and the cluster to the
  engine, and the engine's answer rendered as the JSON-ready result) and ``subjects`` (the
  nodes and pods the record is indexed by); ``kinds.KINDS`` lists them;
- ``base`` is the contract (``DecisionKind``, ``Subjects``, ``DecisionInputError``) and what
  the kinds share in deciding and rendering; ``schemas`` the request schemas they share;
  ``priority`` the Priority admission of a pod given in a request;
- ``cluster`` resolves the cluster a request names (a stored snapshot id or an inline
  snapshot), ``run`` validates a request and decides (``compute``), ``replay`` recomputes a
  stored record and ``diff`` lists what changed: the HTTP API, the console, the offline CLI
  and replay all go through these, so a decision computed three ways is computed one way.
"""

from service.decisions.base import DecisionInputError, DecisionKind, Subjects
from service.decisions.kinds import KINDS

__all__ = ["KINDS", "DecisionInputError", "DecisionKind", "Subjects"]
