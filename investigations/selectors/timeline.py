"""Reads of an investigation's timeline."""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import Count, Max, Q, QuerySet
from django.utils.translation import gettext_lazy as _

from investigations.choices import EventKind
from investigations.models import Investigation, TimelineEvent

# The human story: every kind but the checklist's automatic bookkeeping.
STORY = "story"


def timeline_events(*, investigation: Investigation, kind: str = "") -> QuerySet[TimelineEvent]:
    """The investigation's events in time order, with their authors loaded; of one kind if
    given, or the story (all but checklist bookkeeping)."""
    events = investigation.events.filter(deleted_at=None).select_related("author")
    if kind == STORY:
        return events.exclude(kind=EventKind.CHECKLIST)
    return events.filter(kind=kind) if kind else events


@dataclass(frozen=True)
class Milestone:
    """One of the incident's own times, shown on the timeline among the events."""

    occurred_at: datetime
    label: str
    kind: str = "milestone"


def timeline_with_milestones(*, investigation: Investigation, kind: str = "") -> list:
    """The events, and where the whole story is shown, the incident's start, detection,
    mitigation and resolution in their places."""
    events = list(timeline_events(investigation=investigation, kind=kind))
    if kind not in ("", STORY):
        return events
    milestones = [
        Milestone(when, label)
        for field, label in MILESTONES
        if (when := getattr(investigation, field)) is not None
    ]
    return sorted(events + milestones, key=lambda item: item.occurred_at)


MILESTONES = [
    ("started_at", _("Impact started")),
    ("detected_at", _("Detected")),
    ("mitigated_at", _("Mitigated")),
    ("resolved_at", _("Resolved")),
]


def timeline_version(*, investigation: Investigation) -> str:
    """Changes whenever an event is added, edited or deleted."""
    stats = investigation.events.aggregate(
        count=Count("id", filter=Q(deleted_at=None)), last=Max("id"), edited=Max("edited_at")
    )
    edited = stats["edited"].timestamp() if stats["edited"] else 0
    return f"{stats['count']}-{stats['last'] or 0}-{edited}"


def timeline_event_get(*, event_id: int) -> TimelineEvent | None:
    """One event that is not deleted, with its investigation, or None."""
    return (
        TimelineEvent.objects.filter(pk=event_id, deleted_at=None)
        .select_related("investigation", "author")
        .first()
    )
