"""The decision kinds Verdict computes, listed: ``POST /v1/decisions/<name>`` for each.

A new kind is a module beside this one that declares ``DECISION`` (see ``base.DecisionKind``)
and a line here.
"""

from __future__ import annotations

from service.decisions import (
    admission,
    capacity,
    drain,
    eviction,
    node_eviction_rate,
    placement,
    preemption,
    schedule,
)
from service.decisions.base import DecisionKind

KINDS: dict[str, DecisionKind] = {
    kind.name: kind
    for kind in (
        admission.DECISION,
        capacity.DECISION,
        drain.DECISION,
        eviction.DECISION,
        node_eviction_rate.DECISION,
        placement.DECISION,
        preemption.DECISION,
        schedule.DECISION,
    )
}
