"""The pages, tried by every persona: lead, member (responder), viewer, outsider, anonymous."""

import hashlib
import re
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from html import unescape
from html.parser import HTMLParser
from types import SimpleNamespace

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from collectors.facts import FactsSnapshot
from investigations import selectors
from investigations.choices import (
    EventKind,
    FindingStatus,
    HostRole,
    HostTransport,
    Role,
    Severity,
    SideKind,
    Status,
    TargetStatus,
)
from investigations.models import (
    ApiToken,
    Artifact,
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
from investigations.services.hostkeys import host_key_scan, host_key_scan_run
from investigations.services.inventory import credential_create, host_create, member_add
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
)
from investigations.services.targets import target_claim
from investigations.services.teams import team_create
from investigations.services.timeline import timeline_entry_add
from investigations.services.tokens import api_token_create
from investigations.tasks import collect_target
from tests.conftest import fresh, loaded_page, make_user
from tests.forms import error_in_card, field_card

pytestmark = pytest.mark.django_db

PERSONAS = ["lead", "member", "viewer", "outsider", "anonymous"]
LOGIN = "login"  # expected: a redirect to the sign-in page
HX = {"HTTP_HX_REQUEST": "true"}


def client_for(personas, who: str) -> Client:
    return Client() if who == "anonymous" else personas.client(getattr(personas, who))


def html(response) -> str:
    if response.streaming:
        return b"".join(response.streaming_content).decode(errors="replace")
    return response.content.decode()


def local_input(moment) -> str:
    """A time as a datetime-local input sends it (the server's zone: no cookie is set)."""
    return timezone.localtime(moment).strftime("%Y-%m-%dT%H:%M")


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


class World:
    """The personas plus a little inventory: a placed host, a spare host, a credential.

    Evidence and host keys are made only by the cases that need them: a collection run on
    this machine (the local transport), a finding, a real sshd test host to scan.
    """

    def __init__(self, personas, make_key, request=None):
        self.personas = personas
        self.make_key = make_key
        self.request = request
        self.team = personas.team
        self.investigation = personas.investigation
        self.other_team = Team.objects.get(name="Another team")
        self.host = host_create(
            team=self.team, name="web-1", address="10.0.0.1", port=22, username="perf"
        )
        self.spare = host_create(
            team=self.team, name="web-2", address="10.0.0.2", port=22, username="perf"
        )
        self.placed = member_add(
            investigation=self.investigation,
            user=personas.lead,
            host=self.host,
            side_key="a",
            role=HostRole.SERVICE,
        )
        self.viewer_membership = Membership.objects.get(team=self.team, user=personas.viewer)
        make_user("nina")

    @cached_property
    def key(self):
        return self.make_key()

    @cached_property
    def credential(self):
        return credential_create(
            team=self.team,
            user=self.personas.lead,
            name="spare key",
            private_key=self.make_key().text,
        )

    # --- evidence: a second investigation of the team, with two hosts on this machine ----

    @cached_property
    def local_investigation(self) -> Investigation:
        settings = self.request.getfixturevalue("settings")
        # The local transport is on by default (DEBUG); these hosts need it whatever the env.
        settings.LOCAL_TRANSPORT = True
        # The raw outputs are files: this test's own, removed with it.
        settings.MEDIA_ROOT = str(self.request.getfixturevalue("tmp_path") / "media")
        # Run one after the other here, the targets need not wait to start together.
        settings.COLLECTION_START_DELAY_MS = 0
        investigation = investigation_create(
            team=self.team,
            user=self.personas.lead,
            title="Two app servers on one machine",
            side_a_label="app A",
            side_b_label="app B",
        )
        for name, side in (("app-a", "a"), ("app-b", "b")):
            host = host_create(
                team=self.team,
                name=name,
                address="127.0.0.1",
                port=22,
                username="root",
                transport=HostTransport.LOCAL,
            )
            member_add(
                investigation=investigation,
                user=self.personas.member,
                host=host,
                side_key=side,
                role=HostRole.SERVICE,
            )
        return investigation

    @cached_property
    def local_run(self) -> Collection:
        """A facts collection really run on this machine, each target by the task itself."""
        collection = collection_request(
            investigation=self.local_investigation, user=self.personas.member
        )
        for target in collection.targets.all():
            collect_target.apply(args=[target.pk])
        ended = {t.host.name: (t.status, t.error) for t in collection.targets.all()}
        assert ended == {
            "app-a": (TargetStatus.SUCCEEDED, ""),
            "app-b": (TargetStatus.SUCCEEDED, ""),
        }
        return collection

    @cached_property
    def artifact(self) -> Artifact:
        return self.local_run.artifacts.get(target__host__name="app-a")

    @cached_property
    def finding(self) -> Finding:
        """A governor finding, from facts stored as a finished collection stores them."""
        collection = collection_request(
            investigation=self.local_investigation, user=self.personas.member
        )
        for target in collection.targets.select_related("side"):
            target = target_claim(target_id=target.pk, seconds=60)
            governor = "powersave" if target.side.key == "a" else "performance"
            facts = {**DIFF_BASE, "cpu.governor": governor}
            facts_store(target=target, snapshot=FactsSnapshot(facts=facts))
        return Finding.objects.get(investigation=self.local_investigation, rule="cpu_governor")

    # --- host keys: a host that is a real sshd on loopback ------------------------------

    @cached_property
    def sshd(self):
        return self.request.getfixturevalue("start_host")("keyed", dump=None)

    @cached_property
    def keyed_host(self) -> Host:
        return host_create(
            team=self.team,
            name="keyed",
            address=self.sshd.address,
            port=self.sshd.port,
            username=self.sshd.username,
        )

    @cached_property
    def scanned_host(self) -> Host:
        """The keyed host after a real scan: its key waits for a person to trust it."""
        host_key_scan(host=self.keyed_host)
        return fresh(self.keyed_host)


DIFF_BASE = {"kernel.release": "6.1.0", "system.boot_id": "x", "mm.swappiness": 60}


@pytest.fixture
def world(personas, make_key, request):
    return World(personas, make_key, request)


def investigation_form(**overrides) -> dict:
    data = {
        "title": "Checkout p99 doubled on the new cloud",
        "severity": Severity.SEV3,
        "tags": "",
        "symptom_metric": "",
        "symptom_unit": "",
        "symptom_load": "",
        "symptom_value_a": "",
        "symptom_value_b": "",
        "symptom_direction": "lower",
        "started_at": "",
        "detected_at": "",
        "mitigated_at": "",
        "resolved_at": "",
        "lead": "",
        "notes": "",
    }
    data.update(overrides)
    return data


def new_investigation_form(team, **overrides) -> dict:
    data = investigation_form(
        team=team.pk,
        title="TPS halves in containers",
        side_a_label="containers",
        side_a_kind=SideKind.CONTAINER,
        side_b_label="VMs",
        side_b_kind=SideKind.VM,
    )
    data.update(overrides)
    return data


# --- every page, by every persona ----------------------------------------------------------


@dataclass
class Case:
    name: str
    method: str
    url: Callable
    expected: dict  # persona -> status code, or LOGIN
    data: Callable = lambda w, who: {}
    effect: Callable | None = None  # for writes: did the write happen?
    extra: dict | None = None
    check: Callable | None = None  # for reads: (world, response), what an allowed reader gets


def expect(lead, member, viewer, outsider, anonymous=LOGIN) -> dict:
    return dict(lead=lead, member=member, viewer=viewer, outsider=outsider, anonymous=anonymous)


def inv_url(suffix=""):
    return lambda w: f"/investigations/{w.investigation.pk}/{suffix}"


READS = [
    Case("investigation list", "get", lambda w: "/investigations/", expect(200, 200, 200, 200)),
    Case("investigation detail", "get", inv_url(), expect(200, 200, 200, 404)),
    Case("investigation edit form", "get", inv_url("edit/"), expect(200, 200, 403, 404)),
    Case("timeline", "get", inv_url("timeline/"), expect(200, 200, 200, 404), extra=HX),
    Case("team list", "get", lambda w: "/teams/", expect(200, 200, 200, 200)),
    Case("team detail", "get", lambda w: f"/teams/{w.team.pk}/", expect(200, 200, 200, 404)),
    Case("host list", "get", lambda w: "/hosts/", expect(200, 200, 200, 200)),
    Case("host detail", "get", lambda w: f"/hosts/{w.host.pk}/", expect(200, 200, 200, 404)),
    Case("credential list", "get", lambda w: "/credentials/", expect(200, 200, 200, 200)),
    Case("profile", "get", lambda w: "/profile/", expect(200, 200, 200, 200)),
    Case(
        "facts diff",
        "get",
        lambda w: f"/investigations/{w.finding.investigation_id}/facts/diff/",
        expect(200, 200, 200, 404),
        check=lambda w, r: _shows_diff(r, only_differences=False),
    ),
    Case(
        "facts diff, differences only",
        "get",
        lambda w: f"/investigations/{w.finding.investigation_id}/facts/diff/?only=1",
        expect(200, 200, 200, 404),
        check=lambda w, r: _shows_diff(r, only_differences=True),
    ),
    Case(
        "collection progress",
        "get",
        lambda w: f"/collections/{w.local_run.pk}/",
        # 286: every target ended, so htmx swaps this answer in and stops polling.
        expect(286, 286, 286, 404),
        extra=HX,
        check=lambda w, r: _shows_collection(w, r),
    ),
    Case(
        "collection without htmx",
        "get",
        lambda w: f"/collections/{w.local_run.pk}/",
        expect(302, 302, 302, 404),
        check=lambda w, r: _leads_to_evidence(w, r),
    ),
    Case(
        "artifact download",
        "get",
        lambda w: f"/artifacts/{w.artifact.pk}/",
        expect(200, 200, 200, 404),
        check=lambda w, r: _is_the_artifact(w, r),
    ),
]


