"""The collection machinery: one task runs every target at once, the start gate, the
registry of plans, a killed worker's targets resumed, the sweep, and reads that never write."""

import os
import signal
import threading
import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from app.celery import app
from investigations import tasks
from investigations.choices import OVERDUE_MESSAGE, CollectionKind, TargetStatus
from investigations.models import CollectionTarget, TimelineEvent
from investigations.runs import plan_for, plans
from investigations.runs.facts import FactsPlan
from investigations.runs.gate import StartGate
from investigations.services.collections import collection_request, target_deadline_seconds
from investigations.services.inventory import credential_create
from investigations.services.targets import target_claim, targets_keep_alive
from investigations.worker import Sweeper
from tests.conftest import ApiClient, jobs_of, start_worker, stop_worker, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_collections import place_local_hosts
from tests.investigations.test_facts_end_to_end import place

# --- the registry --------------------------------------------------------------------------


def test_every_collection_kind_has_a_plan_named_by_its_descriptor():
    for kind in CollectionKind.values:
        assert plan_for(kind).kind == kind
    assert isinstance(plans()[CollectionKind.FACTS], FactsPlan)


def test_an_unknown_kind_has_no_plan():
    with pytest.raises(LookupError):
        plan_for("astrology")


def test_a_plan_validates_its_own_parameters_for_page_and_api_alike():
    plan = plan_for(CollectionKind.FACTS)

    assert plan.clean({"service": "java", "paths": "/data /var/lib"}) == {
        "service": "java",
        "paths": ["/data", "/var/lib"],
    }
    assert plan.clean({"paths": ["/data"]})["paths"] == ["/data"]
    with pytest.raises(Exception) as refused:
        plan.clean({"paths": ["/data", 7]})
    assert "paths" in refused.value.message_dict


# --- the start gate ------------------------------------------------------------------------


