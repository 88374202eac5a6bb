"""Reads of a team's webhook deliveries."""

from django.db.models import QuerySet

from investigations.models import Team, WebhookDelivery


def recent_deliveries(*, team: Team, limit: int = 10) -> QuerySet[WebhookDelivery]:
    """The team's newest webhook deliveries (the rows only)."""
    return team.deliveries.all()[:limit]
