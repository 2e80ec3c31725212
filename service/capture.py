"""`verdict capture`: a cluster, through kubectl and the user's kubeconfig, into a snapshot
envelope (the body POST /v1/snapshots takes).

What is read: ``kubectl get`` of every kind Verdict uses (the storage kinds the scheduler's
volume plugins read and the resource.k8s.io kinds DynamicResources reads in a call of their own, see ``fetch_objects``), then, per node, the kubelet's
Summary stats (``/api/v1/nodes/NAME/proxy/stats/summary``, what the eviction manager
observes) and its running configuration (``.../proxy/configz``, what an eviction decision
uses when the request carries no ``config``). Nodes are fetched a few at a time; a node that
fails, times out or answers something that is not JSON is listed in ``errors`` and left out,
never fatal.

Memory: kubectl's List is spooled to a temporary file and copied into the output; each
node's answers are checked (decoded) and kept as the bytes kubectl printed, spliced into the
envelope unchanged (``orjson.Fragment``). A 5,000-node capture never holds a Python tree of
the cluster (bench/bench_capture.py).
"""

from __future__ import annotations

import gzip
import io
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

import msgspec
import orjson

# The kinds the snapshot reader uses (service/ingest/kube.py), as kubectl names them. A failure
# to list one of these stops the capture.
REQUIRED_KINDS = (
    "nodes",
    "pods",
    "poddisruptionbudgets",
    "priorityclasses",
    "leases",
    "namespaces",
    "services",
    "replicasets",
    "statefulsets",
    "replicationcontrollers",
)
# What the scheduler's volume plugins read. The storage.k8s.io ones are named with their group
# (kubectl's resource.group), so a custom resource of the same plural in another group cannot
# be listed instead. A kind that cannot be listed (RBAC forbids it, the server does not serve
# it) is left out and named in the capture's errors; the rest of the capture goes on.
STORAGE_KINDS = (
    "persistentvolumes",
    "persistentvolumeclaims",
    "storageclasses.storage.k8s.io",
    "csinodes.storage.k8s.io",
    "csidrivers.storage.k8s.io",
    "csistoragecapacities.storage.k8s.io",
    "volumeattachments.storage.k8s.io",
)
# What DynamicResources reads (resource.k8s.io; kubectl lists the version the server
# prefers, v1 from 1.34, and the reader converts v1beta1/v1beta2). Optional like the storage
# kinds: a server without the API has them left out and named.
RESOURCE_KINDS = (
    "resourceclaims.resource.k8s.io",
    "resourceclaimtemplates.resource.k8s.io",
    "deviceclasses.resource.k8s.io",
    "resourceslices.resource.k8s.io",
)
OPTIONAL_KINDS = STORAGE_KINDS + RESOURCE_KINDS
KINDS = REQUIRED_KINDS + OPTIONAL_KINDS


class CaptureError(Exception):
    """The capture cannot go on (kubectl missing, the object listing failed)."""


class KubectlFailed(Exception):
    """A kubectl call failed or answered something unusable; for a node's call, the capture
    goes on without that answer."""


