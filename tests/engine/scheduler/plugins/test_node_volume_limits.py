"""NodeVolumeLimits, transcribed from kube-scheduler's nodevolumelimits/csi_test.go
(TestCSILimits, v1.35: one row per upstream case, named as upstream names it).

The fixtures are upstream's: per driver four claims "csi-<driver>-<i>" bound to volumes of
that name (CSI, or in-tree EBS for kubernetes.io/aws-ebs, hostPath for
kubernetes.io/hostpath), "csi-4" unbound of class csi-sc (provisioned by the first driver),
"csi-5" without a class, "csi-6" of class csi-sc bound to a missing volume; ``va`` volume
attachments per driver for the volumes "csi-<driver>-<i>"; the node's CSINode lists the
drivers with the limit (csinode) or without one (csinode-with-no-limit), or is missing.
Claims not found are reported with the informer lister's message ("persistentvolumeclaim",
where upstream's fake lister says "persistentvolumeclaims")."""

from __future__ import annotations

import pytest

from service.engine.scheduler.framework import (
    ERROR,
    OK,
    SKIP,
    UNRESOLVABLE,
    UNSCHEDULABLE,
    Status,
)
from service.engine.scheduler.plugins.node_volume_limits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    attach_limit_key,
)
from tests.engine.scheduler.plugins.volumes import (
    claim_volume,
    ephemeral_volume,
    k8s_csi_node,
    k8s_node,
    k8s_pod,
    k8s_pv,
    k8s_pvc,
    k8s_storage_class,
    run_plugin,
)

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
HOSTPATH = "kubernetes.io/hostpath"
# Upstream names volumes after their driver; a "/" is not allowed in an object name.
EBS_IN_TREE_NAME = EBS_IN_TREE.replace("/", "-")
HOSTPATH_NAME = HOSTPATH.replace("/", "-")
NODE = "node-for-max-pd-test-1"
EXCEEDED = Status(UNSCHEDULABLE, (ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,))


def _claims(*names: str) -> list:
    return [claim_volume(n, name=f"v{i}") for i, n in enumerate(names)]


CONFIG_AND_SECRET = [{"name": "cm", "configMap": {}}, {"name": "s", "secret": {}}]

PODS = {
    "running-pod": _claims(f"csi-{EBS}-3"),
    "pending-volume-pod": _claims("csi-4"),
    "unboundPVCPod2": _claims("csi-4"),
    "missingPVPod": _claims("csi-6"),
    "noSCPVCPod": _claims("csi-5"),
    "gce-two-vol-pod": _claims(f"csi-{GCE}-1", f"csi-{GCE}-2"),
    "in-tree-one-vol-pod": _claims(f"csi-{EBS_IN_TREE_NAME}-0"),
    "in-tree-two-vol-pod": _claims(f"csi-{EBS_IN_TREE_NAME}-1", f"csi-{EBS_IN_TREE_NAME}-2"),
    "csi-ebs-one-vol-pod": _claims(f"csi-{EBS}-0"),
    "csi-ebs-two-vol-pod": _claims(f"csi-{EBS}-1", f"csi-{EBS}-2"),
    "inTreeNonMigratableOneVolPod": _claims(f"csi-{HOSTPATH_NAME}-0"),
    "in-tree-inline-vol-pod": [{"name": "v", "awsElasticBlockStore": {"volumeID": "aws-inline1"}}],
    "inTreeInlineVolPodWithSameCSIVolumeID": [
        {"name": "v", "awsElasticBlockStore": {"volumeID": f"csi-{EBS}-1"}}
    ],
    "onlyConfigmapAndSecretVolPod": CONFIG_AND_SECRET,
    "pvcPodWithConfigmapAndSecret": [*CONFIG_AND_SECRET, *_claims(f"csi-{EBS}-0")],
    "inlineMigratablePodWithConfigmapAndSecret": [
        *CONFIG_AND_SECRET,
        {"name": "v", "awsElasticBlockStore": {"volumeID": "aws-inline1"}},
    ],
}
# pods named like upstream's: the ephemeral ones carry a name, namespace and UID
EPHEMERAL = {
    "ephemeral-volume-pod": ("abc", "12345", [ephemeral_volume("xyz")]),
    "ephemeralTwoVolumePod": ("abc", "12345II", [ephemeral_volume("x"), ephemeral_volume("y")]),
    "ephemeralPodWithConfigmapAndSecret": (
        "abc",
        "",
        [*CONFIG_AND_SECRET, ephemeral_volume("xyz")],
    ),
}


