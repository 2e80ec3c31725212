"""The console through Flask's test client on the real database: sessions, CSRF, every page.
(tests/console/test_browser.py drives the same pages in a real Chromium.)"""

from __future__ import annotations

import re
from datetime import timedelta
from urllib.parse import quote

import orjson
import pytest
from sqlalchemy import update

from service.app import create_app
from service.extensions import extensions
from service.store import checkpoints, keys, records
from service.store.models import AuditState, DecisionRow
from tests.conftest import kube_list, node, pod
from tests.console.helpers import seed
from tests.store.helpers import HOURS, OFFSET_TIMES, at_hours

TOKEN = re.compile(r'name="csrf_token" value="([^"]+)"')


@pytest.fixture
def console_app(app, database_url, tmp_path):
    application = create_app(
        {
            "DATABASE_URL": database_url,
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path),
            "LOG_LEVEL": "WARNING",
            "CHECKPOINT_KEY": checkpoints.generate_pem(),
        }
    )
    yield application
    extensions(application).db.dispose()


@pytest.fixture
def secrets(console_app) -> dict[str, str]:
    out = {}
    with extensions(console_app).db.session(write=True) as session:
        for role in ("read", "decide"):
            out[role] = keys.create(session, role, f"console-{role}")[1]
    return out


@pytest.fixture
def seeded(console_app, secrets):
    client = console_app.test_client()

    def post(path, body):
        response = client.post(
            path,
            data=orjson.dumps(body),
            content_type="application/json",
            headers={"Authorization": f"Bearer {secrets['decide']}"},
        )
        return response.status_code, response.json

    return seed(post)


def _token(client, path="/console/sign-in") -> str:
    return TOKEN.search(client.get(path).get_data(as_text=True)).group(1)


def _signed_in(console_app, secret):
    client = console_app.test_client()
    response = client.post(
        "/console/sign-in", data={"api_key": secret, "csrf_token": _token(client)}
    )
    assert response.status_code == 302, response.get_data(as_text=True)
    return client, response


def _text(response) -> str:
    body = re.sub(r"<svg.*?</svg>", " [chart] ", response.get_data(as_text=True), flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body)).replace("&#39;", "'")


def test_pages_need_a_session_and_the_cookie_is_strict(console_app, secrets):
    client = console_app.test_client()
    response = client.get("/console/decisions")
    assert response.status_code == 302 and "/console/sign-in" in response.headers["Location"]
    bad = client.post("/console/sign-in", data={"api_key": "vk_nope", "csrf_token": _token(client)})
    assert bad.status_code == 401 and "not valid" in _text(bad)
    _, response = _signed_in(console_app, secrets["read"])
    cookie = response.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/console" in cookie


def test_sign_in_without_csrf_token_is_refused(console_app, secrets):
    client = console_app.test_client()
    response = client.post("/console/sign-in", data={"api_key": secrets["read"]})
    assert response.status_code == 400 and "did not come from this console" in _text(response)
    assert client.get("/console/decisions").status_code == 302  # still signed out


def test_forged_cookie_and_revoked_key_sign_out(console_app, secrets):
    client, _ = _signed_in(console_app, secrets["read"])
    assert client.get("/console/decisions").status_code == 200
    forged = console_app.test_client()
    forged.set_cookie("verdict_console", "eyJrZXlfaWQiOiJ4In0.AAAAAA.forged", path="/console")
    assert forged.get("/console/decisions").status_code == 302
    with extensions(console_app).db.session(write=True) as session:
        key = keys.find(session, secrets["read"])
        keys.revoke(session, key.id)
    assert client.get("/console/decisions").status_code == 302


def test_expired_session_asks_to_sign_in_again(console_app, secrets):
    client, _ = _signed_in(console_app, secrets["read"])
    assert client.get("/console/decisions").status_code == 200
    console_app.config["PERMANENT_SESSION_LIFETIME"] = timedelta(seconds=-1)
    response = client.get("/console/decisions")
    assert response.status_code == 302 and "/console/sign-in" in response.headers["Location"]


def test_sign_out_needs_its_token(console_app, secrets):
    client, _ = _signed_in(console_app, secrets["read"])
    assert client.post("/console/sign-out").status_code == 400
    assert client.get("/console/decisions").status_code == 200
    token = _token(client, "/console/decisions")
    assert client.post("/console/sign-out", data={"csrf_token": token}).status_code == 302
    assert client.get("/console/decisions").status_code == 302


