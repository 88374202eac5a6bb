"""The JSON API under /api/, called with real bearer tokens by every persona.

Personas (tests/conftest.py): lena leads "Payments SRE", max is a responder there ("member"),
vera a viewer, otto leads "Another team" and is an outsider to Payments SRE.
"""

import json
import re
import shutil
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ed25519
from django.test import Client
from django.utils import timezone

from collectors.facts import FactsSnapshot
from investigations.choices import FindingStatus, HostRole, HostTransport, Role, Severity, Status
from investigations.models import (
    ApiToken,
    Collection,
    Credential,
    EnvironmentMember,
    Finding,
    Host,
    Investigation,
    Membership,
    Team,
    TimelineEvent,
)
from investigations.services.collections import collection_request
from investigations.services.facts import facts_store
from investigations.services.hostkeys import host_key_scan
from investigations.services.inventory import (
    credential_create,
    host_create,
    host_update,
    member_add,
)
from investigations.services.investigations import investigation_create, investigation_set_status
from investigations.services.targets import target_claim
from investigations.services.tokens import api_token_create, api_token_revoke
from tests.conftest import (
    HOSTILE_STRINGS,
    PASSWORD,
    ApiClient,
    fresh,
    make_user,
    require_real_tool,
)

BIG_ID = 99999999999999999999  # beyond a 64-bit integer
BAD_IDS = [BIG_ID, 0, -1]
PERSONA_NAMES = ["member", "viewer", "outsider", "anonymous"]


# --- helpers --------------------------------------------------------------------------------


def fields(response) -> list:
    """The field names of a 4xx error body, after checking the body has the promised shape."""
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:2000])
    body = response.body
    assert isinstance(body, dict), response.content[:2000]
    assert isinstance(body.get("detail"), str) and body["detail"], body
    assert isinstance(body.get("errors"), list) and body["errors"], body
    for item in body["errors"]:
        assert set(item) == {"field", "message"}, item
        assert isinstance(item["message"], str) and item["message"], item
    return [item["field"] for item in body["errors"]]


def assert_names_field(response, field: str, status: int | None = None) -> None:
    names = fields(response)
    if status is not None:
        assert response.status_code == status, (response.status_code, response.body)
    assert field in names, (field, response.body)


def assert_status(response, status: int) -> None:
    assert response.status_code == status, (response.status_code, response.content[:2000])
    if status >= 400:
        assert isinstance(response.body, dict) and response.body.get("detail"), response.content


def post_raw(client: ApiClient, path: str, text, method: str = "post"):
    """Send a body exactly as given, for what json.dumps would never write."""
    response = getattr(client.client, method)(
        path, data=text, content_type="application/json", headers=client.headers
    )
    response.body = (
        response.json() if "json" in response.get("Content-Type", "") and response.content else None
    )
    return response


def when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def iso(moment: datetime) -> str:
    return moment.isoformat()


def new_private_key(passphrase: str = "") -> str:
    """A real ed25519 key in OpenSSH format, made by the cryptography library."""
    encryption = (
        serialization.BestAvailableEncryption(passphrase.encode())
        if passphrase
        else serialization.NoEncryption()
    )
    return (
        ed25519.Ed25519PrivateKey.generate()
        .private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.OpenSSH, encryption)
        .decode()
    )


def key_body_lines(private_key: str) -> list[str]:
    return [line for line in private_key.strip().splitlines() if not line.startswith("-----")]


# --- a world with something of each kind, for the persona matrix ------------------------------


@dataclass
class World:
    p: object  # Personas
    host: Host  # of the team, placed on side A of the investigation
    spare_host: Host  # of the team, used by nothing
    credential: Credential  # used by `host`
    spare_credential: Credential  # used by nothing
    placement: EnvironmentMember
    other_host: Host  # of the outsider's team
    other_credential: Credential  # of the outsider's team
    other_team: Team
    newcomer: object  # a user in no team
    request: object = None  # pytest's, for the sshd test host, started only when needed

    @property
    def inv(self) -> int:
        return self.p.investigation.pk

    # Evidence and host keys are made only for the endpoints that need them.

    @cached_property
    def collection(self) -> Collection:
        """Facts of db-a (A) and db-b (B), stored as a finished collection stores them."""
        db_b = host_create(team=self.p.team, name="db-b", address="10.0.0.3", username="perf")
        member_add(
            investigation=self.p.investigation,
            user=self.p.lead,
            host=db_b,
            side_key="b",
            role=HostRole.DATABASE,
        )
        collection = collection_request(investigation=self.p.investigation, user=self.p.member)
        for target in collection.targets.all():
            target = target_claim(target_id=target.pk, seconds=60)
            governor = "powersave" if target.side.key == "a" else "performance"
            facts = {**FACTS, "cpu.governor": governor}
            facts_store(target=target, snapshot=FactsSnapshot(facts=facts))
        return collection

    @property
    def with_facts(self) -> int:
        """The investigation, once it has facts from both sides."""
        return self.collection.investigation_id

    @cached_property
    def finding(self) -> Finding:
        return Finding.objects.get(investigation_id=self.with_facts, rule="cpu_governor")

    @cached_property
    def keyed_host(self) -> Host:
        # Nothing listens on the discard port: until `reachable_host`, no key can be scanned.
        return host_create(
            team=self.p.team, name="keyed", address="127.0.0.1", port=9, username="perf"
        )

    @cached_property
    def sshd(self):
        return self.request.getfixturevalue("start_host")("keyed", dump=None)

    @cached_property
    def reachable_host(self) -> Host:
        """The keyed host, moved to a real sshd on loopback."""
        return host_update(host=self.keyed_host, address=self.sshd.address, port=self.sshd.port)

    @property
    def viewer_membership(self) -> int:
        return Membership.objects.get(user=self.p.viewer, team=self.p.team).pk

    def user(self, name: str):
        return None if name == "anonymous" else getattr(self.p, name)


FACTS = {"kernel.release": "6.1.0", "system.boot_id": "x", "mm.swappiness": 60}


@pytest.fixture
def world(personas, request) -> World:
    p = personas
    other_team = Team.objects.get(name="Another team")
    credential = credential_create(
        team=p.team, user=p.lead, name="perf key", private_key=new_private_key()
    )
    spare_credential = credential_create(
        team=p.team, user=p.lead, name="spare key", private_key=new_private_key()
    )
    other_credential = credential_create(
        team=other_team, user=p.outsider, name="their key", private_key=new_private_key()
    )
    host = host_create(
        team=p.team,
        name="db-a",
        address="10.0.0.1",
        port=22,
        username="perf",
        credential=credential,
    )
    spare_host = host_create(team=p.team, name="spare", address="10.0.0.2", username="perf")
    other_host = host_create(team=other_team, name="their-db", address="10.9.9.9", username="root")
    placement = member_add(
        investigation=p.investigation,
        user=p.lead,
        host=host,
        side_key="a",
        role=HostRole.DATABASE,
    )
    return World(
        p,
        host,
        spare_host,
        credential,
        spare_credential,
        placement,
        other_host,
        other_credential,
        other_team,
        make_user("nina"),
        request,
    )


