"""The structured-parameters allocator: which devices on a node a pod's unallocated claims
would get.

Mirrors k8s.io/dynamic-resource-allocation/structured (v1.35), the "incubating" allocator
that ``NewAllocator`` picks with 1.35's default DRA features (AdminAccess and
PrioritizedList on; PartitionableDevices, DeviceTaints, DeviceBindingConditions and
ConsumableCapacity off): ``GatherPools`` / ``buildPool`` / ``checkSlicesInPool``
(pools_incubating.go) and ``Allocator.Allocate``, ``validateDeviceRequest``,
``allocateOne``, ``isSelectable``, ``selectorsMatch``, ``allocateDevice`` and
``matchAttributeConstraint`` (allocator_incubating.go): an exhaustive depth-first search
that takes the first full solution, trying devices pool by pool, slice by slice, in the
slices' order.

Upstream walks the pools in Go map order, so where several pools on one node can serve a
request the device it picks is arbitrary; Verdict walks them in snapshot order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from msgspec.structs import replace

from service.engine.dra.cel import CelError, compile_selector, device_matches, device_variable
from service.engine.nodeaffinity import matches_node_selector_terms
from service.engine.objects import (
    AllocatedDevice,
    Device,
    DeviceAllocationConfiguration,
    DeviceAttribute,
    DeviceClass,
    DeviceSubRequest,
    Node,
    ResourceClaim,
    ResourceSlice,
)

__all__ = [
    "ALLOCATION_RESULTS_MAX_SIZE",
    "AllocationError",
    "Allocator",
    "DeviceMatcher",
    "FailedOnNode",
    "Pool",
    "allocation_config",
    "gather_pools",
]

# resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32

DeviceID = tuple[str, str, str]  # driver, pool, device


class AllocationError(Exception):
    """An error that aborts the allocation (the plugin answers Error: the cycle fails)."""


class FailedOnNode(Exception):
    """ErrFailedAllocationOnNode: this node cannot allocate (Unschedulable here only)."""


class _MaxSizeExceeded(Exception):
    """errAllocationResultMaxSizeExceeded: backtrack harder."""


@dataclass(slots=True)
class Pool:
    """A pool's slices that serve the node (``Pool``): incomplete while some of its
    slices are missing, invalid with duplicate device names."""

    driver: str
    name: str
    slices: list[ResourceSlice] = field(default_factory=list)
    incomplete: bool = False
    invalid: bool = False

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.name}"


def node_matches(node: Node, slice_: ResourceSlice) -> bool:
    """NodeMatches for a slice: its nodeName, allNodes, or its node selector."""
    if slice_.node_name:
        return node.name == slice_.node_name
    if slice_.all_nodes:
        return True
    if slice_.node_selector is not None:
        return matches_node_selector_terms(slice_.node_selector, node)
    return False


def gather_pools(
    node: Node,
    candidates: Sequence[ResourceSlice],
    pool_slices: Callable[[str, str], Sequence[ResourceSlice]],
) -> list[Pool]:
    """GatherPools: the pools with slices serving ``node`` among ``candidates`` (in
    snapshot order), each with the slices of its newest generation. A pool whose slices are
    not all there is complete anyway when every slice of that generation is found among all
    slices (``pool_slices``, checkSlicesInPool), obsolete (skipped) when a newer generation
    exists elsewhere, incomplete otherwise."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in candidates:
        if s.partitionable or not node_matches(node, s):
            continue  # partitionable devices: the feature is off
        key = (s.driver, s.pool)
        have = pools.get(key)
        if have is None or s.generation > have[0].generation:
            pools[key] = [s]
        elif s.generation == have[0].generation:
            have.append(s)
    result = []
    for (driver, name), slices in pools.items():
        generation, count = slices[0].generation, slices[0].resource_slice_count
        if len(slices) != count:
            every = pool_slices(driver, name)
            if any(s.generation > generation for s in every):
                continue  # obsolete
            if sum(1 for s in every if s.generation == generation) != count:
                result.append(Pool(driver, name, incomplete=True))
                continue
        result.append(_build_pool(driver, name, slices))
    return result


def _build_pool(driver: str, name: str, slices: list[ResourceSlice]) -> Pool:
    """buildPool: a pool with a device name twice is invalid (validateDeviceNames)."""
    seen: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(driver, name, invalid=True)
            seen.add(d.name)
    return Pool(driver, name, slices)