@dataclass
class Kubectl:
    """Runs kubectl with the user's kubeconfig (or the one given) and a per-call timeout."""

    binary: str = "kubectl"
    kubeconfig: str | None = None
    context: str | None = None
    timeout: float = 30.0

    def command(self, *args: str) -> list[str]:
        cmd = [self.binary]
        if self.kubeconfig:
            cmd += ["--kubeconfig", self.kubeconfig]
        if self.context:
            cmd += ["--context", self.context]
        return [*cmd, *args]

    def run(self, *args: str, stdout: BinaryIO | None = None) -> bytes:
        """kubectl's stdout (or b"" when written to ``stdout``, a file); a failure raises
        KubectlFailed with kubectl's own message. On a timeout its whole process group is killed
        (a plugin or wrapper script included)."""
        try:
            process = subprocess.Popen(
                self.command(*args),
                stdout=stdout or subprocess.PIPE,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        except FileNotFoundError:
            raise CaptureError(f"{self.binary}: not found on PATH") from None
        try:
            out, err = process.communicate(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise KubectlFailed(f"kubectl timed out after {self.timeout:g}s") from None
        if process.returncode != 0:
            message = err.decode(errors="replace").strip().splitlines()
            raise KubectlFailed(
                f"kubectl exited {process.returncode}: {message[-1] if message else 'no message'}"
            )
        return out or b""


class _Named(msgspec.Struct):
    name: str = ""


class _Item(msgspec.Struct):
    kind: str = ""
    metadata: _Named = msgspec.field(default_factory=_Named)


class _Listing(msgspec.Struct):
    items: list[_Item] = []


class _RawListing(msgspec.Struct):
    items: list[msgspec.Raw] = []


@dataclass
class Objects:
    path: Path  # one List of every kind, as kubectl printed each object, spooled to a file
    count: int
    node_names: list[str]
    errors: list[dict] = field(default_factory=list)  # {"kind", "message"}: kinds left out


def _list(kube: Kubectl, kinds: tuple[str, ...], spool: Path) -> tuple[bytes, list[msgspec.Raw]]:
    """One ``kubectl get`` of ``kinds`` in all namespaces through ``spool``: the bytes kubectl
    printed and its List's items, each a view of those bytes. kubectl exits non-zero when
    any kind fails (it prints the others' List anyway): that is a failure of the whole call."""
    with spool.open("wb") as handle:
        kube.run("get", ",".join(kinds), "--all-namespaces", "--output", "json", stdout=handle)
    data = spool.read_bytes()
    try:
        return data, msgspec.json.decode(data, type=_RawListing).items
    except msgspec.DecodeError as exc:
        raise KubectlFailed(f"kubectl printed no List: {exc}") from None


def fetch_objects(kube: Kubectl, spool: Path) -> Objects:
    """Every object of the kinds Verdict reads, in all namespaces, as one List written to
    ``spool`` (a cluster's List can be most of a gigabyte: it is never held as a tree, only
    as kubectl's bytes and a view of each item).

    The required kinds come in one call, whose failure stops the capture. The storage and
    resource.k8s.io kinds come in a second; when it fails, each is listed alone, and those that still
    fail are left out and listed in ``errors`` with kubectl's message."""
    core = spool.with_name(spool.name + ".required")
    try:
        data, items = _list(kube, REQUIRED_KINDS, core)
    except KubectlFailed as exc:
        raise CaptureError(f"listing the cluster's objects: {exc}") from None
    listing = msgspec.json.decode(data, type=_Listing)
    names = [i.metadata.name for i in listing.items if i.kind == "Node" and i.metadata.name]
    del listing, data
    errors: list[dict] = []
    storage = spool.with_name(spool.name + ".storage")
    try:
        items += _list(kube, OPTIONAL_KINDS, storage)[1]
    except KubectlFailed:
        for kind in OPTIONAL_KINDS:
            try:
                items += _list(kube, (kind,), storage)[1]
            except KubectlFailed as exc:
                errors.append({"kind": kind.split(".")[0], "message": str(exc)})
    with spool.open("wb") as out:
        out.write(b'{"apiVersion":"v1","kind":"List","metadata":{"resourceVersion":""},"items":[')
        for i, item in enumerate(items):
            if i:
                out.write(b",")
            out.write(item)
        out.write(b"]}")
    count = len(items)
    del items
    core.unlink()
    storage.unlink(missing_ok=True)
    return Objects(path=spool, count=count, node_names=names, errors=errors)


@dataclass
class NodeAnswers:
    stats: dict[str, bytes] = field(default_factory=dict)  # node -> Summary JSON
    configz: dict[str, bytes] = field(default_factory=dict)  # node -> KubeletConfiguration
    errors: list[dict] = field(default_factory=list)  # {"node", "message"}


class _Configz(msgspec.Struct):
    kubeletconfig: msgspec.Raw = msgspec.Raw()


def _summary(kube: Kubectl, node: str) -> bytes:
    raw = kube.run("get", "--raw", f"/api/v1/nodes/{node}/proxy/stats/summary")
    try:  # a JSON object, checked without building its values
        msgspec.json.decode(raw, type=dict[str, msgspec.Raw])
    except msgspec.DecodeError as exc:
        raise KubectlFailed(f"not JSON: {exc}") from None
    return raw


def _configz(kube: Kubectl, node: str) -> bytes:
    """The node's KubeletConfiguration (configz wraps it in {"kubeletconfig": ...})."""
    raw = kube.run("get", "--raw", f"/api/v1/nodes/{node}/proxy/configz")
    try:
        answer = msgspec.json.decode(raw, type=_Configz)
    except msgspec.DecodeError as exc:
        raise KubectlFailed(f"not JSON: {exc}") from None
    if not answer.kubeletconfig:
        raise KubectlFailed("no kubeletconfig in the answer")
    return bytes(answer.kubeletconfig)


def fetch_nodes(
    kube: Kubectl,
    names: list[str],
    *,
    parallel: int = 8,
    progress: Callable[[int], object] = lambda n: None,
) -> NodeAnswers:
    """Each node's Summary stats and configz, ``parallel`` nodes at a time. A node keeps
    whichever of the two it answered; each failure is listed with the node's name."""
    answers = NodeAnswers()

    def one(node: str) -> tuple[str, list[tuple[str, bytes | str]]]:
        got: list[tuple[str, bytes | str]] = []
        for part, fetch in (("stats", _summary), ("configz", _configz)):
            try:
                got.append((part, fetch(kube, node)))
            except KubectlFailed as exc:
                got.append(("error", f"{part}: {exc}"))
        return node, got

    with ThreadPoolExecutor(max_workers=parallel) as pool:
        for node, got in pool.map(one, names):
            for part, value in got:
                if part == "error":
                    answers.errors.append({"node": node, "message": value})
                else:
                    getattr(answers, part)[node] = value
            progress(1)
    return answers


def write_envelope(
    out: BinaryIO,
    objects: Objects,
    nodes: NodeAnswers,
    *,
    name: str = "",
    cluster: str = "",
    now: datetime | None = None,
) -> None:
    """The snapshot envelope as JSON, written piece by piece with kubectl's answers spliced
    in unchanged: ``capturedAt`` (when the capture started), ``objects``, ``stats`` and
    ``kubeletConfigs`` (configz) per node."""
    head = {"capturedAt": (now or datetime.now(UTC)).isoformat().replace("+00:00", "Z")}
    if name:
        head["name"] = name
    if cluster:
        head["cluster"] = cluster
    out.write(orjson.dumps(head)[:-1] + b',"objects":')
    with objects.path.open("rb") as listing:
        shutil.copyfileobj(listing, out, 1 << 20)
    for key, answers in (("stats", nodes.stats), ("kubeletConfigs", nodes.configz)):
        out.write(b',"' + key.encode() + b'":')
        out.write(orjson.dumps({n: orjson.Fragment(raw) for n, raw in answers.items()}))
    out.write(b"}")


def write(path: str, **envelope) -> None:
    """The envelope gzipped to ``path`` (``-``: stdout); level 1, several times faster than
    the default on a gigabyte of JSON for a slightly larger file."""
    target = sys.stdout.buffer if path == "-" else open(path, "wb")  # noqa: SIM115
    try:
        with gzip.GzipFile(fileobj=target, mode="wb", compresslevel=1) as out:
            write_envelope(out, **envelope)
    finally:
        if target is not sys.stdout.buffer:
            target.close()


def post(server: str, key: str, *, timeout: float = 60.0, **envelope) -> dict:
    """POST the envelope (gzipped) to a Verdict server's /v1/snapshots; its summary back."""
    body = io.BytesIO()
    with gzip.GzipFile(fileobj=body, mode="wb", compresslevel=1) as out:
        write_envelope(out, **envelope)
    request = urllib.request.Request(
        server.rstrip("/") + "/v1/snapshots",
        data=body.getvalue(),
        method="POST",
        headers={
            "Authorization": f"Bearer {key}",
            "Content-Type": "application/json",
            "Content-Encoding": "gzip",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return orjson.loads(response.read())
    except urllib.error.HTTPError as exc:
        detail = exc.read().decode(errors="replace")[:2000]
        raise CaptureError(f"{server} answered {exc.code}: {detail}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise CaptureError(f"{server}: {getattr(exc, 'reason', exc)}") from None
