from typing import Annotated

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils.translation import gettext as _
from ninja import Query, Router, Schema, Status
from ninja.pagination import paginate

from investigations.access import host_for_user, investigation_for_user, team_for_user
from investigations.api.schemas import (
    ErrorOut,
    EventEdit,
    EventIn,
    EventOut,
    Id,
    InvestigationIn,
    InvestigationOut,
    InvestigationPatch,
    MemberIn,
    MemberOut,
    Pages,
    SeverityValue,
    SideOut,
    SidePatch,
    StatusValue,
    Text,
    listed,
    reject_nulls,
)
from investigations.choices import EventKind, Role, SideKey
from investigations.filters import InvestigationFilter
from investigations.models import Investigation
from investigations.selectors import (
    environment_members,
    investigation_list,
    investigation_with_details,
    member_get,
    side_get,
    team_member_named,
    timeline_event_get,
    timeline_events,
)
from investigations.services.inventory import member_add, member_remove
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
    side_update,
)
from investigations.services.knowledge import case_root_causes_set
from investigations.services.timeline import (
    timeline_entry_add,
    timeline_entry_delete,
    timeline_entry_edit,
)

router = Router(tags=["investigations"])
# "" for every kind; another value is refused with a 400 naming `kind`.
EventKindFilter = Annotated[str, listed(["", *EventKind.values])]
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def _lead(username: str | None, team_id: int):
    if username is None:
        return None
    user = team_member_named(team_id=team_id, username=username)
    if user is None:
        raise ValidationError(
            {"lead": _("%(name)s is not a member of the team.") % {"name": repr(username)}}
        )
    return user


class InvestigationQuery(Schema):
    q: Text | None = None
    team: Id | None = None
    status: StatusValue | None = None
    severity: SeverityValue | None = None
    tag: Text | None = None


@router.get("/investigations", response=list[InvestigationOut])
@paginate(Pages)
def investigations_list(request, filters: Query[InvestigationQuery]):
    """The investigations of the caller's teams, newest first, as {"items": [...], "count": N}."""
    form = InvestigationFilter({k: v for k, v in filters.dict().items() if v is not None})
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return form.apply(investigation_list(user=request.user, with_sides=True))


def _loaded(investigation: Investigation) -> Investigation:
    """The row again with what InvestigationOut reads."""
    return investigation_with_details(investigation_id=investigation.pk)


@router.post("/investigations", response={201: InvestigationOut, **ERRORS})
def investigations_create(request, payload: InvestigationIn):
    team = team_for_user(request.user, payload.team, Role.RESPONDER)
    fields = payload.dict(exclude={"team", "title", "tags", "lead"})
    if payload.lead is not None:
        fields["lead"] = _lead(payload.lead, team.pk)
    investigation = investigation_create(
        team=team, user=request.user, title=payload.title, tags=payload.tags, **fields
    )
    return Status(201, _loaded(investigation))


@router.get("/investigations/{investigation_id}", response={200: InvestigationOut, **ERRORS})
def investigations_get(request, investigation_id: Id):
    return _loaded(investigation_for_user(request.user, investigation_id))