@pytest.fixture
def ssh_key(tmp_path):
    """A key pair made by the real ssh-keygen, with the fingerprint it prints."""
    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        require_real_tool("ssh-keygen is not installed")

    def make(passphrase: str = "", *options: str) -> tuple[str, str]:
        path = tmp_path / f"id_{len(list(tmp_path.iterdir()))}"
        subprocess.run(
            [ssh_keygen, "-q", "-t", "ed25519", *options, "-N", passphrase, "-f", str(path)],
            check=True,
            capture_output=True,
            timeout=60,
        )
        printed = subprocess.run(
            [ssh_keygen, "-lf", f"{path}.pub"],
            check=True,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout
        return path.read_text(), printed.split()[1]

    return make


# Every endpoint, and what each persona must get. READ: the team's members may look;
# WRITE: responders and leads may change; LEAD: only leads. Outsiders never learn that
# an object exists (404), anonymous callers are asked to authenticate (401).
READ = {"lead": 200, "member": 200, "viewer": 200, "outsider": 404, "anonymous": 401}


def WRITE(ok):  # noqa: N802 - reads as a table heading
    return {"lead": ok, "member": ok, "viewer": 403, "outsider": 404, "anonymous": 401}


def LEAD(ok):  # noqa: N802
    return {"lead": ok, "member": 403, "viewer": 403, "outsider": 404, "anonymous": 401}


ENDPOINTS = {
    "get investigation": ("get", "/api/investigations/{w.inv}", None, READ),
    "patch investigation": (
        "patch",
        "/api/investigations/{w.inv}",
        lambda w: {"notes": "seen"},
        WRITE(200),
    ),
    "patch side": (
        "patch",
        "/api/investigations/{w.inv}/sides/a",
        lambda w: {"label": "VM"},
        WRITE(200),
    ),
    "list members": ("get", "/api/investigations/{w.inv}/members", None, READ),
    "add member": (
        "post",
        "/api/investigations/{w.inv}/members",
        lambda w: {"host": w.spare_host.pk, "side": "b", "role": "service"},
        WRITE(201),
    ),
    "remove member": (
        "delete",
        "/api/investigations/{w.inv}/members/{w.placement.pk}",
        None,
        WRITE(204),
    ),
    "list timeline": ("get", "/api/investigations/{w.inv}/timeline", None, READ),
    "add to timeline": (
        "post",
        "/api/investigations/{w.inv}/timeline",
        lambda w: {"kind": "note", "summary": "Looked at the graphs"},
        WRITE(201),
    ),
    "create investigation": (
        "post",
        "/api/investigations",
        lambda w: {"team": w.p.team.pk, "title": "Slow"},
        WRITE(201),
    ),
    "create credential": (
        "post",
        "/api/credentials",
        lambda w: {"team": w.p.team.pk, "name": "new key", "private_key": new_private_key()},
        WRITE(201),
    ),
    "delete credential": ("delete", "/api/credentials/{w.spare_credential.pk}", None, WRITE(204)),
    "create host": (
        "post",
        "/api/hosts",
        lambda w: {"team": w.p.team.pk, "name": "new", "address": "10.0.0.9", "username": "perf"},
        WRITE(201),
    ),
    "get host": ("get", "/api/hosts/{w.host.pk}", None, READ),
    "patch host": ("patch", "/api/hosts/{w.host.pk}", lambda w: {"port": 2222}, WRITE(200)),
    "delete host": ("delete", "/api/hosts/{w.spare_host.pk}", None, WRITE(204)),
    "list team members": ("get", "/api/teams/{w.p.team.pk}/members", None, READ),
    "add team member": (
        "post",
        "/api/teams/{w.p.team.pk}/members",
        lambda w: {"username": "nina"},
        LEAD(202),
    ),
    "remove team member": (
        "delete",
        "/api/teams/{w.p.team.pk}/members/{w.viewer_membership}",
        None,
        LEAD(204),
    ),
    "collect facts": (
        "post",
        "/api/investigations/{w.inv}/collections",
        lambda w: {"kind": "facts", "service": "java", "paths": ["/data"]},
        WRITE(201),
    ),
    "get collection": ("get", "/api/collections/{w.collection.pk}", None, READ),
    "list facts": ("get", "/api/investigations/{w.with_facts}/facts", None, READ),
    "diff facts": ("get", "/api/investigations/{w.with_facts}/diff", None, READ),
    "list findings": ("get", "/api/investigations/{w.with_facts}/findings", None, READ),
    "patch finding": (
        "patch",
        "/api/findings/{w.finding.pk}",
        lambda w: {"status": "confirmed"},
        WRITE(200),
    ),
    "scan host key": (
        "post",
        "/api/hosts/{w.keyed_host.pk}/host-key/scan",
        lambda w: {},
        WRITE(202),
    ),
    "trust host key": (
        "post",
        "/api/hosts/{w.keyed_host.pk}/host-key/trust",
        lambda w: {"fingerprint": fresh(w.keyed_host).scanned_key_fingerprint or "SHA256:none"},
        WRITE(200),
    ),
}

# Endpoints that reach a host: before each persona's call, the host is a real sshd (and, for
# trusting, has been scanned), so that a refusal is for the role alone.
REAL_HOSTS = {
    "scan host key": lambda w: w.reachable_host,
    "trust host key": lambda w: host_key_scan(host=w.reachable_host),
}


def _facts_of(body):
    return [(f["host_name"], f["side"], f["facts"]["cpu.governor"]) for f in body]


# What a successful answer says (reads), and whether the write really happened (writes).
BODIES = {
    "get collection": lambda w, body: (
        (body["id"], body["status"], body["parameters"])
        == (w.collection.pk, "completed", {"service": "", "paths": []})
        and [(t["host_name"], t["side"], t["status"]) for t in body["targets"]]
        == [("db-a", "a", "succeeded"), ("db-b", "b", "succeeded")]
    ),
    "list facts": lambda w, body: (
        _facts_of(body) == [("db-a", "a", "powersave"), ("db-b", "b", "performance")]
    ),
    "diff facts": lambda w, body: (
        [(p["host_a"], p["differences"]) for p in body] == [(w.host.pk, 1)]
        and {r["key"]: r["kind"] for r in body[0]["rows"]}["cpu.governor"] == "differs"
    ),
    "list findings": lambda w, body: (
        [(f["rule"], f["side_a"], f["side_b"], f["status"]) for f in body]
        == [("cpu_governor", "powersave", "performance", "open")]
    ),
    # The scan is asked for: a worker does it (the end-to-end tests run one).
    "scan host key": lambda w, body: (
        body["status"] == "scanning" and body["fingerprint"] is None and body["error"] == ""
    ),
    "trust host key": lambda w, body: (
        (body["key_type"], body["fingerprint"])
        == (w.sshd.host_key.key_type, w.sshd.host_key.fingerprint)
    ),
}

EFFECTS = {
    "collect facts": lambda w: (
        [(c.parameters, [t.host.name for t in c.targets.all()]) for c in Collection.objects.all()]
        == [({"service": "java", "paths": ["/data"]}, ["db-a"])]
    ),
    "patch finding": lambda w: fresh(w.finding).status == FindingStatus.CONFIRMED,
    "scan host key": lambda w: getattr(fresh(w.keyed_host).job, "status", "") == "scanning",
    "trust host key": lambda w: (
        fresh(w.keyed_host).host_key_fingerprint == w.sshd.host_key.fingerprint
    ),
}


def call(world: World, who: str, endpoint: str):
    method, template, body, _ = ENDPOINTS[endpoint]
    path = template.format(w=world)
    client = ApiClient(world.user(who))
    if method in ("get", "delete"):
        return getattr(client, method)(path)
    return getattr(client, method)(path, body(world))


@pytest.mark.parametrize("who", ["lead", *PERSONA_NAMES])
@pytest.mark.parametrize("endpoint", ENDPOINTS)
def test_each_persona_gets_what_its_role_allows(world, endpoint, who):
    expected = ENDPOINTS[endpoint][3][who]
    if endpoint in REAL_HOSTS:
        REAL_HOSTS[endpoint](world)

    response = call(world, who, endpoint)

    assert_status(response, expected)
    if expected == 404:
        # Nothing about the object leaks to an outsider.
        assert response.body == {"detail": "Not found."}
    if expected == 401:
        assert "Bearer" in response.body["detail"]
    if endpoint in BODIES and expected < 400:
        assert BODIES[endpoint](world, response.body), response.body
    if endpoint in EFFECTS:
        happened = EFFECTS[endpoint](world)
        assert happened == (expected < 400), (
            f"{who}: the write {'happened' if happened else 'did not happen'}"
        )


def _evidence_state(world) -> tuple:
    keyed = fresh(world.keyed_host)
    return (
        Collection.objects.count(),
        sorted(Finding.objects.values_list("status", flat=True)),
        keyed.scanned_key_fingerprint,
        keyed.host_key_fingerprint,
    )


def test_a_refused_write_changes_nothing(world):
    world.finding, world.keyed_host  # noqa: B018 - made before, not while, counting
    before = (
        Investigation.objects.get(pk=world.inv).notes,
        TimelineEvent.objects.count(),
        Host.objects.count(),
        Credential.objects.count(),
        EnvironmentMember.objects.count(),
        Membership.objects.count(),
        Investigation.objects.count(),
        _evidence_state(world),
    )
    for endpoint, (method, *_rest) in ENDPOINTS.items():
        if method == "get":
            continue
        for who in ["viewer", "outsider", "anonymous"]:
            assert call(world, who, endpoint).status_code in (401, 403, 404), (endpoint, who)

    after = (
        Investigation.objects.get(pk=world.inv).notes,
        TimelineEvent.objects.count(),
        Host.objects.count(),
        Credential.objects.count(),
        EnvironmentMember.objects.count(),
        Membership.objects.count(),
        Investigation.objects.count(),
        _evidence_state(world),
    )
    assert after == before


@pytest.mark.parametrize(
    "path", ["/api/investigations", "/api/hosts", "/api/credentials", "/api/teams"]
)
def test_lists_ask_anonymous_callers_to_authenticate(personas, path):
    response = ApiClient().get(path)

    assert_status(response, 401)


@pytest.mark.parametrize("path", ["/api/investigations", "/api/teams"])
def test_creating_asks_anonymous_callers_to_authenticate(personas, path):
    response = ApiClient().post(path, {"team": personas.team.pk, "title": "x", "name": "x"})

    assert_status(response, 401)
    assert Team.objects.count() == 2


# --- tokens -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "username, team",
    [
        ("lena", "Payments SRE"),
        ("max", "Payments SRE"),
        ("vera", "Payments SRE"),
        ("otto", "Another team"),
    ],
)
def test_good_credentials_get_a_token_that_works_as_bearer(personas, username, team):
    response = ApiClient().post("/api/auth/token", {"username": username, "password": PASSWORD})

    assert_status(response, 200)
    token = response.body["token"]
    assert token.startswith("pc_") and len(token) > 30
    assert set(response.body) == {"token", "expires_at"}
    teams = Client().get("/api/teams", headers={"Authorization": f"Bearer {token}"})
    assert teams.status_code == 200
    assert [t["name"] for t in teams.json()] == [team]


def test_each_login_gets_a_token_of_its_own(personas):
    tokens = {
        ApiClient().post("/api/auth/token", {"username": "max", "password": PASSWORD}).body["token"]
        for _ in range(2)
    }

    assert len(tokens) == 2
    # Only digests are kept.
    for token in tokens:
        assert not ApiToken.objects.filter(digest=token).exists()
        assert not ApiToken.objects.filter(prefix=token).exists()


@pytest.mark.parametrize(
    "credentials",
    [
        {"username": "max", "password": "wrong"},
        {"username": "max", "password": ""},
        {"username": "nobody", "password": PASSWORD},
        {"username": "MAX ", "password": PASSWORD},
        {"username": "max", "password": PASSWORD + " "},
    ],
)
def test_bad_credentials_get_401_with_a_detail(personas, credentials):
    response = ApiClient().post("/api/auth/token", credentials)

    assert_status(response, 401)
    assert "token" not in response.body


def test_an_inactive_user_gets_no_token_and_their_tokens_stop_working(personas):
    client = ApiClient(personas.member)
    personas.member.is_active = False
    personas.member.save()

    refused = ApiClient().post("/api/auth/token", {"username": "max", "password": PASSWORD})

    assert_status(refused, 401)
    assert_status(client.get("/api/teams"), 401)


@pytest.mark.parametrize(
    "body", [{}, {"username": "max"}, {"password": PASSWORD}, {"username": 1, "password": []}]
)
def test_the_token_endpoint_names_missing_or_wrong_fields(personas, body):
    response = ApiClient().post("/api/auth/token", body)

    names = fields(response)
    assert response.status_code == 422
    for field in ["username", "password"]:
        if not isinstance(body.get(field), str):
            assert field in names


def test_a_revoked_token_gets_401(personas):
    token, raw = api_token_create(user=personas.member, name="laptop")
    headers = {"Authorization": f"Bearer {raw}"}
    assert Client().get("/api/teams", headers=headers).status_code == 200

    api_token_revoke(token=token)

    response = Client().get("/api/teams", headers=headers)
    assert response.status_code == 401
    assert response.json()["detail"]


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Bearer pc_not-a-real-token", "Token pc_x", "Basic bWF4Og=="],
)
def test_a_missing_or_unknown_token_gets_401(personas, authorization):
    headers = {} if authorization is None else {"Authorization": authorization}

    response = Client().get("/api/investigations", headers=headers)

    assert response.status_code == 401
    assert response.json()["detail"]


def test_a_session_cookie_alone_does_not_open_the_api(personas):
    # The API authenticates by bearer token only, so a page cannot be made to call it.
    response = personas.client(personas.member).get("/api/investigations")

    assert response.status_code == 401


# --- schema and docs --------------------------------------------------------------------------


def test_the_openapi_schema_is_served_and_lists_the_main_paths(db):
    response = Client().get("/api/openapi.json")

    assert response.status_code == 200
    schema = response.json()
    assert schema["info"]["title"] == "Perfcase API"
    for path in [
        "/api/auth/token",
        "/api/teams",
        "/api/investigations",
        "/api/investigations/{investigation_id}",
        "/api/investigations/{investigation_id}/sides/{key}",
        "/api/investigations/{investigation_id}/members",
        "/api/investigations/{investigation_id}/timeline",
        "/api/credentials",
        "/api/hosts",
        "/api/hosts/{host_id}",
    ]:
        assert path in schema["paths"], path
    # The schema never offers the stored key back.
    credential_out = json.dumps(schema["components"]["schemas"]["CredentialOut"])
    assert "private_key" not in credential_out and "passphrase" not in credential_out


def test_the_docs_page_is_html_and_loads_nothing_from_a_cdn(db):
    response = Client().get("/api/docs")

    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    for cdn in ["cdn.", "jsdelivr", "unpkg", "cdnjs"]:
        assert cdn not in page, cdn
    assert "openapi.json" in page
    # The scripts and styles it names are served by us.
    assets = re.findall(r'(?:src|href)="(/static/[^"]+)"', page)
    assert assets
    for asset in assets:
        assert Client().get(asset).status_code == 200, asset


