from datetime import datetime

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase
from investigations import limits
from investigations.access import role_in_team
from investigations.choices import (
    EventKind,
    Role,
    SideKey,
    SideKind,
    Status,
    allowed_status_moves,
)
from investigations.models import Investigation, Side, Tag, Team
from investigations.services.checklist import checklist_create_defaults, checklist_refresh
from investigations.services.search import investigation_index
from investigations.services.timeline import (
    label_phrase,
    time_error,
    timeline_event_log,
)

User = get_user_model()

MAX_TAG_CHARS = 64
MAX_TAGS = 20

# The four times in the order they must happen.
TIME_FIELDS = ["started_at", "detected_at", "mitigated_at", "resolved_at"]
TIME_LABELS = {
    "started_at": _("Started"),
    "detected_at": _("Detected"),
    "mitigated_at": _("Mitigated"),
    "resolved_at": _("Resolved"),
}

# Fields a person may edit with investigation_update; status has its own service.
EDITABLE_FIELDS = [
    "title",
    "severity",
    "symptom_metric",
    "symptom_unit",
    "symptom_load",
    "symptom_value_a",
    "symptom_value_b",
    "symptom_direction",
    *TIME_FIELDS,
    "lead",
    "notes",
]


def _normalise_tags(tags) -> list[str]:
    """Tags from a list or a comma-separated string: trimmed, lower-case, unique, in order."""
    if isinstance(tags, str):
        tags = tags.split(",")
    names = []
    for raw in tags:
        name = " ".join(str(raw).split()).lower()
        if not name or name in names:
            continue
        if len(name) > MAX_TAG_CHARS:
            raise ValidationError(
                {"tags": _("A tag has at most %(limit)s characters.") % {"limit": MAX_TAG_CHARS}}
            )
        names.append(name)
    if len(names) > MAX_TAGS:
        raise ValidationError({"tags": _("At most %(limit)s tags.") % {"limit": MAX_TAGS}})
    return names


def _check(investigation: Investigation, *, lead_changed: bool = False) -> None:
    errors = {}
    if not investigation.title.strip():
        errors["title"] = _("Give the investigation a title.")
    for field, limit in [
        ("title", limits.TITLE),
        ("symptom_metric", limits.SHORT),
        ("symptom_load", limits.SHORT),
        ("notes", limits.NOTES),
    ]:
        if problem := limits.too_long(getattr(investigation, field), limit):
            errors.setdefault(field, problem)
    for field, side in [("symptom_value_a", "A"), ("symptom_value_b", "B")]:
        value = getattr(investigation, field)
        if value is not None and (value != value or value in (float("inf"), float("-inf"))):
            errors[field] = _("Enter a finite number.")
        elif value is not None and value <= 0:
            # A latency, a throughput, a duration: what was measured is above zero.
            errors[field] = _(
                "The value on side %(side)s must be above zero (it was %(value)s)."
            ) % {"side": side, "value": f"{value:g}"}
    errors.update(_time_order_errors(investigation))
    # Only a new lead must be a member: a lead who later leaves the team stays on record.
    if (
        lead_changed
        and investigation.lead_id
        and role_in_team(investigation.lead, investigation.team_id) is None
    ):
        errors["lead"] = _("The lead must be a member of the investigation's team.")
    try:
        investigation.full_clean(exclude=["team", "created_by", "lead", "tags"])
    except ValidationError as error:
        for field, messages in error.message_dict.items():
            errors.setdefault(field, messages)
    if errors:
        raise ValidationError(errors)


def _time_order_errors(investigation: Investigation) -> dict[str, str]:
    """Each time must not precede any earlier one in the lifecycle that is set."""
    errors = {}
    for position, later in enumerate(TIME_FIELDS):
        later_value = getattr(investigation, later)
        if later_value is None:
            continue
        if problem := time_error(value=later_value, label=TIME_LABELS[later]):
            errors[later] = problem
            continue
        for earlier in reversed(TIME_FIELDS[:position]):
            earlier_value = getattr(investigation, earlier)
            if earlier_value is not None:
                if later_value < earlier_value:
                    errors[later] = _("%(later)s cannot be before %(earlier)s (%(time)s).") % {
                        "later": TIME_LABELS[later],
                        "earlier": TIME_LABELS[earlier].lower(),
                        "time": _fmt(earlier_value),
                    }
                break
    return errors


def _fmt(value: datetime) -> str:
    return timezone.localtime(value).strftime("%Y-%m-%d %H:%M %Z")


def _set_tags(investigation: Investigation, names: list[str]) -> None:
    tags = []
    for name in names:
        tag, _ = Tag.objects.get_or_create(name=name)
        tags.append(tag)
    investigation.tags.set(tags)


@transaction.atomic
def investigation_create(
    *,
    team: Team,
    user,
    title: str,
    tags=(),
    side_a_label: str = "A",
    side_a_kind: str = SideKind.OTHER,
    side_b_label: str = "B",
    side_b_kind: str = SideKind.OTHER,
    **fields,
) -> Investigation:
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    investigation = Investigation(team=team, title=title, created_by=user, **fields)
    if investigation.lead_id is None and "lead" not in fields:
        investigation.lead = user
    _check(investigation, lead_changed=True)
    sides = [
        Side(key=SideKey.A, label=side_a_label, kind=side_a_kind),
        Side(key=SideKey.B, label=side_b_label, kind=side_b_kind),
    ]
    errors = {}
    for side in sides:
        try:
            _check_side(side)
        except ValidationError as error:
            for field, messages in error.message_dict.items():
                errors[f"side_{side.key}_{field}"] = messages
    tag_names = _normalise_tags(tags)
    if errors:
        raise ValidationError(errors)
    investigation.save()
    for side in sides:
        side.investigation = investigation
        side.save()
    _set_tags(investigation, tag_names)
    checklist_create_defaults(investigation=investigation)
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.STATUS,
        summary=Phrase(gettext_noop("Investigation opened: %(title)s"), title=investigation.title),
        author=user,
        details={"old": None, "new": Status.OPEN},
    )
    # A case just opened holds no evidence but its own fields: only the symptom can be done.
    checklist_refresh(investigation=investigation, keys=["symptom"])
    investigation_index(investigation=investigation)
    return investigation


