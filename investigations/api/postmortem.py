"""The postmortem of a case (its written parts and the rest read from the case), its
Markdown export, and its action items."""

import math
from dataclasses import asdict
from datetime import date, datetime
from typing import Literal

from django.http import Http404
from ninja import Field, Router, Schema, Status

from investigations.access import investigation_for_user
from investigations.analysis.ladder_compare import VERDICTS
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import (
    ErrorOut,
    Id,
    NotNull,
    SeverityValue,
    StatusValue,
    one_of,
    reject_nulls,
    words,
)
from investigations.choices import ItemStatus, LadderStatus, Role
from investigations.limits import ENTRY, NOTES
from investigations.phrases import stored_text
from investigations.selectors.postmortem import (
    WRITTEN,
    PostmortemReport,
    postmortem_action_get,
    postmortem_actions,
    postmortem_of,
)
from investigations.services.postmortem import (
    action_item_create,
    action_item_delete,
    action_item_update,
    postmortem_update,
)
from investigations.views.postmortem import markdown_response

router = Router(tags=["postmortem"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class PostmortemSymptom(Schema):
    metric: str
    unit: str
    load: str
    value_a: float | None
    value_b: float | None
    direction: str
    ratio: float | None = Field(description="How many times worse A is than B (above 1: worse)")


class PostmortemEntry(Schema):
    id: int
    occurred_at: datetime
    kind: str
    author: str
    summary: str = Field(description="in the language Accept-Language asks for")


class PostmortemStep(Schema):
    key: str
    title: str
    status: one_of(ItemStatus)
    evidence: str
    notes: str
    na_reason: str
    assignee: str


class PostmortemEvidence(Schema):
    kind: str
    id: int | None
    label: str
    url: str = Field(description="a path on this site; empty when the evidence is gone")


class PostmortemCause(Schema):
    id: int = Field(description="the knowledge base entry")
    title: str
    fix: str
    confirmed_by: str
    confirmed_at: datetime
    evidence: list[PostmortemEvidence]
    url: str


class PostmortemKnee(Schema):
    load: float | None
    reason: str


class PostmortemLadder(Schema):
    id: int
    status: one_of(LadderStatus)
    created_at: datetime
    steps: list[int | float]
    knees: dict[str, PostmortemKnee]
    divergence_load: float | None
    divergence: str
    url: str


class PostmortemRerun(Schema):
    before: int = Field(description="the ladder run again")
    after: int = Field(description="the newest completed rerun of it")
    verdict: Literal[VERDICTS] | None = Field(
        description="closed, narrowed, unchanged or wider (GET /api/ladders/{id}/compare)"
    )
    reason: str
    load: float | None
    gap_before: float | None
    gap_after: float | None


class ActionOut(Schema):
    id: int
    title: str
    owner: int | None = Field(description="user id of the owner, a member of the team")
    owner_name: str
    due: date | None
    done: bool
    done_at: datetime | None
    created_at: datetime


class ActionsOut(Schema):
    items: list[ActionOut]


class PostmortemOut(Schema):
    investigation: int
    title: str
    severity: SeverityValue
    status: StatusValue
    sides: dict[str, str]
    # Written by people (PATCH).
    summary: str
    impact: str
    fix: str
    verification: str
    lessons: str
    events: list[int] = Field(description="the timeline entries chosen; [] tells the default")
    written: bool = Field(description="a summary, and the lessons or the fix")
    updated_by: str
    updated_at: datetime | None
    # Read from the case.
    symptom: PostmortemSymptom
    times: dict[str, datetime | None]
    durations: dict[str, float | None] = Field(description="seconds: to_detect, … to_resolve")
    events_chosen: bool
    timeline: list[PostmortemEntry] = Field(
        description="the chosen entries, or notes, actions, status changes and root causes"
    )
    method: list[PostmortemStep]
    root_causes: list[PostmortemCause]
    ladders: list[PostmortemLadder]
    fix_verification: PostmortemRerun | None = Field(
        None, description="the newest completed rerun against the ladder it ran again"
    )
    actions: list[ActionOut]


class PostmortemPatch(Schema):
    """Send only what changes; `events` are timeline entry ids of this investigation ([]:
    the default entries)."""

    summary: words(NOTES) | NotNull = None
    impact: words(NOTES) | NotNull = None
    fix: words(NOTES) | NotNull = None
    verification: words(NOTES) | NotNull = None
    lessons: words(NOTES) | NotNull = None
    events: list[Id] | NotNull = None


class ActionIn(Schema):
    title: words(ENTRY, blank=False)
    owner: Id | None = Field(None, description="user id of a member of the team")
    due: date | None = None
    done: bool = False


class ActionPatch(Schema):
    title: words(ENTRY, blank=False) | NotNull = None
    owner: Id | None = Field(None, description="null: nobody")
    due: date | None = Field(None, description="null: no due date")
    done: bool | NotNull = None


class ActionPatchWithId(ActionPatch):
    id: Id


def _body(report: PostmortemReport) -> dict:
    return {
        "investigation": report.investigation_id,
        "title": report.title,
        "severity": report.severity,
        "status": report.status,
        "sides": report.sides,
        **{name: report.text(name) for name in WRITTEN},
        "events": report.chosen_event_ids,
        "written": report.written,
        "updated_by": report.updated_by,
        "updated_at": report.updated_at,
        "symptom": asdict(report.symptom),
        "times": {time.key: time.at for time in report.times},
        "durations": {duration.key: duration.seconds for duration in report.durations},
        "events_chosen": report.events_chosen,
        "timeline": [asdict(entry) for entry in report.events],
        "method": [asdict(step) for step in report.method],
        "root_causes": [asdict(cause) for cause in report.root_causes],
        "ladders": [
            {
                **asdict(ladder),
                "knees": {
                    side: {"load": load, "reason": reason}
                    for side, (load, reason) in ladder.knees.items()
                },
            }
            for ladder in report.ladders
        ],
        "fix_verification": _fix_verification(report.rerun),
        "actions": [asdict(action) for action in report.actions],
    }


def _fix_verification(check) -> dict | None:
    if check is None:
        return None
    comparison = check.comparison
    return {
        "before": check.before.pk,
        "after": check.after.pk,
        "verdict": comparison.verdict,
        "reason": stored_text(comparison, "reason"),
        "load": comparison.load,
        **{
            name: None if gap is None or math.isinf(gap) else gap
            for name, gap in (
                ("gap_before", comparison.gap_before),
                ("gap_after", comparison.gap_after),
            )
        },
    }


@router.get(
    "/investigations/{investigation_id}/postmortem",
    response={200: PostmortemOut, **ERRORS},
    throttle=EXPENSIVE,
)
def postmortem_get(request, investigation_id: Id):
    """The write-up: what people wrote and what the case says (times and durations, the
    timeline it tells, the method's steps, root causes with evidence, ladders, actions)."""
    investigation = investigation_for_user(request.user, investigation_id)
    return _body(postmortem_of(investigation))


@router.patch(
    "/investigations/{investigation_id}/postmortem", response={200: PostmortemOut, **ERRORS}
)
def postmortem_patch(request, investigation_id: Id, payload: PostmortemPatch):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    changes = payload.dict(exclude_unset=True)
    reject_nulls(changes, list(changes))
    postmortem_update(investigation=investigation, user=request.user, **changes)
    return _body(postmortem_of(investigation))


@router.get(
    "/investigations/{investigation_id}/postmortem.md",
    response={200: None, **ERRORS},
    throttle=EXPENSIVE,
)
def postmortem_md(request, investigation_id: Id):
    """The write-up as Markdown (text/markdown), downloaded as a file named after the case."""
    investigation = investigation_for_user(request.user, investigation_id)
    return markdown_response(postmortem_of(investigation), request)


# --- action items ------------------------------------------------------------------------


@router.get("/investigations/{investigation_id}/actions", response={200: ActionsOut, **ERRORS})
def actions_list(request, investigation_id: Id):
    """The action items, open ones first by due date."""
    investigation = investigation_for_user(request.user, investigation_id)
    return {"items": postmortem_actions(investigation=investigation)}


def _action_out(investigation, item_id: int):
    return next(a for a in postmortem_actions(investigation=investigation) if a.id == item_id)


@router.post("/investigations/{investigation_id}/actions", response={201: ActionOut, **ERRORS})
def actions_add(request, investigation_id: Id, payload: ActionIn):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    item = action_item_create(investigation=investigation, user=request.user, **payload.dict())
    return Status(201, _action_out(investigation, item.pk))


def _patch(request, investigation_id: int, action_id: int, changes: dict):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    item = postmortem_action_get(investigation=investigation, action_id=action_id)
    if item is None:
        raise Http404
    reject_nulls(changes, ["title", "done"])
    action_item_update(item=item, user=request.user, **changes)
    return _action_out(investigation, item.pk)


@router.patch(
    "/investigations/{investigation_id}/actions/{action_id}", response={200: ActionOut, **ERRORS}
)
def actions_patch(request, investigation_id: Id, action_id: Id, payload: ActionPatch):
    """Change title, owner, due or done (done stamps done_at; false clears it)."""
    return _patch(request, investigation_id, action_id, payload.dict(exclude_unset=True))


@router.patch("/investigations/{investigation_id}/actions", response={200: ActionOut, **ERRORS})
def actions_patch_by_body(request, investigation_id: Id, payload: ActionPatchWithId):
    """As PATCH …/actions/{action_id}, with the id in the body."""
    changes = payload.dict(exclude_unset=True)
    return _patch(request, investigation_id, changes.pop("id"), changes)


@router.delete(
    "/investigations/{investigation_id}/actions/{action_id}", response={204: None, **ERRORS}
)
def actions_delete(request, investigation_id: Id, action_id: Id):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    item = postmortem_action_get(investigation=investigation, action_id=action_id)
    if item is None:
        raise Http404
    action_item_delete(item=item, user=request.user)
    return Status(204, None)
