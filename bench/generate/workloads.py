"""Workloads: the controllers that own pods (ReplicaSets, StatefulSets, DaemonSets, Jobs,
static pods), their pod templates and scheduling constraints, and the Service,
ReplicaSet and StatefulSet objects.

The cluster's add-ons and per-node system pods are in ``system.py``; this module builds
the application workloads and the building blocks both use.
"""

from __future__ import annotations

import random

from bench.generate.common import (
    DAY,
    ECR,
    MI,
    cpu_quantity,
    field_set,
    fmt_time,
    http_probe,
    image_digest,
    managed_field,
    mem_quantity,
    new_uid,
    rand_hex,
    rand_suffix,
    sha256_hex,
    tcp_probe,
    weighted_choice,
)
from bench.generate.records import ContainerPlan, WorkloadPlan, effective_request, qos_class
from bench.generate.state import ClusterState
from bench.generate.tables import (
    COMPONENTS,
    CPU_CHOICES,
    DATASTORES,
    DEFAULT_TOLERATIONS,
    DS_HOSTNET_TOLERATION,
    DS_TOLERATIONS,
    GENERAL_TYPES,
    KATA_OVERHEAD,
    MEM_CHOICES,
    NOT_READY,
    POD_NAME_ENV,
    POD_SECURITY,
    REGIONS,
    RESTRICTED,
    TEAMS,
    UNREACHABLE,
)