def _shows_diff(response, *, only_differences: bool):
    page = html(response)
    assert "app-a" in page and "app-b" in page
    assert "cpu.governor" in page and "powersave" in page and "performance" in page
    assert ("kernel.release" in page) is not only_differences


def _shows_collection(world, response):
    page = html(response)
    assert "<html" not in page  # the partial alone
    assert "hx-trigger" not in page
    assert "HX-Request" in response["Vary"]
    assert "app-a" in page and "app-b" in page
    assert page.count("target-succeeded") == 2
    assert f'href="/artifacts/{world.artifact.pk}/"' in page


def _leads_to_evidence(world, response):
    assert response.url == f"/investigations/{world.local_investigation.pk}/#evidence"


def _is_the_artifact(world, response):
    downloaded = b"".join(response.streaming_content)
    with world.artifact.file.open("rb") as stored:
        kept = stored.read()
    assert downloaded == kept
    assert len(downloaded) == world.artifact.size > 0
    assert hashlib.sha256(downloaded).hexdigest() == world.artifact.sha256
    assert response["Content-Type"] == "text/plain; charset=utf-8"
    assert response["Content-Disposition"] == 'attachment; filename="facts-app-a-a.txt"'


WRITES = [
    Case(
        "investigation edit",
        "post",
        inv_url("edit/"),
        expect(302, 302, 403, 404),
        data=lambda w, who: investigation_form(title=f"edited by {who}"),
        effect=lambda w: fresh(w.investigation).title.startswith("edited by"),
    ),
    Case(
        "status button",
        "post",
        inv_url("status/"),
        expect(302, 302, 403, 404),
        data=lambda w, who: {"status": Status.MITIGATED},
        effect=lambda w: fresh(w.investigation).status == Status.MITIGATED,
    ),
    Case(
        "side edit",
        "post",
        inv_url("sides/a/"),
        expect(302, 302, 403, 404),
        data=lambda w, who: {"a-label": "EKS", "a-kind": SideKind.CONTAINER},
        effect=lambda w: w.investigation.sides.get(key="a").label == "EKS",
    ),
    Case(
        "placing a host",
        "post",
        inv_url("members/"),
        expect(302, 302, 403, 404),
        data=lambda w, who: {"host": w.spare.pk, "side": "b", "role": HostRole.SERVICE},
        effect=lambda w: EnvironmentMember.objects.filter(host=w.spare).exists(),
    ),
    Case(
        "removing a host",
        "post",
        lambda w: f"/investigations/{w.investigation.pk}/members/{w.placed.pk}/delete/",
        expect(302, 302, 403, 404),
        effect=lambda w: not EnvironmentMember.objects.filter(pk=w.placed.pk).exists(),
    ),
    Case(
        "timeline entry",
        "post",
        inv_url("timeline/"),
        expect(302, 302, 403, 404),
        data=lambda w, who: {"kind": EventKind.NOTE, "summary": f"note by {who}"},
        effect=lambda w: TimelineEvent.objects.filter(summary__startswith="note by").exists(),
    ),
    Case(
        "opening an investigation",
        "post",
        lambda w: "/investigations/new/",
        # The outsider cannot choose the team: the form says so and nothing is made.
        expect(302, 302, 403, 400),
        data=lambda w, who: new_investigation_form(w.team, title=f"opened by {who}"),
        effect=lambda w: Investigation.objects.filter(title__startswith="opened by").exists(),
    ),
    Case(
        "inviting a team member",
        "post",
        lambda w: f"/teams/{w.team.pk}/",
        expect(302, 403, 403, 404),
        data=lambda w, who: {"username": "nina", "role": Role.VIEWER},
        effect=lambda w: w.team.invitations.filter(username="nina").exists(),
    ),
    Case(
        "changing a role",
        "post",
        lambda w: f"/memberships/{w.viewer_membership.pk}/",
        expect(302, 403, 403, 404),
        data=lambda w, who: {"role": Role.RESPONDER},
        effect=lambda w: fresh(w.viewer_membership).role == Role.RESPONDER,
    ),
    Case(
        "setting the webhook",
        "post",
        lambda w: f"/teams/{w.team.pk}/webhook/",
        expect(302, 403, 403, 404),
        data=lambda w, who: {"webhook_url": "https://hooks.example.com/T1"},
        effect=lambda w: fresh(w.team).webhook_url == "https://hooks.example.com/T1",
    ),
    Case(
        "creating a team",
        "post",
        lambda w: "/teams/",
        expect(302, 302, 302, 302),
        data=lambda w, who: {"name": f"Team of {who}"},
        effect=lambda w: Team.objects.filter(name__startswith="Team of").exists(),
    ),
    Case(
        "adding a host",
        "post",
        lambda w: "/hosts/",
        expect(302, 302, 403, 400),
        data=lambda w, who: {
            "team": w.team.pk,
            "name": f"host-{who}",
            "address": "10.0.0.9",
            "port": 22,
            "username": "perf",
        },
        effect=lambda w: Host.objects.filter(name__startswith="host-").exists(),
    ),
    Case(
        "editing a host",
        "post",
        lambda w: f"/hosts/{w.host.pk}/",
        expect(302, 302, 403, 404),
        data=lambda w, who: {
            "name": "web-1",
            "address": "10.0.0.1",
            "port": 2222,
            "username": "perf",
        },
        effect=lambda w: fresh(w.host).port == 2222,
    ),
    Case(
        "deleting a host",
        "post",
        lambda w: f"/hosts/{w.spare.pk}/delete/",
        expect(302, 302, 403, 404),
        effect=lambda w: not Host.objects.filter(pk=w.spare.pk).exists(),
    ),
    Case(
        "adding a credential",
        "post",
        lambda w: "/credentials/",
        expect(302, 302, 403, 400),
        data=lambda w, who: {"team": w.team.pk, "name": f"key-{who}", "private_key": w.key.text},
        effect=lambda w: Credential.objects.filter(name__startswith="key-").exists(),
    ),
    Case(
        "deleting a credential",
        "post",
        lambda w: f"/credentials/{w.credential.pk}/delete/",
        expect(302, 302, 403, 404),
        effect=lambda w: not Credential.objects.filter(name="spare key").exists(),
    ),
    Case(
        "creating a token",
        "post",
        lambda w: "/profile/",
        expect(200, 200, 200, 200),
        data=lambda w, who: {"name": "CI"},
        effect=lambda w: ApiToken.objects.exists(),
    ),
    Case(
        "collecting host facts",
        "post",
        inv_url("collections/"),
        expect(302, 302, 403, 404),
        data=lambda w, who: {"service": "java", "paths": "/var/lib/postgresql /data"},
        effect=lambda w: (
            [(c.parameters, c.targets.count()) for c in Collection.objects.all()]
            == [({"service": "java", "paths": ["/var/lib/postgresql", "/data"]}, 1)]
        ),
    ),
    Case(
        "confirming a finding",
        "post",
        lambda w: f"/findings/{w.finding.pk}/status/",
        expect(302, 302, 403, 404),
        data=lambda w, who: {"status": FindingStatus.CONFIRMED},
        effect=lambda w: fresh(w.finding).status == FindingStatus.CONFIRMED,
    ),
    Case(
        "scanning a host key",
        "post",
        lambda w: f"/hosts/{w.keyed_host.pk}/host-key/scan/",
        expect(302, 302, 403, 404),
        # Asked for: a worker scans (the end-to-end tests run one).
        effect=lambda w: getattr(fresh(w.keyed_host).job, "status", "") == "scanning",
    ),
    Case(
        "trusting a scanned host key",
        "post",
        lambda w: f"/hosts/{w.scanned_host.pk}/host-key/trust/",
        expect(302, 302, 403, 404),
        data=lambda w, who: {"fingerprint": w.scanned_host.scanned_key_fingerprint},
        effect=lambda w: fresh(w.keyed_host).host_key_fingerprint == w.sshd.host_key.fingerprint,
    ),
]


def _ids(cases):
    return [case.name for case in cases]


def check_status(response, expected):
    if expected == LOGIN:
        assert response.status_code == 302
        assert response.url.startswith("/accounts/login/?next=")
    else:
        assert response.status_code == expected, html(response)[:800]


@pytest.mark.parametrize("who", PERSONAS)
@pytest.mark.parametrize("case", READS, ids=_ids(READS))
def test_each_page_is_read_by_members_only(world, case, who):
    response = client_for(world.personas, who).get(case.url(world), **(case.extra or {}))

    check_status(response, case.expected[who])
    if case.check is not None and who in ("lead", "member", "viewer"):
        case.check(world, response)


@pytest.mark.parametrize("who", PERSONAS)
@pytest.mark.parametrize("case", WRITES, ids=_ids(WRITES))
def test_each_write_is_done_only_by_those_allowed(world, case, who):
    url = case.url(world)
    data = case.data(world, who)

    response = client_for(world.personas, who).post(url, data)

    check_status(response, case.expected[who])
    if who == "outsider" and "outsider" not in _writers(case) and response.status_code == 200:
        # The team is not among the outsider's choices; the form says so.
        assert "Select a valid choice." in html(response)
    happened = case.effect(world)
    assert happened == (who in _writers(case)), (
        f"{who}: the write {'happened' if happened else 'did not happen'}"
    )


