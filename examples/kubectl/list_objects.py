#!/usr/bin/env python3
"""The fake kubectl's object listings (`kubectl get KINDS --all-namespaces -o json`), from the
recorded answers in the directory given (see the header of `kubectl` beside this file).

A listing of every kind of a file, when nothing is forbidden or missing, is that file as
recorded (a large cluster's List is streamed, never parsed); otherwise the file's objects of
the kinds asked are printed as kubectl prints them: the kinds RBAC forbids left out with one
"Error from server (Forbidden)" line each and exit status 1 (kubectl prints the others' List
anyway), a kind the server does not serve failing the call before anything is listed.
"""

import json
import os
import shutil
import sys

# resource (as kubectl takes it, optionally resource.group) -> (kind, API group)
RESOURCES = {
    "nodes": ("Node", ""),
    "pods": ("Pod", ""),
    "namespaces": ("Namespace", ""),
    "services": ("Service", ""),
    "replicationcontrollers": ("ReplicationController", ""),
    "persistentvolumes": ("PersistentVolume", ""),
    "persistentvolumeclaims": ("PersistentVolumeClaim", ""),
    "poddisruptionbudgets": ("PodDisruptionBudget", "policy"),
    "priorityclasses": ("PriorityClass", "scheduling.k8s.io"),
    "leases": ("Lease", "coordination.k8s.io"),
    "replicasets": ("ReplicaSet", "apps"),
    "statefulsets": ("StatefulSet", "apps"),
    "storageclasses": ("StorageClass", "storage.k8s.io"),
    "csinodes": ("CSINode", "storage.k8s.io"),
    "csidrivers": ("CSIDriver", "storage.k8s.io"),
    "csistoragecapacities": ("CSIStorageCapacity", "storage.k8s.io"),
    "volumeattachments": ("VolumeAttachment", "storage.k8s.io"),
    "resourceclaims": ("ResourceClaim", "resource.k8s.io"),
    "resourceclaimtemplates": ("ResourceClaimTemplate", "resource.k8s.io"),
    "deviceclasses": ("DeviceClass", "resource.k8s.io"),
    "resourceslices": ("ResourceSlice", "resource.k8s.io"),
}


def lines(path):
    try:
        with open(path) as handle:
            return {line.strip() for line in handle if line.strip()}
    except FileNotFoundError:
        return set()


def resolve(asked):
    """`resource` or `resource.group` -> the resource's plural, as discovery would."""
    plural, _, group = asked.partition(".")
    if plural in RESOURCES and (not group or group == RESOURCES[plural][1]):
        return plural
    return None


def get_objects(directory, kinds):
    missing = lines(os.path.join(directory, "missing"))
    plurals = []
    for asked in kinds.split(","):
        plural = resolve(asked)
        if plural is None or plural in missing:
            print(f'error: the server doesn\'t have a resource type "{asked}"', file=sys.stderr)
            return 1
        plurals.append(plural)
    storage = all(
        RESOURCES[p][1] in ("storage.k8s.io", "resource.k8s.io") or p.startswith("persistentvolume")
        for p in plurals
    )
    path = os.path.join(directory, "storage.json" if storage else "objects.json")
    forbidden = lines(os.path.join(directory, "forbidden")) & set(plurals)
    if not os.path.exists(path):
        recorded = {"apiVersion": "v1", "items": [], "kind": "List"}
    elif len(plurals) > 1 and not forbidden:
        with open(path, "rb") as handle:
            shutil.copyfileobj(handle, sys.stdout.buffer, 1 << 20)
        return 0
    else:
        with open(path, "rb") as handle:
            recorded = json.load(handle)
    items = []
    for plural in plurals:
        if plural not in forbidden:
            wanted = RESOURCES[plural][0]
            items += [i for i in recorded.get("items", []) if i.get("kind") == wanted]
    if items or not forbidden:
        out = {"apiVersion": "v1", "items": items, "kind": "List"}
        out["metadata"] = {"resourceVersion": ""}
        sys.stdout.write(json.dumps(out, indent=4) + "\n")
    for plural in plurals:
        if plural in forbidden:
            group = RESOURCES[plural][1]
            print(
                f"Error from server (Forbidden): {plural}{'.' + group if group else ''} is "
                f'forbidden: User "alice" cannot list resource "{plural}" in API group '
                f'"{group}" at the cluster scope',  # --all-namespaces lists at cluster scope
                file=sys.stderr,
            )
    return 1 if forbidden else 0


def main(argv):
    directory, kinds = argv
    return get_objects(directory, kinds)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