def test_each_kind_is_explained(console_app, secrets, seeded):
    snapshot_id, ids = seeded
    client, _ = _signed_in(console_app, secrets["read"])
    listing = _text(client.get("/console/decisions"))
    assert "placed on n2" in listing and "evicts default/busy" in listing
    admission = _text(client.get(f"/console/decisions/{ids['admission']}"))
    assert "Rejected" in admission and "InsufficientResource cpu 1000 1500 2000" in admission
    preemption = _text(client.get(f"/console/decisions/{ids['preemption']}"))
    assert "Nominated node: n1" in preemption and "default/busy" in preemption
    assert "n2 Unschedulable Insufficient cpu Candidate" in preemption
    assert "Preempted by pod default/pending on node n1" in preemption
    assert "uid" not in preemption.split("Victims on the nominated node")[1].split("Candidates")[0]
    assert "default-scheduler: preempting to accommodate a higher priority pod" in preemption
    placement = client.get(f"/console/decisions/{ids['placement']}")
    html = placement.get_data(as_text=True)
    assert "<svg" in html and "<script" not in html and "NodeResourcesFit" in html
    assert "Selected node: n2" in _text(placement)
    eviction = _text(client.get(f"/console/decisions/{ids['eviction']}"))
    assert "memory.available 50Mi" in eviction and "100Mi (0s) met" in eviction
    rate = client.get(f"/console/decisions/{ids['node-eviction-rate']}")
    assert "<svg" in rate.get_data(as_text=True)
    assert "default/stranded 2026-11-20T10:00:30Z" in _text(rate)
    assert "region eu-1, zone z1" in _text(rate) and "eu-1::z1" not in _text(rate)
    assert snapshot_id in admission and "0.1.0" in admission  # snapshot and engine version


def test_filters_and_keyset_paging(console_app, secrets, seeded, monkeypatch):
    _, ids = seeded
    client, _ = _signed_in(console_app, secrets["read"])
    only = _text(client.get("/console/decisions?kind=eviction"))
    assert "evicts default/busy" in only and "placed on" not in only
    by_pod = client.get("/console/decisions?pod=default/new").get_data(as_text=True)
    assert ids["admission"] in by_pod and ids["placement"] not in by_pod
    from service.console import views

    monkeypatch.setattr(views, "PAGE_SIZE", 2)
    first = client.get("/console/decisions").get_data(as_text=True)
    older = re.search(r'href="([^"]+)" rel="next"', first).group(1).replace("&amp;", "&")
    second = client.get(older).get_data(as_text=True)
    assert ids["node-eviction-rate"] in first and ids["eviction"] in first
    assert ids["placement"] in second and ids["eviction"] not in second
    bad = client.get("/console/decisions?since=yesterday")
    assert bad.status_code == 400 and "since: not a time" in _text(bad)
    assert client.get("/console/decisions?kind=nope").status_code == 400


@pytest.mark.parametrize(
    ("query", "named"),
    [
        ("before=%C2%B2", "before"),  # '²' is a digit to str.isdigit, not to int()
        ("before=12345678901234567890123", "before"),  # past the databases' BIGINT
        ("before=9223372036854775808", "before"),
        ("before=%2B5", "before"),
        ("since=9999-12-31T23:59:59-14:00", "since"),  # past the year 9999 in UTC
        ("until=0001-01-01T00:00:00%2B14:00", "until"),  # before the year 1
    ],
)
def test_paging_and_times_out_of_range_are_a_400_naming_them(console_app, secrets, query, named):
    """These were 500s on both databases (issue 24)."""
    client, _ = _signed_in(console_app, secrets["read"])
    response = client.get(f"/console/decisions?{query}")
    assert response.status_code == 400 and f"{named}:" in _text(response)


def test_replay_is_allowed_to_the_read_role(console_app, secrets, seeded):
    _, ids = seeded
    client, _ = _signed_in(console_app, secrets["read"])
    path = f"/console/decisions/{ids['admission']}"
    token = _token(client, path)
    response = client.post(f"{path}/replay", data={"csrf_token": token})
    assert response.status_code == 200
    assert "The running engine decides the same" in _text(response)
    assert client.post(f"{path}/replay").status_code == 400  # no token


def test_snapshot_pages(console_app, secrets, seeded):
    snapshot_id, _ = seeded
    client, _ = _signed_in(console_app, secrets["read"])
    assert "console test" in _text(client.get("/console/snapshots"))
    summary = _text(client.get(f"/console/snapshots/{snapshot_id}"))
    assert "test-cluster" in summary and "n1" in summary
    pods = _text(client.get(f"/console/snapshots/{snapshot_id}/nodes/n1"))
    assert "default/busy Running" in pods
    assert client.get(f"/console/snapshots/{snapshot_id}/nodes/nope").status_code == 404