def _writers(case) -> set[str]:
    """Who may make the change: a success code, except the outsider's form-error 200."""
    allowed = {who for who, code in case.expected.items() if code in (200, 302)}
    if case.expected["outsider"] == 200 and case.name != "creating a token":
        allowed.discard("outsider")
    return allowed


# (members/ answers GET with the environment: the address a failed placing leaves, see
# test_placing_hosts.py.)
POST_ONLY = ["status/", "sides/a/", "collections/"]


@pytest.mark.parametrize("suffix", POST_ONLY)
def test_post_only_pages_refuse_get(world, suffix):
    response = world.personas.client(world.personas.member).get(inv_url(suffix)(world))

    assert response.status_code == 405


@pytest.mark.parametrize(
    "url",
    [
        lambda w: f"/findings/{w.finding.pk}/status/",
        lambda w: f"/hosts/{w.host.pk}/host-key/scan/",
        lambda w: f"/hosts/{w.host.pk}/host-key/trust/",
    ],
    ids=["finding status", "host key scan", "host key trust"],
)
def test_evidence_and_host_key_buttons_refuse_get(world, url):
    response = world.personas.client(world.personas.member).get(url(world))

    assert response.status_code == 405
    assert fresh(world.host).scanned_key_fingerprint == ""


def test_a_viewer_sees_no_writing_controls(world):
    page = html(world.personas.client(world.personas.viewer).get(inv_url()(world)))

    assert "Checkout p99 doubled" in page
    assert 'id="timeline-form"' not in page
    assert "/edit/" not in page
    assert 'name="status"' not in page
    assert "Place host" not in page


# --- the investigation list ----------------------------------------------------------------


@pytest.fixture
def several(personas):
    kafka = investigation_create(
        team=personas.team,
        user=personas.member,
        title="Kafka lag on B",
        severity=Severity.SEV1,
        tags="Kafka, network",
        notes="perf shows memcpy everywhere",
    )
    investigation_set_status(investigation=kafka, user=personas.member, status=Status.MITIGATED)
    search_team = team_create(user=personas.lead, name="Search SRE")
    investigation_create(team=search_team, user=personas.lead, title="Search latency on VMs")
    investigation_create(
        team=Team.objects.get(name="Another team"), user=personas.outsider, title="Secret of otto"
    )
    return SimpleNamespace(search_team=search_team)


def titles_on(response) -> set[str]:
    found = set()
    for title in [
        "Checkout p99 doubled",
        "Kafka lag on B",
        "Search latency on VMs",
        "Secret of otto",
    ]:
        if title in html(response):
            found.add(title)
    return found


@pytest.mark.parametrize(
    "query, expected",
    [
        ("", {"Checkout p99 doubled", "Kafka lag on B", "Search latency on VMs"}),
        ("?status=mitigated", {"Kafka lag on B"}),
        ("?status=open", {"Checkout p99 doubled", "Search latency on VMs"}),
        ("?severity=sev1", {"Kafka lag on B"}),
        ("?tag=KAFKA", {"Kafka lag on B"}),
        ("?q=memcpy", {"Kafka lag on B"}),
        ("?q=checkout", {"Checkout p99 doubled"}),
        ("?q=netw", {"Kafka lag on B"}),
        ("?status=open&severity=sev1", set()),
    ],
)
def test_the_list_filters(personas, several, query, expected):
    response = personas.client(personas.lead).get(f"/investigations/{query}")

    assert response.status_code == 200
    assert titles_on(response) == expected


def test_the_list_filters_by_team(personas, several):
    client = personas.client(personas.lead)

    response = client.get(f"/investigations/?team={several.search_team.pk}")

    assert titles_on(response) == {"Search latency on VMs"}


def test_the_list_shows_only_the_users_teams(personas, several):
    assert titles_on(personas.client(personas.viewer).get("/investigations/")) == {
        "Checkout p99 doubled",
        "Kafka lag on B",
    }
    assert titles_on(personas.client(personas.outsider).get("/investigations/")) == {
        "Secret of otto"
    }


def test_filtering_by_another_teams_id_shows_nothing_of_it(personas, several):
    other = Team.objects.get(name="Another team")

    response = personas.client(personas.lead).get(f"/investigations/?team={other.pk}")

    assert titles_on(response) == set()
    assert "No investigation matches these filters." in html(response)


def test_the_list_is_paginated(personas):
    for number in range(30):
        investigation_create(
            team=personas.team, user=personas.member, title=f"Case number {number:02}"
        )
    client = personas.client(personas.member)

    first = client.get("/investigations/")
    second = client.get("/investigations/?page=2")

    assert len(first.context["page"].object_list) == 25
    assert "Page 1 of 2 · 31 in all" in html(first)
    assert 'href="?page=2"' in html(first)
    assert second.status_code == 200
    assert len(second.context["page"].object_list) == 6
    assert "Page 2 of 2" in html(second)
    # Newest first: the oldest (the personas' own) is on the last page.
    assert "Checkout p99 doubled" in html(second)
    assert "Checkout p99 doubled" not in html(first)


def test_the_pages_keep_the_filters(personas):
    for number in range(30):
        investigation_create(
            team=personas.team, user=personas.member, title=f"Case number {number:02}"
        )

    first = personas.client(personas.member).get("/investigations/?status=open&q=case")

    assert first.context["page"].paginator.count == 30
    [next_link] = re.findall(r'href="([^"]*page=2)"', html(first))
    assert unescape(next_link) == "?status=open&q=case&page=2"
    second = personas.client(personas.member).get("/investigations/" + unescape(next_link))
    assert len(second.context["page"].object_list) == 5


def test_a_user_without_a_team_is_told_to_join_one(db):
    client = Client()
    client.force_login(make_user("loner"))

    response = client.get("/investigations/")

    assert "You are not in a team yet" in html(response)
    assert "/investigations/new/" not in html(response)


def test_a_team_without_investigations_says_so(personas):
    response = personas.client(personas.outsider).get("/investigations/")

    assert "No investigations yet." in html(response)
    assert "Open the first one" in html(response)


def test_a_viewer_is_not_offered_to_open_an_investigation(personas):
    Investigation.objects.all().delete()

    response = personas.client(personas.viewer).get("/investigations/")

    assert "No investigations yet." in html(response)
    assert "/investigations/new/" not in html(response)


def test_filters_without_a_match_say_so(personas):
    response = personas.client(personas.member).get("/investigations/?q=nothing-like-this")

    assert "No investigation matches these filters." in html(response)


# --- opening and editing -------------------------------------------------------------------


def test_opening_an_investigation_leads_to_its_page(personas):
    response = personas.client(personas.member).post(
        "/investigations/new/", new_investigation_form(personas.team, tags="CPU, cpu, Kernel")
    )

    investigation = Investigation.objects.get(title="TPS halves in containers")
    assert response.status_code == 302
    assert response.url == f"/investigations/{investigation.pk}/"
    assert investigation.lead == personas.member
    assert sorted(investigation.tags.values_list("name", flat=True)) == ["cpu", "kernel"]
    assert list(investigation.sides.values_list("label", flat=True)) == ["containers", "VMs"]


def test_a_viewer_is_not_offered_the_new_investigation_form(personas):
    response = personas.client(personas.viewer).get("/investigations/new/")

    assert response.status_code in (302, 403)


def test_an_impossible_time_order_is_shown_on_the_new_form_with_what_was_typed(personas):
    data = new_investigation_form(
        personas.team, started_at="2025-01-02T10:00", detected_at="2025-01-02T09:30"
    )

    response = personas.client(personas.member).post("/investigations/new/", data)

    assert response.status_code in (200, 400)
    page = html(response)
    assert response.context["form"].errors["detected_at"] == [
        "Detected cannot be before started (2025-01-02 10:00 UTC)."
    ]
    assert "Detected cannot be before started (2025-01-02 10:00 UTC)." in page
    assert 'value="2025-01-02T09:30"' in page
    assert 'value="2025-01-02T10:00"' in page
    assert 'value="TPS halves in containers"' in page
    assert not Investigation.objects.filter(title="TPS halves in containers").exists()


def test_editing_saves_and_goes_back_to_the_investigation(personas):
    investigation = personas.investigation

    response = personas.client(personas.member).post(
        f"/investigations/{investigation.pk}/edit/",
        investigation_form(
            title="Checkout p99 tripled",
            severity=Severity.SEV2,
            lead=personas.member.pk,
            symptom_value_a="1445",
            symptom_value_b="557",
            started_at="2025-01-02T10:00",
            tags="latency",
        ),
    )

    assert response.status_code == 302
    assert response.url == f"/investigations/{investigation.pk}/"
    saved = fresh(investigation)
    assert (saved.title, saved.severity, saved.lead) == (
        "Checkout p99 tripled",
        Severity.SEV2,
        personas.member,
    )
    assert saved.started_at.isoformat() == "2025-01-02T10:00:00+00:00"
    [change] = TimelineEvent.objects.filter(investigation=investigation, kind=EventKind.CHANGE)
    assert set(change.details["changes"]) == {
        "title",
        "severity",
        "lead",
        "symptom_value_a",
        "symptom_value_b",
        "started_at",
        "tags",
    }
    detail = loaded_page(personas.client(personas.member), response.url)
    assert "2.59×" in detail


