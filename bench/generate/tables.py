"""The static tables the plan draws from: regions and instance types, teams and components,
resource choices, PriorityClasses, default tolerations, pod-spec fragments.

Changing a table changes every generated cluster (tests/bench/generate pins the output).
"""

from __future__ import annotations

from bench.generate.common import GI, MI, field_set

REGIONS = (
    # region, zones, second octet of the VPC (172.X.0.0/16), weight
    ("eu-west-1", ("eu-west-1a", "eu-west-1b", "eu-west-1c"), 20, 3),
    ("eu-central-1", ("eu-central-1a", "eu-central-1b", "eu-central-1c"), 21, 2),
)
GENERAL_TYPES = (
    # name, vCPU, memory GiB, weight
    ("m5.2xlarge", 8, 32, 20),
    ("m5.4xlarge", 16, 64, 35),
    ("m5.8xlarge", 32, 128, 15),
    ("r5.4xlarge", 16, 128, 12),
    ("c5.4xlarge", 16, 32, 10),
    ("c5.9xlarge", 36, 72, 8),
)
GPU_TYPES = (
    ("g5.12xlarge", 48, 192, 4, "NVIDIA-A10G"),
    ("p3.8xlarge", 32, 244, 4, "Tesla-V100-SXM2-16GB"),
)
INFRA_TYPE = ("c5.2xlarge", 8, 16)
CP_TYPE = ("m5.xlarge", 4, 16)

TEAMS = (
    "payments",
    "checkout",
    "catalog",
    "search",
    "identity",
    "notifications",
    "analytics",
    "recommendations",
    "inventory",
    "shipping",
    "billing",
    "media",
    "messaging",
    "reporting",
    "fraud",
    "pricing",
    "loyalty",
    "gateway",
    "ledger",
    "orders",
    "accounts",
    "reviews",
    "ads",
    "geo",
    "support",
    "content",
    "partners",
    "risk",
    "growth",
    "platform",
)
COMPONENTS = (
    "api",
    "worker",
    "web",
    "consumer",
    "scheduler",
    "cache",
    "grpc",
    "indexer",
    "sync",
    "exporter",
    "processor",
    "frontend",
    "backend",
    "notifier",
    "reconciler",
    "aggregator",
    "router",
    "ingest",
    "admin",
    "events",
    "feed",
    "query",
    "writer",
    "reader",
    "auth",
    "cdc",
    "publisher",
    "resolver",
    "matcher",
    "planner",
)
DATASTORES = (
    ("postgres", "docker.io/library/postgres:16.4", 5432),
    ("redis", "docker.io/library/redis:7.4.1", 6379),
    ("kafka", "docker.io/bitnami/kafka:3.8.1", 9092),
    ("zookeeper", "docker.io/bitnami/zookeeper:3.9.3", 2181),
    ("rabbitmq", "docker.io/library/rabbitmq:3.13.7", 5672),
    ("elasticsearch", "docker.elastic.co/elasticsearch/elasticsearch:8.15.3", 9200),
)
CPU_CHOICES = ((50, 10), (100, 25), (200, 20), (250, 15), (500, 15), (1000, 10), (2000, 4))
MEM_CHOICES = (
    (64 * MI, 8),
    (128 * MI, 15),
    (256 * MI, 22),
    (512 * MI, 22),
    (1 * GI, 18),
    (2 * GI, 10),
    (4 * GI, 4),
    (8 * GI, 1),
)

PRIORITY_CLASSES = (
    # name, value, globalDefault, preemptionPolicy, description
    ("default", 0, True, "PreemptLowerPriority", "Default priority for workloads."),
    ("high", 100000, False, "PreemptLowerPriority", "Latency-sensitive production services."),
    ("low", -10, False, "Never", "Best-effort batch work; never preempts other pods."),
    (
        "system-cluster-critical",
        2000000000,
        False,
        "PreemptLowerPriority",
        "Used for system critical pods that must run in the cluster, but can be moved to "
        "another node if necessary.",
    ),
    (
        "system-node-critical",
        2000001000,
        False,
        "PreemptLowerPriority",
        "Used for system critical pods that must not be moved from their current node.",
    ),
)
PRIORITY = {name: (value, policy) for name, value, _, policy, _ in PRIORITY_CLASSES}

NOT_READY = "node.kubernetes.io/not-ready"
UNREACHABLE = "node.kubernetes.io/unreachable"
# Added by the DefaultTolerationSeconds admission plugin to pods that do not tolerate them.
DEFAULT_TOLERATIONS = (
    {"effect": "NoExecute", "key": NOT_READY, "operator": "Exists", "tolerationSeconds": 300},
    {"effect": "NoExecute", "key": UNREACHABLE, "operator": "Exists", "tolerationSeconds": 300},
)
# Added by the DaemonSet controller.
DS_TOLERATIONS = (
    {"effect": "NoExecute", "key": NOT_READY, "operator": "Exists"},
    {"effect": "NoExecute", "key": UNREACHABLE, "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/pid-pressure", "operator": "Exists"},
    {"effect": "NoSchedule", "key": "node.kubernetes.io/unschedulable", "operator": "Exists"},
)
DS_HOSTNET_TOLERATION = {
    "effect": "NoSchedule",
    "key": "node.kubernetes.io/network-unavailable",
    "operator": "Exists",
}

SA_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
SA_PROJECTION = {
    "defaultMode": 420,
    "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
        {
            "downwardAPI": {
                "items": [
                    {
                        "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"},
                        "path": "namespace",
                    }
                ]
            }
        },
    ],
}
POD_NAME_ENV = {
    "name": "POD_NAME",
    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}},
}
NODE_NAME_ENV = {
    "name": "NODE_NAME",
    "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}},
}
RESTRICTED = {
    "allowPrivilegeEscalation": False,
    "capabilities": {"drop": ["ALL"]},
    "readOnlyRootFilesystem": True,
    "runAsNonRoot": True,
    "runAsUser": 10001,
}
POD_SECURITY = {"fsGroup": 10001, "seccompProfile": {"type": "RuntimeDefault"}}
KATA_OVERHEAD = (250, 160 * MI)

# managedFields are kept shallow (a field set at the granularity of top-level fields, still a
# valid FieldsV1) so that a pod stays near the 2-3 KB the benchmark is sized for.
STATUS_FIELDS = {
    "f:status": field_set(
        "conditions", "containerStatuses", "hostIP", "phase", "podIP", "startTime"
    )
}
SCHEDULER_FIELDS = {"f:status": field_set("conditions")}
