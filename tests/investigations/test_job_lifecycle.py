"""The jobs module's lifecycle, whatever the kind: one claim at a time, writes from the
claim only, one UPDATE that fails overdue work of every kind, reads that never write."""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from collectors.phrase import Phrase
from investigations import jobs
from investigations.choices import CaptureStatus, DeliveryStatus, ScanStatus
from investigations.jobs.sweeper import fail_overdue, sweep
from investigations.models import Job
from investigations.selectors.captures import CAPTURE_JOB, OVERDUE
from investigations.selectors.inventory import SCAN_JOB, SCAN_OVERDUE

pytestmark = pytest.mark.django_db
AGO = timedelta(seconds=1)


def test_a_job_is_claimed_once_and_each_claim_is_counted():
    job = jobs.create(CAPTURE_JOB.name, status=CaptureStatus.ANALYSING)

    first = jobs.claim(job.pk, status=CaptureStatus.ANALYSING, claimable=["queued"])
    assert first is None  # not in a status it may be claimed from

    claims = [
        jobs.claim(job.pk, status="running", claimable=[CaptureStatus.ANALYSING], seconds=60)
        for _ in range(2)
    ]

    assert claims == [1, None]  # the second worker finds it claimed
    job.refresh_from_db()
    assert (job.status, job.attempts) == ("running", 1)
    assert job.began_at is not None and job.deadline_at > timezone.now()


def test_only_the_current_claim_writes_progress_and_the_end():
    job = jobs.create(CAPTURE_JOB.name, status=CaptureStatus.ANALYSING)
    old = jobs.claim(job.pk, status=CaptureStatus.ANALYSING, claimable=CAPTURE_JOB.overdue)
    new = jobs.claim(job.pk, status=CaptureStatus.ANALYSING, claimable=CAPTURE_JOB.overdue)
    assert (old, new) == (1, 2)

    assert not jobs.progress(job.pk, attempt=old, percent=50)
    assert jobs.progress(job.pk, attempt=new, percent=60, step=Phrase("reading %(n)s", n=3))
    assert not jobs.finish(job.pk, status=CaptureStatus.READY, attempt=old)
    assert jobs.finish(job.pk, status=CaptureStatus.FAILED, attempt=new, error=Phrase("boom"))
    assert not jobs.finish(job.pk, status=CaptureStatus.READY)  # ended: run twice, no change

    job.refresh_from_db()
    assert (job.status, job.progress, job.error) == ("failed", 60, "boom")
    assert job.phrases == {"error": ["boom", {}]}
    assert job.finished_at is not None


def test_an_empty_error_clears_the_last_one():
    job = jobs.create("webhook_delivery", status=DeliveryStatus.SENDING)
    jobs.finish(job.pk, status=DeliveryStatus.PENDING, error="Cannot reach the webhook.")
    jobs.finish(job.pk, status=DeliveryStatus.DELIVERED, error="")

    job.refresh_from_db()
    assert (job.status, job.error, job.phrases) == ("delivered", "", {})


def test_a_cancel_is_asked_once_and_only_of_work_not_ended():
    job = jobs.create(CAPTURE_JOB.name, status=CaptureStatus.ANALYSING)
    done = jobs.create(CAPTURE_JOB.name, status=CaptureStatus.READY)

    assert jobs.cancel(job.pk) and not jobs.cancel(job.pk)
    assert not jobs.cancel(done.pk)
    assert Job.objects.get(pk=job.pk).cancel_requested_at is not None


def test_the_sweep_fails_every_kind_with_one_update_of_the_job_table():
    past = timezone.now() - AGO
    scan = jobs.create(SCAN_JOB.name, status=ScanStatus.SCANNING, deadline_at=past)
    analysis = jobs.create(CAPTURE_JOB.name, status=CaptureStatus.ANALYSING, deadline_at=past)
    later = jobs.create(
        CAPTURE_JOB.name, status=CaptureStatus.ANALYSING, deadline_at=past + timedelta(hours=1)
    )
    ended = jobs.create(CAPTURE_JOB.name, status=CaptureStatus.READY, deadline_at=past)
    pending = jobs.create("webhook_delivery", status=DeliveryStatus.PENDING, deadline_at=past)

    with CaptureQueriesContext(connection) as queries:
        failed = fail_overdue()

    updates = [q["sql"] for q in queries if q["sql"].startswith('UPDATE "investigations_job"')]
    assert len(updates) == 1, updates
    assert failed == {SCAN_JOB.name: 1, CAPTURE_JOB.name: 1}
    rows = {job.pk: job for job in Job.objects.all()}
    assert (rows[scan.pk].status, rows[scan.pk].error) == ("failed", str(SCAN_OVERDUE))
    assert rows[scan.pk].phrases == {"error": [SCAN_OVERDUE.template, {}]}
    assert (rows[analysis.pk].status, rows[analysis.pk].error) == ("failed", OVERDUE)
    assert rows[later.pk].status == CaptureStatus.ANALYSING
    assert rows[ended.pk].status == CaptureStatus.READY
    # A delivery has no overdue status: a lost one is sent again by its task, never swept.
    assert rows[pending.pk].status == DeliveryStatus.PENDING
    assert set(sweep().values()) == {0}


def test_a_read_shows_overdue_work_as_failed_without_writing():
    job = jobs.create(SCAN_JOB.name, status=ScanStatus.SCANNING, deadline_at=timezone.now() - AGO)

    read = jobs.read_job(Job.objects.get(pk=job.pk), SCAN_JOB)

    assert (read.status, read.error) == ("failed", SCAN_OVERDUE.template)
    assert Job.objects.get(pk=job.pk).status == ScanStatus.SCANNING
    assert jobs.read_job(None, SCAN_JOB) is None


def test_a_deleted_row_takes_its_job_along(personas):
    from investigations.models import Collection, LadderSide
    from investigations.services.collections import collection_request
    from tests.investigations.test_collections import place_local_hosts
    from tests.investigations.test_profiles import ladder_of

    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    ladder = ladder_of(personas)
    owned = [t.job_id for t in collection.targets.all()]
    owned += [s.job_id for s in LadderSide.objects.filter(ladder=ladder)]
    kept = jobs.create("host_key_scan", status="scanning").pk
    assert len(owned) == 4 and Job.objects.filter(pk__in=owned).count() == 4

    personas.investigation.delete()  # its collections, targets, ladders and sides with it

    assert not Collection.objects.exists()
    assert not Job.objects.filter(pk__in=owned).exists()
    assert Job.objects.filter(pk=kept).exists()
