"""Pods: adding them to the plan, preemptions in flight, and the Pod and PriorityClass
objects (spec, status, managedFields as the kubelet and scheduler write them).
"""

from __future__ import annotations

import hashlib
import random

from bench.generate.common import (
    DAY,
    cpu_quantity,
    field_set,
    fmt_micro_time,
    fmt_time,
    managed_field,
    mem_quantity,
    new_uid,
    rand_hex,
    rand_suffix,
)
from bench.generate.records import NodePlan, PodPlan, WorkloadPlan
from bench.generate.state import ClusterState
from bench.generate.tables import (
    PRIORITY,
    SA_MOUNT_PATH,
    SA_PROJECTION,
    SCHEDULER_FIELDS,
    STATUS_FIELDS,
)

# The phase of a pod on a node, by the plan's state (a pod still creating is Pending).
_PHASE = {"Succeeded": "Succeeded", "Failed": "Failed", "Creating": "Pending"}


class Pods(ClusterState):
    """Plans pods and renders them."""

    def _add_pod(
        self, wl: WorkloadPlan, *, node: NodePlan | None = None, ordinal: int = -1
    ) -> PodPlan:
        """A new pod of ``wl`` named as its controller names them (static and StatefulSet pods by
        node or ordinal, the others by generateName), bound to ``node`` when given."""
        rng = self.rng
        if wl.kind == "Node":
            name = f"{wl.app}-{node.name}"
        elif wl.kind == "StatefulSet":
            name = f"{wl.prefix}{ordinal}"
        else:
            while True:
                name = wl.prefix + rand_suffix(rng)
                if (wl.ns, name) not in self._names:
                    break
        self._names.add((wl.ns, name))
        pod = PodPlan(wl=wl, name=name, uid=new_uid(rng), key=f"{wl.ns}/{name}", ordinal=ordinal)
        if wl.sa_token:
            pod.sa_volume = "kube-api-access-" + rand_suffix(rng)
        if wl.kind == "Node":
            pod.static_uid = hashlib.md5(f"{node.name}/{wl.app}".encode()).hexdigest()
        if node is not None:
            self._bind(pod, node)
        wl.pods.append(pod)
        self.pods.append(pod)
        return pod

    def _plan_preemption(self) -> None:
        """Nominate some pending high-priority pods onto a node where a lower-priority victim is
        being deleted, so that snapshots show a preemption in flight."""
        rng, now = self.rng, self.now
        # Preemption: pending high-priority pods nominated onto a node with a lower-priority victim.
        for pod in self.pods:
            if pod.state != "Unschedulable" or pod.wl.priority_class != "high":
                continue
            nodes, _ = self._pool(pod.wl)
            for nd in rng.sample(nodes, min(len(nodes), 200)):
                if nd.state != "Ready" or nd.cordoned:
                    continue
                victims = [
                    v
                    for v in nd.pods
                    if v.state == "Running"
                    and not v.deleting
                    and v.wl.kind == "ReplicaSet"
                    and PRIORITY[v.wl.priority_class][0] < PRIORITY["high"][0]
                ]
                if victims:
                    victim = rng.choice(victims)
                    victim.deleting = now + rng.randrange(2, victim.wl.grace)
                    victim.preempted = True
                    pod.nominated = nd
                    break

    def _render_pod(self, pod: PodPlan, rng: random.Random, rv: str) -> dict:
        """The Pod as the API server returns it: metadata with its owner and managedFields,
        the spec its controller wrote (plus the scheduler's nodeName), the status."""
        meta = self._pod_metadata(pod, rng, rv)
        spec = _pod_spec(pod)
        meta["managedFields"] = _pod_managed_fields(pod, meta["creationTimestamp"])
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": meta,
            "spec": spec,
            "status": self._pod_status(pod, rng),
        }

    def _pod_metadata(self, pod: PodPlan, rng: random.Random, rv: str) -> dict:
        """Labels (a StatefulSet pod's index and name added), the owner (the Node for a mirror
        pod, with the kubelet's config annotations), the deletion in progress."""
        wl, nd = pod.wl, pod.node
        created = fmt_time(pod.created)
        labels = wl.labels
        if wl.kind == "StatefulSet":
            labels = {
                **labels,
                "apps.kubernetes.io/pod-index": str(pod.ordinal),
                "statefulset.kubernetes.io/pod-name": pod.name,
            }
        meta: dict = {
            "creationTimestamp": created,
            "labels": labels,
            "name": pod.name,
            "namespace": wl.ns,
            "resourceVersion": rv,
            "uid": pod.uid,
        }
        annotations = wl.annotations
        if wl.kind == "Node":
            annotations = {
                "kubernetes.io/config.hash": pod.static_uid,
                "kubernetes.io/config.mirror": pod.static_uid,
                "kubernetes.io/config.seen": fmt_micro_time(pod.created - 15, rng.randrange(10**6))[
                    :-1
                ]
                + f"{rng.randrange(1000):03d}Z",
                "kubernetes.io/config.source": "file",
            }
            meta["ownerReferences"] = [
                {
                    "apiVersion": "v1",
                    "controller": True,
                    "kind": "Node",
                    "name": nd.name,
                    "uid": nd.uid,
                }
            ]
        elif wl.owner:
            meta["ownerReferences"] = [wl.owner]
        if annotations:
            meta["annotations"] = annotations
        if wl.kind in ("ReplicaSet", "DaemonSet", "Job"):
            meta["generateName"] = wl.prefix
        if pod.deleting:
            meta["deletionGracePeriodSeconds"] = wl.grace
            meta["deletionTimestamp"] = fmt_time(pod.deleting)
        return meta

    def _pod_status(self, pod: PodPlan, rng: random.Random) -> dict:
        """The pod's status: the scheduler's for pods without a node, otherwise the kubelet's
        (container statuses, conditions, IPs)."""
        wl, nd = pod.wl, pod.node
        state = pod.state
        if state == "Pending":
            return {"phase": "Pending", "qosClass": wl.qos}
        if state == "Unschedulable":
            return self._unschedulable_status(pod)
        started = pod.started
        s_started = fmt_time(started)
        initialized_at = started + (rng.randrange(2, 20) if wl.inits else 0)
        ready_at = initialized_at + rng.randrange(3, 30)
        init_statuses = _init_statuses(pod, initialized_at, rng)
        statuses, not_ready = _container_statuses(pod, initialized_at, rng)
        conditions = _pod_conditions(pod, initialized_at, ready_at, not_ready, rng)
        status = {
            "conditions": conditions,
            "containerStatuses": statuses,
            "hostIP": nd.ip,
            "hostIPs": [{"ip": nd.ip}],
            "phase": _PHASE.get(state, "Running"),
            "qosClass": wl.qos,
            "startTime": s_started,
        }
        if init_statuses:
            status["initContainerStatuses"] = init_statuses
        if pod.ip and state != "Creating":
            status["podIP"] = pod.ip
            status["podIPs"] = [{"ip": pod.ip}]
        return status

    def _unschedulable_status(self, pod: PodPlan) -> dict:
        """The status the scheduler leaves on a pod that fits nowhere: its PodScheduled
        condition with the message kube-scheduler writes (per-reason node counts, and the
        preemption that did not help), and the node a preemption nominated, if any."""
        wl = pod.wl
        n = self.n_nodes
        taint = sum(
            1
            for x in self.nodes
            if x.state != "Ready" or any(t["effect"] != "PreferNoSchedule" for t in x.static_taints)
        )
        mismatch = min(n - taint, n // 7 if (wl.node_selector or wl.affinity) else 0)
        rest = n - taint - mismatch
        reasons = [f"{rest} Insufficient cpu"] if rest else []
        if mismatch:
            reasons.append(f"{mismatch} node(s) didn't match Pod's node affinity/selector")
        if taint:
            reasons.append(f"{taint} node(s) had untolerated taint(s)")
        message = (
            f"0/{n} nodes are available: {', '.join(reasons)}. preemption: 0/{n} nodes are "
            f"available: {rest} No preemption victims found for incoming pod, "
            f"{n - rest} Preemption is not helpful for scheduling."
        )
        status: dict = {
            "conditions": [
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": fmt_time(pod.created + 1),
                    "message": message,
                    "reason": "Unschedulable",
                    "status": "False",
                    "type": "PodScheduled",
                }
            ],
            "phase": "Pending",
            "qosClass": wl.qos,
        }
        if pod.nominated is not None:
            status["nominatedNodeName"] = pod.nominated.name
        return status

    def _render_priority_class(self, pc: tuple, rng: random.Random, rv: str) -> dict:
        """A PriorityClass object; the system ones as the API server creates them."""
        name, value, global_default, policy, description = pc
        system = name.startswith("system-")
        created = fmt_time(self.now - 400 * DAY + (0 if system else 3600))
        obj: dict = {
            "apiVersion": "scheduling.k8s.io/v1",
            "description": description,
            "kind": "PriorityClass",
            "metadata": {
                "creationTimestamp": created,
                "generation": 1,
                "managedFields": [
                    managed_field(
                        "kube-apiserver" if system else "kubectl-client-side-apply",
                        created,
                        field_set("description", "preemptionPolicy", "value")
                        | ({"f:globalDefault": {}} if global_default else {}),
                        api="scheduling.k8s.io/v1",
                    ),
                ],
                "name": name,
                "resourceVersion": rv,
                "uid": new_uid(rng),
            },
            "preemptionPolicy": policy,
            "value": value,
        }
        if global_default:
            obj["globalDefault"] = True
        return obj