class DeviceMatcher:
    """Selector results shared by every node of one cycle: a selector's answer depends only
    on the device's driver, attributes and capacity, so devices alike (the same model on
    every node) are evaluated once (upstream caches per device and request, within one
    Allocate: ``deviceMatchesRequest``). A device's content key is its items in the order
    written (devices alike written alike share it; others only miss the cache), and the CEL
    ``device`` variable is built once per key, when a selector first needs it."""

    def __init__(self) -> None:
        self._keys: dict[int, int] = {}
        self._contents: dict[tuple, int] = {}
        self._variables: dict[int, dict] = {}
        self._results: dict[tuple[str, int], bool | CelError] = {}

    def content_key(self, driver: str, device: Device) -> int:
        """What a selector reads of the device (its driver, attributes and capacity), as a
        small number: devices with the same content share it."""
        key = self._keys.get(id(device))
        if key is None:
            content = (driver, tuple(device.attributes.items()), tuple(device.capacity.items()))
            key = self._contents.setdefault(content, len(self._contents))
            self._keys[id(device)] = key
        return key

    def matches(self, expression: str, driver: str, device: Device) -> bool:
        """Whether the selector accepts the device; raises CelError on a runtime error."""
        key = self.content_key(driver, device)
        cached = self._results.get((expression, key))
        if cached is None:
            variable = self._variables.get(key)
            if variable is None:
                variable = self._variables[key] = device_variable(driver, device)
            try:
                cached = device_matches(compile_selector(expression), variable)
            except CelError as exc:
                cached = exc
            self._results[(expression, key)] = cached
        if isinstance(cached, CelError):
            raise cached
        return cached


@dataclass(slots=True)
class _RequestData:
    """requestData: a request or subrequest, its parent's name, class and device count."""

    spec: DeviceSubRequest
    parent: str | None
    device_class: DeviceClass
    num_devices: int
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] | None = None
    selected_sub: int = 0

    @property
    def name(self) -> str:
        return self.spec.name if self.parent is None else f"{self.parent}/{self.spec.name}"


class _MatchAttribute:
    """matchAttributeConstraint: every device of the named requests (all, when none are
    named) has the attribute, with one value."""

    __slots__ = ("attribute", "count", "name", "requests", "value")

    def __init__(self, requests: tuple[str, ...], attribute: str) -> None:
        self.requests = frozenset(requests)
        self.name = attribute
        self.value: DeviceAttribute | None = None
        self.count = 0

    def _applies(self, request: str, sub: str | None) -> bool:
        if not self.requests:
            return True
        if sub is None:
            return request in self.requests
        return request in self.requests or f"{request}/{sub}" in self.requests

    def add(self, request: str, sub: str | None, driver: str, device: Device) -> bool:
        if not self._applies(request, sub):
            return True
        value = _lookup_attribute(device, driver, self.name)
        if value is None:
            return False
        if self.count == 0:
            self.value, self.count = value, 1
            return True
        if self.value is None or value.kind != self.value.kind or value.value != self.value.value:
            return False
        self.count += 1
        return True

    def remove(self, request: str, sub: str | None, driver: str, device: Device) -> None:
        if self._applies(request, sub):
            self.count -= 1


def _lookup_attribute(device: Device, driver: str, name: str) -> DeviceAttribute | None:
    """lookupAttribute: the fully qualified name, or its id alone in the driver's domain."""
    found = device.attributes.get(name)
    if found is not None:
        return found
    domain, sep, ident = name.partition("/")
    if not sep or domain != driver:
        return None
    return device.attributes.get(ident)