@router.patch("/investigations/{investigation_id}", response={200: InvestigationOut, **ERRORS})
@transaction.atomic
def investigations_patch(request, investigation_id: Id, payload: InvestigationPatch):
    """Change fields (send only those to change) and/or move the status."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    fields = payload.dict(exclude_unset=True)
    status = fields.pop("status", None)
    tags = fields.pop("tags", None)
    reason = fields.pop("close_reason", None) or ""
    if "root_cause" in fields or "root_causes" in fields:
        single = fields.pop("root_cause", None)
        several = fields.pop("root_causes", None)
        case_root_causes_set(
            investigation=investigation,
            user=request.user,
            root_cause_ids=several if several is not None else [single] if single else [],
        )
    if "lead" in fields:
        fields["lead"] = _lead(fields["lead"], investigation.team_id)
    reject_nulls(fields, ["title", "severity", "symptom_direction"])
    for name in ["symptom_metric", "symptom_unit", "symptom_load", "notes"]:
        if name in fields and fields[name] is None:
            fields[name] = ""
    if fields or tags is not None:
        investigation = investigation_update(
            investigation=investigation, user=request.user, tags=tags, **fields
        )
    if status is not None and status != investigation.status:
        investigation = investigation_set_status(
            investigation=investigation, user=request.user, status=status, reason=reason
        )
    return _loaded(investigation)


@router.patch("/investigations/{investigation_id}/sides/{key}", response={200: SideOut, **ERRORS})
def sides_patch(request, investigation_id: Id, key: Text, payload: SidePatch):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    side = side_get(investigation=investigation, key=key) if key in SideKey.values else None
    if side is None:
        raise Http404
    side = side_update(
        side=side,
        user=request.user,
        label=payload.label if payload.label is not None else side.label,
        kind=payload.kind or side.kind,
    )
    return side


@router.get("/investigations/{investigation_id}/members", response={200: list[MemberOut], **ERRORS})
def members_list(request, investigation_id: Id):
    investigation = investigation_for_user(request.user, investigation_id)
    return environment_members(investigation=investigation)


@router.post("/investigations/{investigation_id}/members", response={201: MemberOut, **ERRORS})
def members_add(request, investigation_id: Id, payload: MemberIn):
    """Place an inventory host on side a or b with a role."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    host = host_for_user(request.user, payload.host)
    member = member_add(
        investigation=investigation,
        user=request.user,
        host=host,
        side_key=payload.side,
        role=payload.role,
    )
    return Status(201, member)


@router.delete(
    "/investigations/{investigation_id}/members/{member_id}", response={204: None, **ERRORS}
)
def members_remove(request, investigation_id: Id, member_id: Id):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    member = member_get(investigation=investigation, member_id=member_id)
    if member is None:
        raise Http404
    member_remove(member=member, user=request.user)
    return Status(204, None)


@router.get("/investigations/{investigation_id}/timeline", response=list[EventOut])
@paginate(Pages)
def timeline_list(request, investigation_id: Id, kind: EventKindFilter = ""):
    """Events in time order (oldest first), optionally of one kind."""
    investigation = investigation_for_user(request.user, investigation_id)
    if kind and kind not in EventKind.values:
        raise ValidationError(
            {"kind": _("Choose one of: %(choices)s.") % {"choices": ", ".join(EventKind.values)}}
        )
    return timeline_events(investigation=investigation, kind=kind)


@router.post("/investigations/{investigation_id}/timeline", response={201: EventOut, **ERRORS})
def timeline_add(request, investigation_id: Id, payload: EventIn):
    """Add a note or an action; `occurred_at` may lie in the past."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    event = timeline_entry_add(
        investigation=investigation,
        user=request.user,
        kind=payload.kind,
        action=payload.action,
        occurred_at=payload.occurred_at,
        summary=payload.summary,
    )
    return Status(201, event)


def _own_entry(request, investigation_id: int, event_id: int):
    investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    event = timeline_event_get(event_id=event_id)
    if event is None or event.investigation_id != investigation_id:
        raise Http404
    return event


@router.patch(
    "/investigations/{investigation_id}/timeline/{event_id}", response={200: EventOut, **ERRORS}
)
def timeline_edit(request, investigation_id: Id, event_id: Id, payload: EventEdit):
    """Change a note or an action (its author or a lead); the old version stays in `history`."""
    event = _own_entry(request, investigation_id, event_id)
    return timeline_entry_edit(event=event, user=request.user, **payload.dict(exclude_unset=True))


@router.delete(
    "/investigations/{investigation_id}/timeline/{event_id}", response={204: None, **ERRORS}
)
def timeline_delete(request, investigation_id: Id, event_id: Id):
    """Take a note or an action off the timeline (its author or a lead)."""
    timeline_entry_delete(event=_own_entry(request, investigation_id, event_id), user=request.user)
    return Status(204, None)