def _init_statuses(pod: PodPlan, initialized_at: int, rng: random.Random) -> list[dict]:
    """initContainerStatuses: still initializing (Creating), a running sidecar, or completed."""
    wl, state, started = pod.wl, pod.state, pod.started
    terminal = state in ("Succeeded", "Failed")
    init_statuses = []
    for c in wl.inits:
        st: dict = {
            "containerID": "containerd://" + rand_hex(rng, 64),
            "image": c.image,
            "imageID": c.image_id,
            "lastState": {},
            "name": c.name,
            "ready": True,
            "restartCount": 0,
        }
        if state == "Creating":
            del st["containerID"]
            st.update(
                imageID="",
                ready=False,
                started=False,
                state={"waiting": {"reason": "PodInitializing"}},
            )
        elif c.sidecar and not terminal:
            st["started"] = True
            st["state"] = {"running": {"startedAt": fmt_time(started + 1)}}
        else:
            st["started"] = False
            st["state"] = {
                "terminated": {
                    "containerID": st["containerID"],
                    "exitCode": 0,
                    "finishedAt": fmt_time(initialized_at),
                    "reason": "Completed",
                    "startedAt": fmt_time(started + 1),
                }
            }
        init_statuses.append(st)
    return init_statuses


def _container_statuses(
    pod: PodPlan, initialized_at: int, rng: random.Random
) -> tuple[list[dict], list[str]]:
    """containerStatuses as the kubelet reports them for the pod's state (creating, finished,
    crash-looping, running after restarts), and the names of the containers not ready."""
    wl, state = pod.wl, pod.state
    terminal = state in ("Succeeded", "Failed")
    statuses = []
    not_ready = []
    for i, c in enumerate(wl.containers):
        st = {
            "containerID": "containerd://" + rand_hex(rng, 64),
            "image": c.image,
            "imageID": c.image_id,
            "lastState": {},
            "name": c.name,
            "ready": True,
            "restartCount": pod.restarts,
            "started": True,
        }
        if state == "Creating":
            del st["containerID"]
            st.update(
                imageID="",
                ready=False,
                started=False,
                state={"waiting": {"reason": "ContainerCreating"}},
            )
            not_ready.append(c.name)
        elif terminal:
            failed = state == "Failed"
            oom = failed and c.mem_lim and rng.random() < 0.3
            st.update(ready=False, started=False)
            st["state"] = {
                "terminated": {
                    "containerID": st["containerID"],
                    "exitCode": 137 if oom else 1 if failed else 0,
                    "finishedAt": fmt_time(pod.finished),
                    "reason": "OOMKilled" if oom else "Error" if failed else "Completed",
                    "startedAt": fmt_time(initialized_at + 1),
                }
            }
        elif state == "CrashLoop" and i == 0:
            st.update(ready=False, started=False)
            st["lastState"] = {
                "terminated": {
                    "containerID": "containerd://" + rand_hex(rng, 64),
                    "exitCode": 1,
                    "finishedAt": fmt_time(pod.last_restart),
                    "reason": "Error",
                    "startedAt": fmt_time(pod.last_restart - rng.randrange(1, 20)),
                }
            }
            st["state"] = {
                "waiting": {
                    "message": f"back-off 5m0s restarting failed container={c.name} pod={pod.name}_{wl.ns}({pod.uid})",
                    "reason": "CrashLoopBackOff",
                }
            }
            not_ready.append(c.name)
        else:
            if pod.restarts and i == 0:
                st["lastState"] = {
                    "terminated": {
                        "containerID": "containerd://" + rand_hex(rng, 64),
                        "exitCode": 137 if c.mem_lim else 2,
                        "finishedAt": fmt_time(pod.last_restart),
                        "reason": "OOMKilled" if c.mem_lim else "Error",
                        "startedAt": fmt_time(initialized_at + 1),
                    }
                }
                st["state"] = {"running": {"startedAt": fmt_time(pod.last_restart + 1)}}
            else:
                st["restartCount"] = 0
                st["state"] = {"running": {"startedAt": fmt_time(initialized_at + 1)}}
        statuses.append(st)
    return statuses, not_ready