def test_an_impossible_time_order_is_shown_on_the_edit_form_with_what_was_typed(personas):
    investigation = personas.investigation

    response = personas.client(personas.member).post(
        f"/investigations/{investigation.pk}/edit/",
        investigation_form(
            title="Typed but not saved",
            mitigated_at="2025-03-01T12:00",
            resolved_at="2025-03-01T11:15",
        ),
    )

    page = html(response)
    assert response.status_code in (200, 400)
    assert "Resolved cannot be before mitigated (2025-03-01 12:00 UTC)." in page
    assert 'value="2025-03-01T11:15"' in page
    assert 'value="Typed but not saved"' in page
    assert fresh(investigation).title == "Checkout p99 doubled on the new cloud"
    assert fresh(investigation).resolved_at is None


def test_a_time_in_the_future_is_shown_on_the_form(personas):
    future = local_input(timezone.now() + timedelta(days=1))

    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/edit/", investigation_form(detected_at=future)
    )

    assert "Detected lies in the future." in html(response)
    assert fresh(personas.investigation).detected_at is None


class FormReader(HTMLParser):
    """What a browser would send for each form of a page, as it stands."""

    def __init__(self):
        super().__init__()
        self.forms: list[dict] = []
        self._form = None
        self._select = None
        self._textarea = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form":
            self._form = {"action": attrs.get("action"), "fields": {}}
            self.forms.append(self._form)
        elif self._form is None:
            return
        elif tag == "input" and attrs.get("name"):
            if attrs.get("type") in ("checkbox", "radio") and "checked" not in attrs:
                return
            self._form["fields"][attrs["name"]] = attrs.get("value") or ""
        elif tag == "select":
            self._select = attrs["name"]
            self._form["fields"][self._select] = None
        elif tag == "option" and self._select:
            fields = self._form["fields"]
            if fields[self._select] is None or "selected" in attrs:
                fields[self._select] = attrs.get("value", "")
        elif tag == "textarea":
            self._textarea = attrs["name"]
            self._form["fields"][self._textarea] = ""

    def handle_endtag(self, tag):
        if tag == "form":
            self._form = None
        elif tag == "select":
            self._select = None
        elif tag == "textarea" and self._textarea:
            # A browser drops the newline that opens a textarea's content.
            fields = self._form["fields"]
            fields[self._textarea] = fields[self._textarea].removeprefix("\n")
            self._textarea = None

    def handle_data(self, data):
        if self._textarea:
            self._form["fields"][self._textarea] += data


def form_as_sent(response, action=None) -> dict:
    reader = FormReader()
    reader.feed(html(response))
    [form] = [
        f for f in reader.forms if f["action"] == action and "csrfmiddlewaretoken" in f["fields"]
    ]
    return {k: v for k, v in form["fields"].items() if k != "csrfmiddlewaretoken"}


def test_saving_the_edit_form_unchanged_records_no_change(personas):
    investigation = personas.investigation
    investigation_update(
        investigation=investigation,
        user=personas.lead,
        symptom_metric="p99 latency",
        symptom_value_a=1445.5,
        notes="first line\nsecond line",
        tags=["latency"],
    )
    # The status buttons stamp the time to the second, as they happen.
    investigation_set_status(
        investigation=investigation, user=personas.member, status=Status.MITIGATED
    )
    client = personas.client(personas.member)
    before = TimelineEvent.objects.filter(kind=EventKind.CHANGE).count()
    mitigated_at = fresh(investigation).mitigated_at

    form = form_as_sent(client.get(f"/investigations/{investigation.pk}/edit/"))
    response = client.post(f"/investigations/{investigation.pk}/edit/", form)

    assert response.status_code == 302
    assert TimelineEvent.objects.filter(kind=EventKind.CHANGE).count() == before, (
        TimelineEvent.objects.filter(kind=EventKind.CHANGE).last().details
    )
    assert fresh(investigation).mitigated_at == mitigated_at


# --- status buttons ------------------------------------------------------------------------


def test_a_member_marks_the_investigation_mitigated(personas):
    client = personas.client(personas.member)

    response = client.post(
        f"/investigations/{personas.investigation.pk}/status/", {"status": Status.MITIGATED}
    )

    assert response.status_code == 302
    assert response.url == f"/investigations/{personas.investigation.pk}/"
    assert fresh(personas.investigation).status == Status.MITIGATED
    assert fresh(personas.investigation).mitigated_at is not None
    page = loaded_page(client, response.url)
    assert "Status: Open → Mitigated" in page


def test_closing_needs_a_lead(personas):
    url = f"/investigations/{personas.investigation.pk}/status/"

    refused = personas.client(personas.member).post(url, {"status": Status.CLOSED})
    assert refused.status_code == 403
    assert fresh(personas.investigation).status == Status.OPEN

    closed = personas.client(personas.lead).post(
        url, {"status": Status.CLOSED, "reason": "A false alarm."}
    )
    assert closed.status_code == 302
    assert fresh(personas.investigation).status == Status.CLOSED


def test_only_a_lead_is_offered_the_close_button(personas):
    url = f"/investigations/{personas.investigation.pk}/"

    assert "Mark closed" not in loaded_page(personas.client(personas.member), url)
    assert "Mark mitigated" in loaded_page(personas.client(personas.member), url)
    # Without a confirmed root cause, the lead closes saying why.
    assert "Close without a root cause" in loaded_page(personas.client(personas.lead), url)


def test_a_closed_investigation_offers_only_reopening(personas):
    investigation_set_status(
        investigation=personas.investigation,
        user=personas.lead,
        status=Status.CLOSED,
        reason="A drill.",
    )

    page = loaded_page(
        personas.client(personas.member), f"/investigations/{personas.investigation.pk}/"
    )

    assert "Reopen" in page
    assert "Mark mitigated" not in page


def test_a_refused_move_is_explained_on_the_page(personas):
    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/status/",
        {"status": Status.OPEN},
        follow=True,
    )

    assert "The investigation is already open." in html(response)


# --- sides and hosts -----------------------------------------------------------------------


def test_a_member_edits_a_side(personas):
    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/sides/b/",
        {"b-label": "bare metal rack 7", "b-kind": SideKind.BARE_METAL},
    )

    assert response.status_code == 302
    assert response.url == f"/investigations/{personas.investigation.pk}/#environment"
    side = personas.investigation.sides.get(key="b")
    assert (side.label, side.kind) == ("bare metal rack 7", SideKind.BARE_METAL)


def test_a_side_without_a_label_is_refused_with_a_message(personas):
    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/sides/a/",
        {"a-label": "", "a-kind": SideKind.VM},
    )

    # Beside the side's own label field, its details open, the kind chosen kept.
    assert response.status_code == 400
    edit = html(response).split("Edit side A", 1)[1].split("</form>", 1)[0]
    assert "This field is required." in edit
    assert '<option value="vm" selected>' in edit
    assert personas.investigation.sides.get(key="a").label == "new cloud"


def test_there_is_no_third_side(personas):
    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/sides/c/", {"c-label": "x", "c-kind": "vm"}
    )

    assert response.status_code == 404


def test_a_placed_host_shows_in_the_pairs(world):
    client = world.personas.client(world.personas.member)

    response = client.post(
        f"/investigations/{world.investigation.pk}/members/",
        {"host": world.spare.pk, "side": "b", "role": HostRole.SERVICE},
        follow=True,
    )

    assert (
        response.redirect_chain[-1][0] == f"/investigations/{world.investigation.pk}/#environment"
    )
    page = loaded_page(client, f"/investigations/{world.investigation.pk}/")
    assert "Placed web-2 on side B (old cloud) as service" in page
    panel = client.get(
        f"/investigations/{world.investigation.pk}/panels/environment/", HTTP_HX_REQUEST="true"
    )
    pairs = panel.context["pairs"]
    assert [(p.a.host.name, p.b.host.name) for p in pairs] == [("web-1", "web-2")]


def test_a_host_of_another_team_cannot_be_placed(world):
    foreign = host_create(
        team=world.other_team, name="theirs", address="10.9.9.9", port=22, username="otto"
    )

    response = world.personas.client(world.personas.member).post(
        f"/investigations/{world.investigation.pk}/members/",
        {"host": foreign.pk, "side": "a", "role": HostRole.SERVICE},
    )

    assert response.status_code == 400
    assert response.context["member_form"].errors == {
        "host": ["Select a valid choice. That choice is not one of the available choices."]
    }
    assert not EnvironmentMember.objects.filter(host=foreign).exists()


def test_placing_the_same_host_twice_is_explained(world):
    response = world.personas.client(world.personas.member).post(
        f"/investigations/{world.investigation.pk}/members/",
        {"host": world.host.pk, "side": "a", "role": HostRole.SERVICE},
        follow=True,
    )

    assert "This host already has this role on this side." in html(response)
    assert EnvironmentMember.objects.filter(host=world.host).count() == 1


def test_a_member_removes_a_placed_host(world):
    response = world.personas.client(world.personas.member).post(
        f"/investigations/{world.investigation.pk}/members/{world.placed.pk}/delete/"
    )

    assert response.status_code == 302
    assert not EnvironmentMember.objects.exists()
    assert TimelineEvent.objects.filter(
        kind=EventKind.ENVIRONMENT, summary__startswith="Removed web-1"
    ).exists()


