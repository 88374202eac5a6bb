"""A worker killed with SIGKILL (what `docker stop` does after 10 s, on every deploy) at any
moment leaves nothing "running" or "queued" for long: once a worker is back, every job of
every kind (a collection's targets, a ladder's sides, a capture's analysis, a host-key scan)
ends within its own deadline plus 30 s, failed by the one sweep (jobs/sweeper.py) with a
message that names the cause, with nobody reading them (the checks read the database, not
the API, which would show overdue work as failed on its own).

The workers here run with short time limits (a 3 s connect timeout, a 6 s facts probe, a
ladder grace of 5 s, a target grace of 10 s, a sweep every 2 s), the test process with the
same settings, so that the deadlines come within the test's patience; the rules are the
production ones.
"""

import os
import signal
import socket
import subprocess
import threading
import time
import uuid
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import transaction
from django.utils import timezone

from app.celery import app
from investigations.choices import (
    NEVER_RAN,
    OVERDUE_MESSAGE,
    CaptureStatus,
    LadderStatus,
    ScanStatus,
    TargetStatus,
)
from investigations.models import Collection, CollectionTarget, Job, LadderSide
from investigations.services.captures import capture_import
from investigations.services.collections import collection_time_limit
from investigations.services.hostkeys import host_key_scan_request
from investigations.services.inventory import credential_create, host_create
from tests.conftest import ApiClient, jobs_of, start_worker, stop_worker, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_captures import need_tcpdump, pcap_of, upload
from tests.investigations.test_facts_end_to_end import place
from tests.ladders import require
from tests.loadservers import http_server

pytestmark = pytest.mark.django_db(transaction=True)
SHORT = {
    "PERFCASE_SSH_CONNECT_TIMEOUT": "3",
    "PERFCASE_FACTS_TIMEOUT": "6",
    "PERFCASE_LADDER_GRACE_SECONDS": "5",
    "PERFCASE_SWEEP_SECONDS": "2",
    "PERFCASE_TARGET_GRACE_SECONDS": "10",
}


@pytest.fixture
def workers(settings):
    """start() -> (process, hostname): workers of this test's own, on a queue of its own,
    with the short limits; each killed or stopped at the end."""
    settings.SSH_CONNECT_TIMEOUT, settings.FACTS_TIMEOUT = 3, 6
    settings.LADDER_GRACE_SECONDS, settings.SWEEP_SECONDS = 5, 2
    settings.TARGET_GRACE_SECONDS = 10
    queue, previous = f"perfcase-killed-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = queue
    started = []

    def start(listen: str = queue):
        process, hostname = start_worker(listen, log_name=f"celery-{listen}.log", env=SHORT)
        started.append(process)
        return process, hostname

    yield start
    for process in started:
        if process.poll() is None:
            stop_worker(process)
    app.conf.task_default_queue = previous


def kill_hard(process: subprocess.Popen) -> None:
    """SIGKILL to the worker and every process it started, as a container stop does."""
    children = subprocess.run(
        ["pgrep", "-P", str(process.pid)], capture_output=True, text=True
    ).stdout.split()
    for pid in [process.pid, *map(int, children)]:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait(timeout=10)


def ended_in_time(rows, ended_status: str, message: str) -> None:
    for row in rows:
        assert row.status == ended_status, (row.pk, row.status, row.error)
        assert row.error == message, row.error
        assert row.finished_at <= row.deadline_at + timedelta(seconds=30), (
            row.finished_at,
            row.deadline_at,
        )


def test_a_worker_killed_mid_collection_leaves_every_target_failed_by_its_deadline(
    personas, test_hosts, start_host, workers
):
    credential = credential_create(
        team=personas.team, user=personas.member, name="probe", private_key=test_hosts.client_key
    )
    api = ApiClient(personas.member)
    first, _ = workers()
    for side in ("a", "b"):
        # The probe hangs until its time limit: the kill lands mid-run.
        slow = start_host(f"slow-{side}", hang_tools=["systemd-detect-virt"])
        trust(api, place(personas, credential, slow, side))
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections", {"kind": "facts"}
    ).body
    targets = CollectionTarget.objects.filter(collection_id=created["id"])
    wait_for(lambda: targets.filter(began_at__isnull=False).count() == 2, timeout=60)

    kill_hard(first)
    workers()  # a worker is back (a restart); the killed one's message waits in Redis

    wait_for(
        lambda: not targets.filter(job__status__in=[TargetStatus.QUEUED, TargetStatus.RUNNING]),
        timeout=120,
        interval=0.5,
    )
    ended_in_time(targets.all(), TargetStatus.FAILED, OVERDUE_MESSAGE)


def test_a_capture_whose_worker_was_killed_is_failed_after_its_own_length_not_the_kinds(
    personas, test_hosts, start_host, workers
):
    """A 30 s capture: its deadline is connecting (3 s), its 30 s and the grace (10 s) from
    its claim, not the capture kind's worst case (its check, tcpdump's drain, the analysis of
    a capture at its size cap: about 230 s with the default settings)."""
    need_tcpdump()
    credential = credential_create(
        team=personas.team, user=personas.member, name="probe", private_key=test_hosts.client_key
    )
    api = ApiClient(personas.member)
    first, _ = workers()
    for side in ("a", "b"):
        root = start_host(f"cap-{side}", dump=None, username="root")
        trust(api, place(personas, credential, root, side))
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "capture", "seconds": 30, "interface": "lo"},
    ).body
    targets = CollectionTarget.objects.filter(collection_id=created["id"])
    wait_for(lambda: targets.filter(job__step__startswith="capturing").count() == 2, timeout=60)

    kill_hard(first)
    workers()

    collection = Collection.objects.get(pk=created["id"])
    for target in targets:
        own = (target.deadline_at - target.started_at).total_seconds()
        assert abs(own - (3 + 30 + 10)) < 3, own
        worst = collection_time_limit(collection=collection, targets=2)
        assert own < worst / 2, (own, worst)
    # Its moment comes sooner here (the test's patience); the sweep fails it then.
    jobs_of(targets).update(deadline_at=timezone.now() + timedelta(seconds=2))
    wait_for(lambda: not targets.filter(job__status=TargetStatus.RUNNING), timeout=60, interval=0.5)
    ended_in_time(targets.all(), TargetStatus.FAILED, OVERDUE_MESSAGE)
    assert all(target.finished_at >= target.deadline_at for target in targets.all())