def _pod(kind: str, name: str, node: str = "") -> dict:
    if kind in EPHEMERAL:
        pod_name, uid, volumes = EPHEMERAL[kind]
        return k8s_pod(pod_name, volumes, namespace="test", uid=uid, node=node)
    return k8s_pod(name, PODS[kind], node=node)


def _ephemeral_claim(name: str, owner_uid: str) -> dict:
    return k8s_pvc(name, namespace="test", storage_class="csi-sc", owner_uid=owner_uid)


EXTRA_CLAIMS = {
    "ephemeral-claim": _ephemeral_claim("abc-xyz", "12345"),
    "conflictingClaim": _ephemeral_claim("abc-xyz", ""),
    "ephemeralClaimX": _ephemeral_claim("abc-x", "12345II"),
    "ephemeralClaimY": _ephemeral_claim("abc-y", "12345II"),
}


def _volume(driver: str, name: str) -> dict:
    if driver == EBS_IN_TREE:
        return k8s_pv(name, source={"awsElasticBlockStore": {"volumeID": name}})
    if driver == HOSTPATH:
        return k8s_pv(name, source={"hostPath": {"path": "/tmp"}})
    return k8s_pv(name, csi=(driver, name))


def _objects(drivers, limit_source, max_vols, va_count, existing, extra_claims) -> list:
    objects: list = [k8s_node(NODE)]
    for driver in drivers:
        for i in range(4):
            name = f"csi-{driver.replace('/', '-')}-{i}"
            objects += [_volume(driver, name), k8s_pvc(name, volume_name=name)]
        for i in range(va_count):
            objects.append(
                {
                    "kind": "VolumeAttachment",
                    "metadata": {"name": f"va-{driver}-{i}"},
                    "spec": {
                        "nodeName": NODE,
                        "attacher": driver,
                        "source": {"persistentVolumeName": f"csi-{driver}-{i}"},
                    },
                }
            )
    objects += [
        k8s_pvc("csi-4", storage_class="csi-sc"),
        k8s_pvc("csi-5"),
        k8s_pvc("csi-6", storage_class="csi-sc", volume_name="missing-in-action"),
        k8s_storage_class("csi-sc", provisioner=drivers[0]),
    ]
    if limit_source in ("csinode", "csinode-with-no-limit"):
        limit = max_vols if limit_source == "csinode" else None
        objects.append(k8s_csi_node(NODE, dict.fromkeys(drivers, limit), migrated=EBS_IN_TREE))
    objects += [_pod(kind, f"existing-{i}", node=NODE) for i, kind in enumerate(existing)]
    objects += [EXTRA_CLAIMS[name] for name in extra_claims]
    return objects


def row(
    test,
    new_pod,
    existing=(),
    *,
    drivers,
    max_vols=0,
    va=0,
    limit_source="",
    extra_claims=(),
    want=OK,
    want_pre=OK,
):
    return pytest.param(
        new_pod,
        list(existing),
        drivers,
        max_vols,
        va,
        limit_source,
        list(extra_claims),
        want,
        want_pre,
        id=test,
    )


