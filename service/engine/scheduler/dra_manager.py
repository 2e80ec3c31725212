"""The resource.k8s.io objects as the scheduler's DRA manager holds them, for the
DynamicResources plugin.

Mirrors kubernetes/kubernetes ``pkg/scheduler/framework/plugins/dynamicresources``
(v1.35) ``dra_manager.go``: claims by namespace and name (the claim assume cache), the
DeviceClass lister, the ResourceSlice tracker, and ``ListAllAllocatedDevices`` (every device
of every allocated claim, except those allocated with admin access:
``foreachAllocatedDevice``). Templates are kept with the snapshot but the scheduler does not
read them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from service.engine.dra.allocator import DeviceID, DeviceMatcher
from service.engine.objects import (
    DeviceClass,
    Node,
    ResourceClaim,
    ResourceSlice,
    Snapshot,
)

__all__ = ["EMPTY_DRA", "DraManager", "claim_not_found"]


def claim_not_found(namespace: str, name: str) -> str:
    """The claim assume cache's ObjectNotFoundError (assumecache.ObjectNotFoundError)."""
    return f'could not find ResourceClaim "{namespace}/{name}"'


@dataclass(slots=True)
class DraManager:
    """Claims, classes and slices of one snapshot, with the indexes the allocator uses:
    slices by the node they name (the others, for all nodes or a node selector, are checked
    on every node) and by pool."""

    claims: dict[tuple[str, str], ResourceClaim] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    slices: Sequence[ResourceSlice] = ()
    allocated: set[DeviceID] = field(default_factory=set)
    matcher: DeviceMatcher = field(default_factory=DeviceMatcher)
    _by_node: dict[str, list[tuple[int, ResourceSlice]]] = field(default_factory=dict)
    _shared: list[tuple[int, ResourceSlice]] = field(default_factory=list)
    _by_pool: dict[tuple[str, str], list[ResourceSlice]] = field(default_factory=dict)

    @classmethod
    def of(
        cls,
        claims: Sequence[ResourceClaim],
        classes: Sequence[DeviceClass],
        slices: Sequence[ResourceSlice],
    ) -> DraManager:
        manager = cls(
            claims={(c.namespace, c.name): c for c in claims},
            classes={c.name: c for c in classes},
            slices=slices,
        )
        for claim in claims:
            for result in claim.allocation or ():
                if not result.admin_access:
                    manager.allocated.add((result.driver, result.pool, result.device))
        for i, s in enumerate(slices):
            if s.node_name:
                manager._by_node.setdefault(s.node_name, []).append((i, s))
            elif s.all_nodes or s.node_selector is not None:
                manager._shared.append((i, s))
            manager._by_pool.setdefault((s.driver, s.pool), []).append(s)
        return manager

    @classmethod
    def of_snapshot(cls, snapshot: Snapshot) -> DraManager:
        return cls.of(snapshot.resource_claims, snapshot.device_classes, snapshot.resource_slices)

    @property
    def empty(self) -> bool:
        return not (self.claims or self.classes or self.slices)

    def claim(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.claims.get((namespace, name))

    def candidates(self, node: Node) -> list[ResourceSlice]:
        """The slices that may serve ``node``, in snapshot order."""
        own = self._by_node.get(node.name, [])
        if not self._shared:
            return [s for _, s in own]
        return [s for _, s in sorted(own + self._shared, key=lambda item: item[0])]

    def pool_slices(self, driver: str, pool: str) -> list[ResourceSlice]:
        return self._by_pool.get((driver, pool), [])

    def unserved(self, served: tuple[str, ...]) -> str | None:
        """The first object (claim, class, slice) written in a resource.k8s.io version not
        among ``served``, as "Kind name: apiVersion", or None: the scheduler's informers
        list the version the API server serves, so the release cannot read such an object."""
        for kind, objects in (
            ("ResourceClaim", self.claims.values()),
            ("DeviceClass", self.classes.values()),
            ("ResourceSlice", self.slices),
        ):
            for obj in objects:
                if obj.api_version not in served:
                    name = (
                        f"{obj.namespace}/{obj.name}"
                        if isinstance(obj, ResourceClaim)
                        else obj.name
                    )
                    return f'{kind} "{name}": apiVersion resource.k8s.io/{obj.api_version}'
        return None


EMPTY_DRA = DraManager()