def _pod_conditions(
    pod: PodPlan, initialized_at: int, ready_at: int, not_ready: list[str], rng: random.Random
) -> list[dict]:
    """The pod's conditions for its state, in the kubelet's order; a pod on a node gone not
    ready is marked not Ready by the node lifecycle controller, and a preemption victim
    carries the scheduler's DisruptionTarget first."""
    wl, nd, state, started = pod.wl, pod.node, pod.state, pod.started
    terminal = state in ("Succeeded", "Failed")
    if terminal:
        end = pod.finished
        conditions = [
            _condition("PodReadyToStartContainers", "False", end + 1),
            _condition(
                "Initialized", "True", initialized_at, "PodCompleted" if not wl.inits else ""
            ),
            _condition("Ready", "False", end, "PodCompleted"),
            _condition("ContainersReady", "False", end, "PodCompleted"),
            _condition("PodScheduled", "True", pod.created),
        ]
    elif state == "Creating":
        msg = f"containers with unready status: [{' '.join(not_ready)}]"
        init_ok = not wl.inits
        conditions = [
            _condition("PodReadyToStartContainers", "False", started),
            _condition(
                "Initialized",
                "True" if init_ok else "False",
                started,
                "" if init_ok else "ContainersNotInitialized",
                ""
                if init_ok
                else f"containers with incomplete status: [{' '.join(c.name for c in wl.inits)}]",
            ),
            _condition("Ready", "False", started, "ContainersNotReady", msg),
            _condition("ContainersReady", "False", started, "ContainersNotReady", msg),
            _condition("PodScheduled", "True", pod.created),
        ]
    else:
        conditions = [
            _condition("PodReadyToStartContainers", "True", started + 2),
            _condition("Initialized", "True", initialized_at),
        ]
        if not_ready:
            msg = f"containers with unready status: [{' '.join(not_ready)}]"
            conditions.append(
                _condition("Ready", "False", pod.last_restart, "ContainersNotReady", msg)
            )
            conditions.append(
                _condition("ContainersReady", "False", pod.last_restart, "ContainersNotReady", msg)
            )
        elif nd.state != "Ready":
            # The node lifecycle controller marks the pods of a not-ready node not ready.
            conditions.append(_condition("Ready", "False", nd.transition + rng.randrange(1, 6)))
            conditions.append(_condition("ContainersReady", "True", ready_at))
        else:
            conditions.append(_condition("Ready", "True", ready_at))
            conditions.append(_condition("ContainersReady", "True", ready_at))
        if pod.preempted:
            conditions.insert(
                0,
                _condition(
                    "DisruptionTarget",
                    "True",
                    pod.deleting - wl.grace,
                    "PreemptionByScheduler",
                    "default-scheduler: preempting to accommodate a higher priority pod",
                ),
            )
        conditions.append(_condition("PodScheduled", "True", pod.created))
    return conditions