ROWS = [
    row(
        "should count VolumeAttachments towards volume limit when no pods exist",
        "csi-ebs-one-vol-pod",
        drivers=[EBS],
        max_vols=2,
        va=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "should schedule pod when VolumeAttachments count does not exceed limit",
        "csi-ebs-one-vol-pod",
        drivers=[EBS],
        max_vols=2,
        va=1,
        limit_source="csinode",
    ),
    row(
        "fits when node volume limit >= new pods CSI volume",
        "csi-ebs-one-vol-pod",
        ["running-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=4,
        limit_source="csinode",
    ),
    row(
        "doesn't when node volume limit <= pods CSI volume",
        "csi-ebs-one-vol-pod",
        ["running-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "should when driver does not support volume limits",
        "csi-ebs-one-vol-pod",
        ["running-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode-with-no-limit",
    ),
    row(
        "count pending PVCs towards volume limit <= pods CSI volume",
        "csi-ebs-one-vol-pod",
        ["pending-volume-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "count multiple pending pvcs towards volume limit >= pods CSI volume",
        "csi-ebs-one-vol-pod",
        ["pending-volume-pod", "unboundPVCPod2", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=4,
        limit_source="csinode",
    ),
    row(
        "should count PVCs with invalid PV name but valid SC",
        "csi-ebs-one-vol-pod",
        ["missingPVPod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "don't count pvcs with missing SC towards volume limit",
        "csi-ebs-one-vol-pod",
        ["running-pod", "noSCPVCPod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
    ),
    row(
        "count pvcs with the same type towards volume limit",
        "csi-ebs-one-vol-pod",
        ["gce-two-vol-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS, GCE],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "don't count pvcs with different type towards volume limit",
        "gce-two-vol-pod",
        ["csi-ebs-two-vol-pod", "running-pod"],
        drivers=[EBS, GCE],
        max_vols=2,
        limit_source="csinode",
    ),
    row(
        "should count in-tree volumes if migration is enabled",
        "in-tree-one-vol-pod",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "nil csi node",
        "in-tree-inline-vol-pod",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
    ),
    row(
        "should count unbound in-tree volumes if migration is enabled",
        "pending-volume-pod",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "should not limit pod if volume used does not report limits",
        "in-tree-one-vol-pod",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode-with-no-limit",
    ),
    row(
        "should not count non-migratable in-tree volumes",
        "inTreeNonMigratableOneVolPod",
        ["csi-ebs-two-vol-pod"],
        drivers=[HOSTPATH, EBS],
        max_vols=2,
        limit_source="csinode",
    ),
    row(
        "should count in-tree inline volumes if migration is enabled",
        "in-tree-inline-vol-pod",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "should count in-tree and csi volumes if migration is enabled (when scheduling "
        "in-tree volumes)",
        "in-tree-one-vol-pod",
        ["csi-ebs-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "should count in-tree, inline and csi volumes if migration is enabled (when "
        "scheduling in-tree volumes)",
        "in-tree-inline-vol-pod",
        ["csi-ebs-two-vol-pod", "in-tree-one-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=3,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "should not count in-tree, inline and csi volumes if migration is enabled (when "
        "scheduling in-tree volumes)",
        "inTreeInlineVolPodWithSameCSIVolumeID",
        ["csi-ebs-two-vol-pod", "in-tree-one-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=3,
        limit_source="csinode",
    ),
    row(
        "should count in-tree and csi volumes if migration is enabled (when scheduling csi "
        "volumes)",
        "csi-ebs-one-vol-pod",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
    row(
        "ephemeral volume missing",
        "ephemeral-volume-pod",
        drivers=[EBS],
        limit_source="csinode-with-no-limit",
        want=Status(
            UNRESOLVABLE,
            ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',),
        ),
    ),
    row(
        "ephemeral volume not owned",
        "ephemeral-volume-pod",
        drivers=[EBS],
        limit_source="csinode-with-no-limit",
        extra_claims=["conflictingClaim"],
        want=Status(
            ERROR, ("PVC test/abc-xyz was not created for pod test/abc (pod is not owner)",)
        ),
    ),
    row(
        "ephemeral volume unbound",
        "ephemeral-volume-pod",
        drivers=[EBS],
        limit_source="csinode-with-no-limit",
        extra_claims=["ephemeral-claim"],
    ),
    row(
        "ephemeral doesn't when node volume limit <= pods CSI volume",
        "ephemeral-volume-pod",
        ["running-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
        extra_claims=["ephemeral-claim"],
        want=EXCEEDED,
    ),
    row(
        "ephemeral doesn't when node volume limit <= pods ephemeral CSI volume",
        "csi-ebs-one-vol-pod",
        ["running-pod", "ephemeralTwoVolumePod"],
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
        extra_claims=["ephemeralClaimX", "ephemeralClaimY"],
        want=EXCEEDED,
    ),
    # generic ephemeral volumes are GA: upstream's "ephemeral disabled" flag changes nothing
    row(
        "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
        "volume, ephemeral disabled",
        "csi-ebs-one-vol-pod",
        ["running-pod", "ephemeral-volume-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=3,
        limit_source="csinode",
        extra_claims=["ephemeral-claim"],
        want=EXCEEDED,
    ),
    row(
        "persistent doesn't when node volume limit <= pods ephemeral CSI volume + persistent "
        "volume",
        "csi-ebs-one-vol-pod",
        ["running-pod", "ephemeral-volume-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=3,
        limit_source="csinode",
        extra_claims=["ephemeral-claim"],
        want=EXCEEDED,
    ),
    row(
        "persistent okay when node volume limit > pods ephemeral CSI volume + persistent volume",
        "csi-ebs-one-vol-pod",
        ["running-pod", "ephemeral-volume-pod", "csi-ebs-two-vol-pod"],
        drivers=[EBS],
        max_vols=5,
        limit_source="csinode",
        extra_claims=["ephemeral-claim"],
    ),
    row(
        "skip Filter when the pod only uses secrets and configmaps",
        "onlyConfigmapAndSecretVolPod",
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
        want_pre=Status(SKIP),
    ),
    row(
        "don't skip Filter when the pod has pvcs",
        "pvcPodWithConfigmapAndSecret",
        drivers=[EBS],
        max_vols=2,
        limit_source="csinode",
    ),
    row(
        "don't skip Filter when the pod has ephemeral volumes",
        "ephemeralPodWithConfigmapAndSecret",
        drivers=[EBS],
        limit_source="csinode-with-no-limit",
        want=Status(
            UNRESOLVABLE,
            ('looking up PVC test/abc-xyz: persistentvolumeclaim "abc-xyz" not found',),
        ),
    ),
    row(
        "don't skip Filter when the pod has inline migratable volumes",
        "inlineMigratablePodWithConfigmapAndSecret",
        ["in-tree-two-vol-pod"],
        drivers=[EBS_IN_TREE, EBS],
        max_vols=2,
        limit_source="csinode",
        want=EXCEEDED,
    ),
]


@pytest.mark.parametrize(
    (
        "new_pod",
        "existing",
        "drivers",
        "max_vols",
        "va",
        "limit_source",
        "extra_claims",
        "want",
        "want_pre",
    ),
    ROWS,
)
def test_csi_limits(
    new_pod, existing, drivers, max_vols, va, limit_source, extra_claims, want, want_pre
) -> None:
    objects = _objects(drivers, limit_source, max_vols, va, existing, extra_claims)
    _, pre, got = run_plugin("NodeVolumeLimits", _pod(new_pod, "new"), objects, NODE)
    assert pre == want_pre
    if not pre.is_skip:
        assert got == want


@pytest.mark.parametrize(
    ("driver", "key"),
    [
        (EBS, "attachable-volumes-csi-ebs.csi.aws.com"),
        # 23 characters of the name, then the first 16 hex digits of its SHA-1
        (
            "a-very-long-csi-driver-name.storage.example.com",
            "attachable-volumes-csi-a-very-long-csi-driver-86bf5f46bc6f1680",
        ),
    ],
)
def test_attach_limit_key(driver, key) -> None:
    """GetCSIAttachLimitKey: a key that would reach 63 characters is shortened."""
    assert attach_limit_key(driver) == key
