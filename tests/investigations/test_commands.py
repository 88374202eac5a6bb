"""The commands behind `make run`: demo data, and the web server with its worker."""

import hashlib
import ipaddress
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from io import StringIO
from pathlib import Path
from types import SimpleNamespace

import pytest
from django.core.management import CommandError, call_command

from app.celery import app as celery_app
from investigations import tasks
from investigations.choices import (
    EventKind,
    FindingStatus,
    HostTransport,
    ItemStatus,
    LadderStatus,
    NodeState,
    Status,
    TargetStatus,
)
from investigations.demo import (
    DEMO_DIR,
    DEMO_TITLE,
    DEMO_USERNAME,
    PAST_CASES,
)
from investigations.models import (
    ActionItem,
    Artifact,
    CaseRootCause,
    ChecklistItem,
    Collection,
    CollectionTarget,
    EnvironmentMember,
    FactSnapshot,
    Finding,
    Host,
    Investigation,
    Ladder,
    LadderStep,
    Membership,
    PathNode,
    Postmortem,
    Profile,
    SearchDocument,
    TimelineEvent,
)
from investigations.runs import collection as collection_runner
from investigations.selectors.similar import similar_cases

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def demo(settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    """The demo loaded once and committed (its artifacts under a temporary media root);
    the tasks it would send to the broker are kept in `enqueued` instead of sent."""
    settings.DEBUG = True
    settings.MEDIA_ROOT = tmp_path / "media"
    enqueued = []
    monkeypatch.setattr(
        celery_app,
        "send_task",
        lambda name, args=(), **_: name == tasks.collection_run.name and enqueued.append(args),
    )
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=StringIO())
    return SimpleNamespace(
        investigation=Investigation.objects.get(title=DEMO_TITLE), enqueued=enqueued
    )


def _everything() -> dict:
    """What the demo wrote, enough to tell whether a second run changed anything."""
    return {
        model.__name__: sorted(model.objects.values_list("pk", flat=True))
        for model in (
            Investigation,
            Host,
            EnvironmentMember,
            PathNode,
            Collection,
            CollectionTarget,
            FactSnapshot,
            Artifact,
            Finding,
            Ladder,
            LadderStep,
            TimelineEvent,
            CaseRootCause,
            Postmortem,
            ActionItem,
            Profile,
            SearchDocument,
        )
    } | {
        "checklist": list(ChecklistItem.objects.values_list("key", "status", "auto", "evidence")),
        "targets": list(CollectionTarget.objects.values_list("pk", "job__status")),
        "findings": list(Finding.objects.values_list("pk", "status")),
    }


@pytest.mark.django_db
def test_the_demo_is_a_lived_in_case_and_loads_once(demo, django_capture_on_commit_callbacks):
    before = _everything()
    out = StringIO()

    with django_capture_on_commit_callbacks() as callbacks:
        call_command("load_demo", stdout=out)

    assert out.getvalue().strip() == "Demo data already loaded."
    assert _everything() == before and not callbacks
    investigation = demo.investigation
    # The demo and the two closed cases before it.
    assert Investigation.objects.count() == 1 + len(PAST_CASES) == 3
    assert investigation.status == Status.RESOLVED
    assert [side.label for side in investigation.sides.all()] == ["container", "VM"]
    assert investigation.symptom_ratio == 2.0
    actions = investigation.events.filter(kind=EventKind.ACTION)
    assert {"rate_limit", "restart", "scale_out", "fix"} <= set(
        actions.values_list("action", flat=True)
    )
    occurred = list(investigation.events.values_list("occurred_at", flat=True))
    assert occurred == sorted(occurred)
    assert Membership.objects.get(user__username=DEMO_USERNAME).role == "lead"


@pytest.mark.django_db
def test_the_demo_ladder_shows_the_container_side_slower_with_an_earlier_knee(demo):
    ladder = Ladder.objects.get(investigation=demo.investigation)
    assert ladder.status == LadderStatus.IMPORTED
    rps = {
        side: dict(
            LadderStep.objects.filter(ladder_side__ladder=ladder, ladder_side__side__key=side)
            .order_by("load")
            .values_list("load", "rps")
        )
        for side in "ab"
    }
    # One step per shipped file, on each side.
    for side in "ab":
        assert len(rps[side]) == len(list(DEMO_DIR.glob(f"wrk-{side}-c*.txt"))) >= 5
    common = sorted(set(rps["a"]) & set(rps["b"]))
    assert common == sorted(rps["a"]) == sorted(rps["b"])
    assert all(rps["a"][load] < rps["b"][load] for load in common)
    # The symptom: about half the TPS at 200 connections.
    assert rps["a"][200] / rps["b"][200] == pytest.approx(0.5, abs=0.05)
    knees = ladder.analysis["knees"]
    assert knees["a"]["load"] is not None
    assert knees["b"]["load"] is None or knees["a"]["load"] < knees["b"]["load"]
    assert ladder.analysis["divergence"]["load"] == common[0]