class Allocator:
    """Allocator (NewAllocator): the devices in use and the classes, for one cycle."""

    def __init__(
        self,
        allocated: set[DeviceID],
        classes: dict[str, DeviceClass],
        candidates: Callable[[Node], Sequence[ResourceSlice]],
        pool_slices: Callable[[str, str], Sequence[ResourceSlice]],
        matcher: DeviceMatcher | None = None,
    ) -> None:
        self.allocated = allocated
        self.classes = classes
        self.candidates = candidates
        self.pool_slices = pool_slices
        self.matcher = matcher or DeviceMatcher()
        self._memo: dict[tuple, object] = {}
        self._slices: dict[int, int] = {}
        self._slice_ids: dict[tuple, int] = {}

    def allocate(
        self, node: Node, claims: Sequence[ResourceClaim]
    ) -> list[list[AllocatedDevice]] | None:
        """Allocator.Allocate: one list of results per claim, or None when no solution
        exists. Raises FailedOnNode (invalid pools seen, no solution) or AllocationError.

        The search depends on the node only through its pools: two nodes whose pools hold
        devices alike (names, attributes, capacity, in use or not), in the same order, get
        the same devices, from their own pools. So the answer is kept per shape of the pools
        (for these claims), and a node of a shape seen before gets it with its own pool
        names: a cluster of identical GPU nodes is searched a few times, not once a node.
        Errors name pools and devices, so they are not kept."""
        pools = gather_pools(node, self.candidates(node), self.pool_slices)
        shape = (id(claims[0]) if len(claims) == 1 else tuple(map(id, claims)), self._shape(pools))
        known = self._memo.get(shape)
        if known is None:
            try:
                found = _Run(self, node, claims, pools).run()
            except FailedOnNode as exc:
                self._memo[shape] = exc
                raise
            index = {(p.driver, p.name): i for i, p in enumerate(pools)}
            known = self._memo[shape] = (
                None
                if found is None
                else [
                    [(d.request, index[(d.driver, d.pool)], d.device, d.admin_access) for d in ds]
                    for ds in found
                ]
            )
            return found
        if isinstance(known, FailedOnNode):
            raise FailedOnNode(str(known))
        return (
            [
                [
                    AllocatedDevice(request, pools[i].driver, pools[i].name, device, admin)
                    for request, i, device, admin in ds
                ]
                for ds in known
            ]
            if known is not None
            else None
        )

    def _shape(self, pools: list[Pool]) -> tuple:
        """What the search sees of the node's pools: per pool its state and its devices in
        order, each by name, content (the selectors' input) and whether it is in use. A
        slice's devices are described once (``_slice_shape``); only their use is looked up
        per node."""
        allocated = self.allocated
        return tuple(
            (
                p.driver,
                p.incomplete,
                p.invalid,
                tuple(self._slice_shape(s) for s in p.slices),
                tuple((p.driver, p.name, d.name) in allocated for s in p.slices for d in s.devices),
            )
            for p in pools
        )

    def _slice_shape(self, slice_: ResourceSlice) -> int:
        """A slice's devices (names, contents, partitionable or bound), as a small number
        shared by the slices that hold the same."""
        known = self._slices.get(id(slice_))
        if known is None:
            key = self.matcher.content_key
            devices = tuple(
                (d.name, key(slice_.driver, d), d.consumes_counters, d.binding_conditions)
                for d in slice_.devices
            )
            known = self._slices[id(slice_)] = self._slice_ids.setdefault(
                devices, len(self._slice_ids)
            )
        return known