# --- teams ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "who, before",
    [
        ("member", ("Payments SRE", "responder")),
        ("viewer", ("Payments SRE", "viewer")),
        ("outsider", ("Another team", "lead")),
    ],
)
def test_creating_a_team_makes_the_caller_its_lead(personas, who, before):
    user = getattr(personas, who)
    client = ApiClient(user)

    response = client.post("/api/teams", {"name": "Capacity planning"})

    assert_status(response, 201)
    assert response.body["name"] == "Capacity planning"
    assert response.body["role"] == "lead"
    team = Team.objects.get(pk=response.body["id"])
    assert list(team.memberships.values_list("user__username", "role")) == [
        (user.username, Role.LEAD)
    ]
    listed = client.get("/api/teams").body
    assert [(t["name"], t["role"]) for t in listed] == sorted(
        [("Capacity planning", "lead"), before]
    )


@pytest.mark.parametrize(
    "who, expected",
    [
        ("lead", [("Payments SRE", "lead")]),
        ("member", [("Payments SRE", "responder")]),
        ("viewer", [("Payments SRE", "viewer")]),
        ("outsider", [("Another team", "lead")]),
    ],
)
def test_the_team_list_shows_only_the_callers_teams(personas, who, expected):
    response = ApiClient(getattr(personas, who)).get("/api/teams")

    assert_status(response, 200)
    assert [(t["name"], t["role"]) for t in response.body] == expected


@pytest.mark.parametrize(
    "name, field",
    [("", "name"), ("   ", "name"), ("payments sre", "name"), ("x" * 201, "name"), (None, "name")],
)
def test_a_team_needs_a_new_name_of_sensible_length(personas, name, field):
    response = ApiClient(personas.member).post("/api/teams", {"name": name})

    assert_names_field(response, field)
    assert Team.objects.count() == 2


def test_a_lead_invites_and_removes_team_members(world):
    client = ApiClient(world.p.lead)
    team = world.p.team.pk

    invited = client.post(f"/api/teams/{team}/members", {"username": "nina", "role": "viewer"})
    accepted = ApiClient(world.newcomer).post(f"/api/invitations/{invited.body['id']}/accept")

    assert_status(invited, 202)
    assert invited.body["username"] == "nina" and invited.body["role"] == "viewer"
    assert_status(accepted, 200)
    members = client.get(f"/api/teams/{team}/members").body
    assert [m["username"] for m in members] == ["lena", "max", "nina", "vera"]
    nina = next(m for m in members if m["username"] == "nina")
    assert nina["role"] == "viewer"
    assert_status(client.delete(f"/api/teams/{team}/members/{nina['id']}"), 204)
    assert not Membership.objects.filter(user=world.newcomer).exists()


def test_team_members_are_checked(world):
    client = ApiClient(world.p.lead)
    team = world.p.team.pk

    # A name without an account is invited like any other (nothing says who exists).
    assert_status(client.post(f"/api/teams/{team}/members", {"username": "ghost"}), 202)
    assert_names_field(client.post(f"/api/teams/{team}/members", {"username": "max"}), "username")
    assert_names_field(client.post(f"/api/teams/{team}/members", {"username": " "}), "username")
    assert_names_field(
        client.post(f"/api/teams/{team}/members", {"username": "nina", "role": "king"}), "role"
    )
    # The last lead cannot leave.
    lead = Membership.objects.get(user=world.p.lead, team=world.p.team)
    assert_names_field(client.delete(f"/api/teams/{team}/members/{lead.pk}"), "role")
    # A membership of another team is not found through this one.
    theirs = Membership.objects.get(user=world.p.outsider)
    assert_status(client.delete(f"/api/teams/{team}/members/{theirs.pk}"), 404)


# --- investigations: list ---------------------------------------------------------------------


def test_the_list_has_items_and_count(personas):
    response = ApiClient(personas.member).get("/api/investigations")

    assert_status(response, 200)
    assert set(response.body) == {"items", "count"}
    assert response.body["count"] == 1
    item = response.body["items"][0]
    assert item["id"] == personas.investigation.pk
    assert item["title"] == "Checkout p99 doubled on the new cloud"
    assert item["team"] == personas.team.pk
    assert item["status"] == "open"
    assert item["lead"] == "lena"
    assert [(s["key"], s["label"]) for s in item["sides"]] == [
        ("a", "new cloud"),
        ("b", "old cloud"),
    ]


def _more_investigations(personas, count: int) -> list[int]:
    return [
        investigation_create(team=personas.team, user=personas.lead, title=f"Case {n}").pk
        for n in range(count)
    ]


def test_the_list_pages_with_limit_and_offset_newest_first(personas):
    ids = [personas.investigation.pk, *_more_investigations(personas, 5)]
    newest_first = list(reversed(ids))
    client = ApiClient(personas.viewer)

    pages = [client.get(f"/api/investigations?limit=2&offset={offset}") for offset in (0, 2, 4)]

    for page in pages:
        assert_status(page, 200)
        assert page.body["count"] == 6
    assert [i["id"] for page in pages for i in page.body["items"]] == newest_first
    beyond = client.get("/api/investigations?limit=2&offset=6").body
    assert beyond == {"items": [], "count": 6}


@pytest.fixture
def varied(personas):
    """Investigations that differ in each filtered field."""
    lead, team = personas.lead, personas.team
    made = {
        "disk": investigation_create(
            team=team,
            user=lead,
            title="Disk latency on VM",
            severity=Severity.SEV1,
            tags=["storage", "vm"],
        ),
        "dns": investigation_create(
            team=team,
            user=lead,
            title="Slow lookups",
            symptom_metric="DNS resolve time",
            severity=Severity.SEV2,
            tags=["network"],
        ),
        "notes": investigation_create(
            team=team,
            user=lead,
            title="Queue lag",
            notes="the kafka consumer is starved",
        ),
    }
    investigation_set_status(investigation=made["dns"], user=lead, status=Status.MITIGATED)
    theirs = Team.objects.get(name="Another team")
    made["theirs"] = investigation_create(
        team=theirs, user=personas.outsider, title="Their disk latency", tags=["storage"]
    )
    made["first"] = personas.investigation
    return {name: inv.pk for name, inv in made.items()}


@pytest.mark.parametrize(
    "query, expected",
    [
        ("status=mitigated", ["dns"]),
        ("status=open", ["notes", "disk", "first"]),
        ("severity=sev1", ["disk"]),
        ("severity=sev2", ["dns"]),
        ("tag=storage", ["disk"]),
        ("tag=STORAGE", ["disk"]),
        ("tag=nothing", []),
        ("q=disk", ["disk"]),
        ("q=DNS", ["dns"]),
        ("q=kafka", ["notes"]),
        ("q=network", ["dns"]),
        ("q=latency&severity=sev1", ["disk"]),
        ("q=latency&severity=sev2", []),
        ("status=open&tag=vm", ["disk"]),
    ],
)
def test_the_list_filters(personas, varied, query, expected):
    response = ApiClient(personas.member).get(f"/api/investigations?{query}")

    assert_status(response, 200)
    names = {pk: name for name, pk in varied.items()}
    assert [names[i["id"]] for i in response.body["items"]] == expected
    assert response.body["count"] == len(expected)


def test_the_team_filter_keeps_to_one_team(personas, varied):
    mine = Team.objects.get(name="Payments SRE").pk
    theirs = Team.objects.get(name="Another team").pk
    Membership.objects.create(team_id=theirs, user=personas.member, role=Role.VIEWER)
    client = ApiClient(personas.member)

    assert client.get("/api/investigations").body["count"] == 5
    assert client.get(f"/api/investigations?team={mine}").body["count"] == 4
    assert [i["id"] for i in client.get(f"/api/investigations?team={theirs}").body["items"]] == [
        varied["theirs"]
    ]


def test_an_outsider_sees_none_of_the_teams_investigations(personas, varied):
    client = ApiClient(personas.outsider)

    for query in ["", f"?team={personas.team.pk}", "?q=disk", "?tag=storage", "?status=mitigated"]:
        response = client.get(f"/api/investigations{query}")
        assert_status(response, 200)
        assert all(i["id"] == varied["theirs"] for i in response.body["items"]), query


def test_the_viewer_sees_the_teams_investigations(personas, varied):
    response = ApiClient(personas.viewer).get("/api/investigations")

    assert response.body["count"] == 4
    assert varied["theirs"] not in [i["id"] for i in response.body["items"]]


@pytest.mark.parametrize(
    "query, field",
    [
        ("status=frozen", "status"),
        ("severity=sev9", "severity"),
        ("team=abc", "team"),
        ("team=0", "team"),
        ("team=-1", "team"),
        (f"team={BIG_ID}", "team"),
        ("limit=0", "limit"),
        ("limit=-5", "limit"),
        ("limit=ten", "limit"),
        ("offset=-1", "offset"),
    ],
)
def test_bad_list_filters_are_refused_naming_the_parameter(personas, query, field):
    response = ApiClient(personas.member).get(f"/api/investigations?{query}")

    assert_names_field(response, field, 422)


@pytest.mark.parametrize(
    "query, field",
    [
        (f"offset={BIG_ID}", "offset"),
        (f"limit={BIG_ID}", "limit"),
        ("offset=9223372036854775807", "offset"),
    ],
)
def test_huge_paging_numbers_are_answered_without_a_server_error(personas, query, field):
    timeline = f"/api/investigations/{personas.investigation.pk}/timeline"
    for path in ["/api/investigations", timeline]:
        response = ApiClient(personas.member).get(f"{path}?{query}")

        if response.status_code == 200:
            assert response.body["items"] == [] or "limit" in query
        else:
            assert_names_field(response, field)


@pytest.mark.parametrize("param, limit", [("q", 200), ("tag", 64)])
def test_an_overlong_filter_does_not_return_everything(personas, varied, param, limit):
    # The search form refuses these lengths; the API must not then drop the filter.
    response = ApiClient(personas.member).get(f"/api/investigations?{param}={'z' * (limit + 1)}")

    if response.status_code == 200:
        assert response.body == {"items": [], "count": 0}
    else:
        assert_names_field(response, param)


# --- investigations: create -------------------------------------------------------------------


