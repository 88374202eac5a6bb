"""Celery tasks: each takes IDs, calls a service, and is safe to run twice."""

import time

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

# Each task names its own limits; tests/investigations/test_tasks.py checks that a real
# worker has them.
WEBHOOK_LIMITS = {"soft_time_limit": 30, "time_limit": 45}
WEBHOOK_MAX_RETRIES = 5
# Facts: connect (10 s, twice through a jump host) + the probe script (90 s) + storing.
COLLECT_LIMITS = {"soft_time_limit": 150, "time_limit": 180}
COLLECT_MAX_RETRIES = 2


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
    name="perfcase.collect_target",
    bind=True,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=COLLECT_MAX_RETRIES,
    **COLLECT_LIMITS,
)
def collect_target(self, target_id: int) -> None:
    """Collect one host's evidence. Claims the target first, so a redelivery does nothing."""
    import tempfile

    from django.conf import settings
    from django.utils import timezone

    from collectors.errors import CollectorError
    from collectors.facts import FactsRequest, collect_facts, parse_facts
    from investigations.connections import open_connection
    from investigations.services.collections import (
        HashingFile,
        artifact_store,
        facts_store,
        target_claim,
        target_fail,
        target_progress,
        target_requeue,
        targets_expire_overdue,
    )

    target = target_claim(target_id=target_id, seconds=COLLECT_LIMITS["time_limit"])
    if target is None:
        targets_expire_overdue()
        return
    try:
        # Every target of a collection starts at the same moment.
        wait = (target.collection.start_at - timezone.now()).total_seconds()
        if wait > 0:
            time.sleep(min(wait, 5))
        parameters = target.collection.parameters
        request = FactsRequest(parameters.get("service", ""), tuple(parameters.get("paths", ())))
        target_progress(
            target_id=target_id, progress=15, step=f"connecting to {target.host.address}"
        )
        with open_connection(target.host) as connection:
            target_progress(target_id=target_id, progress=40, step="running the probes")
            with tempfile.TemporaryFile() as raw:
                sink = HashingFile(raw)
                result = collect_facts(connection, sink, request, timeout=settings.FACTS_TIMEOUT)
                target_progress(target_id=target_id, progress=80, step="parsing")
                artifact_store(
                    target=target,
                    name=f"facts-{target.host.name}-{target.side.key}.txt",
                    temp_file=raw,
                    sink=sink,
                    truncated=result.truncated,
                )
                raw.seek(0)
                snapshot = parse_facts(raw.read(), request)
        facts_store(target=target, snapshot=snapshot)
    except CollectorError as error:
        if error.transient and self.request.retries < self.max_retries:
            target_requeue(target_id=target_id, error=error.message)
            raise self.retry(countdown=2 * (self.request.retries + 1)) from None
        target_fail(target_id=target_id, error=error.message)
    except SoftTimeLimitExceeded:
        target_fail(target_id=target_id, error="Gave up: the collection took too long.")
    except Exception as error:
        # A bug, not the host: fail the target visibly rather than leave it running.
        target_fail(target_id=target_id, error=f"Internal error: {type(error).__name__}: {error}")
        raise


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
    from investigations.services.ladders import ladder_claim, ladders_expire_overdue

    limit = self.request.timelimit[0] if self.request.timelimit else None
    sides = ladder_claim(ladder_id=ladder_id, seconds=int(limit or LADDER_LIMITS["time_limit"]))
    if not sides:
        ladders_expire_overdue()
        return
    from investigations.ladder_run import run_ladder

    run_ladder(sides)
