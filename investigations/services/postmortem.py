"""The postmortem of a case: what people write (summary, impact, fix, verification, lessons,
the timeline entries it tells) and its action items. The rest of the write-up is read from
the case as it is (selectors/postmortem.py).

Responders and leads write; callers check that with investigation_for_user(...,
Role.RESPONDER). Every change lands on the timeline as a postmortem entry.
"""

from datetime import date, datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase, joined
from investigations import limits
from investigations.access import role_in_team
from investigations.choices import EventKind
from investigations.models import ActionItem, Investigation, Postmortem, TimelineEvent
from investigations.services.checklist import checklist_refresh
from investigations.services.search import investigation_index
from investigations.services.timeline import timeline_event_log

# The texts people write, each up to limits.NOTES, and how the timeline names them.
TEXT_FIELDS = {
    "summary": gettext_noop("summary"),
    "impact": gettext_noop("impact"),
    "fix": gettext_noop("fix"),
    "verification": gettext_noop("verification"),
    "lessons": gettext_noop("lessons"),
}
EVENTS_LABEL = gettext_noop("timeline entries")
MAX_EVENTS = 500


def _clean_text(name: str, value, errors: dict) -> str | None:
    if not isinstance(value, str):
        errors[name] = _("Write it as text.")
        return None
    # Line ends as the browser sends them (\r\n) are stored as \n; trailing space goes.
    value = value.replace("\r\n", "\n").replace("\r", "\n").rstrip()
    if "\x00" in value:
        errors[name] = _("Remove the NUL characters.")
    elif problem := limits.too_long(value, limits.NOTES):
        errors[name] = problem
    return value


def _clean_events(investigation: Investigation, value, errors: dict) -> list[int] | None:
    """Timeline entries of this case that are not deleted, in the timeline's order."""
    if not isinstance(value, list | tuple) or not all(
        isinstance(pk, int) and not isinstance(pk, bool) and 0 < pk < 2**63 for pk in value
    ):
        errors["events"] = _("Give a list of timeline entry ids.")
        return None
    wanted = list(dict.fromkeys(value))
    if len(wanted) > MAX_EVENTS:
        errors["events"] = _("Choose at most %(count)s timeline entries.") % {"count": MAX_EVENTS}
        return None
    found = set(
        TimelineEvent.objects.filter(
            investigation=investigation, deleted_at=None, pk__in=wanted
        ).values_list("pk", flat=True)
    )
    missing = [pk for pk in wanted if pk not in found]
    if missing:
        errors["events"] = _("No timeline entry %(ids)s in this investigation.") % {
            "ids": ", ".join(map(str, missing))
        }
        return None
    ordered = TimelineEvent.objects.filter(pk__in=found).order_by("occurred_at", "id")
    return list(ordered.values_list("pk", flat=True))


@transaction.atomic
def postmortem_update(*, investigation: Investigation, user, **fields) -> Postmortem:
    """Change the written parts of the postmortem (created on its first write): any of
    summary, impact, fix, verification, lessons and events (timeline entry ids)."""
    errors: dict = {}
    cleaned: dict = {}
    for name in sorted(set(fields) - {*TEXT_FIELDS, "events"}):
        errors[name] = _("Not a field of the postmortem.")
    for name in TEXT_FIELDS:
        if name in fields:
            cleaned[name] = _clean_text(name, fields[name], errors)
    if "events" in fields:
        cleaned["events"] = _clean_events(investigation, fields["events"], errors)
    if errors:
        raise ValidationError(errors)
    postmortem, _created = Postmortem.objects.select_for_update().get_or_create(
        investigation=investigation
    )
    changed = [name for name, value in cleaned.items() if getattr(postmortem, name) != value]
    if not changed:
        return postmortem
    for name in changed:
        setattr(postmortem, name, cleaned[name])
    postmortem.updated_by = user
    postmortem.save()
    labels = [Phrase(TEXT_FIELDS.get(name, EVENTS_LABEL)) for name in changed]
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.POSTMORTEM,
        summary=Phrase(
            gettext_noop("Edited the postmortem: %(fields)s"), fields=joined(labels, ", ")
        ),
        author=user,
        details={"postmortem": postmortem.pk, "fields": changed},
    )
    # The postmortem object in hand is the one the evidence reads.
    investigation.postmortem = postmortem
    checklist_refresh(investigation=investigation, keys=["write_up"])
    investigation_index(investigation=investigation)
    return postmortem