class _Run:
    """allocator: the state of one Allocate call."""

    def __init__(
        self, owner: Allocator, node: Node, claims: Sequence[ResourceClaim], pools: list[Pool]
    ) -> None:
        self.owner = owner
        self.node = node
        self.claims = claims
        self.pools = pools
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.results: list[list[AllocatedDevice]] = [[] for _ in claims]

    def run(self) -> list[list[AllocatedDevice]] | None:
        for ci, claim in enumerate(self.claims):
            minimum = 0
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available:
                    least = None
                    for si, sub in enumerate(request.first_available):
                        # Upstream numbers the subrequest only after validating it, so
                        # subrequest si is checked under the previous one's index.
                        data = self._validate(sub, request.name, (ci, ri, max(si - 1, 0)))
                        self.request_data[(ci, ri, si)] = data
                        least = data.num_devices if least is None else min(least, data.num_devices)
                    minimum += least or 0
                elif request.exactly is not None:
                    data = self._validate(request.exactly, None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = data
                    minimum += data.num_devices
            if minimum > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(
                    f"claim {_key(claim)}: number of requested devices {minimum} exceeds the "
                    f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}"
                )
            self.constraints.append(
                [_MatchAttribute(c.requests, c.match_attribute) for c in claim.spec.constraints]
            )
        # Allocate starts the search with a fresh deviceMatchesRequest: what validation
        # kept under a shifted key (see _validate) does not reach the search.
        self.matches.clear()
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise FailedOnNode("invalid resource pools were encountered")
            return None
        return self.results

    def _validate(
        self, spec: DeviceSubRequest, parent: str | None, key: tuple[int, int, int]
    ) -> _RequestData:
        """validateDeviceRequest: the class, the count; for mode All every selectable device
        of the node's pools (an incomplete or invalid pool is an error then).

        ``key`` indexes the selector results kept for the search (isSelectable's
        ``deviceMatchesRequest``) while requests are validated. ``Allocate`` (v1.35) passes
        a subrequest the key of the subrequest before it (it sets the index after the
        call), so subrequests 0 and 1 share key 0: an ``All`` second subrequest after an
        ``All`` first one gets the first one's devices, whatever its own selectors say.
        Those results are dropped before the search starts."""
        claim = self.claims[key[0]]
        device_class = self.owner.classes.get(spec.device_class_name)
        if device_class is None:
            raise AllocationError(
                f"claim {_key(claim)}, request {spec.name}: could not retrieve device class "
                f"{spec.device_class_name}: deviceclass.resource.k8s.io "
                f'"{spec.device_class_name}" not found'
            )
        data = _RequestData(spec, parent, device_class, spec.count or 0)
        if spec.allocation_mode != "All":
            return data
        found = []
        for pool in self.pools:
            if pool.incomplete:
                raise AllocationError(
                    f"claim {_key(claim)}, request {spec.name}: asks for all devices, but "
                    f"resource pool {pool.id} is currently being updated"
                )
            if pool.invalid:
                raise AllocationError(
                    f"claim {_key(claim)}, request {spec.name}: asks for all devices, but "
                    f"resource pool {pool.id} is currently invalid"
                )
            for s in pool.slices:
                for device in s.devices:
                    device_id = (s.driver, s.pool, device.name)
                    if self._selectable(key, data, device_id, device):
                        found.append((device_id, device, s))
        data.all_devices = found
        data.num_devices = len(found)
        return data

    def _allocate_one(self, ci: int, ri: int, si: int, di: int, in_sub: bool) -> bool:
        """allocateOne: find a device for device ``di`` of request ``ri`` (subrequest
        ``si``) of claim ``ci``, then recurse; True once everything is allocated."""
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        data = self.request_data[key]
        if not in_sub and data.parent is not None:
            all_exceeded = True
            sub = 0
            while (ci, ri, sub) in self.request_data:
                try:
                    success = self._allocate_one(ci, ri, sub, di, True)
                except _MaxSizeExceeded:
                    sub += 1
                    continue
                all_exceeded = False
                if success:
                    self.request_data[(ci, ri, 0)].selected_sub = sub
                    return True
                sub += 1
            if all_exceeded:
                raise _MaxSizeExceeded
            return False
        spec = data.spec
        do_all = spec.allocation_mode == "All"
        if do_all and not data.all_devices:
            return False
        if di >= data.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.results[ci]) + data.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded
        if do_all:
            device_id, device, _ = data.all_devices[di]  # type: ignore[index]
            undo = self._allocate_device(ci, data, device_id, device, must=True)
            if undo is None:
                return False
            try:
                # Upstream recurses here without the subrequest's index: the next device of
                # an "All" subrequest is looked for as the first subrequest's (v1.35).
                done = self._allocate_one(ci, ri, 0, di + 1, in_sub)
            except _MaxSizeExceeded:
                undo()
                raise
            if not done:
                undo()
            return done
        admin = bool(spec.admin_access)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for s in pool.slices:
                for device in s.devices:
                    device_id = (pool.driver, pool.name, device.name)
                    if admin:
                        if ci in self.allocating.get(device_id, ()):
                            continue
                    elif device_id in self.owner.allocated or self.allocating.get(device_id):
                        continue
                    if not self._selectable(key, data, device_id, device):
                        continue
                    undo = self._allocate_device(ci, data, device_id, device, must=False)
                    if undo is None:
                        continue
                    try:
                        done = self._allocate_one(ci, ri, si, di + 1, in_sub)
                    except _MaxSizeExceeded:
                        undo()
                        raise
                    if done:
                        return True
                    undo()
        return False

    def _selectable(
        self, key: tuple[int, int, int], data: _RequestData, device_id: DeviceID, device: Device
    ) -> bool:
        """isSelectable: the class's selectors, then the request's, all true (a device with
        binding conditions never: the feature is off)."""
        if device.binding_conditions:
            return False
        memo = (device_id, *key)
        known = self.matches.get(memo)
        if known is not None:
            return known
        claim = self.claims[key[0]]
        matcher = self.owner.matcher
        driver = device_id[0]
        result = True
        for owner, selectors in (
            (f"class {data.device_class.name}", data.device_class.selectors),
            (f"claim {_key(claim)}", data.spec.selectors),
        ):
            for i, expression in enumerate(selectors):
                try:
                    ok = matcher.matches(expression, driver, device)
                except CelError as exc:
                    raise AllocationError(
                        f"{owner}: selector #{i}: CEL runtime error: {exc}"
                    ) from None
                if not ok:
                    result = False
                    break
            if not result:
                break
        self.matches[memo] = result
        return result

    def _allocate_device(
        self, ci: int, data: _RequestData, device_id: DeviceID, device: Device, *, must: bool
    ) -> Callable[[], None] | None:
        """allocateDevice: the device taken for claim ``ci`` if free (admin access: free
        within this claim) and every constraint accepts it; returns how to undo it, or None."""
        spec = data.spec
        admin = bool(spec.admin_access)
        if admin:
            if ci in self.allocating.get(device_id, ()):
                return None
        elif device_id in self.owner.allocated or self.allocating.get(device_id):
            return None
        if device.consumes_counters:
            return None  # partitionable devices: the feature is off
        base, sub = (spec.name, None) if data.parent is None else (data.parent, spec.name)
        driver = device_id[0]
        constraints = self.constraints[ci]
        for i, constraint in enumerate(constraints):
            if not constraint.add(base, sub, driver, device):
                if must:
                    raise AllocationError(
                        f"claim {_key(self.claims[ci])}, request {spec.name}: cannot add device "
                        f"{'/'.join(device_id)} because a claim constraint would not be satisfied"
                    )
                for earlier in constraints[:i]:
                    earlier.remove(base, sub, driver, device)
                return None
        self.allocating.setdefault(device_id, set()).add(ci)
        results = self.results[ci]
        results.append(AllocatedDevice(data.name, *device_id, admin_access=True if admin else None))

        def undo() -> None:
            for constraint in constraints:
                constraint.remove(base, sub, driver, device)
            self.allocating[device_id].discard(ci)
            results.pop()

        return undo


