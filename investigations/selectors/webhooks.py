"""Reads of a team's webhook deliveries."""

from django.db.models import QuerySet

from investigations.jobs import JobKind, register
from investigations.models import Team, WebhookDelivery

# A delivery has no deadline: one left "sending" by a lost worker is sent again by its
# redelivered task (services/webhooks.py STALE_CLAIM), and none is failed by the sweep.
DELIVERY_JOB = register(JobKind("webhook_delivery", overdue={}))


def recent_deliveries(*, team: Team, limit: int = 10) -> QuerySet[WebhookDelivery]:
    """The team's newest webhook deliveries, with their jobs (status, attempts, error)."""
    return team.deliveries.select_related("job")[:limit]
