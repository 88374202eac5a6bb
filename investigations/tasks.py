"""Celery tasks: each takes IDs, calls a service, and is safe to run twice."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

# Each task names its own limits; tests/investigations/test_tasks.py checks that a real
# worker has them.
WEBHOOK_LIMITS = {"soft_time_limit": 30, "time_limit": 45}
WEBHOOK_MAX_RETRIES = 5
# Defaults only: collection_request sets each run's limits from its kind and its targets.
COLLECT_LIMITS = {"soft_time_limit": 150, "time_limit": 180}


@shared_task(
    name="perfcase.webhook_deliver",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=WEBHOOK_MAX_RETRIES,
    **WEBHOOK_LIMITS,
)
def webhook_deliver(self, delivery_id: int) -> None:
    from investigations.services.webhooks import webhook_attempt, webhook_record_failure

    try:
        retry = webhook_attempt(
            delivery_id=delivery_id, final=self.request.retries >= self.max_retries
        )
    except SoftTimeLimitExceeded:
        webhook_record_failure(
            delivery_id=delivery_id, error="Gave up: the delivery took too long.", final=True
        )
        return
    if retry:
        # 1, 2, 4, 8, 16 seconds: a webhook that is down for a minute still gets the message.
        raise self.retry(countdown=2**self.request.retries)


@shared_task(
    name="perfcase.collection_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **COLLECT_LIMITS,
)
def collection_run(self, collection_id: int) -> None:
    """Every target of a collection at once (a thread per host), both sides starting
    together. Redelivered after its worker died, it resumes the targets left running."""
    from investigations.runs.collection import run_collection

    run_collection(collection_id=collection_id)


@shared_task(
    name="perfcase.collect_target",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **COLLECT_LIMITS,
)
def collect_target(self, target_id: int) -> None:
    """One target of a collection: claim it, run its kind's plan, hand the result to the
    kind's service. Run twice, the second run finds nothing to claim."""
    from investigations.models import CollectionTarget
    from investigations.runs.collection import run_collection

    target = CollectionTarget.objects.filter(pk=target_id).only("collection_id").first()
    if target is not None:
        run_collection(collection_id=target.collection_id, target_ids=[target_id])


@shared_task(
    name="perfcase.collections_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **COLLECT_LIMITS,
)
def collections_run(self, collection_ids: list[int]) -> None:
    """Several collections at once, by one task (each as collection_run runs it): the
    profile and the capture a diagnosis takes at the knee, on the hosts at one moment."""
    from investigations.runs.at_once import run_collections_at_once

    run_collections_at_once(collection_ids=collection_ids)


SWEEP_LIMITS = {"soft_time_limit": 60, "time_limit": 90}


@shared_task(
    name="perfcase.sweep",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **SWEEP_LIMITS,
)
def sweep() -> None:
    """Fail what is still queued or running past its deadline (its worker was killed or
    hung), of every kind of job (jobs/sweeper.py). Every worker runs it every SWEEP_SECONDS
    (investigations/worker.py); it is a task too, to run by hand or from beat."""
    from investigations.jobs.sweeper import sweep as sweep_jobs

    sweep_jobs()


# Defaults only: ladder_request sets each run's limits from the ladder's length.
LADDER_LIMITS = {"soft_time_limit": 600, "time_limit": 660}


@shared_task(
    name="perfcase.ladder_run",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **LADDER_LIMITS,
)
def ladder_run(self, ladder_id: int) -> None:
    """A whole ladder, both sides together: every step on the schedule, until done, broken
    or cancelled. Run twice, the second run finds nothing left to claim."""
    from investigations.services.ladder_results import ladder_claim

    limit = self.request.timelimit[0] if self.request.timelimit else None
    sides = ladder_claim(ladder_id=ladder_id, seconds=int(limit or LADDER_LIMITS["time_limit"]))
    if not sides:
        return
    from investigations.runs.ladder import run_ladder

    run_ladder(sides)


# An imported capture of up to 2 GB is analysed in one go, streaming, with constant memory.
CAPTURE_ANALYSE_LIMITS = {"soft_time_limit": 1800, "time_limit": 1860}


@shared_task(
    name="perfcase.capture_analyse",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **CAPTURE_ANALYSE_LIMITS,
)
def capture_analyse(self, capture_id: int) -> None:
    """Analyse an imported pcap or pcapng where it is stored, writing its progress. Run
    twice, the second run finds it analysed; redelivered after its worker died, it starts
    the analysis again."""
    from investigations.services.captures import capture_analyse_stored, capture_analysis_fail

    limit = self.request.timelimit[0] if self.request.timelimit else None
    try:
        capture_analyse_stored(
            capture_id=capture_id, seconds=int(limit or CAPTURE_ANALYSE_LIMITS["time_limit"])
        )
    except SoftTimeLimitExceeded:
        capture_analysis_fail(capture_id=capture_id)


@shared_task(
    name="perfcase.host_key_scan",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    soft_time_limit=40,
    time_limit=55,
)
def host_key_scan_task(host_id: int) -> None:
    """The key a host presents, asked for in a worker so that no web request waits on it."""
    from investigations.services.hostkeys import host_key_scan_failed, host_key_scan_run

    try:
        host_key_scan_run(host_id=host_id)
    except SoftTimeLimitExceeded:
        from investigations.selectors.inventory import SCAN_OVERDUE

        host_key_scan_failed(host_id=host_id, error=SCAN_OVERDUE)


# One look at a diagnosis: connecting to the service hosts to find their process (at the
# knee) is the longest thing it does.
DIAGNOSIS_LIMITS = {"soft_time_limit": 120, "time_limit": 150}


@shared_task(
    name="perfcase.diagnosis_advance",
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=0,
    **DIAGNOSIS_LIMITS,
)
def diagnosis_advance(diagnosis_id: int, tick: int) -> None:
    """A diagnosis moved on: its running stage ended if what it started has, the next one
    started, the next look queued. Run twice (the same tick), the second does nothing."""
    from investigations.services.diagnosis_stages import diagnosis_advance as advance

    advance(diagnosis_id=diagnosis_id, tick=tick)