def allocation_config(
    claim: ResourceClaim, devices: Sequence[AllocatedDevice], classes: dict[str, DeviceClass]
) -> list[DeviceAllocationConfiguration]:
    """The configuration an allocation result carries (``Allocate``'s "Populate configs",
    v1.35): each class's config once, for every request (or chosen subrequest) of that
    class, in request order; then the claim's, an entry for all requests as it is, and an
    entry naming requests once per request of the claim it names (by the request's name, or
    by ``req/sub`` for the subrequest chosen), so an entry naming two requests is there
    twice, as upstream writes it. The chosen subrequest is the one whose devices the result
    holds (every allocated request has at least one)."""
    chosen: dict[str, str] = {}
    for d in devices:
        base, sep, sub = d.request.partition("/")
        if sep:
            chosen.setdefault(base, sub)
    out: list[DeviceAllocationConfiguration] = []
    class_entries: dict[str, list[int]] = {}
    for request in claim.spec.requests:
        if request.first_available:
            sub_name = chosen.get(request.name)
            spec = next((s for s in request.first_available if s.name == sub_name), None)
            name = f"{request.name}/{sub_name}"
        else:
            spec, name = request.exactly, request.name
        device_class = classes.get(spec.device_class_name) if spec is not None else None
        if device_class is None:
            continue
        known = class_entries.get(device_class.name)
        if known is not None:
            for i in known:
                out[i] = replace(out[i], requests=(*out[i].requests, name))
            continue
        class_entries[device_class.name] = list(
            range(len(out), len(out) + len(device_class.config))
        )
        out.extend(
            DeviceAllocationConfiguration("FromClass", (name,), c.driver, c.parameters)
            for c in device_class.config
        )
    for c in claim.spec.config:
        entry = DeviceAllocationConfiguration("FromClaim", c.requests, c.driver, c.parameters)
        if not c.requests:
            out.append(entry)
            continue
        for request in claim.spec.requests:
            if request.name in c.requests or (
                request.first_available
                and f"{request.name}/{chosen.get(request.name)}" in c.requests
            ):
                out.append(entry)
    return out


def _key(claim: ResourceClaim) -> str:
    """klog.KObj: namespace/name."""
    return f"{claim.namespace}/{claim.name}"