def test_chain_verifies_a_pasted_checkpoint(console_app, secrets, seeded):
    client, _ = _signed_in(console_app, secrets["read"])
    token = _token(client, "/console/chain")
    signed = client.post("/console/chain/checkpoint", data={"csrf_token": token})
    cp = re.search(
        r'<pre class="json" id="signed">(.*?)</pre>', signed.get_data(as_text=True), re.S
    )
    checkpoint = cp.group(1).replace("&#34;", '"').replace("&quot;", '"')
    assert orjson.loads(checkpoint)["size"] == 5
    good = client.post(
        "/console/chain/verify", data={"csrf_token": token, "checkpoint": checkpoint}
    )
    assert "The chain is intact (5 record(s) checked). It extends the checkpoint." in _text(good)
    forged = checkpoint.replace('"size": 5', '"size": 4')
    bad = client.post("/console/chain/verify", data={"csrf_token": token, "checkpoint": forged})
    assert bad.status_code == 422 and "signature does not verify" in _text(bad)


def test_assets_are_local(console_app, secrets, seeded):
    client, _ = _signed_in(console_app, secrets["read"])
    _, ids = seeded
    html = client.get(f"/console/decisions/{ids['placement']}").get_data(as_text=True)
    assert not re.search(r'(src|href)="(https?:)?//', html)
    css = client.get("/console/static/console.css")
    assert css.status_code == 200 and "table.list" in css.get_data(as_text=True)


def test_a_failed_scheduling_cycle_is_explained(console_app, secrets):
    """A placement whose cycle fails (a wrapped score outside 0..100 on "a", beside a second
    feasible node: a lone one is never scored) says so, names the plugin and node, and
    selects nothing; the list says "scheduling cycle error"."""
    api = console_app.test_client()
    headers = {"Authorization": f"Bearer {secrets['decide']}"}
    cluster = kube_list(
        node("a"),
        node("b"),
        pod("p0", "a", cpu=f"{3 * 2**61}m", memory=str(2**63 - 1)),
        pod("p1", "a", cpu=f"{2**62}m", memory=str(2**63 - 2)),
    )
    snap = api.post("/v1/snapshots", json=cluster, headers=headers).json["id"]
    body = {"snapshotId": snap, "pod": pod("in", cpu="100m", memory="1Gi")}
    decided = api.post("/v1/decisions/placement", json=body, headers=headers)
    assert decided.status_code == 201, decided.json
    client, _ = _signed_in(console_app, secrets["read"])
    page = _text(client.get(f"/console/decisions/{decided.json['id']}"))
    assert (
        "The scheduling cycle fails with an error (NodeResourcesFit, Score on a): "
        "no node is selected"
    ) in page
    assert "reason SchedulerError" in page
    assert "scheduling cycle error" in _text(client.get("/console/decisions"))


