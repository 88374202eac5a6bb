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

from investigations import tasks
from investigations.choices import (
    EventKind,
    FindingStatus,
    HostTransport,
    ItemStatus,
    LadderStatus,
    Status,
    TargetStatus,
)
from investigations.management.commands.load_demo import DEMO_DIR, DEMO_TITLE, DEMO_USERNAME
from investigations.models import (
    Artifact,
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
    TimelineEvent,
)
from investigations.runs import collection as collection_runner

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def demo(settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks):
    """The demo loaded once and committed (its artifacts under a temporary media root);
    the tasks it would send to the broker are kept in `enqueued` instead of sent."""
    settings.DEBUG = True
    settings.MEDIA_ROOT = tmp_path / "media"
    enqueued = []
    monkeypatch.setattr(
        tasks.collection_run, "apply_async", lambda args, **_: enqueued.append(args)
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
        )
    } | {
        "checklist": list(ChecklistItem.objects.values_list("key", "status", "auto", "evidence")),
        "targets": list(CollectionTarget.objects.values_list("pk", "status")),
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
    assert Investigation.objects.count() == 1
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
        status__in=[TargetStatus.QUEUED, TargetStatus.RUNNING]
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
    for key in ("host_at_knee", "root_cause"):
        assert (items[key].status, items[key].auto) == (ItemStatus.DONE, False), key
    assert "finding" in items["host_at_knee"].notes
    assert items["write_up"].status == ItemStatus.IN_PROGRESS


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