def _condition(ctype: str, status: str, when: int, reason: str = "", message: str = "") -> dict:
    """A PodCondition; reason and message only when set, as the API server omits them."""
    c = {
        "lastProbeTime": None,
        "lastTransitionTime": fmt_time(when),
        "status": status,
        "type": ctype,
    }
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    return c


def _pod_spec(pod: PodPlan) -> dict:
    """The pod's spec: its template's containers with the service-account token mounted, its
    claim (StatefulSet) and volumes, where it may run and, once bound, nodeName."""
    wl, nd = pod.wl, pod.node
    api_volume = pod.sa_volume
    sa_mount = None
    if api_volume:
        sa_mount = {"mountPath": SA_MOUNT_PATH, "name": api_volume, "readOnly": True}
    containers = _with_mounts(wl.containers, sa_mount)
    priority, policy = PRIORITY[wl.priority_class]
    spec: dict = {
        "containers": containers,
        "dnsPolicy": wl.dns_policy,
        "enableServiceLinks": True,
        "preemptionPolicy": policy,
        "priority": priority,
        "priorityClassName": wl.priority_class,
        "restartPolicy": wl.restart_policy,
        "schedulerName": "default-scheduler",
        "securityContext": wl.pod_security,
        "serviceAccount": wl.service_account,
        "serviceAccountName": wl.service_account,
        "terminationGracePeriodSeconds": wl.grace,
        "tolerations": wl.tolerations,
    }
    if wl.kind == "Node":
        # Static pods have no service account (admission skips mirror pods).
        del spec["serviceAccount"], spec["serviceAccountName"]
    if wl.inits:
        spec["initContainers"] = _with_mounts(wl.inits, sa_mount)
    volumes = wl.volumes
    if wl.kind == "StatefulSet":
        volumes = [
            {"name": "data", "persistentVolumeClaim": {"claimName": f"{wl.hash}-{pod.name}"}},
            *volumes,
        ]
        spec["hostname"] = pod.name
        spec["subdomain"] = wl.app
    if api_volume:
        volumes = [*volumes, {"name": api_volume, "projected": SA_PROJECTION}]
    if volumes:
        spec["volumes"] = volumes
    if nd is not None:
        spec["nodeName"] = nd.name
    if wl.node_selector:
        spec["nodeSelector"] = wl.node_selector
    if wl.kind == "DaemonSet":
        spec["affinity"] = {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [
                        {
                            "matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [nd.name]}
                            ]
                        }
                    ]
                }
            }
        }
    elif wl.affinity:
        spec["affinity"] = wl.affinity
    if wl.spread:
        spec["topologySpreadConstraints"] = wl.spread
    if wl.host_network:
        spec["hostNetwork"] = True
    if wl.runtime_class:
        spec["runtimeClassName"] = wl.runtime_class
        spec["overhead"] = {
            "cpu": cpu_quantity(wl.overhead[0]),
            "memory": mem_quantity(wl.overhead[1]),
        }
    return spec