def test_the_devices_a_placement_allocates_are_listed(console_app, secrets):
    """A pod claiming a GPU: the page lists the device DynamicResources picked per claim."""
    from tests.engine.dra.test_allocator import CLASS, _claim, _gpu, _slice

    api = console_app.test_client()
    headers = {"Authorization": f"Bearer {secrets['decide']}"}
    cluster = kube_list(
        node("a"),
        CLASS,
        _slice("a", [_gpu("g7")]),
        _claim([{"name": "gpus", "exactly": {"deviceClassName": "gpu"}}]),
    )
    snap = api.post("/v1/snapshots", json=cluster, headers=headers).json["id"]
    incoming = pod("in", cpu="100m", memory="1Gi")
    incoming["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "want"}]
    decided = api.post(
        "/v1/decisions/placement", json={"snapshotId": snap, "pod": incoming}, headers=headers
    )
    assert decided.status_code == 201, decided.json
    client, _ = _signed_in(console_app, secrets["read"])
    page = _text(client.get(f"/console/decisions/{decided.json['id']}"))
    assert "Devices allocated on a (DynamicResources)" in page
    assert "want gpus gpu.example.com a g7" in page


@pytest.mark.parametrize(("moment", "before"), OFFSET_TIMES)
def test_time_filters_compare_instants(console_app, secrets, seeded, moment, before):
    """The console's since/until select by the instant, whatever the offset (issue 24)."""
    db = extensions(console_app).db
    with db.session() as session:
        newest = [row.id for row in records.page(session, records.Filters(), len(HOURS), None)]
    ids = at_hours(db, newest[::-1])
    client, _ = _signed_in(console_app, secrets["read"])
    since = client.get(f"/console/decisions?since={quote(moment)}").get_data(as_text=True)
    until = client.get(f"/console/decisions?until={quote(moment)}").get_data(as_text=True)
    assert [i for i in ids if i in since] == ids[before:]
    assert [i for i in ids if i in until] == ids[:before]


def test_the_chain_page_names_the_broken_checkpoint_of_the_log(console_app, secrets, seeded):
    """The administrator's rewrite of the tail: Verify names the log's checkpoint it breaks,
    and signing is refused (issue 24)."""
    kept = checkpoints.sign_into_log(
        extensions(console_app).db,
        extensions(console_app).checkpoint_key,
        console_app.config["VERDICT"].CHECKPOINT_DIR,
    )
    with extensions(console_app).db.session(write=True) as session:
        prev = records.GENESIS_HASH
        for row in session.query(DecisionRow).order_by(DecisionRow.seq):
            row.result = {**row.result, "rewritten": True}
            row.prev_hash, row.record_hash = prev, records.content_hash(prev, row)
            prev = row.record_hash
        session.execute(update(AuditState).values(head_hash=prev))
    client, _ = _signed_in(console_app, secrets["read"])
    token = _token(client, "/console/chain")
    page = _text(client.post("/console/chain/verify", data={"csrf_token": token}))
    assert "The chain is broken at record" in page
    assert f"no longer extends the checkpoint of size {kept['size']}" in page
    refused = client.post("/console/chain/checkpoint", data={"csrf_token": token})
    assert refused.status_code == 409 and "refusing to sign" in _text(refused)


@pytest.mark.parametrize(
    ("setting", "base_url", "secure"),
    [
        ("auto", "http://localhost", False),
        ("auto", "http://127.0.0.1:8080", False),
        ("auto", "http://[::1]:8080", False),
        ("auto", "https://localhost", True),
        ("auto", "http://verdict.example.com", True),
        ("auto", "http://10.0.0.7:8080", True),
        ("true", "http://localhost", True),
        ("false", "http://verdict.example.com", False),
    ],
)
def test_the_cookie_is_secure_except_plain_http_to_this_machine(
    database_url, tmp_path, setting, base_url, secure
):
    application = create_app(
        {
            "DATABASE_URL": database_url,
            "TESTING": True,
            "INSTANCE_PATH": str(tmp_path),
            "LOG_LEVEL": "WARNING",
            "CONSOLE_SECURE_COOKIE": setting,
        }
    )
    with extensions(application).db.session(write=True) as session:
        secret = keys.create(session, "read", "cookie")[1]
    client = application.test_client()
    page = client.get("/console/sign-in", base_url=base_url).get_data(as_text=True)
    response = client.post(
        "/console/sign-in",
        data={"api_key": secret, "csrf_token": TOKEN.search(page).group(1)},
        base_url=base_url,
        headers={"Referer": f"{base_url}/console/sign-in"},  # checked over https
    )
    extensions(application).db.dispose()
    cookie = response.headers["Set-Cookie"]
    assert response.status_code == 302 and ("; Secure" in cookie) is secure


def test_impact_page_asks_first_then_answers_and_names_bad_input(console_app, secrets, seeded):
    client, _ = _signed_in(console_app, secrets["read"])
    form = client.get("/console/impact")
    assert form.status_code == 200 and "Show the impact" in _text(form)
    answer = client.get("/console/impact?to=1.37")
    assert answer.status_code == 200
    assert "5 decision(s) examined: 5 unchanged, 0 changed, 0 failed" in _text(answer)
    bad = client.get("/console/impact?to=1.99")
    assert bad.status_code == 422 and "kubernetesVersion: unknown Kubernetes version" in _text(bad)
    cursor = client.get("/console/impact?to=1.37&cursor=bm90LWEtY3Vyc29y")
    assert cursor.status_code == 422 and "cursor: not a cursor this API issued" in _text(cursor)


def test_replay_under_another_release_by_link(console_app, secrets, seeded):
    _, ids = seeded
    client, _ = _signed_in(console_app, secrets["read"])
    path = f"/console/decisions/{ids['placement']}/replay"
    response = client.get(f"{path}?kubernetesVersion=1.36")
    assert response.status_code == 200
    assert "Under Kubernetes 1.36, the running engine decides the same" in _text(response)
    # 1.36 scores BalancedAllocation by the change to the node's balance (kubernetes#135573):
    # under 1.35 the same placement scores differently, and the page says so.
    older = client.get(f"{path}?kubernetesVersion=1.35")
    assert older.status_code == 200
    assert "Under Kubernetes 1.35, the running engine decides the same" not in _text(older)
    assert "NodeResourcesBalancedAllocation" in _text(older)
    unknown = client.get(f"{path}?kubernetesVersion=1.99")
    assert unknown.status_code == 422 and "unknown Kubernetes version" in _text(unknown)


def test_replay_under_a_release_chosen_on_the_decision_page(console_app, secrets, seeded):
    _, ids = seeded
    client, _ = _signed_in(console_app, secrets["read"])
    path = f"/console/decisions/{ids['admission']}"
    page = client.get(path)
    assert "as stored" in _text(page)
    response = client.post(
        f"{path}/replay", data={"csrf_token": _token(client, path), "kubernetesVersion": "1.35"}
    )
    assert response.status_code == 200
    assert "Under Kubernetes 1.35, the running engine decides" in _text(response)


def test_a_drain_page_names_drainable_nodes_budgets_and_where_pods_land(console_app, secrets):
    """A drain record: per node whether kubectl drains it and whether it is drainable, the
    budget consumed, and each pod's outcome with its recreated copy's node."""
    from tests.engine.drain.helpers import owned, pdb

    api = console_app.test_client()
    headers = {"Authorization": f"Bearer {secrets['decide']}"}
    cluster = kube_list(
        node("a"),
        node("b"),
        owned("web-1", "a", "ReplicaSet", "web"),
        owned("web-2", "a", "ReplicaSet", "web"),
        pdb("web-pdb", {"matchLabels": {"app": "web"}}, 1, desiredHealthy=1, currentHealthy=2),
    )
    snap = api.post("/v1/snapshots", json=cluster, headers=headers).json["id"]
    decided = api.post(
        "/v1/decisions/drain", json={"snapshotId": snap, "nodes": ["a"]}, headers=headers
    )
    assert decided.status_code == 201, decided.json
    client, _ = _signed_in(console_app, secrets["read"])
    page = _text(client.get(f"/console/decisions/{decided.json['id']}"))
    assert "0 of 1 node(s) can be drained" in page
    assert "default/web-pdb 1 0" in page
    assert "default/web-1 evicted Evicted" in page
    assert "default/web-2 blocked DisruptionBudget" in page
    assert "0 of 1 node(s) drainable" in _text(client.get("/console/decisions"))


def test_schedule_and_capacity_pages(console_app, secrets):
    """A queue run lists each cycle and the nodes it changed; a capacity answer its replicas
    per node and what stops the next one."""
    api = console_app.test_client()
    headers = {"Authorization": f"Bearer {secrets['decide']}"}
    cluster = kube_list(
        node("a", cpu="2"),
        pod("low", "a", cpu="1500m", priority=0),
        pod("hi", cpu="1800m", priority=100),
    )
    snap = api.post("/v1/snapshots", json=cluster, headers=headers).json["id"]
    queued = api.post("/v1/decisions/schedule", json={"snapshotId": snap}, headers=headers)
    assert queued.status_code == 201, queued.json
    template = pod("web", cpu="100m")
    sized = api.post(
        "/v1/decisions/capacity",
        json={"snapshotId": snap, "pod": template, "maxReplicas": 3},
        headers=headers,
    )
    assert sized.status_code == 201, sized.json
    client, _ = _signed_in(console_app, secrets["read"])
    page = _text(client.get(f"/console/decisions/{queued.json['id']}"))
    assert "1 of 1 pod(s) bound, 0 nominated, 0 unschedulable; 1 pod(s) preempted" in page
    assert "default/hi nominated a default/low" in page
    assert "default/hi (retry) bound a" in page
    assert "a cpu 1500m cpu 1800m" in page  # a's requested before and after (low out, hi in)
    page = _text(client.get(f"/console/decisions/{sized.json['id']}"))
    assert "3 replica(s) fit" in page
    assert "MaxReplicas: maxReplicas reached: 3 replicas placed" in page
    listing = _text(client.get("/console/decisions"))
    assert "1 bound, 0 nominated, 0 unschedulable" in listing
    assert "3 replica(s) fit; stops: MaxReplicas" in listing
