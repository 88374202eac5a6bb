"""Reads of an investigation's timeline."""

from django.db.models import Count, Max, QuerySet

from investigations.models import Investigation, TimelineEvent


def timeline_events(*, investigation: Investigation, kind: str = "") -> QuerySet[TimelineEvent]:
    """The investigation's events in time order, with their authors loaded; of one kind if
    given."""
    events = investigation.events.select_related("author")
    return events.filter(kind=kind) if kind else events


def timeline_version(*, investigation: Investigation) -> str:
    """Changes whenever an event is added; events are never edited, so count and id suffice."""
    stats = investigation.events.aggregate(count=Count("id"), last=Max("id"))
    return f"{stats['count']}-{stats['last'] or 0}"
