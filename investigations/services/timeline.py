from datetime import UTC, datetime, timedelta

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone, translation
from django.utils.translation import gettext_lazy as _

from collectors.phrase import Phrase
from investigations import limits
from investigations.access import role_in_team
from investigations.choices import MANUAL_EVENT_KINDS, ActionKind, EventKind, Role
from investigations.models import Investigation, TimelineEvent
from investigations.phrases import with_phrases

# Kinds that are pushed to the team's webhook as they happen.
NOTIFIED_KINDS = {EventKind.STATUS, EventKind.ACTION}
# Clocks of browsers and servers disagree a little; a few minutes ahead is still "now".
FUTURE_TOLERANCE = timedelta(minutes=5)
# Nothing we record happened before this; older values are typos (and overflow databases).
EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)


def in_english(text) -> str:
    """What is stored (timeline summaries, checklist steps) is written in English whatever
    the language of the person whose action wrote it; pages translate what they can."""
    with translation.override("en"):
        return str(text)


def label_phrase(label) -> Phrase:
    """A choice's label inside a stored phrase, read in each person's language (its English
    is its msgid)."""
    return Phrase(in_english(label))


def time_error(*, value: datetime, label: str) -> str | None:
    """Why a recorded time cannot be right, or None."""
    if value.year < EARLIEST.year or value < EARLIEST:
        return _("%(label)s is before 1970: check the date.") % {"label": label}
    if value > timezone.now() + FUTURE_TOLERANCE:
        return _("%(label)s lies in the future.") % {"label": label}
    return None


@transaction.atomic(savepoint=False)
def timeline_event_log(
    *,
    investigation: Investigation,
    kind: str,
    summary: "str | Phrase",
    author=None,
    occurred_at: datetime | None = None,
    action: str = "",
    details: dict | None = None,
) -> TimelineEvent:
    """The one writer of timeline events; other services call it in their transaction (so
    it sets no savepoint of its own: an event that fails fails the write it records). An
    automatic summary is a Phrase (read in each person's language); people's words are
    text."""
    from investigations.services.webhooks import webhook_notify

    event = TimelineEvent.objects.create(
        investigation=investigation,
        kind=kind,
        action=action,
        author=author,
        occurred_at=occurred_at or timezone.now(),
        details=details or {},
        **with_phrases({"summary": summary}),
    )
    if kind in NOTIFIED_KINDS:
        webhook_notify(event=event)
    return event


def _entry_errors(kind: str, summary: str, occurred_at, action: str) -> tuple[dict, object]:
    """What is wrong with a person's note or action (and the time made aware)."""
    errors = {}
    if kind not in MANUAL_EVENT_KINDS:
        errors["kind"] = _("Choose note or action.")
    if not summary.strip():
        errors["summary"] = _("Write what happened.")
    elif problem := limits.too_long(summary, limits.ENTRY):
        errors["summary"] = problem
    if kind == EventKind.ACTION and action not in ActionKind.values:
        errors["action"] = _("Choose what kind of action this was.")
    if kind == EventKind.NOTE and action:
        errors["action"] = _("A note has no action type.")
    if occurred_at is not None:
        if timezone.is_naive(occurred_at):
            occurred_at = timezone.make_aware(occurred_at)
        if problem := time_error(value=occurred_at, label=_("This time")):
            errors["occurred_at"] = problem
    return errors, occurred_at


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
    errors, occurred_at = _entry_errors(kind, summary, occurred_at, action)
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


def _may_change(event: TimelineEvent, user) -> None:
    """Only a person's own notes and actions change, by their author or a lead of the team;
    what Perfcase wrote itself is the record of what happened and stays as it is."""
    if event.kind not in MANUAL_EVENT_KINDS or event.author_id is None:
        raise PermissionDenied(_("Only notes and actions people wrote can be changed."))
    if event.deleted_at is not None:
        raise PermissionDenied(_("This entry was deleted."))
    if event.author_id != user.pk and role_in_team(user, event.investigation.team_id) != Role.LEAD:
        raise PermissionDenied(_("Only its author or a lead may change this entry."))


@transaction.atomic
def timeline_entry_edit(
    *,
    event: TimelineEvent,
    user,
    summary: str | None = None,
    occurred_at: datetime | None = None,
    action: str | None = None,
) -> TimelineEvent:
    """Change a note or an action; the version before stays in its history."""
    event = (
        TimelineEvent.objects.select_for_update().select_related("investigation").get(pk=event.pk)
    )
    _may_change(event, user)
    new_summary = event.summary if summary is None else summary
    new_action = event.action if action is None else action
    new_time = event.occurred_at if occurred_at is None else occurred_at
    errors, new_time = _entry_errors(event.kind, new_summary, new_time, new_action)
    if errors:
        raise ValidationError(errors)
    if (new_summary, new_action, new_time) == (event.summary, event.action, event.occurred_at):
        return event
    now = timezone.now()
    event.history = [
        *event.history,
        {
            "summary": event.summary,
            "action": event.action,
            "occurred_at": event.occurred_at.isoformat(),
            "edited_at": now.isoformat(),
            "by": user.get_username(),
        },
    ]
    event.summary, event.action, event.occurred_at, event.edited_at = (
        new_summary,
        new_action,
        new_time,
        now,
    )
    event.save(update_fields=["summary", "action", "occurred_at", "edited_at", "history"])
    return event


@transaction.atomic
def timeline_entry_delete(*, event: TimelineEvent, user) -> None:
    """Take a note or an action off the timeline; the row stays, with who deleted it."""
    event = (
        TimelineEvent.objects.select_for_update().select_related("investigation").get(pk=event.pk)
    )
    _may_change(event, user)
    event.deleted_at, event.deleted_by = timezone.now(), user
    event.save(update_fields=["deleted_at", "deleted_by"])