def _pod_managed_fields(pod: PodPlan, created: str) -> list[dict]:
    """Who wrote what: the controller (or the kubelet, for a mirror pod) the spec, the
    scheduler or the kubelet the status, the scheduler a preemption victim's condition."""
    wl = pod.wl
    creator = "kubelet" if wl.kind == "Node" else "kube-controller-manager"
    managed = [managed_field(creator, created, wl.mf_spec)]
    if pod.state in ("Unschedulable",):
        managed.append(
            managed_field(
                "kube-scheduler",
                fmt_time(pod.created + 1),
                SCHEDULER_FIELDS,
                subresource="status",
            )
        )
    elif pod.state != "Pending":
        managed.append(
            managed_field(
                "kubelet",
                fmt_time(max(pod.started, pod.last_restart, pod.finished) + 8),
                STATUS_FIELDS,
                subresource="status",
            )
        )
    if pod.deleting and pod.preempted:
        managed.append(
            managed_field(
                "kube-scheduler",
                fmt_time(pod.deleting - wl.grace),
                {
                    "f:status": {
                        "f:conditions": {
                            'k:{"type":"DisruptionTarget"}': {
                                ".": {},
                                **field_set(
                                    "lastProbeTime",
                                    "lastTransitionTime",
                                    "message",
                                    "reason",
                                    "status",
                                    "type",
                                ),
                            }
                        }
                    }
                },
                subresource="status",
            )
        )
    return managed


def _with_mounts(containers: list, sa_mount: dict | None) -> list[dict]:
    """The containers' spec with their volumeMounts, the service-account token's last."""
    rendered = []
    for c in containers:
        spec_c = dict(c.spec)
        mounts = [*c.mounts, sa_mount] if sa_mount else c.mounts
        if mounts:
            spec_c["volumeMounts"] = mounts
        rendered.append(spec_c)
    return rendered
