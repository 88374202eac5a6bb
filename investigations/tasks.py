"""Celery tasks: each takes IDs, calls a service, and is safe to run twice."""

from celery import shared_task
from celery.exceptions import SoftTimeLimitExceeded

# Each task names its own limits; tests/investigations/test_tasks.py checks that a real
# worker has them.
WEBHOOK_LIMITS = {"soft_time_limit": 30, "time_limit": 45}
WEBHOOK_MAX_RETRIES = 5


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