class Workloads(ClusterState):
    """Plans workloads and renders their controllers and Services."""

    # the share of application workloads drawn as StatefulSets (volumes.py raises it)
    statefulset_share = 0.08

    def _unique(self, ns: str, base: str) -> str:
        """``base``, or ``base-2``, ``base-3``... if the name is taken in ``ns``."""
        name, k = base, 2
        while (ns, name) in self._names:
            name, k = f"{base}-{k}", k + 1
        self._names.add((ns, name))
        return name

    def _ctr(
        self,
        name: str,
        image: str,
        *,
        cpu: tuple = (0, 0),
        mem: tuple = (0, 0),
        gpu: int = 0,
        sidecar: bool = False,
        ports: list | None = None,
        env: list | None = None,
        probes: tuple = (),
        security: dict | None = None,
        mounts: list | None = None,
        command: list | None = None,
        args: list | None = None,
    ) -> ContainerPlan:
        """A container of a pod template, its requests and limits as quantities."""
        requests: dict = {}
        limits: dict = {}
        if cpu[0]:
            requests["cpu"] = cpu_quantity(cpu[0])
        if cpu[1]:
            limits["cpu"] = cpu_quantity(cpu[1])
        if mem[0]:
            requests["memory"] = mem_quantity(mem[0])
        if mem[1]:
            limits["memory"] = mem_quantity(mem[1])
        if gpu:
            requests["nvidia.com/gpu"] = limits["nvidia.com/gpu"] = str(gpu)
        resources: dict = {}
        if limits:
            resources["limits"] = limits
        if requests:
            resources["requests"] = requests
        spec = {
            "image": image,
            "imagePullPolicy": "IfNotPresent",
            "name": name,
            "resources": resources,
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        }
        if command:
            spec["command"] = command
        if args:
            spec["args"] = args
        if ports:
            spec["ports"] = ports
        if env:
            spec["env"] = env
        if probes:
            spec["livenessProbe"] = probes[0]
            spec["readinessProbe"] = probes[1]
        if security:
            spec["securityContext"] = security
        if sidecar:
            spec["restartPolicy"] = "Always"
        return ContainerPlan(
            name=name,
            image=image,
            image_id=image_digest(image),
            spec=spec,
            mounts=mounts or [],
            cpu_req=cpu[0],
            cpu_lim=cpu[1],
            mem_req=mem[0],
            mem_lim=mem[1],
            gpu=gpu,
            sidecar=sidecar,
            host_ports=tuple(p["hostPort"] for p in ports or () if p.get("hostPort")),
        )

    def _resources(self, qos: str, scale: float = 1.0) -> tuple[tuple, tuple]:
        """((cpu request, cpu limit), (memory request, memory limit)) for one container."""
        rng = self.rng
        cpu = max(10, int(weighted_choice(rng, CPU_CHOICES) * scale))
        mem = max(16 * MI, int(weighted_choice(rng, MEM_CHOICES) * scale) // MI * MI)
        if qos == "Guaranteed":
            return (cpu, cpu), (mem, mem)
        if qos == "BestEffort":
            return (0, 0), (0, 0)
        r = rng.random()
        if r < 0.4:
            return (cpu, 0), (mem, mem)
        if r < 0.7:
            return (cpu, cpu * 2), (mem, mem * 2)
        if r < 0.92:
            return (cpu, 0), (mem, 0)
        return (cpu, 0), (0, 0)

    def _finish_workload(self, wl: WorkloadPlan) -> None:
        """Derived fields: QoS, effective requests, host ports, managedFields of the spec."""
        everything = [*wl.inits, *wl.containers]
        wl.qos = qos_class(everything)
        over_cpu, over_mem = wl.overhead or (0, 0)
        wl.req_cpu = effective_request(wl.containers, wl.inits, "cpu_req") + over_cpu
        wl.req_mem = effective_request(wl.containers, wl.inits, "mem_req") + over_mem
        wl.req_gpu = effective_request(wl.containers, wl.inits, "gpu")
        wl.host_ports = frozenset(p for c in everything for p in c.host_ports)
        for t in wl.tolerations:
            if t.get("key", "") in ("", NOT_READY, UNREACHABLE) and "tolerationSeconds" in t:
                wl.min_toleration = min(wl.min_toleration, t["tolerationSeconds"])
        meta = field_set("labels")
        if wl.kind in ("ReplicaSet", "DaemonSet", "Job"):
            meta["f:generateName"] = {}
        if wl.annotations:
            meta["f:annotations"] = {}
        if wl.owner and wl.kind != "Node":
            meta["f:ownerReferences"] = {}
        spec = field_set("containers")
        if wl.inits:
            spec["f:initContainers"] = {}
        if wl.volumes or wl.kind == "StatefulSet":
            spec["f:volumes"] = {}
        for key, present in (
            ("affinity", wl.affinity or wl.kind == "DaemonSet"),
            ("nodeSelector", wl.node_selector),
            ("tolerations", wl.tolerations and wl.kind != "ReplicaSet"),
            ("topologySpreadConstraints", wl.spread),
        ):
            if present:
                spec[f"f:{key}"] = {}
        wl.mf_spec = {"f:metadata": meta, "f:spec": spec}
        self.workloads.append(wl)

    def _owner(self, api: str, kind: str, name: str) -> dict:
        """A controller ownerReference to a new object of ``kind``."""
        return {
            "apiVersion": api,
            "blockOwnerDeletion": True,
            "controller": True,
            "kind": kind,
            "name": name,
            "uid": new_uid(self.rng),
        }

    def _daemonset(
        self, ns: str, name: str, containers: list, *, inits: list | None = None, **kw
    ) -> WorkloadPlan:
        """A DaemonSet's pod template; its pods tolerate everything and the node problems a
        DaemonSet's pods tolerate by default."""
        rng = self.rng
        host_network = kw.pop("host_network", False)
        tolerations = [{"operator": "Exists"}, *DS_TOLERATIONS]
        if host_network:
            tolerations.append(DS_HOSTNET_TOLERATION)
        wl = WorkloadPlan(
            kind="DaemonSet",
            ns=ns,
            app=name,
            prefix=f"{name}-",
            labels={
                "app.kubernetes.io/name": name,
                "controller-revision-hash": rand_hex(rng, 10)[:10],
                "pod-template-generation": str(rng.randint(1, 9)),
            },
            containers=containers,
            inits=inits or [],
            owner=self._owner("apps/v1", "DaemonSet", name),
            tolerations=tolerations,
            host_network=host_network,
            dns_policy="ClusterFirstWithHostNet" if host_network else "ClusterFirst",
            service_account=name,
            rollout=self.now - rng.randrange(DAY, 30 * DAY),
            **kw,
        )
        self._finish_workload(wl)
        return wl

    def _static(
        self, name: str, containers: list, *, priority: str = "system-node-critical"
    ) -> WorkloadPlan:
        """A static pod's template, seen through its mirror pods (owned by their Node)."""
        wl = WorkloadPlan(
            kind="Node",
            ns="kube-system",
            app=name,
            prefix=f"{name}-",
            labels={"k8s-app": name, "tier": "node" if name == "kube-proxy" else "control-plane"},
            containers=containers,
            priority_class=priority,
            tolerations=[{"operator": "Exists"}],
            host_network=True,
            sa_token=False,
            volumes=[
                {"hostPath": {"path": f"/var/lib/{name}", "type": ""}, "name": "varlib"},
                {"hostPath": {"path": "/var/log", "type": ""}, "name": "logfile"},
            ],
            manager="kubelet",
        )
        self._finish_workload(wl)
        return wl

    def _replicaset(self, ns: str, app: str, containers: list, replicas: int, **kw) -> WorkloadPlan:
        """A Deployment's current ReplicaSet and its ``replicas`` pods (not yet placed)."""
        rng = self.rng
        pth = rand_suffix(rng, 10)
        tolerations = kw.pop("tolerations", [])
        if not any(t.get("key") == NOT_READY or not t.get("key") for t in tolerations):
            tolerations = [*tolerations, *DEFAULT_TOLERATIONS]
        labels = kw.pop("labels", None) or {"app.kubernetes.io/name": app}
        labels = {**labels, "pod-template-hash": pth}
        wl = WorkloadPlan(
            kind="ReplicaSet",
            ns=ns,
            app=app,
            prefix=f"{app}-{pth}-",
            labels=labels,
            containers=containers,
            owner=self._owner("apps/v1", "ReplicaSet", f"{app}-{pth}"),
            tolerations=tolerations,
            replicas=replicas,
            hash=pth,
            rollout=kw.pop("rollout", 0) or self.now - int(rng.expovariate(1 / (9 * DAY))) - 600,
            **kw,
        )
        self._finish_workload(wl)
        for _ in range(replicas):
            self._add_pod(wl)
        return wl

    def _statefulset(
        self, ns: str, app: str, containers: list, replicas: int, *, claim: str = "", **kw
    ) -> WorkloadPlan:
        """A StatefulSet and its ``replicas`` pods by ordinal (not yet placed)."""
        rng = self.rng
        kw.setdefault("flavor", "db")
        tolerations = kw.pop("tolerations", [])
        if not any(t.get("key") == NOT_READY or not t.get("key") for t in tolerations):
            tolerations = [*tolerations, *DEFAULT_TOLERATIONS]
        rev = f"{app}-{rand_suffix(rng, 10)}"
        wl = WorkloadPlan(
            kind="StatefulSet",
            ns=ns,
            app=app,
            prefix=f"{app}-",
            labels={"app.kubernetes.io/name": app, "controller-revision-hash": rev},
            containers=containers,
            owner=self._owner("apps/v1", "StatefulSet", app),
            tolerations=tolerations,
            replicas=replicas,
            hash=claim,
            rollout=self.now - int(rng.expovariate(1 / (20 * DAY))) - 3600,
            **kw,
        )
        self._finish_workload(wl)
        for ordinal in range(replicas):
            self._add_pod(wl, ordinal=ordinal)
        return wl

    def _app_workload(self, ns: str, kind: str, replicas: int, flavor: str) -> WorkloadPlan:
        """An application workload of ``flavor`` (web, worker, db, gpu, kata): its containers,
        where it may run, its scheduling constraints and its not-ready tolerations."""
        rng = self.rng
        qos = self._app_qos(kind, flavor)
        if kind == "StatefulSet":
            store, image, port = rng.choice(DATASTORES)
            app = self._unique(ns, f"{ns}-{store}")
            cname = store
        else:
            app = self._unique(ns, f"{ns}-{rng.choice(COMPONENTS)}")
            version = f"{rng.randint(1, 4)}.{rng.randint(0, 60)}.{rng.randint(0, 20)}"
            image = f"{ECR}/{ns}/{app}:{version}"
            port = 8080
            cname = "app" if rng.random() < 0.5 else app.rsplit("-", 1)[-1]
        containers, inits, volumes, security = self._app_containers(
            app, cname, image, port, kind, flavor, qos, replicas
        )
        pc = weighted_choice(rng, (("default", 80), ("high", 12), ("low", 8)))
        kw: dict = {
            "inits": inits,
            "priority_class": pc,
            "volumes": volumes,
            "flavor": flavor,
            "service_account": app if rng.random() < 0.5 else "default",
            "pod_security": POD_SECURITY if security else {},
        }
        if rng.random() < 0.15:
            kw["annotations"] = {"prometheus.io/port": str(port), "prometheus.io/scrape": "true"}
        tolerations = self._pin_to_nodes(kw, app, replicas, flavor)
        if flavor in ("web", "worker", "db"):
            self._scheduling_constraints(kw, app, kind, replicas)
        if kind == "StatefulSet":
            seconds = rng.choice((30, 60))
            tolerations += _not_ready_tolerations(seconds)
            kw["grace"] = rng.choice((60, 120))
            return self._statefulset(
                ns, app, containers, replicas, claim="data", tolerations=tolerations, **kw
            )
        if rng.random() < 0.05:
            seconds = rng.choice((600, 3600, 86400))
            tolerations += _not_ready_tolerations(seconds)
        return self._replicaset(ns, app, containers, replicas, tolerations=tolerations, **kw)

    def _app_qos(self, kind: str, flavor: str) -> str:
        """The QoS class an application's pods get: GPU and database pods are mostly
        Guaranteed, the rest mostly Burstable."""
        rng = self.rng
        if flavor == "gpu":
            qos = "Guaranteed" if rng.random() < 0.4 else "Burstable"
        elif kind == "StatefulSet":
            qos = "Guaranteed" if rng.random() < 0.5 else "Burstable"
        else:
            qos = weighted_choice(rng, (("Guaranteed", 20), ("Burstable", 65), ("BestEffort", 15)))
        return qos

    def _app_containers(
        self,
        app: str,
        cname: str,
        image: str,
        port: int,
        kind: str,
        flavor: str,
        qos: str,
        replicas: int,
    ) -> tuple[list, list, list, dict | None]:
        """The application's containers (with a metrics exporter beside some databases), its
        init containers (a migration, a log-shipping sidecar) and volumes, and the security
        context its containers run with (None for the default)."""
        rng = self.rng
        cpu, mem = self._resources(qos, 3.0 if flavor == "gpu" else 1.0)
        if replicas > 20 and cpu[0] > 500:
            # Large fleets are made of small pods.
            cpu = (500, cpu[1] * 500 // cpu[0])
        mounts: list = []
        volumes: list = []
        if rng.random() < 0.2:
            mounts.append({"mountPath": "/tmp", "name": "tmp"})
            size = rng.choice(("", "1Gi", "4Gi"))
            volumes.append({"emptyDir": {"sizeLimit": size} if size else {}, "name": "tmp"})
        if rng.random() < 0.15:
            mounts.append({"mountPath": f"/etc/{cname}", "name": "config", "readOnly": True})
            volumes.append(
                {"configMap": {"defaultMode": 420, "name": f"{app}-config"}, "name": "config"}
            )
        if kind == "StatefulSet":
            mounts.append({"mountPath": "/data", "name": "data"})
        ports = [
            {
                "containerPort": port,
                "name": "http" if port == 8080 else cname[:15],
                "protocol": "TCP",
            }
        ]
        if flavor == "worker":
            ports = []
        env = None
        if rng.random() < 0.25:
            env = [{"name": "APP_ENV", "value": "production"}, POD_NAME_ENV]
            if rng.random() < 0.4:
                env.append(
                    {
                        "name": "GOMAXPROCS",
                        "valueFrom": {
                            "resourceFieldRef": {"divisor": "0", "resource": "limits.cpu"}
                        },
                    }
                )
        probes: tuple = ()
        if flavor != "worker" and rng.random() < 0.3:
            probes = (
                http_probe(port, "/healthz", rng.choice((0, 10, 30))),
                http_probe(port, "/ready", 0),
            )
        elif kind == "StatefulSet":
            probes = (tcp_probe(port), tcp_probe(port))
        security = RESTRICTED if rng.random() < 0.2 else None
        containers = [
            self._ctr(
                cname,
                image,
                cpu=cpu,
                mem=mem,
                gpu=(1 if flavor == "gpu" else 0),
                ports=ports,
                env=env,
                probes=probes,
                security=security,
                mounts=mounts,
            )
        ]
        if kind == "StatefulSet" and rng.random() < 0.5:
            exporter = f"quay.io/prometheus-community/{cname}-exporter:v0.15.0"
            ecpu, emem = self._resources(qos, 0.2)
            containers.append(
                self._ctr(
                    "metrics",
                    exporter,
                    cpu=ecpu,
                    mem=emem,
                    ports=[{"containerPort": 9187, "name": "metrics", "protocol": "TCP"}],
                )
            )
        inits: list = []
        if rng.random() < 0.1:
            icpu, imem = self._resources(qos, 0.5)
            inits.append(
                self._ctr("migrate", image, cpu=icpu, mem=imem, args=["migrate", "--wait"])
            )
        if rng.random() < 0.08:
            scpu, smem = self._resources(qos, 0.2)
            inits.append(
                self._ctr(
                    "log-shipper",
                    "cr.fluentbit.io/fluent/fluent-bit:3.1.9",
                    cpu=scpu,
                    mem=smem,
                    sidecar=True,
                    mounts=[{"mountPath": "/var/log/app", "name": "applogs"}],
                )
            )
            containers[0].mounts = [
                *containers[0].mounts,
                {"mountPath": "/var/log/app", "name": "applogs"},
            ]
            volumes.append({"emptyDir": {}, "name": "applogs"})
        return containers, inits, volumes, security

    def _pin_to_nodes(self, kw: dict, app: str, replicas: int, flavor: str) -> list:
        """Where the workload may run: GPU and kata pods on their pools, a share of the others
        pinned by a node selector, a required node affinity or (softly) apart from each other.
        Sets ``kw``'s fields and returns the tolerations so far."""
        rng = self.rng
        tolerations: list = []
        if flavor == "gpu":
            kw["node_selector"] = {"nvidia.com/gpu.present": "true"}
            tolerations.append(
                {"effect": "NoSchedule", "key": "dedicated", "operator": "Equal", "value": "gpu"}
            )
        elif flavor == "kata":
            kw["runtime_class"] = "kata"
            kw["overhead"] = KATA_OVERHEAD
            kw["node_selector"] = {"katacontainers.io/kata-runtime": "true"}
        else:
            r = rng.random()
            # Constraints name values that exist on some schedulable node of this cluster.
            refs = self._ref_nodes
            ref = rng.choice(refs) if refs else None
            if ref is not None and replicas <= 10 and self._forced_constraints:
                # The first small deployments get a zone affinity and a region selector, so
                # that even a small cluster has both.
                r = self._forced_constraints.pop()
            if ref is None or (replicas > 10 and r < 0.19):
                pass  # large deployments are not pinned to a few nodes
            elif r < 0.06:
                kw["node_selector"] = {"topology.kubernetes.io/region": ref.region}
            elif r < 0.10:
                kw["node_selector"] = {"node.kubernetes.io/instance-type": ref.itype}
            elif r < 0.16:
                zones = next(z for name, z, _, _ in REGIONS if name == ref.region)
                other = rng.choice([z for z in zones if z != ref.zone])
                kw["affinity"] = _required_node_affinity(
                    "topology.kubernetes.io/zone", "In", sorted((ref.zone, other))
                )
            elif r < 0.19 and ref.itype not in ("m5.2xlarge", "c5.4xlarge"):
                kw["affinity"] = _required_node_affinity(
                    "node.kubernetes.io/instance-type", "NotIn", ["m5.2xlarge", "c5.4xlarge"]
                )
            elif r < 0.30 and replicas > 1:
                kw["affinity"] = {
                    "podAntiAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "podAffinityTerm": {
                                    "labelSelector": {
                                        "matchLabels": {"app.kubernetes.io/name": app}
                                    },
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                                "weight": 100,
                            }
                        ]
                    }
                }
        return tolerations

    def _scheduling_constraints(self, kw: dict, app: str, kind: str, replicas: int) -> None:
        """Pod (anti-)affinity, topology spread constraints, preferred node affinity and a
        Service, as real workloads declare them (about a third of them carry one of these
        besides the 11 % with preferred hostname anti-affinity chosen above)."""
        rng = self.srng
        own = {"matchLabels": {"app.kubernetes.io/name": app}}
        kw["service"] = kind == "StatefulSet" or (kw["flavor"] == "web" and rng.random() < 0.7)
        affinity = kw.get("affinity") or {}
        r = rng.random()
        hash_key = ["pod-template-hash"] if kind == "ReplicaSet" else []
        if (kind == "StatefulSet" and r < 0.5 and replicas > 1) or (
            2 <= replicas <= 40 and r < 0.08
        ):
            anti = affinity.setdefault("podAntiAffinity", {})
            anti["requiredDuringSchedulingIgnoredDuringExecution"] = [
                {"labelSelector": own, "topologyKey": "kubernetes.io/hostname"}
            ]
            kw["anti_host"] = True
        elif r < 0.12 and replicas > 1:
            zone: dict = {
                "labelSelector": own,
                "maxSkew": 1,
                "topologyKey": "topology.kubernetes.io/zone",
                "whenUnsatisfiable": "DoNotSchedule",
            }
            if hash_key:
                zone["matchLabelKeys"] = hash_key
            host = {
                "labelSelector": own,
                "maxSkew": 2,
                "topologyKey": "kubernetes.io/hostname",
                "whenUnsatisfiable": "ScheduleAnyway",
            }
            kw["spread"] = [zone, host]
            kw["zone_skew"] = 1
        elif r < 0.16:
            kw["spread"] = [
                {
                    "labelSelector": own,
                    "maxSkew": 1,
                    "topologyKey": "kubernetes.io/hostname",
                    "whenUnsatisfiable": "ScheduleAnyway",
                }
            ]
        elif r < 0.18 and replicas > 2:
            kw["spread"] = [
                {
                    "labelSelector": own,
                    "maxSkew": 1,
                    "minDomains": 3,
                    "nodeTaintsPolicy": "Honor",
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                }
            ]
            kw["zone_skew"] = 1
        elif r < 0.23 and replicas > 1:
            anti = affinity.setdefault("podAntiAffinity", {})
            anti.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {
                    "podAffinityTerm": {
                        "labelSelector": own,
                        "topologyKey": "topology.kubernetes.io/zone",
                    },
                    "weight": 50,
                }
            )
        elif r < 0.28:
            preference = rng.choice(
                (
                    {"key": "node.kubernetes.io/instance-type", "operator": "In"},
                    {"key": "topology.kubernetes.io/zone", "operator": "In"},
                )
            )
            values = (
                sorted(rng.sample([t[0] for t in GENERAL_TYPES], 2))
                if preference["key"] == "node.kubernetes.io/instance-type"
                else [rng.choice(rng.choice(REGIONS)[1])]
            )
            node = affinity.setdefault("nodeAffinity", {})
            node["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {
                    "preference": {"matchExpressions": [{**preference, "values": values}]},
                    "weight": 20,
                }
            ]
        if affinity:
            kw["affinity"] = affinity

    def _plan_workloads(self) -> None:
        """The pod budget spent: system workloads first, then terminal Job pods, GPU and kata
        workloads, and application Deployments and StatefulSets until it runs out."""
        rng = self.rng
        budget = self.n_pods
        budget -= self._system_workloads(budget)
        if budget <= 0:
            return
        teams = list(TEAMS[: max(2, min(len(TEAMS), budget // 2000 + 2))])
        self._ref_nodes = [
            nd
            for nd in self.nodes
            if nd.role == "general" and not nd.legacy_topology and nd.state == "Ready"
        ]
        gpu_nodes = [nd for nd in self.nodes if nd.role == "gpu"]
        kata_nodes = [nd for nd in self.nodes if nd.kata]
        # Terminal Job pods.
        terminal = max(2, round(budget * 0.004)) if budget >= 40 else 0
        while terminal > 0:
            size = min(terminal, rng.randint(1, 6))
            self._job(rng.choice(teams), size)
            terminal -= size
            budget -= size
        # GPU inference, kata sandboxes.
        gpu_pods = min(round(budget * 0.01), 3 * sum(nd.gpus for nd in gpu_nodes) // 4)
        if gpu_nodes and budget >= 20:
            gpu_pods = max(1, gpu_pods)
        while gpu_pods > 0:
            size = min(gpu_pods, rng.randint(1, 8))
            self._app_workload("ml", "ReplicaSet", size, "gpu")
            gpu_pods -= size
            budget -= size
        kata_pods = round(budget * 0.01) if kata_nodes else 0
        while kata_pods > 0:
            size = min(kata_pods, rng.randint(1, 5))
            self._app_workload("sandbox", "ReplicaSet", size, "kata")
            kata_pods -= size
            budget -= size
        while budget > 0:
            ns = rng.choice(teams)
            if rng.random() < self.statefulset_share and budget >= 1:
                size = min(budget, rng.choice((1, 2, 3, 3, 3, 5, 5, 7)))
                self._app_workload(ns, "StatefulSet", size, "db")
            else:
                r = rng.random()
                if r < 0.15:
                    size = 1
                elif r < 0.5:
                    size = rng.randint(2, 3)
                elif r < 0.8:
                    size = rng.randint(4, 10)
                elif r < 0.95:
                    size = rng.randint(11, 40)
                else:
                    size = rng.randint(41, 150)
                size = min(budget, size, max(5, self.n_pods // 25))
                self._app_workload(
                    ns, "ReplicaSet", size, "worker" if rng.random() < 0.3 else "web"
                )
            budget -= size

    def _job(self, ns: str, size: int) -> None:
        """A CronJob's Job of ``size`` finished pods (one Job pod somewhere always failed)."""
        rng = self.rng
        cron = f"{ns}-{rng.choice(('nightly-report', 'cleanup', 'export', 'reindex', 'backup'))}"
        start = self.now - rng.randrange(600, 6 * 3600)
        job = self._unique(ns, f"{cron}-{start // 60}")
        qos = weighted_choice(rng, (("Guaranteed", 20), ("Burstable", 60), ("BestEffort", 20)))
        cpu, mem = self._resources(qos)
        image = f"{ECR}/{ns}/{cron}:{rng.randint(1, 9)}.{rng.randint(0, 30)}.0"
        owner = self._owner("batch/v1", "Job", job)
        wl = WorkloadPlan(
            kind="Job",
            ns=ns,
            app=job,
            prefix=f"{job}-",
            labels={
                "batch.kubernetes.io/controller-uid": owner["uid"],
                "batch.kubernetes.io/job-name": job,
                "controller-uid": owner["uid"],
                "job-name": job,
            },
            containers=[self._ctr("job", image, cpu=cpu, mem=mem, args=["run", "--once"])],
            owner=owner,
            tolerations=list(DEFAULT_TOLERATIONS),
            restart_policy="Never",
            priority_class="low",
            replicas=size,
            flavor="job",
            rollout=start,
        )
        self._finish_workload(wl)
        for i in range(size):
            pod = self._add_pod(wl)
            if not self._failed_job:
                pod.state = "Failed"  # there is always at least one
                self._failed_job = True
            else:
                pod.state = "Failed" if i < size - 1 and rng.random() < 0.5 else "Succeeded"

    def _plan_rolling_updates(self) -> None:
        """Some StatefulSets are mid-rollout: their highest ordinal is terminating."""
        rng, now = self.rng, self.now
        # StatefulSet rolling updates: the highest ordinal is being replaced.
        sets = [wl for wl in self.workloads if wl.kind == "StatefulSet" and wl.replicas >= 2]
        for wl in rng.sample(sets, min(len(sets), max(1, len(sets) // 30))) if sets else ():
            pod = wl.pods[-1]
            if pod.state == "Running" and pod.node is not None:
                pod.deleting = now + rng.randrange(1, wl.grace)

    def _render_service(self, wl: WorkloadPlan, rng: random.Random, rv: str) -> dict:
        """A ClusterIP Service over the workload's pods (headless for a StatefulSet)."""
        port = next(
            (p for c in wl.containers for p in c.spec.get("ports") or ()),
            {"containerPort": 8080, "name": "http", "protocol": "TCP"},
        )
        headless = wl.kind == "StatefulSet"
        ip = (
            "None"
            if headless
            else f"100.{64 + rng.randrange(64)}.{rng.randrange(256)}.{rng.randrange(1, 255)}"
        )
        created = fmt_time(wl.rollout - DAY)
        return {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "creationTimestamp": created,
                "labels": {"app.kubernetes.io/name": wl.app},
                "managedFields": [
                    managed_field(
                        "kubectl-client-side-apply",
                        created,
                        {"f:spec": field_set("clusterIP", "ports", "selector", "type")},
                    )
                ],
                "name": wl.app,
                "namespace": wl.ns,
                "resourceVersion": rv,
                "uid": new_uid(rng),
            },
            "spec": {
                "clusterIP": ip,
                "clusterIPs": [ip],
                "internalTrafficPolicy": "Cluster",
                "ipFamilies": ["IPv4"],
                "ipFamilyPolicy": "SingleStack",
                "ports": [
                    {
                        "name": port.get("name", "http"),
                        "port": port["containerPort"],
                        "protocol": "TCP",
                        "targetPort": port["containerPort"],
                    }
                ],
                "selector": {"app.kubernetes.io/name": wl.app},
                "sessionAffinity": "None",
                "type": "ClusterIP",
            },
            "status": {"loadBalancer": {}},
        }

    def _render_controller(self, wl: WorkloadPlan, rv: str) -> dict:
        """The ReplicaSet or StatefulSet owning the workload's pods: its selector (which
        system default spreading reads) and a template with the scheduling fields."""
        selector = {k: v for k, v in wl.labels.items() if k != "controller-revision-hash"}
        template: dict = {
            "containers": [dict(c.spec) for c in wl.containers],
            "schedulerName": "default-scheduler",
        }
        for key, value in (
            ("affinity", wl.affinity),
            ("nodeSelector", wl.node_selector),
            ("tolerations", wl.tolerations),
            ("topologySpreadConstraints", wl.spread),
        ):
            if value:
                template[key] = value
        ready = sum(1 for p in wl.pods if p.ready)
        meta: dict = {
            "creationTimestamp": fmt_time(wl.rollout),
            "generation": 1,
            "labels": selector,
            "name": wl.owner["name"],
            "namespace": wl.ns,
            "resourceVersion": rv,
            "uid": wl.owner["uid"],
        }
        if wl.kind == "ReplicaSet":
            deployment = wl.owner["name"].rsplit("-", 1)[0]
            meta["annotations"] = {
                "deployment.kubernetes.io/desired-replicas": str(wl.replicas),
                "deployment.kubernetes.io/max-replicas": str(wl.replicas + 1),
                "deployment.kubernetes.io/revision": "1",
            }
            meta["ownerReferences"] = [
                {
                    "apiVersion": "apps/v1",
                    "blockOwnerDeletion": True,
                    "controller": True,
                    "kind": "Deployment",
                    "name": deployment,
                    "uid": sha256_hex(f"{wl.ns}/{deployment}")[:8]
                    + "-0000-4000-8000-"
                    + sha256_hex(f"{wl.ns}/{deployment}")[8:20],
                }
            ]
        spec: dict = {
            "replicas": wl.replicas,
            "selector": {"matchLabels": selector},
            "template": {"metadata": {"labels": selector}, "spec": template},
        }
        if wl.kind == "StatefulSet":
            spec["serviceName"] = wl.app
            spec["podManagementPolicy"] = "OrderedReady"
        return {
            "apiVersion": "apps/v1",
            "kind": wl.kind,
            "metadata": meta,
            "spec": spec,
            "status": {
                "availableReplicas": ready,
                "observedGeneration": 1,
                "readyReplicas": ready,
                "replicas": len(wl.pods),
            },
        }


def _required_node_affinity(key: str, operator: str, values: list) -> dict:
    """A pod affinity with one required node selector term of one expression."""
    expression = {"key": key, "operator": operator, "values": values}
    term = {"matchExpressions": [expression]}
    return {
        "nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [term]}
        }
    }


def _not_ready_tolerations(seconds: int) -> list[dict]:
    """Tolerating a not-ready and an unreachable node for ``seconds`` before eviction."""
    return [
        {"effect": "NoExecute", "key": key, "operator": "Exists", "tolerationSeconds": seconds}
        for key in (NOT_READY, UNREACHABLE)
    ]
