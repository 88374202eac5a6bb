"""One sweep for every kind of background work, and queueing by task name."""

from datetime import timedelta

import pytest
from django.utils import timezone

from app.celery import app
from investigations.choices import (
    OVERDUE_MESSAGE,
    CaptureStatus,
    LadderStatus,
    ScanStatus,
    TargetStatus,
)
from investigations.jobs.sweeper import job_kinds, sweep
from investigations.models import Capture, CollectionTarget, Job, LadderSide
from investigations.services.captures import capture_import
from investigations.services.collections import collection_request
from investigations.services.hostkeys import host_key_scan_request
from investigations.services.inventory import host_create
from investigations.services.targets import target_claim
from tests.conftest import jobs_of
from tests.investigations.test_captures import pcap_of, upload
from tests.investigations.test_collections import place_local_hosts
from tests.investigations.test_ladders import ladder, running  # noqa: F401 (fixtures)

pytestmark = pytest.mark.django_db
AGO = timedelta(seconds=1)


def test_every_kind_of_job_is_known_to_the_sweep_by_itself():
    assert set(job_kinds()) == {
        "capture_analysis",
        "collection_target",
        "diagnosis",
        "host_key_scan",
        "ladder_side",
        "webhook_delivery",
    }


def test_every_task_a_service_queues_by_name_is_registered():
    # The names services/ pass to jobs.enqueue: a misspelled one would be sent to no task.
    for name in (
        "perfcase.capture_analyse",
        "perfcase.collection_run",
        "perfcase.collections_run",
        "perfcase.diagnosis_advance",
        "perfcase.host_key_scan",
        "perfcase.ladder_run",
        "perfcase.webhook_deliver",
    ):
        assert name in app.tasks, name


def test_one_sweep_fails_overdue_work_of_every_kind(
    personas,
    running,  # noqa: F811
    django_capture_on_commit_callbacks,
):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    target = target_claim(target_id=collection.targets.first().pk, seconds=60)
    jobs_of(CollectionTarget.objects.filter(pk=target.pk)).update(deadline_at=timezone.now() - AGO)
    jobs_of(running.sides.all()).update(deadline_at=timezone.now() - AGO)
    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        uploads=[upload("a.pcap", pcap_of(1))],
    )
    Job.objects.filter(pk=capture.job_id).update(deadline_at=timezone.now() - AGO)
    host = host_create(
        team=personas.team, name="scanned", address="192.0.2.1", port=22, username="p"
    )
    host = host_key_scan_request(host=host)
    Job.objects.filter(pk=host.job_id).update(deadline_at=timezone.now() - AGO)

    with django_capture_on_commit_callbacks(execute=True):
        failed = sweep()
        again = sweep()

    assert failed == {
        "capture_analysis": 1,
        "collection_target": 1,
        "diagnosis": 0,
        "host_key_scan": 1,
        "ladder_side": 2,
        "webhook_delivery": 0,
    }
    assert set(again.values()) == {0}
    target.refresh_from_db()
    assert (target.status, target.error) == (TargetStatus.FAILED, OVERDUE_MESSAGE)
    assert {side.status for side in LadderSide.objects.filter(ladder=running)} == {
        LadderStatus.FAILED
    }
    assert Capture.objects.get(pk=capture.pk).job.status == CaptureStatus.FAILED
    host.job.refresh_from_db()
    assert host.job.status == ScanStatus.FAILED
    assert "no worker finished the scan in time" in host.job.error


def test_the_sweep_leaves_work_within_its_deadline(personas):
    host = host_create(
        team=personas.team, name="scanned", address="192.0.2.1", port=22, username="p"
    )
    host = host_key_scan_request(host=host)

    assert set(sweep().values()) == {0}
    host.job.refresh_from_db()
    assert host.job.status == ScanStatus.SCANNING


def test_an_analysis_no_worker_began_has_a_deadline_from_its_import(personas):
    from investigations import tasks
    from investigations.services.captures import UNCLAIMED_ANALYSIS_SECONDS

    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        uploads=[upload("a.pcap", pcap_of(1))],
    )

    waits = (capture.job.deadline_at - timezone.now()).total_seconds()
    assert tasks.CAPTURE_ANALYSE_LIMITS["time_limit"] < waits <= UNCLAIMED_ANALYSIS_SECONDS