def test_a_placement_cannot_be_removed_through_another_investigation(world):
    other = investigation_create(team=world.team, user=world.personas.member, title="other")

    response = world.personas.client(world.personas.member).post(
        f"/investigations/{other.pk}/members/{world.placed.pk}/delete/"
    )

    assert response.status_code == 404
    assert EnvironmentMember.objects.filter(pk=world.placed.pk).exists()


# --- the timeline --------------------------------------------------------------------------


def timeline_url(personas, query=""):
    return f"/investigations/{personas.investigation.pk}/timeline/{query}"


def test_htmx_gets_the_timeline_list_alone(personas):
    response = personas.client(personas.viewer).get(timeline_url(personas), **HX)

    page = html(response)
    assert response.status_code == 200
    assert 'id="timeline-list"' in page
    assert "Investigation opened: Checkout p99 doubled" in page
    assert "<html" not in page and 'id="timeline-form"' not in page
    assert "HX-Request" in response["Vary"]


def test_an_unchanged_timeline_answers_204(personas):
    version = selectors.timeline_version(investigation=personas.investigation)

    response = personas.client(personas.viewer).get(timeline_url(personas, f"?v={version}"), **HX)

    assert response.status_code == 204
    assert response.content == b""
    assert "HX-Request" in response["Vary"]


def test_a_changed_timeline_answers_with_the_new_list(personas):
    version = selectors.timeline_version(investigation=personas.investigation)
    timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        summary="perf top shows futex",
    )

    response = personas.client(personas.viewer).get(timeline_url(personas, f"?v={version}"), **HX)

    assert response.status_code == 200
    assert "perf top shows futex" in html(response)
    new_version = selectors.timeline_version(investigation=personas.investigation)
    assert f"v={new_version}" in html(response)


def test_the_timeline_list_filters_by_kind(personas):
    timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        summary="a plain note",
    )
    client = personas.client(personas.viewer)

    notes = html(client.get(timeline_url(personas, "?kind=note"), **HX))
    actions = html(client.get(timeline_url(personas, "?kind=action"), **HX))

    assert "a plain note" in notes and "Investigation opened" not in notes
    assert "No events of this kind." in actions


def test_without_htmx_the_timeline_url_leads_to_the_investigation(personas):
    client = personas.client(personas.viewer)

    plain = client.get(timeline_url(personas))
    filtered = client.get(timeline_url(personas, "?kind=note"))
    bogus = client.get(timeline_url(personas, "?kind=<script>"))

    assert plain.status_code == 302
    assert plain.url == f"/investigations/{personas.investigation.pk}/"
    assert filtered.url == f"/investigations/{personas.investigation.pk}/?kind=note#timeline"
    assert bogus.url == f"/investigations/{personas.investigation.pk}/"


def test_an_htmx_post_returns_the_form_and_the_list_with_the_new_event(personas):
    response = personas.client(personas.member).post(
        timeline_url(personas),
        {"kind": EventKind.ACTION, "action": "restart", "summary": "Restarted the pods"},
        **HX,
    )

    page = html(response)
    assert response.status_code == 200
    assert page.index('id="timeline-form"') < page.index('hx-swap-oob="true"')
    out_of_band = page[page.index('hx-swap-oob="true"') :]
    assert "Restarted the pods" in out_of_band
    assert "Restart" in out_of_band
    form = page[: page.index('hx-swap-oob="true"')]
    assert "Restarted the pods" not in form  # a fresh form for the next entry
    assert TimelineEvent.objects.get(summary="Restarted the pods").author == personas.member


def test_an_htmx_post_with_errors_returns_the_form_with_what_was_typed(personas):
    response = personas.client(personas.member).post(
        timeline_url(personas),
        {"kind": EventKind.ACTION, "action": "", "summary": "Did something unnamed"},
        **HX,
    )

    page = html(response)
    assert "Choose what kind of action this was." in page
    assert "Did something unnamed" in page
    assert not TimelineEvent.objects.filter(summary="Did something unnamed").exists()


def test_a_post_without_htmx_goes_back_to_the_timeline(personas):
    response = personas.client(personas.member).post(
        timeline_url(personas), {"kind": EventKind.NOTE, "summary": "A note from a plain form"}
    )

    assert response.status_code == 302
    assert response.url == f"/investigations/{personas.investigation.pk}/#timeline"
    assert TimelineEvent.objects.filter(summary="A note from a plain form").exists()


@pytest.mark.parametrize(
    "data, message",
    [
        ({"kind": EventKind.NOTE, "summary": ""}, "This field is required."),
        ({"kind": EventKind.NOTE, "summary": "   "}, "This field is required."),
        (
            {"kind": EventKind.ACTION, "summary": "kept text"},
            "Choose what kind of action this was.",
        ),
        ({"kind": EventKind.STATUS, "summary": "kept text"}, "Select a valid choice."),
    ],
)
def test_a_post_with_errors_without_htmx_shows_the_form_again_with_400(personas, data, message):
    response = personas.client(personas.member).post(timeline_url(personas), data)

    page = html(response)
    assert response.status_code == 400
    assert message in page
    assert 'id="timeline-form"' in page
    if data["summary"].strip():
        assert data["summary"] in page
    assert TimelineEvent.objects.filter(investigation=personas.investigation).count() == 1


def test_a_future_entry_is_refused(personas):
    future = local_input(timezone.now() + timedelta(hours=2))

    response = personas.client(personas.member).post(
        timeline_url(personas),
        {"kind": EventKind.NOTE, "summary": "from the future", "occurred_at": future},
    )

    assert response.status_code == 400
    assert "This time lies in the future." in html(response)


def test_a_back_dated_entry_appears_before_later_events(personas):
    client = personas.client(personas.member)
    client.post(timeline_url(personas), {"kind": EventKind.NOTE, "summary": "Later note"})
    two_days_ago = local_input(timezone.now() - timedelta(days=2))

    client.post(
        timeline_url(personas),
        {"kind": EventKind.NOTE, "summary": "Earlier note", "occurred_at": two_days_ago},
    )

    page = loaded_page(client, f"/investigations/{personas.investigation.pk}/")
    # Within the timeline's own section (other sections name notes too: the evidence a root
    # cause may cite, the postmortem's entries).
    timeline = page[page.index('id="timeline"') :]
    assert (
        timeline.index("Earlier note")
        < timeline.index("Investigation opened: Checkout")
        < timeline.index("Later note")
    )
    assert two_days_ago.replace("T", " ") in timeline


# --- teams ---------------------------------------------------------------------------------


def test_anyone_signed_in_creates_a_team_and_leads_it(personas):
    response = personas.client(personas.viewer).post("/teams/", {"name": "Kernel   team"})

    team = Team.objects.get(name="Kernel team")
    assert response.status_code == 302
    assert response.url == f"/teams/{team.pk}/"
    assert Membership.objects.get(team=team).user == personas.viewer
    assert Membership.objects.get(team=team).role == Role.LEAD


def test_a_team_name_in_use_is_refused_on_the_page(personas):
    response = personas.client(personas.viewer).post("/teams/", {"name": "PAYMENTS sre"})

    assert "A team with this name already exists." in html(response)
    assert Team.objects.filter(name__iexact="payments sre").count() == 1


def test_a_lead_invites_a_member_by_user_name(personas):
    make_user("nina")

    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/", {"username": "nina", "role": Role.RESPONDER}, follow=True
    )

    assert response.redirect_chain == [(f"/teams/{personas.team.pk}/", 302)]
    # An invitation, not a membership: nina joins when she accepts.
    assert not Membership.objects.filter(team=personas.team, user__username="nina").exists()
    assert personas.team.invitations.get(username="nina").role == Role.RESPONDER
    assert "nina is invited." in html(response)


def test_an_unknown_user_name_is_invited_like_any_other_on_the_page(personas):
    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/", {"username": "ghost", "role": Role.VIEWER}, follow=True
    )

    assert response.redirect_chain == [(f"/teams/{personas.team.pk}/", 302)]
    assert "ghost is invited." in html(response)
    assert "no user named" not in html(response)


def test_adding_a_member_twice_is_an_error_on_the_page(personas):
    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/", {"username": "vera", "role": Role.LEAD}
    )

    assert "This user is already a member of the team." in html(response)
    assert Membership.objects.get(team=personas.team, user=personas.viewer).role == Role.VIEWER


def membership(personas, user):
    return Membership.objects.get(team=personas.team, user=user)


def test_a_lead_changes_a_role(personas):
    response = personas.client(personas.lead).post(
        f"/memberships/{membership(personas, personas.viewer).pk}/", {"role": Role.LEAD}
    )

    assert response.status_code == 302
    assert response.url == f"/teams/{personas.team.pk}/"
    assert membership(personas, personas.viewer).role == Role.LEAD


def test_a_lead_removes_a_member(personas):
    personas.client(personas.lead).post(
        f"/memberships/{membership(personas, personas.member).pk}/", {"remove": "1"}
    )

    assert not Membership.objects.filter(team=personas.team, user=personas.member).exists()
    assert (
        personas.client(personas.member)
        .get(f"/investigations/{personas.investigation.pk}/")
        .status_code
        == 404
    )