def test_a_member_creates_an_investigation_with_its_symptom_and_sides(personas):
    client = ApiClient(personas.member)
    body = {
        "team": personas.team.pk,
        "title": "Containers serve half the TPS of VMs",
        "severity": "sev2",
        "tags": ["Containers", " k8s ", "containers"],
        "symptom_metric": "throughput",
        "symptom_unit": "TPS",
        "symptom_load": "500 users",
        "symptom_value_a": 1200,
        "symptom_value_b": 2400.5,
        "symptom_direction": "higher",
        "started_at": "2024-05-01T08:00:00+02:00",
        "detected_at": "2024-05-01T06:30:00Z",
        "notes": "Seen after the migration.",
        "side_a_label": "containers",
        "side_a_kind": "container",
        "side_b_label": "VMs",
        "side_b_kind": "vm",
    }

    response = client.post("/api/investigations", body)

    assert_status(response, 201)
    created = response.body
    assert created["team"] == personas.team.pk
    assert created["title"] == "Containers serve half the TPS of VMs"
    assert created["status"] == "open"
    assert created["severity"] == "sev2"
    assert created["tags"] == ["containers", "k8s"]
    assert created["symptom"] == {
        "metric": "throughput",
        "unit": "TPS",
        "load": "500 users",
        "value_a": 1200.0,
        "value_b": 2400.5,
        "direction": "higher",
        "ratio": pytest.approx(2400.5 / 1200),
    }
    assert when(created["started_at"]) == datetime(2024, 5, 1, 6, 0, tzinfo=UTC)
    assert when(created["detected_at"]) == datetime(2024, 5, 1, 6, 30, tzinfo=UTC)
    assert created["lead"] == "max"
    assert created["notes"] == "Seen after the migration."
    assert created["sides"] == [
        {"key": "a", "label": "containers", "kind": "container"},
        {"key": "b", "label": "VMs", "kind": "vm"},
    ]
    assert client.get(f"/api/investigations/{created['id']}").body == created
    events = client.get(f"/api/investigations/{created['id']}/timeline").body["items"]
    # Opened by max; the stated symptom completes its checklist step, by itself.
    assert [(e["kind"], e["author"], e["details"]) for e in events] == [
        ("status", "max", {"old": None, "new": "open"}),
        ("checklist", None, {"item": "symptom"}),
    ]


def test_creating_with_only_team_and_title_uses_the_defaults(personas):
    response = ApiClient(personas.lead).post(
        "/api/investigations", {"team": personas.team.pk, "title": "Slow"}
    )

    assert_status(response, 201)
    assert response.body["severity"] == "sev3"
    assert response.body["symptom"]["direction"] == "lower"
    assert response.body["symptom"]["ratio"] is None
    assert [(s["label"], s["kind"]) for s in response.body["sides"]] == [
        ("A", "other"),
        ("B", "other"),
    ]


@pytest.mark.parametrize(
    "body, field",
    [
        ({}, "team"),
        ({}, "title"),
        ({"title": "Slow"}, "team"),
        ({"team": "TEAM"}, "title"),
        ({"team": "TEAM", "title": ""}, "title"),
        ({"team": "TEAM", "title": "  \n "}, "title"),
        ({"team": "TEAM", "title": None}, "title"),
        ({"team": "TEAM", "title": 123}, "title"),
        ({"team": "TEAM", "title": ["Slow"]}, "title"),
        ({"team": "Payments SRE", "title": "Slow"}, "team"),
        ({"team": 1.5, "title": "Slow"}, "team"),
        ({"team": "TEAM", "title": "Slow", "tags": "a,b"}, "tags"),
        ({"team": "TEAM", "title": "Slow", "tags": ["x" * 65]}, "tags"),
        ({"team": "TEAM", "title": "Slow", "tags": [f"t{n}" for n in range(21)]}, "tags"),
        ({"team": "TEAM", "title": "Slow", "symptom_value_a": "fast"}, "symptom_value_a"),
        ({"team": "TEAM", "title": "Slow", "symptom_value_b": [1]}, "symptom_value_b"),
        ({"team": "TEAM", "title": "Slow", "severity": "sev9"}, "severity"),
        ({"team": "TEAM", "title": "Slow", "severity": 1}, "severity"),
        ({"team": "TEAM", "title": "Slow", "symptom_direction": "sideways"}, "symptom_direction"),
        ({"team": "TEAM", "title": "Slow", "side_a_kind": "spaceship"}, "side_a_kind"),
        ({"team": "TEAM", "title": "Slow", "side_b_kind": ""}, "side_b_kind"),
        ({"team": "TEAM", "title": "Slow", "side_a_label": ""}, "side_a_label"),
        ({"team": "TEAM", "title": "Slow", "side_b_label": "   "}, "side_b_label"),
        ({"team": "TEAM", "title": "Slow", "side_b_label": "y" * 10_001}, "side_b_label"),
        ({"team": "TEAM", "title": "Slow", "started_at": "yesterday"}, "started_at"),
        ({"team": "TEAM", "title": "Slow", "started_at": "2024-13-45T00:00:00Z"}, "started_at"),
        ({"team": "TEAM", "title": "Slow", "lead": "otto"}, "lead"),
        ({"team": "TEAM", "title": "Slow", "lead": "nobody"}, "lead"),
        ({"team": "TEAM", "title": "Slow", "notes": "n" * 100_001}, "notes"),
        ({"team": "TEAM", "title": "Slow", "symptom_metric": "m" * 10_001}, "symptom_metric"),
        ({"team": "TEAM", "title": "Slow", "symptom_load": "l" * 10_001}, "symptom_load"),
        ({"team": "TEAM", "title": "Slow", "symptom_unit": "u" * 65}, "symptom_unit"),
    ],
)
def test_creating_refuses_bad_fields_naming_them(personas, body, field):
    body = {k: personas.team.pk if v == "TEAM" else v for k, v in body.items()}

    response = ApiClient(personas.member).post("/api/investigations", body)

    assert_names_field(response, field)
    assert Investigation.objects.count() == 1


def test_creating_may_name_a_team_member_as_lead(personas):
    response = ApiClient(personas.member).post(
        "/api/investigations", {"team": personas.team.pk, "title": "Slow", "lead": "vera"}
    )

    assert_status(response, 201)
    assert response.body["lead"] == "vera"


def test_a_viewer_cannot_create_and_is_told_why(personas):
    response = ApiClient(personas.viewer).post(
        "/api/investigations", {"team": personas.team.pk, "title": "Slow"}
    )

    assert_status(response, 403)
    assert "responders" in response.body["detail"]
    assert Investigation.objects.count() == 1


@pytest.mark.parametrize("team", ["theirs", 424242])
def test_an_outsider_cannot_create_in_a_team_not_theirs(personas, team):
    team = personas.team.pk if team == "theirs" else team

    response = ApiClient(personas.outsider).post(
        "/api/investigations", {"team": team, "title": "Slow"}
    )

    assert response.status_code == 404
    assert response.body == {"detail": "Not found."}
    assert Investigation.objects.count() == 1


# --- investigations: read and change ----------------------------------------------------------


def test_every_member_of_the_team_reads_an_investigation(personas):
    path = f"/api/investigations/{personas.investigation.pk}"
    bodies = [ApiClient(getattr(personas, who)).get(path) for who in ["lead", "member", "viewer"]]

    for response in bodies:
        assert_status(response, 200)
    assert bodies[0].body == bodies[1].body == bodies[2].body
    assert bodies[0].body["title"] == "Checkout p99 doubled on the new cloud"


@pytest.mark.parametrize("pk", [424242, *BAD_IDS, "abc", "1.5"])
def test_an_unknown_investigation_is_not_found_or_refused(personas, pk):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{pk}"

    for response in [
        client.get(path),
        client.patch(path, {"notes": "x"}),
        client.get(f"{path}/timeline"),
        client.post(f"{path}/timeline", {"kind": "note", "summary": "x"}),
        client.get(f"{path}/members"),
        client.patch(f"{path}/sides/a", {"label": "x"}),
    ]:
        if pk == 424242:
            assert response.status_code == 404, response.content
            assert response.body == {"detail": "Not found."}
        else:
            assert_names_field(response, "investigation_id", 422)


