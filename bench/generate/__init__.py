"""Deterministic synthetic cluster generator.

    python -m bench.generate --nodes 5000 --pods 150000 --seed 1 > cluster.json

prints a Verdict snapshot envelope::

    {"name": "synthetic-<nodes>n-<pods>p-s<seed>", "cluster": "synthetic",
     "labels": {"generator": "bench.generate"}, "capturedAt": "2026-11-20T10:00:00Z",
     "objects": {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
                 "items": [nodes..., pods..., pdbs..., services..., replicasets...,
                           statefulsets..., priorityclasses..., leases...]},
     "stats": {"<node>": <kubelet Summary API (stats/v1alpha1) of that node>, ...}}

``--list`` prints only the bare List, ``--no-stats`` leaves out the ``stats`` key, ``--volumes``
adds StatefulSets claiming zonal volumes and the storage objects (``volumes.py``).

The output is a pure function of the arguments: every random choice comes from
``random.Random`` instances seeded with strings derived from ``--seed`` and nothing reads the
wall clock. Items are written with sorted keys (as ``kubectl get -o json`` prints them), in the
order the API server lists them (by ``namespace/name``); Summary objects keep the kubelet's
(Go struct) field order.

How the cluster is built, and where:

* Planning (``Cluster.__init__`` in ``cluster.py``) decides everything that is shared between
  objects, in this order: nodes and their states (``nodes.py``); workloads, the system ones
  (``system.py``) before the applications (``workloads.py``); which pod runs on which node
  (``placement.py``, respecting ``pods`` allocatable, cpu, memory, GPUs, host ports, static
  taints, nodeSelector, required node affinity, the workload's own required hostname
  anti-affinity and zone DoNotSchedule spreading); pending pods and preemption victims
  (``pods.py``), rolling StatefulSets, pressure nodes, PDB counts (``pdbs.py``). The plan's
  records and the predicates they need are in ``records.py``, the tables it draws from in
  ``tables.py``, the formats and random names in ``common.py``.
* Rendering (``Cluster.items()``) turns the plan into kubectl-shaped objects one at a time, so
  the CLI streams them without ever holding the whole dump; each part renders its own kind.
* ``stats()`` (``stats.py``) renders the Summary API objects from the same plan.
* ``envelope.py`` serializes the List and the envelope; ``cli.py`` is the command line;
  ``volumes.py`` is the ``--volumes`` cluster (StatefulSets with zonal volumes, CSINodes).
* tests/bench/generate pins the output's sha256 for fixed seeds and every flag.

What a consumer should know:

* Output is compact JSON ending in a newline; ``generate()`` equals ``json.loads`` of it.
  Pods are about 4 KB each (kubectl-faithful; managedFields are kept shallow).
* Nodes: AWS/kops style names, 2 regions x 3 zones; 1 % carry only the legacy
  ``failure-domain.beta.kubernetes.io`` labels; 1 or 3 control-plane nodes (NoSchedule taint);
  a GPU pool (2 %, ``dedicated=gpu:NoSchedule``, 4 ``nvidia.com/gpu``), an infra pool (1 %,
  ``dedicated=infra:NoExecute``, ingress pods with hostPort 80/443); 10 % of the general nodes
  run kata (``katacontainers.io/kata-runtime=true``). All have ``pods: 110``. Allocatable
  assumes kube-reserved memory 1465Mi, ``memory.available<100Mi`` and EKS cpu reservations.
* 2 % of nodes are not ready: half ``Ready=Unknown`` (unreachable taints, old lease, no stats
  entry at all: the kubelet does not answer), half ``Ready=False`` (not-ready taints, stats
  present). Both went not ready 20-240 s before capturedAt, so no default 300 s toleration
  has expired; pods tolerating less are never placed there; their pods have ``Ready=False``.
* Pressure: ``max(1, min(8, nodes // 800))`` Ready nodes have ``memory.available`` (and
  ``allocatableMemory.available``) of 15-90 MiB, the first half with ``MemoryPressure=True``
  and its taint, the rest not reported yet; from 50 nodes on, one node has nodefs at 3.5-8 %
  free with ``DiskPressure=True``. Extra usage sits in application containers.
* Summary: ``memory.availableBytes = capacity - workingSetBytes``; the ``pods`` system
  container's availableBytes is against allocatable + 100Mi; only running containers
  appear; ``containerFs`` only on v1.31 kubelets. For mirror pods ``podRef.uid`` is the static
  pod's UID (``kubernetes.io/config.mirror``), as the kubelet reports it, not metadata.uid.
* Scheduling constraints (drawn from their own random stream): about a third of application
  workloads declare required (8 %; half the StatefulSets) or preferred hostname / zone pod
  anti-affinity, topology spread constraints (zone maxSkew 1 DoNotSchedule with
  ``matchLabelKeys: [pod-template-hash]`` plus hostname maxSkew 2 ScheduleAnyway; hostname
  ScheduleAnyway; zone with ``minDomains: 3`` and ``nodeTaintsPolicy: Honor``) or a preferred
  node affinity, besides the 11 % with preferred hostname anti-affinity. ClusterIP Services
  select 70 % of web workloads, headless ones every StatefulSet; every ReplicaSet and
  StatefulSet is in the List (their selectors drive the default topology spreading). 5 % of
  general nodes carry ``spot=true:PreferNoSchedule``, 1 % ``maintenance=scheduled``.
* About 1 % of application pods are Pending: most ``Unschedulable`` (some with
  ``nominatedNodeName`` and a lower-priority victim being deleted with a DisruptionTarget
  condition), some not yet tried (no conditions); pods that did not fit anywhere as well.
"""

from bench.generate.cli import main
from bench.generate.common import DEFAULT_CAPTURED_AT, MAX_NODES
from bench.generate.envelope import generate, iter_chunks, iter_items, iter_stats

__all__ = [
    "DEFAULT_CAPTURED_AT",
    "MAX_NODES",
    "generate",
    "iter_chunks",
    "iter_items",
    "iter_stats",
    "main",
]