@pytest.mark.parametrize("data", [{"remove": "1"}, {"role": Role.RESPONDER}, {"role": Role.VIEWER}])
def test_the_last_lead_is_protected(personas, data):
    response = personas.client(personas.lead).post(
        f"/memberships/{membership(personas, personas.lead).pk}/", data, follow=True
    )

    assert "A team needs at least one lead; make someone else lead first." in html(response)
    assert membership(personas, personas.lead).role == Role.LEAD


def test_a_lead_who_leaves_the_team_lands_on_a_page_they_can_see(personas):
    Membership.objects.filter(team=personas.team, user=personas.member).update(role=Role.LEAD)

    response = personas.client(personas.lead).post(
        f"/memberships/{membership(personas, personas.lead).pk}/", {"remove": "1"}, follow=True
    )

    assert not Membership.objects.filter(team=personas.team, user=personas.lead).exists()
    assert response.status_code == 200, response.redirect_chain


def test_a_test_message_needs_a_webhook_url(personas):
    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/webhook/", {"test": "1"}, follow=True
    )

    assert "Set a webhook URL first." in html(response)


def test_a_lead_cannot_edit_memberships_of_another_team(personas):
    theirs = Membership.objects.get(team__name="Another team", user=personas.outsider)

    response = personas.client(personas.lead).post(f"/memberships/{theirs.pk}/", {"remove": "1"})

    assert response.status_code == 404
    assert Membership.objects.filter(pk=theirs.pk).exists()


@pytest.mark.parametrize(
    "url", ["ftp://hooks.example.com/x", "hooks.example.com/x", "https://", "javascript:alert(1)"]
)
def test_a_webhook_url_must_be_http_or_https(personas, url):
    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/webhook/", {"webhook_url": url}, follow=True
    )

    assert "Enter an http:// or https:// URL." in html(response)
    assert fresh(personas.team).webhook_url == ""


def test_a_lead_sets_and_clears_the_webhook(personas):
    client = personas.client(personas.lead)
    url = f"/teams/{personas.team.pk}/webhook/"

    saved = client.post(url, {"webhook_url": "https://hooks.example.com/T1/B2"}, follow=True)
    assert "Webhook saved." in html(saved)
    assert fresh(personas.team).webhook_url == "https://hooks.example.com/T1/B2"
    assert 'value="https://hooks.example.com/T1/B2"' in html(saved)

    client.post(url, {"webhook_url": ""})
    assert fresh(personas.team).webhook_url == ""


def test_only_leads_see_the_team_management_forms(personas):
    url = f"/teams/{personas.team.pk}/"

    lead_page = html(personas.client(personas.lead).get(url))
    member_page = html(personas.client(personas.member).get(url))

    assert "Invite a member" in lead_page and 'name="webhook_url"' in lead_page
    assert "Invite a member" not in member_page and 'name="webhook_url"' not in member_page
    assert "/memberships/" not in member_page


# --- hosts ---------------------------------------------------------------------------------


def host_form(team, **overrides):
    data = {
        "team": team.pk,
        "name": "web-1",
        "address": "10.0.0.1",
        "port": "22",
        "username": "perf",
    }
    data.update(overrides)
    return data


def test_a_member_adds_a_host(personas):
    response = personas.client(personas.member).post(
        "/hosts/", host_form(personas.team, address=" Web-1.Example.COM "), follow=True
    )

    host = Host.objects.get(name="web-1")
    assert response.redirect_chain == [("/hosts/", 302)]
    assert host.address == "web-1.example.com"
    assert "Host web-1 added." in html(response)
    assert "perf@web-1.example.com:22" in html(response)


def test_host_errors_are_shown_with_what_was_typed(personas):
    response = personas.client(personas.member).post(
        "/hosts/", host_form(personas.team, address="web 1;reboot", username="root;reboot")
    )

    page = html(response)
    assert response.status_code == 400
    assert error_in_card(page, "address", "Enter a host name (letters, digits, hyphens and dots)")
    assert error_in_card(page, "username", "Enter a Unix user name")
    assert 'value="web 1;reboot"' in page
    assert not Host.objects.exists()


def test_a_duplicate_host_name_is_shown_on_the_form(world):
    response = world.personas.client(world.personas.member).post("/hosts/", host_form(world.team))

    assert "The team already has a host with this name." in html(response)
    assert Host.objects.filter(name="web-1").count() == 1


def test_a_port_out_of_range_is_shown_on_the_form(personas):
    response = personas.client(personas.member).post(
        "/hosts/", host_form(personas.team, port="70000")
    )

    assert "Ensure this value is less than or equal to 65535." in html(response)
    assert not Host.objects.exists()


def test_a_member_edits_a_host(world):
    response = world.personas.client(world.personas.member).post(
        f"/hosts/{world.host.pk}/",
        {
            "name": "web-1",
            "address": "WEB-1.internal",
            "port": "2222",
            "username": "deploy",
            "jump_host": world.spare.pk,
        },
    )

    assert response.status_code == 302
    assert response.url == f"/hosts/{world.host.pk}/"
    host = fresh(world.host)
    assert (host.address, host.port, host.username, host.jump_host) == (
        "web-1.internal",
        2222,
        "deploy",
        world.spare,
    )


def test_a_jump_host_loop_is_shown_on_the_form(world):
    client = world.personas.client(world.personas.member)
    base = {"address": "10.0.0.1", "port": "22", "username": "perf"}
    client.post(f"/hosts/{world.host.pk}/", {**base, "name": "web-1", "jump_host": world.spare.pk})

    response = client.post(
        f"/hosts/{world.spare.pk}/", {**base, "name": "web-2", "jump_host": world.host.pk}
    )

    assert "These jump hosts would form a loop." in html(response)
    assert fresh(world.spare).jump_host is None


def test_a_host_cannot_be_deleted_while_placed(world):
    response = world.personas.client(world.personas.member).post(
        f"/hosts/{world.host.pk}/delete/", follow=True
    )

    assert response.redirect_chain == [(f"/hosts/{world.host.pk}/", 302)]
    assert "This host is placed in investigations: Checkout p99 doubled" in html(response)
    assert Host.objects.filter(pk=world.host.pk).exists()


def test_an_unplaced_host_is_deleted(world):
    response = world.personas.client(world.personas.member).post(
        f"/hosts/{world.spare.pk}/delete/", follow=True
    )

    assert response.redirect_chain == [("/hosts/", 302)]
    assert "Host web-2 deleted." in html(response)
    assert not Host.objects.filter(pk=world.spare.pk).exists()


def test_the_host_list_shows_only_the_users_teams(world):
    host_create(team=world.other_team, name="otto-box", address="10.9.9.9", port=22, username="o")

    mine = html(world.personas.client(world.personas.viewer).get("/hosts/"))
    theirs = html(world.personas.client(world.personas.outsider).get("/hosts/"))

    assert "web-1" in mine and "otto-box" not in mine
    assert "otto-box" in theirs and "web-1" not in theirs


def test_a_viewer_gets_no_host_forms(world):
    listing = html(world.personas.client(world.personas.viewer).get("/hosts/"))
    detail = html(world.personas.client(world.personas.viewer).get(f"/hosts/{world.host.pk}/"))

    assert "Add a host" not in listing
    assert "Delete host" not in detail and 'name="address"' not in detail


# --- evidence: collecting, findings, artifacts ---------------------------------------------

SERVICE_ERROR = "A process name (letters, digits and _ . : @ + -, at most 64) or a PID."
PATH_ERROR = "An absolute path of letters, digits and _ . @ + - / (no spaces)."
NUL_ERROR = "Null characters are not allowed."


def _path_error(bad_path: str) -> str:
    """The message names the path it refuses, cut to 80 characters."""
    return f"{bad_path[:80]}: {PATH_ERROR}"


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("service", "java; rm -rf /", SERVICE_ERROR),
        ("service", "$(id)", SERVICE_ERROR),
        ("service", "`reboot`", SERVICE_ERROR),
        ("service", "../etc", SERVICE_ERROR),
        ("service", "x" * 10_000, SERVICE_ERROR),
        ("service", "<script>alert(1)</script>", SERVICE_ERROR),
        ("service", "java\x00", NUL_ERROR),
        ("paths", "java; rm -rf /", _path_error("java;")),
        ("paths", "$(id)", _path_error("$(id)")),
        ("paths", "../etc", _path_error("../etc")),
        ("paths", "/data/../etc", _path_error("/data/../etc")),
        ("paths", "/data /var/$(id)", _path_error("/var/$(id)")),
        ("paths", "x" * 10_000, _path_error("x" * 10_000)),
        ("paths", "/" + "x" * 10_000, _path_error("/" + "x" * 10_000)),
        ("paths", "/<script>alert(1)</script>", _path_error("/<script>alert(1)</script>")),
        ("paths", "/data\x00", NUL_ERROR),
    ],
    ids=[
        "service-semicolon",
        "service-subshell",
        "service-backticks",
        "service-dotdot",
        "service-10k",
        "service-markup",
        "service-nul",
        "paths-semicolon",
        "paths-subshell",
        "paths-relative-dotdot",
        "paths-dotdot",
        "paths-second-bad",
        "paths-10k-relative",
        "paths-10k-absolute",
        "paths-markup",
        "paths-nul",
    ],
)
def test_hostile_service_names_and_paths_are_refused_on_the_page(world, field, value, message):
    data = {"service": "", "paths": "", field: value}

    response = world.personas.client(world.personas.member).post(
        inv_url("collections/")(world), data
    )

    # The page again, the error under its field in the evidence panel's form.
    page = html(response)
    assert response.status_code == 400
    card = field_card(page, field)
    assert escape(message) in card and 'class="field has-error"' in card
    assert "<script>alert(1)</script>" not in page
    # The value comes back as typed (escaped), the error holds at most its start.
    assert "x" * 81 not in card.replace(escape(value), "")
    assert not Collection.objects.exists()
    assert not TimelineEvent.objects.filter(kind=EventKind.COLLECTION).exists()