@pytest.mark.django_db
def test_the_demo_hosts_have_facts_and_a_finding_but_are_never_contacted(demo, monkeypatch):
    investigation = demo.investigation
    members = {m.side.key: m for m in investigation.members.select_related("host", "side")}
    assert set(members) == {"a", "b"}
    assert {m.role for m in members.values()} == {"service"}
    documentation = ipaddress.ip_network("192.0.2.0/24")  # RFC 5737
    for member in members.values():
        host = member.host
        assert ipaddress.ip_address(host.address) in documentation
        assert host.transport == HostTransport.SSH
        assert host.credential is None and host.jump_host is None
        assert not host.host_key_fingerprint and host.host_key_trusted_at is None
    host_a, host_b = members["a"].host, members["b"].host

    # One snapshot per host, parsed from the shipped probe output, kept as its artifact.
    snapshots = {s.side.key: s for s in FactSnapshot.objects.filter(investigation=investigation)}
    assert snapshots["a"].host == host_a and snapshots["b"].host == host_b
    assert snapshots["a"].facts["cpu.governor"] == "powersave"
    assert snapshots["b"].facts["cpu.governor"] == "performance"
    for snapshot in snapshots.values():
        [artifact] = snapshot.target.artifacts.all()
        with artifact.file.open("rb") as file:
            assert hashlib.sha256(file.read()).hexdigest() == artifact.sha256

    # The rules raised the finding on the CPU clock and its governor for this pair.
    open_findings = Finding.objects.filter(
        investigation=investigation, status=FindingStatus.OPEN, host_a=host_a, host_b=host_b
    )
    assert {"cpu_governor", "cpu_clock_at_minimum"} <= set(
        open_findings.values_list("rule", flat=True)
    )
    governor = open_findings.get(rule="cpu_governor")
    assert (governor.side_a, governor.side_b) == ("powersave", "performance")

    # Nothing is left for a worker to connect to: the collection ended with the demo, and
    # the run its request sent to the broker, run as a worker would, finds nothing to claim.
    collection = Collection.objects.get(investigation=investigation)
    assert collection.completed_at is not None
    assert not CollectionTarget.objects.filter(
        job__status__in=[TargetStatus.QUEUED, TargetStatus.RUNNING]
    ).exists()
    assert demo.enqueued == [[collection.pk]]
    before = _everything()

    def refuse(host):
        raise AssertionError(f"the demo tried to reach {host.name}")

    claimed = []

    def claim(**kwargs):
        claimed.append(real_claim(**kwargs))
        return claimed[-1]

    real_claim = collection_runner.targets_claim
    monkeypatch.setattr(collection_runner, "targets_claim", claim)
    monkeypatch.setattr(collection_runner, "connector_for", refuse)
    for args in demo.enqueued:
        tasks.collection_run.run(*args)
    assert claimed == [[]]
    assert _everything() == before


@pytest.mark.django_db
def test_the_demo_checklist_is_done_where_its_evidence_is(demo):
    items = {item.key: item for item in demo.investigation.checklist.all()}
    for key in ("symptom", "path", "pairs", "rule_out_path", "ladder"):
        assert (items[key].status, items[key].auto) == (ItemStatus.DONE, True), key
    assert "knee A at 150" in items["ladder"].evidence
    # The sides do not match while the findings on the CPU are open.
    assert items["sides_match"].status == ItemStatus.TODO
    # A person's judgement, with notes pointing at the evidence.
    assert (items["host_at_knee"].status, items["host_at_knee"].auto) == (ItemStatus.DONE, False)
    assert "finding" in items["host_at_knee"].notes
    # The confirmed root cause completes its step.
    assert (items["root_cause"].status, items["root_cause"].auto) == (ItemStatus.DONE, True)
    assert "governor" in items["root_cause"].evidence
    # And its written postmortem the write-up, with the alert still to add.
    assert (items["write_up"].status, items["write_up"].auto) == (ItemStatus.DONE, True)
    postmortem = demo.investigation.postmortem
    assert "powersave" in postmortem.summary
    actions = {a.title: a.done for a in demo.investigation.action_items.all()}
    assert actions["Alert when node_cpu_scaling_governor is not 'performance' on any node"] is False