def _arrive_all(gate: StartGate, count: int, before=None) -> list:
    moments = [None] * count

    def arrive(i):
        if before is not None:
            before(i)
        moments[i] = gate.arrive()

    threads = [threading.Thread(target=arrive, args=(i,)) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    return moments


def test_every_target_begins_at_the_one_moment_the_gate_names():
    gate = StartGate(parties=5, not_before=timezone.now(), max_wait=30)

    moments = _arrive_all(gate, 5)

    assert len(set(moments)) == 1 and moments[0] is not None


def test_the_gate_never_opens_before_the_planned_start():
    planned = timezone.now() + timedelta(milliseconds=300)
    gate = StartGate(parties=2, not_before=planned, max_wait=30)

    moments = _arrive_all(gate, 2)

    assert moments[0] == moments[1] == planned
    assert timezone.now() >= planned


def test_a_target_that_cannot_connect_leaves_and_holds_nobody():
    gate = StartGate(parties=3, not_before=timezone.now(), max_wait=300)
    left = threading.Event()

    def leave_first(i):
        if i == 0:
            gate.leave()
            left.set()

    moments = _arrive_all(gate, 3, before=leave_first)[1:]

    assert left.is_set() and len(set(moments)) == 1 and moments[0] is not None


def test_a_slow_target_is_waited_for_at_most_max_wait():
    gate = StartGate(parties=2, not_before=timezone.now(), max_wait=0.2)

    # Only one of the two ever arrives: the gate opens by itself.
    assert gate.arrive() is not None


# --- the sweep and reads that do not write -------------------------------------------------


@pytest.fixture
def overdue(personas):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    target = collection.targets.first()
    target_claim(target_id=target.pk, seconds=60)
    jobs_of(CollectionTarget.objects.filter(pk=target.pk)).update(
        deadline_at=timezone.now() - timedelta(seconds=1)
    )
    return collection, target


@pytest.mark.django_db
def test_reading_an_overdue_target_shows_it_failed_without_writing(personas, overdue):
    collection, target = overdue

    body = ApiClient(personas.viewer).get(f"/api/collections/{collection.pk}").body
    page = personas.client(personas.viewer).get(
        f"/collections/{collection.pk}/", headers={"HX-Request": "true"}
    )

    shown = next(t for t in body["targets"] if t["host"] == target.host_id)
    assert (shown["status"], shown["error"]) == ("failed", OVERDUE_MESSAGE)
    assert OVERDUE_MESSAGE in page.content.decode()
    assert CollectionTarget.objects.get(pk=target.pk).status == TargetStatus.RUNNING


@pytest.mark.django_db
def test_the_sweep_fails_overdue_targets_and_says_so_once(personas, overdue):
    collection, target = overdue
    other = collection.targets.exclude(pk=target.pk).get()
    jobs_of(CollectionTarget.objects.filter(pk=other.pk)).update(status=TargetStatus.SUCCEEDED)

    tasks.sweep()
    tasks.sweep()

    swept = CollectionTarget.objects.get(pk=target.pk)
    assert (swept.status, swept.error) == (TargetStatus.FAILED, OVERDUE_MESSAGE)
    assert (
        TimelineEvent.objects.filter(summary__startswith="Host facts collected from").count() == 1
    )


def test_every_worker_sweeps_on_a_timer():
    assert Sweeper in app.steps["worker"]


def test_the_sweep_runs_every_few_seconds_by_default(monkeypatch):
    import importlib

    import app.settings as project_settings

    monkeypatch.delenv("PERFCASE_SWEEP_SECONDS", raising=False)
    try:
        assert importlib.reload(project_settings).SWEEP_SECONDS <= 5
    finally:
        monkeypatch.undo()
        importlib.reload(project_settings)


@pytest.mark.django_db
def test_a_live_run_moves_its_targets_deadlines_on_and_only_its_own_claims(personas, settings):
    settings.TARGET_GRACE_SECONDS = 30
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    mine, other = collection.targets.all()
    for target in (mine, other):
        target_claim(target_id=target.pk, seconds=5)
    soon = timezone.now() + timedelta(seconds=5)
    jobs_of(CollectionTarget.objects.all()).update(deadline_at=soon)
    later = timezone.now() + timedelta(seconds=100)
    jobs_of(CollectionTarget.objects.filter(pk=other.pk)).update(deadline_at=later)

    targets_keep_alive(claims=[(mine.pk, 1), (other.pk, 1)], seconds=30)
    targets_keep_alive(claims=[(mine.pk, 2)], seconds=600)  # a superseded claim: nothing

    mine, other = (CollectionTarget.objects.get(pk=t.pk) for t in (mine, other))
    assert 25 < (mine.deadline_at - timezone.now()).total_seconds() <= 30
    assert other.deadline_at == later  # a deadline never moves nearer


@pytest.mark.django_db
def test_a_claimed_targets_deadline_is_its_own_length_plus_the_grace(personas, settings):
    settings.TARGET_GRACE_SECONDS, settings.SSH_CONNECT_TIMEOUT = 30, 10
    place_local_hosts(personas)
    for kind, parameters, own in (
        ("capture", {"seconds": 30}, 30),
        ("profile", {"seconds": 20}, 20),
        ("facts", {}, 0),
    ):
        collection = collection_request(
            investigation=personas.investigation,
            user=personas.member,
            kind=kind,
            parameters=parameters,
            host_ids=[m.host_id for m in personas.investigation.members.all()],
        )
        assert target_deadline_seconds(collection=collection) == 10 + own + 30, kind


# --- one task, every target at once; a killed worker's targets resumed ---------------------


@pytest.fixture
def own_worker():
    """A worker of this test's own (so that its process can be killed) on a queue of its own."""
    queue, previous = f"perfcase-kill-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = queue
    process, hostname = start_worker(queue, log_name="celery-worker-killed.log")
    try:
        yield hostname
    finally:
        stop_worker(process)
        app.conf.task_default_queue = previous


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_mid_collection_leaves_no_target_running(
    personas, test_hosts, start_host, own_worker
):
    credential = credential_create(
        team=personas.team, user=personas.member, name="probe", private_key=test_hosts.client_key
    )
    api = ApiClient(personas.member)
    # The hanging tool holds the probe script for its time limit: the kill lands mid-run.
    for side in ("a", "b"):
        slow = start_host(f"slow-{side}", hang_tools=["systemd-detect-virt"])
        trust(api, place(personas, credential, slow, side))
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections", {"kind": "facts"}
    ).body

    # Both targets are run by one task, in one worker process.
    def running_task():
        if CollectionTarget.objects.filter(began_at__isnull=False).count() < 2:
            return None
        active = app.control.inspect(destination=[own_worker], timeout=2).active() or {}
        found = [t for t in active.get(own_worker, []) if t["name"] == "perfcase.collection_run"]
        return found

    [task] = wait_for(running_task, timeout=60)
    os.kill(task["worker_pid"], signal.SIGKILL)

    final = wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{created['id']}").body)["status"]
            in ("completed", "failed")
            and body
        ),
        timeout=120,
    )
    assert {t["status"] for t in final["targets"]} == {"succeeded"}
    targets = CollectionTarget.objects.filter(collection_id=created["id"])
    assert not targets.filter(job__status__in=[TargetStatus.QUEUED, TargetStatus.RUNNING]).exists()
    # The redelivered task claimed both again, and the collection ended once.
    assert set(targets.values_list("job__attempts", flat=True)) == {2}
    assert (
        TimelineEvent.objects.filter(summary__startswith="Host facts collected from 2 of 2").count()
        == 1
    )
