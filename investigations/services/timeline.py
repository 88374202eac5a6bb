from datetime import UTC, datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from investigations.choices import MANUAL_EVENT_KINDS, ActionKind, EventKind
from investigations.models import Investigation, TimelineEvent

# Kinds that are pushed to the team's webhook as they happen.
NOTIFIED_KINDS = {EventKind.STATUS, EventKind.ACTION}
# Clocks of browsers and servers disagree a little; a few minutes ahead is still "now".
FUTURE_TOLERANCE = timedelta(minutes=5)
# Nothing we record happened before this; older values are typos (and overflow databases).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def time_error(*, value: datetime, label: str) -> str | None:
    """Why a recorded time cannot be right, or None."""
    if value.year < EARLIEST.year or value < EARLIEST:
        return f"{label} is before 1970: check the date."
    if value > timezone.now() + FUTURE_TOLERANCE:
        return f"{label} lies in the future."
    return None


MAX_SUMMARY_CHARS = 100_000


@transaction.atomic
def timeline_event_log(
    *,
    investigation: Investigation,
    kind: str,
    summary: str,
    author=None,
    occurred_at: datetime | None = None,
    action: str = "",
    details: dict | None = None,
) -> TimelineEvent:
    """The one writer of timeline events; other services call it in their transaction."""
    from investigations.services.webhooks import webhook_notify

    event = TimelineEvent.objects.create(
        investigation=investigation,
        kind=kind,
        action=action,
        summary=summary,
        author=author,
        occurred_at=occurred_at or timezone.now(),
        details=details or {},
    )
    if kind in NOTIFIED_KINDS:
        webhook_notify(event=event)
    return event


def timeline_entry_add(
    *,
    investigation: Investigation,
    user,
    kind: str,
    summary: str,
    occurred_at: datetime | None = None,
    action: str = "",
) -> TimelineEvent:
    """A note or an action written by a person, possibly back-dated."""
    errors = {}
    if kind not in MANUAL_EVENT_KINDS:
        errors["kind"] = "Choose note or action."
    if not summary.strip():
        errors["summary"] = "Write what happened."
    elif len(summary) > MAX_SUMMARY_CHARS:
        errors["summary"] = f"Keep it under {MAX_SUMMARY_CHARS:,} characters."
    if kind == EventKind.ACTION and action not in ActionKind.values:
        errors["action"] = "Choose what kind of action this was."
    if kind == EventKind.NOTE and action:
        errors["action"] = "A note has no action type."
    if occurred_at is not None:
        if timezone.is_naive(occurred_at):
            occurred_at = timezone.make_aware(occurred_at)
        if problem := time_error(value=occurred_at, label="This time"):
            errors["occurred_at"] = problem
    if errors:
        raise ValidationError(errors)
    return timeline_event_log(
        investigation=investigation,
        kind=kind,
        action=action,
        summary=summary,
        author=user,
        occurred_at=occurred_at,
    )
