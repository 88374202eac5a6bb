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
    return _with_milestones(investigation, kind, events, since=None)


def _with_milestones(investigation, kind: str, events: list, since) -> list:
    if kind not in ("", STORY):
        return events
    milestones = [
        Milestone(when, label)
        for field, label in MILESTONES
        if (when := getattr(investigation, field)) is not None and (since is None or when >= since)
    ]
    return sorted(events + milestones, key=lambda item: item.occurred_at)


@dataclass(frozen=True)
class TimelineWindow:
    items: list  # events and milestones, oldest first
    earlier: int  # events before the window, not shown
    cursor: int | None  # the oldest event shown: ask for what came before it


def timeline_window(
    *, investigation: Investigation, kind: str = "", before: int | None = None, size: int = 100
) -> TimelineWindow:
    """The newest `size` events (or the `size` before the event `before`), oldest first, with
    the milestones among them, and how many earlier events remain: a case of ten thousand
    events is drawn a hundred at a time."""
    events = timeline_events(investigation=investigation, kind=kind)
    anchor = None
    if before is not None:
        anchor = events.filter(pk=before).values_list("occurred_at", "id").first()
        if anchor is None:
            return TimelineWindow([], 0, None)
        events = events.filter(
            Q(occurred_at__lt=anchor[0]) | Q(occurred_at=anchor[0], id__lt=anchor[1])
        )
    shown = list(events.order_by("-occurred_at", "-id")[:size])[::-1]
    if not shown:
        return TimelineWindow(_with_milestones(investigation, kind, [], None), 0, None)
    oldest = shown[0]
    earlier = events.filter(
        Q(occurred_at__lt=oldest.occurred_at) | Q(occurred_at=oldest.occurred_at, id__lt=oldest.pk)
    ).count()
    # Milestones go with the window that holds their moment; the oldest window takes the rest.
    since = oldest.occurred_at if earlier else None
    items = _with_milestones(investigation, kind, shown, since)
    if anchor is not None:  # the later windows hold the milestones from the anchor on
        items = [i for i in items if not isinstance(i, Milestone) or i.occurred_at < anchor[0]]
    return TimelineWindow(items, earlier, oldest.pk if earlier else None)


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
