"""System workloads: static control-plane pods and kube-proxy, the per-node DaemonSets and the
cluster add-ons (DNS, metrics, monitoring, ingress), sized to the pod budget.
"""

from __future__ import annotations

from bench.generate.common import GI, K8S_VERSION, MI, http_probe
from bench.generate.records import NodePlan, WorkloadPlan
from bench.generate.state import ClusterState
from bench.generate.tables import DEFAULT_TOLERATIONS, NODE_NAME_ENV, POD_NAME_ENV, RESTRICTED

# Every system pod logs to the node's /var/log.
LOG_MOUNT = {"mountPath": "/var/log", "name": "logfile"}


class SystemWorkloads(ClusterState):
    """Plans the pods every cluster runs before any application."""

    def _system_workloads(self, budget: int) -> int:
        """Per-node (static and DaemonSet) pods and the cluster add-ons; returns pods used.

        Per-node kinds come first, as many as a fifth of the budget pays for on every node (so a
        cluster of few pods per node still runs kube-proxy); add-ons follow while pods remain.
        """
        n = self.n_nodes
        cps = [nd for nd in self.nodes if nd.role == "control-plane"]
        kinds = min(4, int(budget * 0.2) // n)
        used = 0
        if kinds >= 1:
            used += self._on_every_node(self._kube_proxy())
            if budget - used >= 4 * len(cps) + n:
                used += self._control_plane(cps)
        daemonsets = (self._cilium, self._ebs_csi_node, self._node_exporter)
        for daemonset in daemonsets[: max(0, kinds - 1)]:
            used += self._on_every_node(daemonset())
        used += self._addons(budget - used)
        if budget - used >= 12:
            used += self._prometheus()
        used += self._ingress(budget - used)
        return used

    def _on_every_node(self, wl: WorkloadPlan) -> int:
        """One pod of ``wl`` bound to each node, as the DaemonSet controller (or the kubelet, for
        static pods) places them; returns the pods added."""
        for nd in self.nodes:
            self._add_pod(wl, node=nd)
        return self.n_nodes

    def _kube_proxy(self) -> WorkloadPlan:
        """kube-proxy, a static pod on every node (as kops runs it)."""
        return self._static(
            "kube-proxy",
            [
                self._ctr(
                    "kube-proxy",
                    f"registry.k8s.io/kube-proxy:{K8S_VERSION}",
                    cpu=(100, 0),
                    mem=(128 * MI, 0),
                    command=["/usr/local/bin/kube-proxy"],
                    args=["--conntrack-max-per-core=131072", "--v=2"],
                    security={"privileged": True},
                    mounts=[
                        {"mountPath": "/var/lib/kube-proxy", "name": "varlib"},
                        LOG_MOUNT,
                    ],
                )
            ],
        )

    def _control_plane(self, cps: list[NodePlan]) -> int:
        """etcd-manager, the API server, the controller manager and the scheduler as static pods
        on each control-plane node; returns the pods added."""
        for comp, cpu, image in (
            (
                "etcd-manager-main",
                200,
                "registry.k8s.io/etcdadm/etcd-manager-slim:v3.0.20241012",
            ),
            ("kube-apiserver", 150, f"registry.k8s.io/kube-apiserver:{K8S_VERSION}"),
            (
                "kube-controller-manager",
                100,
                f"registry.k8s.io/kube-controller-manager:{K8S_VERSION}",
            ),
            ("kube-scheduler", 100, f"registry.k8s.io/kube-scheduler:{K8S_VERSION}"),
        ):
            wl = self._static(
                comp,
                [
                    self._ctr(
                        comp,
                        image,
                        cpu=(cpu, 0),
                        mem=(0, 0) if comp != "etcd-manager-main" else (100 * MI, 0),
                        mounts=[LOG_MOUNT],
                        probes=(
                            {
                                "failureThreshold": 8,
                                "httpGet": {
                                    "host": "127.0.0.1",
                                    "path": "/healthz",
                                    "port": 10250,
                                    "scheme": "HTTPS",
                                },
                                "initialDelaySeconds": 15,
                                "periodSeconds": 10,
                                "successThreshold": 1,
                                "timeoutSeconds": 15,
                            },
                        )
                        * 2,
                    )
                ],
                priority="system-cluster-critical"
                if comp == "etcd-manager-main"
                else "system-node-critical",
            )
            for nd in cps:
                self._add_pod(wl, node=nd)
        return 4 * len(cps)

    def _cilium(self) -> WorkloadPlan:
        """The CNI agent's DaemonSet."""
        cilium_image = "quay.io/cilium/cilium:v1.16.4"
        return self._daemonset(
            "kube-system",
            "cilium",
            [
                self._ctr(
                    "cilium-agent",
                    cilium_image,
                    cpu=(100, 0),
                    mem=(128 * MI, 0),
                    command=["cilium-agent"],
                    args=["--config-dir=/tmp/cilium/config-map"],
                    env=[
                        NODE_NAME_ENV,
                        {"name": "CILIUM_K8S_NAMESPACE", "value": "kube-system"},
                    ],
                    ports=[
                        {
                            "containerPort": 9962,
                            "hostPort": 9962,
                            "name": "prometheus",
                            "protocol": "TCP",
                        }
                    ],
                    probes=(
                        {
                            "failureThreshold": 10,
                            "httpGet": {
                                "host": "127.0.0.1",
                                "path": "/healthz",
                                "port": 9879,
                                "scheme": "HTTP",
                            },
                            "periodSeconds": 30,
                            "successThreshold": 1,
                            "timeoutSeconds": 5,
                        },
                        {
                            "failureThreshold": 3,
                            "httpGet": {
                                "host": "127.0.0.1",
                                "path": "/healthz",
                                "port": 9879,
                                "scheme": "HTTP",
                            },
                            "periodSeconds": 30,
                            "successThreshold": 1,
                            "timeoutSeconds": 5,
                        },
                    ),
                    security={"privileged": True},
                    mounts=[
                        {"mountPath": "/var/run/cilium", "name": "cilium-run"},
                        {"mountPath": "/tmp", "name": "tmp"},
                    ],
                )
            ],
            inits=[
                self._ctr(
                    "mount-cgroup",
                    cilium_image,
                    command=["sh", "-ec"],
                    args=[
                        "nsenter --cgroup=/hostproc/1/ns/cgroup --mount=/hostproc/1/ns/mnt mount-cgroup"
                    ],
                    security={"privileged": True},
                ),
                self._ctr(
                    "clean-cilium-state",
                    cilium_image,
                    command=["/init-container.sh"],
                    cpu=(100, 0),
                    mem=(100 * MI, 0),
                    security={"privileged": True},
                    mounts=[{"mountPath": "/var/run/cilium", "name": "cilium-run"}],
                ),
            ],
            host_network=True,
            priority_class="system-node-critical",
            volumes=[
                {
                    "hostPath": {"path": "/var/run/cilium", "type": "DirectoryOrCreate"},
                    "name": "cilium-run",
                },
                {"emptyDir": {}, "name": "tmp"},
            ],
        )

    def _ebs_csi_node(self) -> WorkloadPlan:
        """The EBS CSI driver's node plugin DaemonSet."""
        return self._daemonset(
            "kube-system",
            "ebs-csi-node",
            [
                self._ctr(
                    "ebs-plugin",
                    "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.37.0",
                    cpu=(10, 0),
                    mem=(40 * MI, 256 * MI),
                    args=["node", "--endpoint=$(CSI_ENDPOINT)", "--v=2"],
                    env=[
                        {"name": "CSI_ENDPOINT", "value": "unix:/csi/csi.sock"},
                        NODE_NAME_ENV,
                    ],
                    ports=[{"containerPort": 9808, "name": "healthz", "protocol": "TCP"}],
                    security={"privileged": True},
                    mounts=[{"mountPath": "/csi", "name": "plugin-dir"}],
                ),
                self._ctr(
                    "node-driver-registrar",
                    "public.ecr.aws/eks-distro/kubernetes-csi/node-driver-registrar:v2.12.0-eks-1-31-7",
                    cpu=(10, 0),
                    mem=(40 * MI, 256 * MI),
                    mounts=[{"mountPath": "/csi", "name": "plugin-dir"}],
                ),
                self._ctr(
                    "liveness-probe",
                    "public.ecr.aws/eks-distro/kubernetes-csi/livenessprobe:v2.14.0-eks-1-31-7",
                    cpu=(10, 0),
                    mem=(40 * MI, 256 * MI),
                    mounts=[{"mountPath": "/csi", "name": "plugin-dir"}],
                ),
            ],
            priority_class="system-node-critical",
            volumes=[
                {
                    "hostPath": {
                        "path": "/var/lib/kubelet/plugins/ebs.csi.aws.com/",
                        "type": "DirectoryOrCreate",
                    },
                    "name": "plugin-dir",
                }
            ],
        )

    def _node_exporter(self) -> WorkloadPlan:
        """Prometheus' node exporter, a host-network DaemonSet."""
        return self._daemonset(
            "monitoring",
            "node-exporter",
            [
                self._ctr(
                    "node-exporter",
                    "quay.io/prometheus/node-exporter:v1.8.2",
                    cpu=(100, 100),
                    mem=(64 * MI, 64 * MI),
                    args=["--path.rootfs=/host/root", "--web.listen-address=127.0.0.1:9101"],
                    security=RESTRICTED,
                    mounts=[
                        {
                            "mountPath": "/host/root",
                            "mountPropagation": "HostToContainer",
                            "name": "root",
                            "readOnly": True,
                        }
                    ],
                ),
                self._ctr(
                    "kube-rbac-proxy",
                    "quay.io/brancz/kube-rbac-proxy:v0.18.1",
                    cpu=(20, 20),
                    mem=(32 * MI, 32 * MI),
                    args=[
                        "--secure-listen-address=[$(IP)]:9100",
                        "--upstream=http://127.0.0.1:9101/",
                    ],
                    env=[
                        {
                            "name": "IP",
                            "valueFrom": {
                                "fieldRef": {"apiVersion": "v1", "fieldPath": "status.podIP"}
                            },
                        }
                    ],
                    ports=[
                        {
                            "containerPort": 9100,
                            "hostPort": 9100,
                            "name": "https",
                            "protocol": "TCP",
                        }
                    ],
                    security=RESTRICTED,
                ),
            ],
            host_network=True,
            priority_class="high",
            volumes=[{"hostPath": {"path": "/", "type": ""}, "name": "root"}],
        )

    def _addons(self, room: int) -> int:
        """The cluster add-ons (Deployments), in order, while ``room`` pods allow; returns the
        pods added."""
        used = 0
        addons = (
            (
                "kube-system",
                "coredns",
                max(2, self.n_nodes // 250),
                "registry.k8s.io/coredns/coredns:v1.11.3",
                (100, 0),
                (70 * MI, 170 * MI),
                "system-cluster-critical",
            ),
            (
                "kube-system",
                "metrics-server",
                1,
                "registry.k8s.io/metrics-server/metrics-server:v0.7.2",
                (100, 0),
                (200 * MI, 0),
                "system-cluster-critical",
            ),
            (
                "kube-system",
                "ebs-csi-controller",
                2,
                "public.ecr.aws/ebs-csi-driver/aws-ebs-csi-driver:v1.37.0",
                (10, 0),
                (40 * MI, 256 * MI),
                "system-cluster-critical",
            ),
            (
                "kube-system",
                "cluster-autoscaler",
                1,
                "registry.k8s.io/autoscaling/cluster-autoscaler:v1.31.1",
                (100, 100),
                (600 * MI, 600 * MI),
                "system-cluster-critical",
            ),
            (
                "monitoring",
                "kube-state-metrics",
                1,
                "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.14.0",
                (100, 0),
                (190 * MI, 0),
                "high",
            ),
        )
        for ns, name, replicas, image, cpu, mem, pc in addons:
            if room - used < replicas + 10:
                break
            ctr = self._ctr(
                name,
                image,
                cpu=cpu,
                mem=mem,
                ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                probes=(http_probe(8080, "/healthz", 60), http_probe(8080, "/ready", 0)),
                security=RESTRICTED,
            )
            wl = self._replicaset(ns, name, [ctr], replicas, priority_class=pc, flavor="addon")
            if name == "coredns":
                wl.node_selector = {"kubernetes.io/os": "linux"}
                wl.tolerations = [
                    {"key": "CriticalAddonsOnly", "operator": "Exists"},
                    *DEFAULT_TOLERATIONS,
                ]
            used += replicas
        return used

    def _prometheus(self) -> int:
        """Prometheus, a StatefulSet of two each claiming its database volume; returns the pods."""
        ctr = self._ctr(
            "prometheus",
            "quay.io/prometheus/prometheus:v2.55.1",
            cpu=(2000, 0),
            mem=(8 * GI, 8 * GI),
            ports=[{"containerPort": 9090, "name": "web", "protocol": "TCP"}],
            probes=(http_probe(9090, "/-/healthy", 0), http_probe(9090, "/-/ready", 0)),
            security=RESTRICTED,
            mounts=[{"mountPath": "/prometheus", "name": "prometheus-db"}],
        )
        self._statefulset(
            "monitoring",
            "prometheus-k8s",
            [ctr],
            2,
            priority_class="high",
            claim="prometheus-db",
        )
        return 2

    def _ingress(self, room: int) -> int:
        """Ingress controllers on the infra nodes (hostPort 80/443, tolerating dedicated=infra),
        when there are two infra nodes or more and ``room`` allows; returns the pods added."""
        infra = [nd for nd in self.nodes if nd.role == "infra"]
        if len(infra) < 2 or room < len(infra) + 10:
            return 0
        ports = [
            {"containerPort": 80, "hostPort": 80, "name": "http", "protocol": "TCP"},
            {"containerPort": 443, "hostPort": 443, "name": "https", "protocol": "TCP"},
        ]
        ctr = self._ctr(
            "controller",
            "registry.k8s.io/ingress-nginx/controller:v1.11.3",
            cpu=(500, 0),
            mem=(512 * MI, 0),
            ports=ports,
            env=[
                POD_NAME_ENV,
                {
                    "name": "POD_NAMESPACE",
                    "valueFrom": {
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}
                    },
                },
            ],
            probes=(http_probe(10254, "/healthz", 10), http_probe(10254, "/healthz", 10)),
            security={
                "allowPrivilegeEscalation": False,
                "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                "runAsNonRoot": True,
                "runAsUser": 101,
            },
        )
        wl = self._replicaset(
            "ingress-nginx",
            "ingress-nginx-controller",
            [ctr],
            len(infra) - 1,
            priority_class="high",
            flavor="ingress",
            node_selector={"node-pool": "infra"},
            tolerations=[
                {
                    "effect": "NoExecute",
                    "key": "dedicated",
                    "operator": "Equal",
                    "value": "infra",
                }
            ],
        )
        return wl.replicas