@pytest.mark.django_db
def test_the_demo_refuses_to_run_in_production(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="DEBUG"):
        call_command("load_demo")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_runstack_serves_the_app_and_ctrl_c_stops_web_and_worker(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL") and not k.startswith("PERFCASE_")
    }
    env["PERFCASE_VAR_DIR"] = str(tmp_path)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
    )
    port = _free_port()
    stack = subprocess.Popen(
        [sys.executable, "manage.py", "runstack", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        banner = ""
        deadline = time.monotonic() + 60
        while "Sign in as" not in banner and time.monotonic() < deadline:
            banner += stack.stdout.readline()
        assert f"Perfcase is running at http://127.0.0.1:{port}/" in banner
        assert "Sign in as demo / perfcase-demo" in banner
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10) as page:
            assert page.status == 200

        # Ctrl-C in a terminal signals the whole foreground process group.
        os.killpg(stack.pid, signal.SIGINT)
        stack.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.killpg(stack.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            pytest.fail("a web server or worker process outlived Ctrl-C")
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGKILL)
        stack.stdout.close()


@pytest.mark.django_db
def test_the_demo_has_its_root_cause_with_the_governor_finding_as_evidence(demo):
    [confirmed] = demo.investigation.case_root_causes.select_related("root_cause")

    assert confirmed.root_cause.slug == "cpu-governor-powersave"
    governor = Finding.objects.get(investigation=demo.investigation, rule="cpu_governor")
    assert confirmed.evidence == [{"kind": "finding", "id": governor.pk}]
    assert "performance" in confirmed.fix
    assert demo.investigation.events.filter(kind=EventKind.ROOT_CAUSE).count() == 1


@pytest.mark.django_db
def test_the_two_closed_demo_cases_are_told_evidenced_and_written_up(demo):
    past = Investigation.objects.filter(status=Status.CLOSED).order_by("started_at")

    assert [case.title for case in past] == [case.title for case in PAST_CASES]
    slugs = {}
    for case in past:
        [confirmed] = case.case_root_causes.select_related("root_cause")
        slugs[case.pk] = confirmed.root_cause.slug
        # Closed with its root cause, so without a reason; proved by its own findings.
        assert case.close_reason == ""
        proof = Finding.objects.filter(pk__in=[item["id"] for item in confirmed.evidence])
        assert proof.count() == len(confirmed.evidence) >= 2
        assert {f.root_cause.slug for f in proof} == {confirmed.root_cause.slug}
        assert {f.status for f in proof} == {FindingStatus.CONFIRMED}
        assert case.postmortem.written
        assert case.action_items.count() == 2
        # Told on the timeline in order; a path with every hop judged; profiles of both sides.
        notes = case.events.filter(kind__in=[EventKind.NOTE, EventKind.ACTION])
        assert notes.count() >= 7
        assert case.started_at <= min(notes.values_list("occurred_at", flat=True))
        assert not case.path_nodes.filter(state=NodeState.NOT_CHECKED).exists()
        assert sorted(case.profiles.values_list("side__key", flat=True)) == ["a", "b"]
        items = {item.key: item.status for item in case.checklist.all()}
        assert items["root_cause"] == items["write_up"] == ItemStatus.DONE
        # No hosts of their own: nothing invented to connect to.
        assert not case.members.exists()
        assert not case.profiles.exclude(host=None).exists()
    assert sorted(slugs.values()) == ["short-lived-tls-connections", "too-many-vcpus"]
    assert Host.objects.count() == 2


@pytest.mark.django_db
def test_every_demo_case_is_found_by_search_and_by_what_it_turned_out_to_be(demo):
    from investigations.selectors.search import search_scores

    cases = set(Investigation.objects.values_list("pk", flat=True))
    assert (
        set(SearchDocument.objects.filter(kind="investigation").values_list("object_id", flat=True))
        == cases
    )
    # The closed cases by their root causes and postmortems, in English and Chinese.
    [(tls, _)] = search_scores(kind="investigation", query="握手", among=cases)[:1]
    assert Investigation.objects.get(pk=tls).case_root_causes.get().root_cause.slug == (
        "short-lived-tls-connections"
    )
    found = dict(search_scores(kind="investigation", query="futex threads", among=cases))
    vcpus = CaseRootCause.objects.get(root_cause__slug="too-many-vcpus").investigation_id
    assert max(found, key=found.get) == vcpus


@pytest.mark.django_db
def test_on_the_demo_the_similar_cases_are_the_closed_ones_with_their_reasons(demo):
    user = Membership.objects.get(user__username=DEMO_USERNAME).user

    found = similar_cases(investigation=demo.investigation, user=user)

    assert sorted(item.case.title for item in found) == sorted(case.title for case in PAST_CASES)
    for item in found:
        assert item.reasons
        # Neither has the governor: nothing claims the same root cause.
        assert not any("root cause" in reason for reason in item.reasons)
        assert item.score < 10
    # And from a closed case, the demo (resolved) is among its past cases.
    closed = Investigation.objects.filter(status=Status.CLOSED).first()
    assert demo.investigation in [
        item.case for item in similar_cases(investigation=closed, user=user)
    ]


@pytest.mark.django_db
def test_an_older_demo_gets_what_it_lacks_on_the_next_run(demo):
    """A demo loaded before the root cause and the closed cases existed."""
    CaseRootCause.objects.filter(investigation=demo.investigation).delete()
    for case in Investigation.objects.filter(status=Status.CLOSED):
        case.delete()
    out = StringIO()

    call_command("load_demo", stdout=out)

    assert "Demo data loaded." in out.getvalue()
    assert demo.investigation.case_root_causes.get().root_cause.slug == "cpu-governor-powersave"
    assert Investigation.objects.filter(status=Status.CLOSED).count() == len(PAST_CASES)
    assert Investigation.objects.filter(title=DEMO_TITLE).count() == 1