def test_more_than_eight_paths_are_refused_on_the_page(world):
    paths = " ".join(f"/data/{n}" for n in range(9))

    response = world.personas.client(world.personas.member).post(
        inv_url("collections/")(world), {"service": "", "paths": paths}
    )

    assert response.status_code == 400
    assert error_in_card(html(response), "paths", "At most 8 paths.")
    assert not Collection.objects.exists()


def test_collecting_with_no_host_placed_is_refused_with_a_message(personas):
    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/collections/",
        {"service": "", "paths": ""},
    )

    # Not a field's error: above the form's fields, in the evidence panel.
    assert response.status_code == 400
    assert re.search(
        r'<div class="errors" role="alert"><p>Place hosts on the sides first.</p>', html(response)
    )
    assert not Collection.objects.exists()


def test_the_evidence_section_offers_collecting_and_judging_findings_to_writers_only(world):
    world.local_run  # noqa: B018 - first the real run, then the facts that raise the finding
    finding = world.finding
    url = f"/investigations/{world.local_investigation.pk}/"

    member = loaded_page(world.personas.client(world.personas.member), url)
    viewer = loaded_page(world.personas.client(world.personas.viewer), url)

    for page in (member, viewer):
        assert finding.title in unescape(page)
        assert f'href="/artifacts/{world.artifact.pk}/"' in page
        assert f"/investigations/{world.local_investigation.pk}/facts/diff/?only=1" in page
    writing_controls = [
        "Collect host facts",
        f'action="/investigations/{world.local_investigation.pk}/collections/"',
        'name="service"',
        'name="paths"',
        f'action="/findings/{finding.pk}/status/"',
        'value="confirmed"',
        'value="dismissed"',
    ]
    assert [c for c in writing_controls if c not in member] == []
    assert [c for c in writing_controls if c in viewer] == []


def test_a_member_confirms_a_finding_and_may_reopen_it(world):
    finding = world.finding
    client = world.personas.client(world.personas.member)

    response = client.post(f"/findings/{finding.pk}/status/", {"status": "confirmed"})

    assert response.status_code == 302
    assert response.url == f"/investigations/{world.local_investigation.pk}/#findings"
    assert fresh(finding).status == FindingStatus.CONFIRMED
    assert TimelineEvent.objects.filter(summary=f"Finding confirmed: {finding.title}").exists()
    page = loaded_page(client, f"/investigations/{world.local_investigation.pk}/")
    assert 'value="open">Reopen' in page and 'value="confirmed"' not in page


@pytest.mark.parametrize("status", ["resolved", "", "CONFIRMED", "x" * 10_000])
def test_a_finding_status_people_may_not_set_is_refused_with_a_message(world, status):
    finding = world.finding

    response = world.personas.client(world.personas.member).post(
        f"/findings/{finding.pk}/status/", {"status": status}, follow=True
    )

    assert messages_of(response) == ["Choose one of: open, confirmed, dismissed."]
    assert fresh(finding).status == FindingStatus.OPEN


def test_an_artifact_whose_file_is_gone_is_not_found_rather_than_a_server_error(world):
    artifact = world.artifact
    artifact.file.storage.delete(artifact.file.name)

    response = world.personas.client(world.personas.member).get(f"/artifacts/{artifact.pk}/")

    assert response.status_code == 404


# --- host keys -----------------------------------------------------------------------------


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_member_scans_a_host_key_then_trusts_it_on_the_page(world):
    host, key = world.keyed_host, world.sshd.host_key
    client = world.personas.client(world.personas.member)
    before = html(client.get(f"/hosts/{host.pk}/"))
    assert "Not trusted yet" in before and "Trust this key" not in before

    asked = client.post(f"/hosts/{host.pk}/host-key/scan/", follow=True)

    # The scan runs in a worker: the page says so and polls the card until it ends.
    assert asked.redirect_chain == [(f"/hosts/{host.pk}/#host-key", 302)]
    assert "Scanning the host key in a worker" in html(asked)
    assert f'hx-get="/hosts/{host.pk}/host-key/"' in html(asked)
    host_key_scan_run(host_id=host.pk)  # what the worker's task does
    card = client.get(f"/hosts/{host.pk}/host-key/", HTTP_HX_REQUEST="true")
    assert card.status_code == 286  # htmx swaps it in and stops polling
    scanned = client.get(f"/hosts/{host.pk}/")
    page = html(scanned)
    assert f"saw <code>{key.key_type} {key.fingerprint}</code>" in page
    assert "hx-get" not in page.split('id="host-key"')[1].split(">")[0]
    assert f'name="fingerprint" value="{key.fingerprint}"' in page
    assert "Trust this key" in page and "Trusted:" not in page

    trusted = client.post(
        f"/hosts/{host.pk}/host-key/trust/", {"fingerprint": key.fingerprint}, follow=True
    )

    assert trusted.redirect_chain == [(f"/hosts/{host.pk}/#host-key", 302)]
    assert messages_of(trusted) == ["The host key of keyed is now trusted."]
    page = html(trusted)
    assert f"Trusted: <code>{key.key_type} {key.fingerprint}</code>" in page
    assert "by max" in page
    assert "Trust this key" not in page and "Not trusted yet" not in page
    host = fresh(host)
    assert (host.host_key_type, host.host_key_fingerprint) == (key.key_type, key.fingerprint)
    assert host.host_key_trusted_by == world.personas.member


def test_a_viewer_sees_the_scanned_key_but_no_scan_or_trust_button(world):
    host = world.scanned_host

    page = html(world.personas.client(world.personas.viewer).get(f"/hosts/{host.pk}/"))

    assert world.sshd.host_key.fingerprint in page
    assert "Trust this key" not in page and "Scan the host key" not in page
    assert "/host-key/" not in page


def test_trusting_before_any_scan_is_refused_with_a_message(world):
    response = world.personas.client(world.personas.member).post(
        f"/hosts/{world.host.pk}/host-key/trust/",
        {"fingerprint": "SHA256:" + "A" * 43},
        follow=True,
    )

    assert messages_of(response) == ["Scan the host key first, then compare it."]
    assert fresh(world.host).host_key_fingerprint == ""


@pytest.mark.parametrize("data", [{}, {"fingerprint": ""}, {"fingerprint": "   "}])
def test_trusting_without_a_fingerprint_asks_for_one(world, data):
    response = world.personas.client(world.personas.member).post(
        f"/hosts/{world.host.pk}/host-key/trust/", data, follow=True
    )

    assert messages_of(response) == ["Give the fingerprint you compared."]
    assert fresh(world.host).host_key_fingerprint == ""


@pytest.mark.parametrize(
    "fingerprint",
    ["SHA256:not-the-key", "<b>SHA256:x</b>", "x" * 10_000],
    ids=["other", "markup", "10k"],
)
def test_trusting_a_key_the_host_did_not_present_is_refused_with_a_message(world, fingerprint):
    host = world.scanned_host

    response = world.personas.client(world.personas.member).post(
        f"/hosts/{host.pk}/host-key/trust/", {"fingerprint": fingerprint}, follow=True
    )

    assert messages_of(response) == [
        f"This is not the key the host presented ({world.sshd.host_key.fingerprint}). "
        "Compare it again, or scan again."
    ]
    assert "<b>SHA256:x</b>" not in html(response) and "x" * 100 not in html(response)
    assert fresh(host).host_key_fingerprint == ""


def test_scanning_a_host_where_nothing_listens_says_so_on_the_page(world):
    host = host_create(
        team=world.team, name="gone", address="127.0.0.1", port=_closed_port(), username="perf"
    )

    world.personas.client(world.personas.member).post(f"/hosts/{host.pk}/host-key/scan/")
    host_key_scan_run(host_id=host.pk)
    page = html(world.personas.client(world.personas.member).get(f"/hosts/{host.pk}/"))

    assert f"The last scan failed: Cannot reach 127.0.0.1:{host.port}: connection refused" in page
    assert fresh(host).scanned_key_fingerprint == ""


def test_scanning_a_host_name_that_does_not_resolve_says_so_on_the_page(world):
    host = host_create(
        team=world.team, name="nowhere", address="no-such-host.invalid", username="perf"
    )

    world.personas.client(world.personas.member).post(f"/hosts/{host.pk}/host-key/scan/")
    host_key_scan_run(host_id=host.pk)
    page = html(world.personas.client(world.personas.member).get(f"/hosts/{host.pk}/"))

    assert "The last scan failed: Cannot resolve no-such-host.invalid" in page
    assert fresh(host).scanned_key_fingerprint == ""


def test_a_local_host_has_no_host_key_to_scan(world, settings):
    settings.LOCAL_TRANSPORT = True
    host = host_create(
        team=world.team, name="here", address="127.0.0.1", username="root", transport="local"
    )

    response = world.personas.client(world.personas.member).post(
        f"/hosts/{host.pk}/host-key/scan/", follow=True
    )

    assert messages_of(response) == ["A host on the local transport has no SSH host key."]
    page = html(response)
    assert "This host uses the local transport: no SSH, no host key." in page
    assert "Scan the host key" not in page