def test_targets_no_worker_began_are_failed_by_their_deadline_too(
    personas, test_hosts, start_host, workers, settings
):
    credential = credential_create(
        team=personas.team, user=personas.member, name="probe", private_key=test_hosts.client_key
    )
    api = ApiClient(personas.member)
    workers()
    for side in ("a", "b"):
        trust(api, place(personas, credential, start_host(f"idle-{side}"), side))
    # The task goes to a queue no worker reads: as if its worker took it and was killed
    # before it began.
    app.conf.task_default_queue = f"perfcase-nobody-{uuid.uuid4().hex[:8]}"
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections", {"kind": "facts"}
    ).body
    targets = CollectionTarget.objects.filter(collection_id=created["id"])
    collection = Collection.objects.get(pk=created["id"])
    limit = collection_time_limit(collection=collection, targets=2)
    for target in targets:  # the time the run would have had
        assert abs((target.deadline_at - collection.start_at).total_seconds() - limit) < 5, (
            target.deadline_at,
            collection.start_at,
            limit,
        )
    # Its moment comes sooner here (the test's patience), as if the run had been short.
    jobs_of(targets).update(deadline_at=timezone.now() + timedelta(seconds=3))

    wait_for(lambda: not targets.filter(job__status=TargetStatus.QUEUED), timeout=120, interval=0.5)
    ended_in_time(targets.all(), TargetStatus.FAILED, NEVER_RAN)


def test_a_worker_killed_mid_ladder_leaves_both_sides_failed_by_their_deadline(
    personas, workers, place_ladder_hosts
):
    require("wrk")
    first, _ = workers()
    place_ladder_hosts()
    api = ApiClient(personas.member)
    with http_server(wait_ms=5) as server:
        created = api.post(
            f"/api/investigations/{personas.investigation.pk}/ladders",
            {
                "side_a_url": server,
                "side_b_url": server,
                "steps": [2],
                "step_seconds": 10,
                "warmup_seconds": 0,
            },
        )
        assert created.status_code == 201, created.body
        sides = LadderSide.objects.filter(ladder_id=created.body["id"])
        wait_for(lambda: sides.filter(job__status=LadderStatus.RUNNING).count() == 2, timeout=60)
        time.sleep(1)

        kill_hard(first)
        workers()

        wait_for(
            lambda: not sides.filter(job__status__in=[LadderStatus.QUEUED, LadderStatus.RUNNING]),
            timeout=150,
            interval=0.5,
        )
    ended_in_time(sides.all(), LadderStatus.FAILED, OVERDUE_MESSAGE)


def test_a_worker_killed_mid_capture_analysis_leaves_it_failed_by_its_deadline(personas, workers):
    first, _ = workers()
    with transaction.atomic():  # queued once the file is in place
        (capture,) = capture_import(
            investigation=personas.investigation,
            user=personas.member,
            side_key="a",
            uploads=[upload("hung.pcap", pcap_of(1))],
        )
        # A named pipe nobody writes: the analysis opens it and waits, as on a hung disk.
        stored = Path(capture.pcap.path)
        stored.unlink()
        os.mkfifo(stored)
    try:
        analysing = Job.objects.filter(pk=capture.job_id, status=CaptureStatus.ANALYSING)
        wait_for(lambda: analysing.filter(attempts=1).exists(), timeout=60)
        time.sleep(0.5)

        kill_hard(first)
        workers()

        # Its moment comes sooner here (the test's patience): the kind's limit is 31 min.
        analysing.update(deadline_at=timezone.now() + timedelta(seconds=2))
        wait_for(lambda: not analysing.exists(), timeout=60, interval=0.5)
    finally:
        stored.unlink(missing_ok=True)
    capture.refresh_from_db()
    assert capture.job.status == CaptureStatus.FAILED, capture.job.status
    assert "did not finish within its time limit" in capture.job.error, capture.job.error


@contextmanager
def silent_server():
    """A port that accepts and never speaks, and an Event set once someone connected."""
    server, connected, held = socket.socket(), threading.Event(), []
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def accept():
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
                connected.set()
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], connected
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        server.close()


def test_a_worker_killed_mid_scan_leaves_the_scan_failed_by_its_time_plus_the_grace(
    personas, workers
):
    first, _ = workers()
    with silent_server() as (port, connected):
        host = host_create(
            team=personas.team, name="hung", address="127.0.0.1", port=port, username="p"
        )
        host_key_scan_request(host=host)
        assert connected.wait(60), "no worker began the scan"

        kill_hard(first)
        workers()

        host.refresh_from_db()
        scanning = Job.objects.filter(pk=host.job_id, status=ScanStatus.SCANNING)
        assert scanning.exists()
        # Its moment comes sooner here: as if asked its time and the grace ago, less 2 s.
        scanning.update(deadline_at=timezone.now() + timedelta(seconds=2))
        wait_for(lambda: not scanning.exists(), timeout=60, interval=0.5)
    job = Job.objects.get(pk=host.job_id)
    assert job.status == ScanStatus.FAILED
    assert "no worker finished the scan in time" in job.error, job.error