def _jsonable(value):
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, User):
        return value.get_username()
    return value


@transaction.atomic
def investigation_update(
    *, investigation: Investigation, user, tags=None, **fields
) -> Investigation:
    """Change any editable fields; one timeline event lists every change with old and new."""
    unknown = set(fields) - set(EDITABLE_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    investigation = Investigation.objects.select_for_update().get(pk=investigation.pk)
    changes = {}
    for field, value in fields.items():
        old = getattr(investigation, field)
        if old != value:
            changes[field] = [_jsonable(old), _jsonable(value)]
            setattr(investigation, field, value)
    _check(investigation, lead_changed="lead" in changes)
    if tags is not None:
        new_tags = _normalise_tags(tags)
        old_tags = list(investigation.tags.values_list("name", flat=True))
        if sorted(old_tags) != sorted(new_tags):
            changes["tags"] = [old_tags, new_tags]
            _set_tags(investigation, new_tags)
    if not changes:
        return investigation
    investigation.save()
    labels = ", ".join(
        Investigation._meta.get_field(f).verbose_name if f != "tags" else "tags" for f in changes
    )
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.CHANGE,
        summary=Phrase(gettext_noop("Edited %(fields)s"), fields=labels),
        author=user,
        details={"changes": changes},
    )
    if any(field.startswith("symptom_") for field in changes):
        checklist_refresh(investigation=investigation)
    investigation_index(investigation=investigation)
    return investigation


@transaction.atomic
def investigation_set_status(
    *, investigation: Investigation, user, status: str, reason: str = ""
) -> Investigation:
    """Move the case along its lifecycle. Closing asks for its root cause: a lead closes a
    case without a confirmed one only saying why (`reason`)."""
    investigation = Investigation.objects.select_for_update().get(pk=investigation.pk)
    old = investigation.status
    if status not in Status.values:
        raise ValidationError(
            {"status": _("Unknown status %(status)s.") % {"status": repr(status)}}
        )
    if status == old:
        raise ValidationError(
            {
                "status": _("The investigation is already %(status)s.")
                % {"status": Status(old).label.lower()}
            }
        )
    if status not in allowed_status_moves(old):
        raise ValidationError(
            {
                "status": _("Cannot move from %(old)s to %(new)s.")
                % {"old": Status(old).label.lower(), "new": Status(status).label.lower()}
            }
        )
    if status == Status.CLOSED and role_in_team(user, investigation.team_id) != Role.LEAD:
        raise PermissionDenied(_("Only a team lead can close an investigation."))
    reason = (reason or "").strip()
    if problem := limits.too_long(reason, limits.REASON):
        raise ValidationError({"reason": problem})
    details = {"old": old, "new": status}
    if status == Status.CLOSED:
        if not investigation.case_root_causes.exists() and not reason:
            raise ValidationError(
                {
                    "root_cause": _(
                        "Name the root cause before closing (the knowledge base holds the "
                        "known ones), or say why this case closes without one."
                    )
                }
            )
        investigation.close_reason = reason
        if reason:
            details["reason"] = reason
    if status == Status.OPEN:
        # The impact is back: the earlier mitigation and resolution no longer hold. Their
        # times stay in this event's details.
        cleared = {f: getattr(investigation, f) for f in ["mitigated_at", "resolved_at"]}
        details["cleared"] = {f: _jsonable(v) for f, v in cleared.items() if v is not None}
        investigation.mitigated_at = investigation.resolved_at = None
    now = timezone.now()
    # Reaching a state stamps its time, unless someone already recorded one.
    if status == Status.MITIGATED and not investigation.mitigated_at:
        investigation.mitigated_at = now
    if status in (Status.RESOLVED, Status.CLOSED) and not investigation.resolved_at:
        investigation.resolved_at = now
    investigation.status = status
    _check(investigation)
    investigation.save()
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.STATUS,
        summary=Phrase(
            gettext_noop("Status: %(old)s → %(new)s"),
            old=label_phrase(Status(old).label),
            new=label_phrase(Status(status).label),
        ),
        author=user,
        details=details,
    )
    investigation_index(investigation=investigation)
    return investigation


def _check_side(side: Side) -> None:
    errors = {}
    if not side.label.strip():
        errors["label"] = _("Give the side a label, such as 'ours' or 'VM'.")
    elif problem := limits.too_long(side.label, limits.SHORT):
        errors["label"] = problem
    if side.kind not in SideKind.values:
        errors["kind"] = _("Choose one of: %(choices)s.") % {"choices": ", ".join(SideKind.values)}
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def side_update(*, side: Side, user, label: str, kind: str) -> Side:
    old = {"label": side.label, "kind": side.kind}
    side.label, side.kind = label, kind
    _check_side(side)
    changes = {f: [old[f], getattr(side, f)] for f in old if old[f] != getattr(side, f)}
    if not changes:
        return side
    side.save()
    timeline_event_log(
        investigation=side.investigation,
        kind=EventKind.CHANGE,
        summary=Phrase(
            gettext_noop("Side %(side)s is now %(label)s (%(kind)s)"),
            side=side.key.upper(),
            label=side.label,
            kind=label_phrase(SideKind(side.kind).label),
        ),
        author=user,
        details={"side": side.key, "changes": changes},
    )
    return side