# --- the local transport -------------------------------------------------------------------


def test_with_the_local_transport_on_a_member_adds_a_local_host(world, settings):
    settings.LOCAL_TRANSPORT = True
    client = world.personas.client(world.personas.member)
    assert 'name="transport"' in html(client.get("/hosts/"))
    assert 'name="transport"' in html(client.get(f"/hosts/{world.host.pk}/"))

    response = client.post(
        "/hosts/", host_form(world.team, name="here", address="127.0.0.1", transport="local")
    )

    assert response.status_code == 302
    assert Host.objects.get(name="here").transport == HostTransport.LOCAL


def test_with_the_local_transport_on_an_unknown_transport_is_refused_on_the_form(world, settings):
    settings.LOCAL_TRANSPORT = True

    response = world.personas.client(world.personas.member).post(
        "/hosts/", host_form(world.team, name="here", transport="telnet")
    )

    assert response.status_code == 400
    assert error_in_card(
        html(response),
        "transport",
        "Select a valid choice. telnet is not one of the available choices.",
    )
    assert not Host.objects.filter(name="here").exists()


def test_with_the_local_transport_off_the_host_forms_have_no_transport(world, settings):
    settings.LOCAL_TRANSPORT = False
    client = world.personas.client(world.personas.member)

    listing = html(client.get("/hosts/"))
    detail = html(client.get(f"/hosts/{world.host.pk}/"))

    assert 'name="transport"' not in listing and 'name="address"' in listing
    assert 'name="transport"' not in detail and 'name="address"' in detail


def test_with_the_local_transport_off_a_posted_local_transport_makes_no_local_host(world, settings):
    settings.LOCAL_TRANSPORT = False
    client = world.personas.client(world.personas.member)

    created = client.post(
        "/hosts/", host_form(world.team, name="here", address="127.0.0.1", transport="local")
    )
    edited = client.post(
        f"/hosts/{world.host.pk}/",
        {
            "name": "web-1",
            "address": "10.0.0.1",
            "port": "22",
            "username": "perf",
            "transport": "local",
        },
    )

    # The field is not on the form, so what is posted for it is ignored: SSH, as by default.
    assert (created.status_code, edited.status_code) == (302, 302)
    assert Host.objects.get(name="here").transport == HostTransport.SSH
    assert fresh(world.host).transport == HostTransport.SSH
    assert not Host.objects.filter(transport=HostTransport.LOCAL).exists()


# --- credentials ---------------------------------------------------------------------------


def test_a_member_adds_a_credential_and_sees_only_its_fingerprint(personas, make_key):
    key = make_key()

    response = personas.client(personas.member).post(
        "/credentials/",
        {"team": personas.team.pk, "name": "perf key", "private_key": key.text},
        follow=True,
    )

    credential = Credential.objects.get(name="perf key")
    page = html(response)
    assert response.redirect_chain == [("/credentials/", 302)]
    assert credential.fingerprint in page
    assert "PRIVATE KEY" not in page
    for line in key.body_lines:
        assert line not in page


def assert_no_secret(page: str, key, passphrase: str = ""):
    assert "-----BEGIN OPENSSH PRIVATE KEY-----" not in page
    for line in key.body_lines:
        assert line not in page
    if passphrase:
        assert passphrase not in page


def test_a_wrong_passphrase_never_echoes_the_key_or_the_passphrase(personas, make_key):
    key = make_key(passphrase="the-right-passphrase")

    response = personas.client(personas.member).post(
        "/credentials/",
        {
            "team": personas.team.pk,
            "name": "locked key",
            "private_key": key.text,
            "passphrase": "a-wrong-passphrase-7431",
        },
    )

    page = html(response)
    assert response.status_code == 400
    assert "The passphrase does not unlock this key." in page
    assert 'value="locked key"' in page
    assert_no_secret(page, key, "a-wrong-passphrase-7431")
    assert not Credential.objects.exists()


def test_a_form_error_elsewhere_never_echoes_the_key(personas, make_key):
    key = make_key(passphrase="secret-passphrase-99")

    response = personas.client(personas.member).post(
        "/credentials/",
        {
            "team": personas.team.pk,
            "name": "",
            "private_key": key.text,
            "passphrase": "secret-passphrase-99",
        },
    )

    page = html(response)
    assert "This field is required." in page
    assert_no_secret(page, key, "secret-passphrase-99")


def test_a_duplicate_credential_name_never_echoes_the_key(world):
    key = world.make_key()
    world.credential  # noqa: B018 - "spare key" exists

    response = world.personas.client(world.personas.member).post(
        "/credentials/", {"team": world.team.pk, "name": "spare key", "private_key": key.text}
    )

    page = html(response)
    assert "The team already has a credential with this name." in page
    assert_no_secret(page, key)


def test_a_credential_in_use_cannot_be_deleted(world):
    credential = world.credential
    client = world.personas.client(world.personas.member)
    client.post(
        f"/hosts/{world.spare.pk}/",
        {
            "name": "web-2",
            "address": "10.0.0.2",
            "port": "22",
            "username": "perf",
            "credential": credential.pk,
        },
    )
    assert fresh(world.spare).credential == credential

    response = client.post(f"/credentials/{credential.pk}/delete/", follow=True)

    assert "Hosts still use this credential: web-2." in html(response)
    assert Credential.objects.filter(pk=credential.pk).exists()


def test_a_viewer_gets_no_credential_form(world):
    world.credential  # noqa: B018

    page = html(world.personas.client(world.personas.viewer).get("/credentials/"))

    assert "spare key" in page
    assert 'name="private_key"' not in page


# --- profile and tokens --------------------------------------------------------------------


def test_a_new_token_is_shown_once(personas):
    client = personas.client(personas.member)

    created = client.post("/profile/", {"name": "CI pipeline"})

    [raw] = re.findall(r'value="(pc_[^"]+)"', html(created))
    token = ApiToken.objects.get(user=personas.member)
    assert raw.startswith(token.prefix)
    assert "no-store" in created["Cache-Control"]
    assert "Copy this token now" in html(created)
    later = html(client.get("/profile/"))
    assert raw not in later
    assert token.prefix in later and "CI pipeline" in later


def test_a_token_without_a_name_is_refused(personas):
    response = personas.client(personas.member).post("/profile/", {"name": "   "})

    assert "This field is required." in html(response)
    assert not ApiToken.objects.exists()


def test_a_token_is_revoked(personas):
    token, _ = api_token_create(user=personas.member, name="old")

    response = personas.client(personas.member).post(
        f"/profile/tokens/{token.pk}/revoke/", follow=True
    )

    assert response.redirect_chain == [("/profile/", 302)]
    assert fresh(token).revoked_at is not None
    assert "Token old revoked." in html(response)
    assert "revoked " in html(response)


@pytest.mark.parametrize("who", ["lead", "viewer", "outsider"])
def test_no_one_revokes_another_users_token(personas, who):
    token, _ = api_token_create(user=personas.member, name="mine")

    response = personas.client(getattr(personas, who)).post(f"/profile/tokens/{token.pk}/revoke/")

    assert response.status_code == 404
    assert fresh(token).revoked_at is None


def test_revoking_needs_a_signed_in_user(personas):
    token, _ = api_token_create(user=personas.member, name="mine")

    response = Client().post(f"/profile/tokens/{token.pk}/revoke/")

    check_status(response, LOGIN)
    assert fresh(token).revoked_at is None


# --- the browser's time zone ---------------------------------------------------------------


def test_times_are_read_and_shown_in_the_browsers_time_zone(personas):
    client = personas.client(personas.member)
    client.cookies["perfcase_tz"] = "Asia/Tokyo"

    client.post(
        f"/investigations/{personas.investigation.pk}/edit/",
        investigation_form(started_at="2025-01-02T10:00"),
    )

    assert fresh(personas.investigation).started_at.isoformat() == "2025-01-02T01:00:00+00:00"
    page = loaded_page(client, f"/investigations/{personas.investigation.pk}/")
    assert "2025-01-02 10:00 JST" in page


@pytest.mark.parametrize("cookie", ["Not/AZone", "../../../etc/passwd", "", "%00"])
def test_a_bad_time_zone_cookie_falls_back_to_utc(personas, cookie):
    investigation_update(
        investigation=personas.investigation,
        user=personas.lead,
        started_at=datetime(2025, 1, 2, 1, 0, tzinfo=UTC),
    )
    client = personas.client(personas.member)
    client.cookies["perfcase_tz"] = cookie

    page = loaded_page(client, f"/investigations/{personas.investigation.pk}/")

    assert "2025-01-02 01:00 UTC" in page


@pytest.mark.parametrize(
    "path, current",
    [
        ("/investigations/", "/investigations/"),
        ("/investigations/new/", "/investigations/"),
        ("/knowledge/", "/knowledge/"),
        ("/search/?q=governor", "/knowledge/"),
        ("/hosts/", "/hosts/"),
        ("/credentials/", "/credentials/"),
        ("/checklist/mine/", "/checklist/mine/"),
        ("/teams/", "/teams/"),
        ("/profile/", None),
    ],
)
def test_the_top_bar_marks_the_current_section_only(personas, path, current):
    page = html(personas.client(personas.member).get(path))

    marked = re.findall(r'<a href="([^"]+)" aria-current="page">', page)
    assert marked == ([current] if current else [])
    assert "&quot;page&quot;" not in page