def test_a_member_changes_fields_and_the_timeline_records_old_and_new(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"

    response = client.patch(
        path,
        {
            "title": "Checkout p99 tripled",
            "severity": "sev1",
            "notes": "Started after the 14:00 deploy",
            "tags": ["checkout", "p99"],
            "symptom_value_a": 900,
            "symptom_value_b": 300,
            "lead": "max",
        },
    )

    assert_status(response, 200)
    changed = response.body
    assert changed["title"] == "Checkout p99 tripled"
    assert changed["severity"] == "sev1"
    assert changed["notes"] == "Started after the 14:00 deploy"
    assert changed["tags"] == ["checkout", "p99"]
    assert changed["symptom"]["ratio"] == 3.0
    assert changed["lead"] == "max"
    assert client.get(path).body == changed
    events = client.get(f"{path}/timeline?kind=change").body["items"]
    assert len(events) == 1
    assert events[0]["author"] == "max"
    changes = events[0]["details"]["changes"]
    assert changes["title"] == ["Checkout p99 doubled on the new cloud", "Checkout p99 tripled"]
    assert changes["severity"] == ["sev3", "sev1"]
    assert changes["notes"] == ["", "Started after the 14:00 deploy"]
    assert changes["tags"] == [[], ["checkout", "p99"]]
    assert changes["symptom_value_a"] == [None, 900.0]
    assert changes["lead"] == ["lena", "max"]


def test_a_patch_changes_only_what_it_sends(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"
    client.patch(path, {"notes": "one", "tags": ["a"], "severity": "sev2"})

    response = client.patch(path, {"notes": "two"})

    assert response.body["notes"] == "two"
    assert response.body["tags"] == ["a"]
    assert response.body["severity"] == "sev2"
    assert response.body["title"] == "Checkout p99 doubled on the new cloud"


def test_an_empty_patch_changes_nothing_and_logs_nothing(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"
    before = client.get(path).body

    response = client.patch(path, {})

    assert_status(response, 200)
    assert response.body == before
    assert client.patch(path, {"title": before["title"]}).status_code == 200
    assert TimelineEvent.objects.filter(kind="change").count() == 0


def test_the_status_moves_open_mitigated_resolved_with_each_move_on_the_timeline(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"

    mitigated = client.patch(path, {"status": "mitigated"})
    resolved = client.patch(path, {"status": "resolved"})

    assert_status(mitigated, 200)
    assert mitigated.body["status"] == "mitigated"
    assert mitigated.body["mitigated_at"] is not None
    assert mitigated.body["resolved_at"] is None
    assert_status(resolved, 200)
    assert resolved.body["status"] == "resolved"
    assert when(resolved.body["resolved_at"]) >= when(resolved.body["mitigated_at"])
    events = client.get(f"{path}/timeline?kind=status").body["items"]
    assert [(e["details"], e["author"]) for e in events] == [
        ({"old": None, "new": "open"}, "lena"),
        ({"old": "open", "new": "mitigated"}, "max"),
        ({"old": "mitigated", "new": "resolved"}, "max"),
    ]


def test_only_a_lead_closes_an_investigation(personas):
    path = f"/api/investigations/{personas.investigation.pk}"
    member, lead = ApiClient(personas.member), ApiClient(personas.lead)
    member.patch(path, {"status": "resolved"})

    refused = member.patch(path, {"status": "closed"})

    assert_status(refused, 403)
    assert "lead" in refused.body["detail"]
    assert member.get(path).body["status"] == "resolved"
    closed = lead.patch(path, {"status": "closed", "close_reason": "A false alarm."})
    assert_status(closed, 200)
    assert closed.body["status"] == "closed"
    assert member.get(f"{path}/timeline?kind=status").body["items"][-1]["details"] == {
        "old": "resolved",
        "new": "closed",
        "reason": "A false alarm.",
    }


def test_a_refused_status_move_does_not_keep_the_other_changes_of_the_request(personas):
    # One PATCH is one change: if part of it is refused, none of it may stay.
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"

    refused = client.patch(path, {"title": "Renamed on the way out", "status": "closed"})

    assert refused.status_code == 403
    assert client.get(path).body["title"] == "Checkout p99 doubled on the new cloud"
    assert TimelineEvent.objects.filter(kind="change").count() == 0


def test_an_impossible_status_move_is_refused_naming_status(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"
    client.patch(path, {"status": "resolved"})

    response = client.patch(path, {"status": "mitigated"})

    assert_names_field(response, "status", 400)
    assert client.get(path).body["status"] == "resolved"
    reopened = client.patch(path, {"status": "open"})
    assert reopened.body["status"] == "open"


@pytest.mark.parametrize("status", ["frozen", "", "OPEN", 1, None])
def test_an_unknown_status_is_refused(personas, status):
    path = f"/api/investigations/{personas.investigation.pk}"

    response = ApiClient(personas.member).patch(path, {"status": status})

    if status is None:
        # null means "leave the status alone".
        assert_status(response, 200)
        assert response.body["status"] == "open"
    else:
        assert_names_field(response, "status", 422)


def _ago(**delta) -> str:
    return iso(timezone.now() - timedelta(**delta))


@pytest.mark.parametrize(
    "times, field",
    [
        ({"started_at": "HOURS_2", "detected_at": "HOURS_3"}, "detected_at"),
        ({"detected_at": "HOURS_2", "mitigated_at": "HOURS_3"}, "mitigated_at"),
        ({"mitigated_at": "HOURS_2", "resolved_at": "HOURS_3"}, "resolved_at"),
        ({"started_at": "HOURS_1", "resolved_at": "HOURS_3"}, "resolved_at"),
        ({"started_at": "FUTURE"}, "started_at"),
        ({"detected_at": "FUTURE"}, "detected_at"),
    ],
)
def test_impossible_time_orders_are_refused_naming_the_field(personas, times, field):
    values = {
        "HOURS_1": _ago(hours=1),
        "HOURS_2": _ago(hours=2),
        "HOURS_3": _ago(hours=3),
        "FUTURE": iso(timezone.now() + timedelta(days=2)),
    }
    body = {name: values[value] for name, value in times.items()}
    path = f"/api/investigations/{personas.investigation.pk}"

    response = ApiClient(personas.member).patch(path, body)

    assert_names_field(response, field, 400)
    assert Investigation.objects.get(pk=personas.investigation.pk).started_at is None


def test_a_time_is_checked_against_the_times_already_stored(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"
    assert_status(client.patch(path, {"started_at": _ago(hours=1)}), 200)

    response = client.patch(path, {"detected_at": _ago(hours=5)})

    assert_names_field(response, "detected_at", 400)
    created = ApiClient(personas.member).post(
        "/api/investigations",
        {
            "team": personas.team.pk,
            "title": "x",
            "started_at": _ago(hours=1),
            "detected_at": _ago(hours=2),
        },
    )
    assert_names_field(created, "detected_at", 400)


def test_times_without_a_zone_are_taken_as_utc(personas):
    path = f"/api/investigations/{personas.investigation.pk}"

    response = ApiClient(personas.member).patch(path, {"started_at": "2024-05-01T10:00:00"})

    assert_status(response, 200)
    assert when(response.body["started_at"]) == datetime(2024, 5, 1, 10, tzinfo=UTC)


@pytest.mark.parametrize(
    "body, field",
    [
        ({"title": None}, "title"),
        ({"title": ""}, "title"),
        ({"severity": None}, "severity"),
        ({"symptom_direction": None}, "symptom_direction"),
        ({"lead": "otto"}, "lead"),
        ({"tags": "a,b"}, "tags"),
        ({"status": ["open"]}, "status"),
        ({"symptom_value_a": "1,5"}, "symptom_value_a"),
        ({"started_at": "soon"}, "started_at"),
    ],
)
def test_patching_refuses_bad_fields_naming_them(personas, body, field):
    path = f"/api/investigations/{personas.investigation.pk}"

    response = ApiClient(personas.member).patch(path, body)

    assert_names_field(response, field)


def test_null_clears_the_symptom_values_and_the_lead(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"
    client.patch(path, {"symptom_value_a": 5, "symptom_value_b": 4, "lead": "max"})

    response = client.patch(path, {"symptom_value_a": None, "symptom_value_b": None, "lead": None})

    assert_status(response, 200)
    assert response.body["symptom"]["value_a"] is None
    assert response.body["symptom"]["value_b"] is None
    assert response.body["lead"] is None


@pytest.mark.parametrize("field", ["notes", "symptom_metric", "symptom_unit", "symptom_load"])
def test_null_for_a_text_field_clears_it_or_is_refused_naming_it(personas, field):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"
    client.patch(path, {field: "something"})

    response = client.patch(path, {field: None})

    if response.status_code == 200:
        key = field.removeprefix("symptom_")
        assert (response.body if field == "notes" else response.body["symptom"])[key] == ""
    else:
        assert_names_field(response, field, 422)


# --- sides ------------------------------------------------------------------------------------


def test_a_member_relabels_side_a(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"

    response = client.patch(f"{path}/sides/a", {"label": "Kubernetes pods", "kind": "container"})

    assert_status(response, 200)
    assert response.body == {"key": "a", "label": "Kubernetes pods", "kind": "container"}
    assert client.get(path).body["sides"] == [
        {"key": "a", "label": "Kubernetes pods", "kind": "container"},
        {"key": "b", "label": "old cloud", "kind": "other"},
    ]
    event = client.get(f"{path}/timeline?kind=change").body["items"][-1]
    assert event["details"] == {
        "side": "a",
        "changes": {"label": ["new cloud", "Kubernetes pods"], "kind": ["other", "container"]},
    }


def test_a_side_patch_keeps_what_it_does_not_send(personas):
    path = f"/api/investigations/{personas.investigation.pk}/sides/b"
    client = ApiClient(personas.member)

    assert client.patch(path, {"kind": "vm"}).body == {
        "key": "b",
        "label": "old cloud",
        "kind": "vm",
    }
    assert client.patch(path, {"label": "VM"}).body == {"key": "b", "label": "VM", "kind": "vm"}


@pytest.mark.parametrize(
    "key, body, status, field",
    [
        ("c", {"label": "x"}, 404, None),
        ("A", {"label": "x"}, 404, None),
        ("a", {"label": ""}, 400, "label"),
        ("a", {"label": "  "}, 400, "label"),
        ("a", {"label": "z" * 10_001}, 400, "label"),
        ("a", {"kind": "spaceship"}, 422, "kind"),
        ("a", {"label": 5}, 422, "label"),
    ],
)
def test_bad_side_changes_are_refused(personas, key, body, status, field):
    path = f"/api/investigations/{personas.investigation.pk}/sides/{key}"

    response = ApiClient(personas.member).patch(path, body)

    if field is None:
        assert_status(response, status)
    else:
        assert_names_field(response, field, status)
    assert personas.investigation.sides.get(key="a").label == "new cloud"


# --- credentials ------------------------------------------------------------------------------


def test_a_stored_credential_answers_with_its_fingerprint_and_never_the_key(personas, ssh_key):
    private_key, fingerprint = ssh_key()
    client = ApiClient(personas.member)

    response = client.post(
        "/api/credentials",
        {"team": personas.team.pk, "name": "perf runner", "private_key": private_key},
    )

    assert_status(response, 201)
    assert set(response.body) == {"id", "team", "name", "key_type", "fingerprint", "created_at"}
    assert response.body["fingerprint"] == fingerprint
    assert response.body["key_type"] == "ssh-ed25519"
    assert response.body["team"] == personas.team.pk
    listing = client.get("/api/credentials")
    for text in [response.content.decode(), listing.content.decode()]:
        assert "PRIVATE KEY" not in text
        for line in key_body_lines(private_key):
            assert line not in text
    assert [c["fingerprint"] for c in listing.body] == [fingerprint]
    # At rest it is sealed, not plain.
    stored = Credential.objects.get(pk=response.body["id"])
    assert "PRIVATE KEY" not in stored.encrypted_private_key


def test_an_encrypted_key_is_stored_with_its_passphrase_which_never_comes_back(personas, ssh_key):
    passphrase = "open sesame 1234"
    private_key, fingerprint = ssh_key(passphrase)
    client = ApiClient(personas.member)

    response = client.post(
        "/api/credentials",
        {
            "team": personas.team.pk,
            "name": "locked",
            "private_key": private_key,
            "passphrase": passphrase,
        },
    )

    assert_status(response, 201)
    assert response.body["fingerprint"] == fingerprint
    for text in [response.content.decode(), client.get("/api/credentials").content.decode()]:
        assert passphrase not in text
        assert "passphrase" not in text
        for line in key_body_lines(private_key):
            assert line not in text
    stored = Credential.objects.get(pk=response.body["id"])
    assert stored.encrypted_passphrase and passphrase not in stored.encrypted_passphrase


def test_the_credential_list_shows_each_persona_only_its_teams(world):
    mine = {world.credential.pk, world.spare_credential.pk}

    for who in ["lead", "member", "viewer"]:
        listed = ApiClient(world.user(who)).get("/api/credentials")
        assert_status(listed, 200)
        assert {c["id"] for c in listed.body} == mine, who
    outsider = ApiClient(world.p.outsider)
    assert [c["id"] for c in outsider.get("/api/credentials").body] == [world.other_credential.pk]
    assert outsider.get(f"/api/credentials?team={world.p.team.pk}").body == []


@pytest.mark.parametrize(
    "make, passphrase, field, message",
    [
        (lambda key: "not a key", "", "private_key", "not a private key"),
        (lambda key: "", "", "private_key", "Paste a private key"),
        (lambda key: key[: len(key) // 2], "", "private_key", "truncated"),
        (
            lambda key: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIA perf@box",
            "",
            "private_key",
            "public key",
        ),
        (
            lambda key: "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\n",
            "",
            "private_key",
            "PuTTY",
        ),
        (lambda key: "k" * 32_001, "", "private_key", "too long"),
    ],
    ids=["garbage", "empty", "truncated", "public", "putty", "huge"],
)
def test_a_bad_key_is_refused_naming_private_key(personas, make, passphrase, field, message):
    response = ApiClient(personas.member).post(
        "/api/credentials",
        {
            "team": personas.team.pk,
            "name": "bad",
            "private_key": make(new_private_key()),
            "passphrase": passphrase,
        },
    )

    assert_names_field(response, field, 400)
    assert message in " ".join(e["message"] for e in response.body["errors"])
    assert Credential.objects.count() == 0


def test_a_truncated_key_sent_with_a_passphrase_is_refused_naming_private_key(personas, ssh_key):
    private_key, _ = ssh_key()
    lines = private_key.strip().splitlines()
    client = ApiClient(personas.member)

    for lost in range(1, 5):
        cut = "\n".join(lines[: -1 - lost] + lines[-1:])
        response = client.post(
            "/api/credentials",
            {"team": personas.team.pk, "name": "cut", "private_key": cut, "passphrase": "habit"},
        )
        assert_names_field(response, "private_key", 400)


def test_a_wrong_or_missing_passphrase_is_refused_naming_passphrase(personas, ssh_key):
    private_key, _ = ssh_key("the right one")
    client = ApiClient(personas.member)

    for passphrase, message in [("the wrong one", "does not unlock"), ("", "enter its passphrase")]:
        response = client.post(
            "/api/credentials",
            {
                "team": personas.team.pk,
                "name": "locked",
                "private_key": private_key,
                "passphrase": passphrase,
            },
        )
        assert_names_field(response, "passphrase", 400)
        assert message in response.body["errors"][0]["message"]
        assert "the right one" not in response.content.decode()
    assert Credential.objects.count() == 0


def test_a_credential_needs_a_new_name(world):
    client = ApiClient(world.p.member)
    body = {"team": world.p.team.pk, "private_key": new_private_key()}

    assert_names_field(client.post("/api/credentials", {**body, "name": "perf key"}), "name", 400)
    assert_names_field(client.post("/api/credentials", {**body, "name": "  "}), "name", 400)
    assert_names_field(client.post("/api/credentials", {**body, "name": "n" * 201}), "name", 400)
    assert_names_field(client.post("/api/credentials", {"team": world.p.team.pk}), "private_key")


def test_a_credential_in_use_is_not_deleted(world):
    response = ApiClient(world.p.member).delete(f"/api/credentials/{world.credential.pk}")

    assert response.status_code == 400
    assert "db-a" in response.body["detail"]
    assert Credential.objects.filter(pk=world.credential.pk).exists()


# --- hosts ------------------------------------------------------------------------------------


def _host(personas, **fields):
    return {
        "team": personas.team.pk,
        "name": "web-1",
        "address": "10.0.0.5",
        "username": "perf",
        **fields,
    }


@pytest.mark.parametrize(
    "address, stored",
    [
        ("db-1.example.com", "db-1.example.com"),
        ("DB-1.Example.COM.", "db-1.example.com"),
        ("localhost", "localhost"),
        ("10.0.0.5", "10.0.0.5"),
        (" 192.168.1.20 ", "192.168.1.20"),
        ("2001:db8::1", "2001:db8::1"),
        ("2001:DB8:0:0:0:0:0:1", "2001:db8::1"),
        ("[::1]", "::1"),
        ("[2001:db8::42]", "2001:db8::42"),
    ],
)
def test_a_member_adds_a_host_by_name_ipv4_or_ipv6(personas, address, stored):
    response = ApiClient(personas.member).post("/api/hosts", _host(personas, address=address))

    assert_status(response, 201)
    assert response.body["address"] == stored
    assert response.body == {
        "id": response.body["id"],
        "team": personas.team.pk,
        "name": "web-1",
        "address": stored,
        "port": 22,
        "username": "perf",
        "credential": None,
        "jump_host": None,
        "transport": "ssh",
        "host_key_type": "",
        "host_key_fingerprint": "",
    }


@pytest.mark.parametrize(
    "address",
    [
        "host; rm -rf /",
        "a b",
        "-x",
        "-oProxyCommand=sh",
        "$(reboot)",
        "`id`",
        "host\nname",
        "a..b",
        "host-",
        "1.2.3.999",
        "[::1",
        "::1]",
        "user@host",
        "host:22",
        "",
        "   ",
        "é.example",
        "x" * 64 + ".com",
        ".".join(["abc"] * 70),
    ],
)
def test_an_address_that_is_not_a_host_is_refused(personas, address):
    response = ApiClient(personas.member).post("/api/hosts", _host(personas, address=address))

    assert_names_field(response, "address", 400)
    assert Host.objects.count() == 0


@pytest.mark.parametrize(
    "body, field, status",
    [
        ({"username": "root; id"}, "username", 400),
        ({"username": "-l"}, "username", 400),
        ({"username": ""}, "username", 400),
        ({"username": "u" * 33}, "username", 400),
        ({"name": ""}, "name", 400),
        ({"port": 0}, "port", 422),
        ({"port": 65536}, "port", 422),
        ({"port": -22}, "port", 422),
        ({"port": "ssh"}, "port", 422),
        ({"credential": 0}, "credential", 422),
        ({"credential": BIG_ID}, "credential", 422),
        ({"credential": 424242}, "credential", 400),
        ({"jump_host": -1}, "jump_host", 422),
        ({"jump_host": 424242}, "jump_host", 400),
        ({"team": BIG_ID}, "team", 422),
        ({"team": 0}, "team", 422),
        ({"address": None}, "address", 422),
    ],
)
def test_bad_host_fields_are_refused_naming_them(personas, body, field, status):
    response = ApiClient(personas.member).post("/api/hosts", _host(personas, **body))

    assert_names_field(response, field, status)
    assert Host.objects.count() == 0


def test_a_host_may_use_its_teams_credential_and_jump_host(world):
    response = ApiClient(world.p.member).post(
        "/api/hosts",
        _host(world.p, credential=world.credential.pk, jump_host=world.host.pk, port=2222),
    )

    assert_status(response, 201)
    assert response.body["credential"] == world.credential.pk
    assert response.body["jump_host"] == world.host.pk
    assert response.body["port"] == 2222


def test_a_credential_or_jump_host_of_another_team_is_refused(world):
    client = ApiClient(world.p.member)

    theirs_key = client.post("/api/hosts", _host(world.p, credential=world.other_credential.pk))
    theirs_jump = client.post("/api/hosts", _host(world.p, jump_host=world.other_host.pk))

    assert_names_field(theirs_key, "credential", 400)
    assert_names_field(theirs_jump, "jump_host", 400)
    patched = client.patch(f"/api/hosts/{world.host.pk}", {"credential": world.other_credential.pk})
    assert_names_field(patched, "credential", 400)
    assert Host.objects.get(pk=world.host.pk).credential_id == world.credential.pk


def test_a_host_is_read_changed_and_deleted(world):
    client = ApiClient(world.p.member)
    path = f"/api/hosts/{world.spare_host.pk}"

    assert client.get(path).body["name"] == "spare"
    changed = client.patch(
        path,
        {"address": "[::1]", "port": 2200, "username": "ops", "credential": world.credential.pk},
    )
    assert_status(changed, 200)
    assert changed.body["address"] == "::1"
    assert (changed.body["port"], changed.body["username"]) == (2200, "ops")
    assert changed.body["credential"] == world.credential.pk
    assert client.get(path).body == changed.body
    cleared = client.patch(path, {"credential": None})
    assert cleared.body["credential"] is None
    assert_status(client.delete(path), 204)
    assert_status(client.get(path), 404)


@pytest.mark.parametrize(
    "body, field, status",
    [
        ({"address": "a b"}, "address", 400),
        ({"address": "host; rm -rf /"}, "address", 400),
        ({"name": None}, "name", 400),
        ({"address": None}, "address", 400),
        ({"port": None}, "port", 400),
        ({"name": "spare"}, "name", 400),
        ({"port": 0}, "port", 422),
        ({"username": "$(id)"}, "username", 400),
    ],
)
def test_bad_host_changes_are_refused_naming_the_field(world, body, field, status):
    response = ApiClient(world.p.member).patch(f"/api/hosts/{world.host.pk}", body)

    assert_names_field(response, field, status)
    host = Host.objects.get(pk=world.host.pk)
    assert (host.name, host.address, host.port, host.username) == ("db-a", "10.0.0.1", 22, "perf")


def test_jump_hosts_cannot_form_a_loop(world):
    client = ApiClient(world.p.member)
    client.patch(f"/api/hosts/{world.spare_host.pk}", {"jump_host": world.host.pk})

    response = client.patch(f"/api/hosts/{world.host.pk}", {"jump_host": world.spare_host.pk})
    itself = client.patch(f"/api/hosts/{world.host.pk}", {"jump_host": world.host.pk})

    assert_names_field(response, "jump_host", 400)
    assert_names_field(itself, "jump_host", 400)


def test_a_host_in_use_is_not_deleted(world):
    client = ApiClient(world.p.member)

    placed = client.delete(f"/api/hosts/{world.host.pk}")

    assert placed.status_code == 400 and placed.body["detail"]
    client.patch(f"/api/hosts/{world.spare_host.pk}", {"jump_host": world.host.pk})
    EnvironmentMember.objects.all().delete()
    jumped = client.delete(f"/api/hosts/{world.host.pk}")
    assert jumped.status_code == 400 and "jump host" in jumped.body["detail"]
    assert Host.objects.filter(pk=world.host.pk).exists()


def test_the_host_list_shows_each_persona_only_its_teams(world):
    mine = {world.host.pk, world.spare_host.pk}

    for who in ["lead", "member", "viewer"]:
        assert {h["id"] for h in ApiClient(world.user(who)).get("/api/hosts").body} == mine
    outsider = ApiClient(world.p.outsider)
    assert [h["id"] for h in outsider.get("/api/hosts").body] == [world.other_host.pk]
    assert outsider.get(f"/api/hosts?team={world.p.team.pk}").body == []


@pytest.mark.parametrize("pk", BAD_IDS)
def test_bad_ids_in_host_and_credential_paths_are_refused(world, pk):
    client = ApiClient(world.p.member)

    for response, field in [
        (client.get(f"/api/hosts/{pk}"), "host_id"),
        (client.patch(f"/api/hosts/{pk}", {"port": 23}), "host_id"),
        (client.delete(f"/api/hosts/{pk}"), "host_id"),
        (client.delete(f"/api/credentials/{pk}"), "credential_id"),
        (client.get(f"/api/teams/{pk}/members"), "team_id"),
    ]:
        assert_names_field(response, field, 422)


def test_without_the_local_transport_the_api_makes_no_local_host(world, settings):
    settings.LOCAL_TRANSPORT = False
    client = ApiClient(world.p.member)

    created = client.post("/api/hosts", _host(world.p, name="here", transport="local"))
    patched = client.patch(f"/api/hosts/{world.host.pk}", {"transport": "local"})

    # The API has no transport field: what is sent for it is ignored, or refused by name.
    for response, ok in ((created, 201), (patched, 200)):
        if response.status_code != ok:
            assert_names_field(response, "transport")
    assert not Host.objects.filter(transport=HostTransport.LOCAL).exists()
    assert fresh(world.host).transport == HostTransport.SSH


# --- evidence and host keys -------------------------------------------------------------------


@pytest.mark.parametrize(
    "body, field, status",
    [
        ({"service": "x" * 10_000}, "service", 400),
        ({"service": "../etc"}, "service", 400),
        ({"service": "java\x00"}, "service", 422),
        ({"paths": ["x" * 10_000]}, "paths", 400),
        ({"paths": ["/" + "x" * 10_000]}, "paths", 400),
        ({"paths": [f"/data/{n}" for n in range(9)]}, "paths", 400),
        ({"paths": "/data"}, "paths", 422),
        ({"kind": "perf"}, "kind", 422),
    ],
    ids=[
        "service-10k",
        "service-dotdot",
        "service-nul",
        "paths-10k",
        "paths-10k-absolute",
        "paths-nine",
        "paths-not-a-list",
        "kind-unknown",
    ],
)
def test_bad_collection_requests_are_refused_naming_the_field(world, body, field, status):
    response = ApiClient(world.p.member).post(f"/api/investigations/{world.inv}/collections", body)

    assert_status(response, status)
    assert any(name == field or name.startswith(f"{field}.") for name in fields(response)), (
        response.body
    )
    assert "x" * 100 not in response.content.decode()
    assert not Collection.objects.exists()


@pytest.mark.parametrize("status", ["resolved", "", "CONFIRMED", None, 1])
def test_a_finding_status_people_may_not_set_is_refused_naming_status(world, status):
    response = ApiClient(world.p.member).patch(
        f"/api/findings/{world.finding.pk}", {"status": status}
    )

    assert_names_field(response, "status", 422)
    assert fresh(world.finding).status == FindingStatus.OPEN


def test_trusting_before_any_scan_is_refused_naming_fingerprint(world):
    response = ApiClient(world.p.member).post(
        f"/api/hosts/{world.keyed_host.pk}/host-key/trust", {"fingerprint": "SHA256:" + "A" * 43}
    )

    assert_names_field(response, "fingerprint", 400)
    assert fresh(world.keyed_host).host_key_fingerprint == ""


def test_a_local_host_has_no_host_key_to_scan(world, settings):
    settings.LOCAL_TRANSPORT = True
    host = host_create(
        team=world.p.team,
        name="here",
        address="127.0.0.1",
        username="root",
        transport=HostTransport.LOCAL,
    )

    response = ApiClient(world.p.member).post(f"/api/hosts/{host.pk}/host-key/scan")

    assert_status(response, 400)
    assert response.body["detail"] == "A host on the local transport has no SSH host key."


# --- members of an investigation --------------------------------------------------------------


def test_a_member_places_lists_and_removes_a_host(world):
    client = ApiClient(world.p.member)
    path = f"/api/investigations/{world.inv}/members"

    placed = client.post(path, {"host": world.spare_host.pk, "side": "b", "role": "load_balancer"})

    assert_status(placed, 201)
    assert placed.body == {
        "id": placed.body["id"],
        "host": world.spare_host.pk,
        "host_name": "spare",
        "side": "b",
        "role": "load_balancer",
    }
    listed = client.get(path).body
    assert {(m["host_name"], m["side"], m["role"]) for m in listed} == {
        ("db-a", "a", "database"),
        ("spare", "b", "load_balancer"),
    }
    environment = client.get(f"/api/investigations/{world.inv}/timeline?kind=environment").body
    assert environment["items"][-1]["details"] == {
        "host": world.spare_host.pk,
        "side": "b",
        "role": "load_balancer",
        "added": True,
    }
    assert_status(client.delete(f"{path}/{placed.body['id']}"), 204)
    assert [m["host_name"] for m in client.get(path).body] == ["db-a"]


def test_the_same_host_may_be_placed_on_both_sides_but_not_twice_in_one_role(world):
    client = ApiClient(world.p.member)
    path = f"/api/investigations/{world.inv}/members"

    other_side = client.post(path, {"host": world.host.pk, "side": "b", "role": "database"})
    again = client.post(path, {"host": world.host.pk, "side": "a", "role": "database"})

    assert_status(other_side, 201)
    assert_names_field(again, "host", 400)


def test_a_host_of_another_team_cannot_be_placed(world):
    path = f"/api/investigations/{world.inv}/members"
    body = {"host": world.other_host.pk, "side": "a", "role": "service"}

    unseen = ApiClient(world.p.member).post(path, body)

    assert unseen.status_code in (400, 404)
    assert unseen.body["detail"]
    # Even someone who belongs to both teams may not mix their hosts.
    Membership.objects.create(team=world.other_team, user=world.p.member, role=Role.RESPONDER)
    mixed = ApiClient(world.p.member).post(path, body)
    assert_names_field(mixed, "host", 400)
    assert EnvironmentMember.objects.filter(host=world.other_host).count() == 0


@pytest.mark.parametrize(
    "body, field, status",
    [
        ({"side": "a", "role": "service"}, "host", 422),
        ({"host": "HOST", "role": "service"}, "side", 422),
        ({"host": "HOST", "side": "a"}, "role", 422),
        ({"host": "HOST", "side": "c", "role": "service"}, "side", 422),
        ({"host": "HOST", "side": "A", "role": "service"}, "side", 422),
        ({"host": "HOST", "side": "a", "role": "boss"}, "role", 422),
        ({"host": 0, "side": "a", "role": "service"}, "host", 422),
        ({"host": -1, "side": "a", "role": "service"}, "host", 422),
        ({"host": BIG_ID, "side": "a", "role": "service"}, "host", 422),
        ({"host": "db-a", "side": "a", "role": "service"}, "host", 422),
    ],
)
def test_bad_placements_are_refused_naming_the_field(world, body, field, status):
    body = {k: world.spare_host.pk if v == "HOST" else v for k, v in body.items()}

    response = ApiClient(world.p.member).post(f"/api/investigations/{world.inv}/members", body)

    assert_names_field(response, field, status)
    assert EnvironmentMember.objects.count() == 1


def test_an_unknown_host_or_placement_is_not_found(world):
    client = ApiClient(world.p.member)
    path = f"/api/investigations/{world.inv}/members"
    other = investigation_create(team=world.p.team, user=world.p.lead, title="Other")

    assert_status(client.post(path, {"host": 424242, "side": "a", "role": "service"}), 404)
    assert_status(client.delete(f"{path}/424242"), 404)
    # A placement of another investigation is not removed through this one.
    elsewhere = f"/api/investigations/{other.pk}/members/{world.placement.pk}"
    assert_status(client.delete(elsewhere), 404)
    for pk in BAD_IDS:
        assert_names_field(client.delete(f"{path}/{pk}"), "member_id", 422)
    assert EnvironmentMember.objects.count() == 1


# --- timeline ---------------------------------------------------------------------------------


def test_back_dated_events_come_back_in_time_order(personas):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}/timeline"
    now = timezone.now()
    posted = [
        ("an hour ago", now - timedelta(hours=1), "note", ""),
        ("three hours ago", now - timedelta(hours=3), "action", "restart"),
        ("two hours ago", now - timedelta(hours=2), "action", "rate_limit"),
        ("last year", now - timedelta(days=400), "note", ""),
    ]

    for summary, moment, kind, action in posted:
        body = {"occurred_at": iso(moment), "kind": kind, "summary": summary}
        if action:
            body["action"] = action
        response = client.post(path, body)
        assert_status(response, 201)
        assert response.body["author"] == "max"
        assert response.body["kind"] == kind and response.body["action"] == action

    events = client.get(path).body
    assert events["count"] == 5
    assert [e["summary"] for e in events["items"]] == [
        "last year",
        "three hours ago",
        "two hours ago",
        "an hour ago",
        "Investigation opened: Checkout p99 doubled on the new cloud",
    ]
    moments = [when(e["occurred_at"]) for e in events["items"]]
    assert moments == sorted(moments)
    assert abs(moments[0] - (now - timedelta(days=400))) < timedelta(seconds=1)


def test_an_event_without_a_time_happens_now(personas):
    before = timezone.now()

    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/timeline",
        {"kind": "note", "summary": "Now"},
    )

    assert_status(response, 201)
    assert before - timedelta(seconds=1) <= when(response.body["occurred_at"]) <= timezone.now()


def test_the_timeline_filters_by_kind_and_pages(personas):
    client = ApiClient(personas.viewer)
    path = f"/api/investigations/{personas.investigation.pk}/timeline"
    writer = ApiClient(personas.member)
    for n in range(3):
        writer.post(path, {"kind": "note", "summary": f"note {n}"})
    writer.post(path, {"kind": "action", "action": "scale_out", "summary": "added nodes"})

    notes = client.get(f"{path}?kind=note").body
    actions = client.get(f"{path}?kind=action").body
    page = client.get(f"{path}?limit=2&offset=1").body

    assert [e["summary"] for e in notes["items"]] == ["note 0", "note 1", "note 2"]
    assert [e["action"] for e in actions["items"]] == ["scale_out"]
    assert page["count"] == 5
    assert [e["summary"] for e in page["items"]] == ["note 0", "note 1"]
    assert_names_field(client.get(f"{path}?kind=gossip"), "kind", 400)


@pytest.mark.parametrize(
    "body, field, status",
    [
        ({"kind": "action", "summary": "restarted"}, "action", 400),
        ({"kind": "action", "action": "", "summary": "restarted"}, "action", 400),
        ({"kind": "note", "action": "restart", "summary": "x"}, "action", 400),
        ({"kind": "action", "action": "reboot", "summary": "x"}, "action", 422),
        ({"kind": "status", "summary": "x"}, "kind", 422),
        ({"kind": "change", "summary": "x"}, "kind", 422),
        ({"kind": "NOTE", "summary": "x"}, "kind", 422),
        ({"summary": "x"}, "kind", 422),
        ({"kind": "note"}, "summary", 422),
        ({"kind": "note", "summary": ""}, "summary", 400),
        ({"kind": "note", "summary": " \n "}, "summary", 400),
        ({"kind": "note", "summary": "s" * 100_001}, "summary", 400),
        ({"kind": "note", "summary": 5}, "summary", 422),
        ({"kind": "note", "summary": "x", "occurred_at": "FUTURE"}, "occurred_at", 400),
        (
            {"kind": "note", "summary": "x", "occurred_at": "9999-12-31T00:00:00Z"},
            "occurred_at",
            400,
        ),
        ({"kind": "note", "summary": "x", "occurred_at": "last tuesday"}, "occurred_at", 422),
        (
            {"kind": "note", "summary": "x", "occurred_at": "2024-02-30T00:00:00Z"},
            "occurred_at",
            422,
        ),
    ],
)
def test_bad_events_are_refused_naming_the_field(personas, body, field, status):
    if body.get("occurred_at") == "FUTURE":
        body["occurred_at"] = iso(timezone.now() + timedelta(days=30))

    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/timeline", body
    )

    assert_names_field(response, field, status)
    assert TimelineEvent.objects.count() == 1


def test_a_few_minutes_of_clock_skew_is_still_now(personas):
    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/timeline",
        {"kind": "note", "summary": "x", "occurred_at": iso(timezone.now() + timedelta(minutes=2))},
    )

    assert_status(response, 201)


@pytest.mark.parametrize(
    "occurred_at",
    ["0001-01-01T00:00:00+01:00", "0001-01-01T00:00:00Z", "1900-01-01T00:00:00-14:00"],
)
def test_extreme_event_times_are_stored_or_refused_never_a_server_error(personas, occurred_at):
    path = f"/api/investigations/{personas.investigation.pk}/timeline"

    response = ApiClient(personas.member).post(
        path, {"kind": "note", "summary": "old", "occurred_at": occurred_at}
    )

    if response.status_code == 201:
        assert when(response.body["occurred_at"]) == when(occurred_at)
        assert ApiClient(personas.member).get(path).status_code == 200
    else:
        assert_names_field(response, "occurred_at")


# --- bad input of every sort ------------------------------------------------------------------


def _write_paths(world: World) -> list[tuple[str, str]]:
    return [
        ("post", "/api/auth/token"),
        ("post", "/api/teams"),
        ("post", "/api/investigations"),
        ("patch", f"/api/investigations/{world.inv}"),
        ("patch", f"/api/investigations/{world.inv}/sides/a"),
        ("post", f"/api/investigations/{world.inv}/members"),
        ("post", f"/api/investigations/{world.inv}/timeline"),
        ("post", "/api/credentials"),
        ("post", "/api/hosts"),
        ("patch", f"/api/hosts/{world.host.pk}"),
        ("post", f"/api/teams/{world.p.team.pk}/members"),
        ("post", f"/api/investigations/{world.inv}/collections"),
        ("patch", f"/api/findings/{world.finding.pk}"),
        ("post", f"/api/hosts/{world.keyed_host.pk}/host-key/trust"),
    ]


@pytest.mark.parametrize(
    "text",
    [
        "{",
        '{"title": "x",}',
        "{'title': 'x'}",
        "title=x",
        '{"title": "x"} trailing',
        b"\xff\xfe\x00{",
    ],
    ids=["open-brace", "trailing-comma", "single-quotes", "form", "trailing-text", "not-utf8"],
)
def test_a_malformed_json_body_gets_400_with_a_detail(world, text):
    client = ApiClient(world.p.lead)

    for method, path in _write_paths(world):
        response = post_raw(client, path, text, method)
        assert response.status_code == 400, (path, response.status_code, response.content[:500])
        assert response.body["detail"], path


@pytest.mark.parametrize("text", ["[]", '"title"', "42", "null", "true", '[{"title": "x"}]'])
def test_a_json_body_that_is_not_an_object_is_refused(world, text):
    client = ApiClient(world.p.lead)

    answers = {path: post_raw(client, path, text, method) for method, path in _write_paths(world)}

    wrong = {
        path: (response.status_code, response.content[:200])
        for path, response in answers.items()
        if not 400 <= response.status_code < 500 or not response.body.get("detail")
    }
    assert wrong == {}


def test_a_json_string_body_is_not_read_as_an_object(personas):
    # "title" is a str, and str has a .title() method: it must not become the new title.
    path = f"/api/investigations/{personas.investigation.pk}"

    response = post_raw(ApiClient(personas.member), path, '"title"', "patch")

    assert 400 <= response.status_code < 500, (response.status_code, response.body)
    assert Investigation.objects.get().title == "Checkout p99 doubled on the new cloud"


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity", "1e999", "-1e999"])
@pytest.mark.parametrize("field", ["symptom_value_a", "symptom_value_b"])
def test_symptom_values_that_are_not_finite_are_refused(personas, field, value):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"

    created = post_raw(
        client,
        "/api/investigations",
        f'{{"team": {personas.team.pk}, "title": "t", "{field}": {value}}}',
    )
    patched = post_raw(client, path, f'{{"{field}": {value}}}', "patch")

    assert_names_field(created, field)
    assert_names_field(patched, field)
    assert Investigation.objects.count() == 1
    assert getattr(Investigation.objects.get(pk=personas.investigation.pk), field) is None


@pytest.mark.parametrize("value", ["NaN", "Infinity", "1e999"])
def test_non_finite_numbers_elsewhere_are_refused(world, value):
    client = ApiClient(world.p.member)

    for method, path, body, field in [
        (
            "post",
            "/api/hosts",
            '{"team": TEAM, "name": "n", "address": "h", "username": "u", "port": VALUE}',
            "port",
        ),
        ("patch", f"/api/hosts/{world.host.pk}", '{"port": VALUE}', "port"),
        (
            "post",
            f"/api/investigations/{world.inv}/members",
            '{"host": VALUE, "side": "a", "role": "service"}',
            "host",
        ),
        ("post", "/api/investigations", '{"team": VALUE, "title": "t"}', "team"),
    ]:
        text = body.replace("TEAM", str(world.p.team.pk)).replace("VALUE", value)
        assert_names_field(post_raw(client, path, text, method), field)


@pytest.mark.parametrize("pk", BAD_IDS)
def test_bad_ids_in_bodies_are_refused_naming_the_field(world, pk):
    client = ApiClient(world.p.member)

    for method, path, body, field in [
        ("post", "/api/investigations", {"team": pk, "title": "t"}, "team"),
        (
            "post",
            "/api/credentials",
            {"team": pk, "name": "k", "private_key": new_private_key()},
            "team",
        ),
        ("post", "/api/hosts", _host(world.p, team=pk), "team"),
        ("post", "/api/hosts", _host(world.p, credential=pk), "credential"),
        ("post", "/api/hosts", _host(world.p, jump_host=pk), "jump_host"),
        ("patch", f"/api/hosts/{world.host.pk}", {"jump_host": pk}, "jump_host"),
        (
            "post",
            f"/api/investigations/{world.inv}/members",
            {"host": pk, "side": "a", "role": "service"},
            "host",
        ),
    ]:
        assert_names_field(getattr(client, method)(path, body), field, 422)


def test_a_one_megabyte_title_is_refused_naming_title(personas):
    title = "T" * 1_000_000
    client = ApiClient(personas.member)

    created = client.post("/api/investigations", {"team": personas.team.pk, "title": title})
    patched = client.patch(f"/api/investigations/{personas.investigation.pk}", {"title": title})

    assert_names_field(created, "title", 400)
    assert_names_field(patched, "title", 400)
    assert title not in created.content.decode()
    assert Investigation.objects.get().title == "Checkout p99 doubled on the new cloud"


@pytest.mark.parametrize(
    "path, body, field",
    [
        ("/api/investigations", {"team": "TEAM", "title": "t", "severity": "urgent"}, "severity"),
        (
            "/api/investigations",
            {"team": "TEAM", "title": "t", "side_b_kind": "cloud"},
            "side_b_kind",
        ),
        (
            "/api/investigations",
            {"team": "TEAM", "title": "t", "symptom_direction": "up"},
            "symptom_direction",
        ),
        ("INV", {"status": "archived"}, "status"),
        ("INV", {"severity": "SEV1"}, "severity"),
        ("INV/sides/a", {"kind": "mainframe"}, "kind"),
        ("INV/timeline", {"kind": "gossip", "summary": "x"}, "kind"),
        ("INV/timeline", {"kind": "action", "action": "panic", "summary": "x"}, "action"),
        ("INV/members", {"host": "HOST", "side": "a", "role": "dba"}, "role"),
        ("INV/members", {"host": "HOST", "side": "z", "role": "service"}, "side"),
        ("TEAM_MEMBERS", {"username": "nina", "role": "owner"}, "role"),
    ],
)
def test_unknown_enum_values_are_refused_naming_the_field(world, path, body, field):
    path = path.replace("INV", f"/api/investigations/{world.inv}").replace(
        "TEAM_MEMBERS", f"/api/teams/{world.p.team.pk}/members"
    )
    body = {
        k: world.p.team.pk if v == "TEAM" else world.spare_host.pk if v == "HOST" else v
        for k, v in body.items()
    }
    method = "patch" if path.endswith(str(world.inv)) or path.endswith("/sides/a") else "post"

    response = getattr(ApiClient(world.p.lead), method)(path, body)

    assert_names_field(response, field, 422)


def test_unknown_fields_do_not_change_anything(personas):
    path = f"/api/investigations/{personas.investigation.pk}"

    response = ApiClient(personas.member).patch(
        path, {"team": 424242, "created_by": "otto", "id": 7, "status_code": 500}
    )

    assert response.status_code in (200, 422)
    investigation = Investigation.objects.get(pk=personas.investigation.pk)
    assert investigation.team_id == personas.team.pk
    assert investigation.created_by == personas.lead


@pytest.mark.parametrize("method", ["put", "options", "head"])
def test_an_unsupported_method_is_not_allowed(personas, method):
    client = ApiClient(personas.member)

    response = getattr(client.client, method)(
        f"/api/investigations/{personas.investigation.pk}", headers=client.headers
    )

    assert response.status_code == 405


# --- hostile strings --------------------------------------------------------------------------


HOSTILE_IDS = ["markup", "sql", "shell", "cjk", "emoji", "longest"]


@pytest.mark.parametrize("text", HOSTILE_STRINGS, ids=HOSTILE_IDS)
def test_hostile_strings_are_stored_intact(personas, text):
    client = ApiClient(personas.member)

    created = client.post(
        "/api/investigations",
        {
            "team": personas.team.pk,
            "title": text,
            "notes": text,
            "symptom_metric": text,
            "symptom_load": text,
            "side_a_label": text,
            "side_b_label": text,
        },
    )

    assert_status(created, 201)
    path = f"/api/investigations/{created.body['id']}"
    read = client.get(path).body
    assert read["title"] == text
    assert read["notes"] == text
    assert read["symptom"]["metric"] == text
    assert read["symptom"]["load"] == text
    assert [s["label"] for s in read["sides"]] == [text, text]
    event = client.post(f"{path}/timeline", {"kind": "note", "summary": text})
    assert_status(event, 201)
    assert client.get(f"{path}/timeline?kind=note").body["items"][0]["summary"] == text
    # And through PATCH, on the existing investigation.
    old = f"/api/investigations/{personas.investigation.pk}"
    patched = client.patch(old, {"title": text, "notes": text, "symptom_metric": text})
    assert_status(patched, 200)
    assert client.patch(f"{old}/sides/b", {"label": text}).body["label"] == text
    again = client.get(old).body
    assert (again["title"], again["notes"], again["symptom"]["metric"]) == (text, text, text)
    assert again["sides"][1]["label"] == text
    # Searching for it finds it, without breaking the query.
    found = client.get("/api/investigations", data={"q": text[:200]})
    assert_status(found, 200)
    assert created.body["id"] in [i["id"] for i in found.body["items"]]


@pytest.mark.parametrize("text", HOSTILE_STRINGS[:5], ids=HOSTILE_IDS[:5])
def test_hostile_names_of_hosts_teams_and_credentials_are_stored_intact(personas, text):
    client = ApiClient(personas.member)

    team = client.post("/api/teams", {"name": text})
    host = client.post("/api/hosts", _host(personas, name=text))
    credential = client.post(
        "/api/credentials",
        {"team": personas.team.pk, "name": text, "private_key": new_private_key()},
    )

    assert_status(team, 201)
    assert_status(host, 201)
    assert_status(credential, 201)
    assert (team.body["name"], host.body["name"], credential.body["name"]) == (text, text, text)
    assert client.get(f"/api/hosts/{host.body['id']}").body["name"] == text


@pytest.mark.parametrize("field", ["title", "notes", "symptom_metric"])
def test_a_nul_character_is_refused_by_name_never_a_server_error(personas, field):
    client = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}"

    response = client.patch(path, {field: "before\x00after"})

    # PostgreSQL text cannot hold NUL, so every database refuses it alike, as bad input.
    assert_names_field(response, field, 422)
    assert "NUL" in response.body["errors"][0]["message"]


def test_a_host_evidence_was_collected_from_is_kept_with_a_message(personas, settings):
    from django.core.management import call_command

    from investigations.demo import DEMO_TITLE
    from investigations.models import CollectionTarget, EnvironmentMember, Investigation

    settings.DEBUG = True  # load_demo runs in DEBUG only
    call_command("load_demo", verbosity=0)
    case = Investigation.objects.get(title=DEMO_TITLE)
    host = CollectionTarget.objects.filter(collection__investigation=case).first().host
    EnvironmentMember.objects.filter(host=host).delete()

    response = ApiClient(case.lead).delete(f"/api/hosts/{host.pk}")

    assert response.status_code == 400
    assert "Evidence was collected from this host" in response.body["detail"]