# --- action items ------------------------------------------------------------------------


def _clean_title(value, errors: dict) -> str | None:
    if not isinstance(value, str):
        errors["title"] = _("Write it as text.")
        return None
    value = " ".join(value.split())
    if not value:
        errors["title"] = _("Say what is to be done.")
    elif "\x00" in value:
        errors["title"] = _("Remove the NUL characters.")
    elif problem := limits.too_long(value, limits.ENTRY):
        errors["title"] = problem
    return value


def _clean_owner(investigation: Investigation, value, errors: dict):
    """A member of the investigation's team (a user or a user id), or None."""
    if value in (None, ""):
        return None
    User = get_user_model()
    if isinstance(value, User):
        owner = value
    elif isinstance(value, int) and not isinstance(value, bool) and 0 < value < 2**63:
        owner = User.objects.filter(pk=value).first()
    else:
        owner = None
    if owner is None or role_in_team(owner, investigation.team_id) is None:
        errors["owner"] = _("The owner must be a member of the investigation's team.")
        return None
    return owner


def _clean_due(value, errors: dict) -> date | None:
    if value in (None, ""):
        return None
    if isinstance(value, str):
        try:
            value = date.fromisoformat(value)
        except ValueError:
            value = None
    if not isinstance(value, date) or isinstance(value, datetime):
        errors["due"] = _("Give the due date as a date (YYYY-MM-DD).")
        return None
    if value.year < 1970:
        errors["due"] = _("%(label)s is before 1970: check the date.") % {"label": _("Due")}
        return None
    return value


def _log_action(item: ActionItem, user, template: str, **details) -> None:
    timeline_event_log(
        investigation=item.investigation,
        kind=EventKind.POSTMORTEM,
        summary=Phrase(template, title=item.title),
        author=user,
        details={"action_item": item.pk, **details},
    )


@transaction.atomic
def action_item_create(
    *, investigation: Investigation, user, title, owner=None, due=None, done: bool = False
) -> ActionItem:
    """Something to do after the case, with an owner of the team and a due date."""
    errors: dict = {}
    title = _clean_title(title, errors)
    owner = _clean_owner(investigation, owner, errors)
    due = _clean_due(due, errors)
    if not isinstance(done, bool):
        errors["done"] = _("Say true or false.")
    if errors:
        raise ValidationError(errors)
    item = ActionItem.objects.create(
        investigation=investigation,
        title=title,
        owner=owner,
        due=due,
        done=done,
        done_at=timezone.now() if done else None,
        created_by=user,
    )
    _log_action(item, user, gettext_noop("Action item added: %(title)s"))
    return item


@transaction.atomic
def action_item_update(*, item: ActionItem, user, **fields) -> ActionItem:
    """Change any of title, owner (None: nobody), due (None: no date) and done."""
    item = (
        ActionItem.objects.select_for_update(of=("self",))
        .select_related("investigation", "owner")
        .get(pk=item.pk)
    )
    errors: dict = {}
    cleaned: dict = {}
    for name in sorted(set(fields) - {"title", "owner", "due", "done"}):
        errors[name] = _("Not a field of an action item.")
    if "title" in fields:
        cleaned["title"] = _clean_title(fields["title"], errors)
    if "owner" in fields:
        cleaned["owner"] = _clean_owner(item.investigation, fields["owner"], errors)
    if "due" in fields:
        cleaned["due"] = _clean_due(fields["due"], errors)
    if "done" in fields:
        if not isinstance(fields["done"], bool):
            errors["done"] = _("Say true or false.")
        cleaned["done"] = fields["done"]
    if errors:
        raise ValidationError(errors)
    changed = [name for name, value in cleaned.items() if getattr(item, name) != value]
    if not changed:
        return item
    for name in changed:
        setattr(item, name, cleaned[name])
    if "done" in changed:
        item.done_at = timezone.now() if item.done else None
    item.save()
    if changed == ["done"]:
        template = (
            gettext_noop("Action item done: %(title)s")
            if item.done
            else gettext_noop("Action item reopened: %(title)s")
        )
    else:
        template = gettext_noop("Action item changed: %(title)s")
    _log_action(item, user, template, fields=changed)
    return item


@transaction.atomic
def action_item_delete(*, item: ActionItem, user) -> None:
    item = ActionItem.objects.select_related("investigation").get(pk=item.pk)
    _log_action(item, user, gettext_noop("Action item removed: %(title)s"))
    item.delete()
