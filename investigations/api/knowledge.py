"""The knowledge base of root causes (shared by every team) and the search over it and over
the caller's own investigations."""

from datetime import datetime

from django.http import Http404
from django.utils.translation import gettext as _
from ninja import Field, Query, Router, Schema, Status

from investigations.access import team_for_user
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id, NotNull, Text, reject_nulls
from investigations.choices import Role
from investigations.selectors.knowledge import (
    root_cause_cases,
    root_cause_get,
    root_causes_list,
    search_investigations,
)
from investigations.selectors.teams import teams_with_role
from investigations.services.knowledge import EDITABLE, root_cause_create, root_cause_update

router = Router(tags=["knowledge"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
MAX_QUERY = 200
SEARCH_ROOT_CAUSES = 10
SEARCH_INVESTIGATIONS = 20


class SearchQuery(Schema):
    q: Text | None = Field(None, max_length=MAX_QUERY, description="words in English or Chinese")


class RootCauseQuery(SearchQuery):
    category: Text | None = Field(None, max_length=20, description="cpu, memory, network, …")


class RootCauseOut(Schema):
    id: int
    slug: str
    title: str
    title_zh: str
    category: str
    symptoms: str
    symptoms_zh: str
    detection: str
    detection_zh: str
    fix: str
    fix_zh: str
    verification: str
    verification_zh: str
    monitoring: str
    monitoring_zh: str
    references: list[str]
    team: int | None = Field(
        alias="team_id", description="the team that wrote it; null for the entries shipped"
    )
    created_at: datetime
    updated_at: datetime
    score: float | None = Field(
        None, description="how well it matches the search (?q=), higher first; null unsearched"
    )

    @staticmethod
    def resolve_score(obj) -> float | None:
        score = getattr(obj, "score", None)
        return round(score, 4) if score is not None else None


class RootCauseListOut(Schema):
    items: list[RootCauseOut]


class CaseOut(Schema):
    investigation: int = Field(alias="investigation_id")
    title: str = Field(alias="investigation.title")
    status: str = Field(alias="investigation.status")


class RootCauseDetailOut(RootCauseOut):
    cases: list[CaseOut] = Field(
        alias="visible_cases",
        description="the investigations where it was confirmed, of the caller's teams only",
    )


class RootCauseFields(Schema):
    """The texts of an entry, each in English and in Chinese (`_zh`)."""

    title_zh: Text = ""
    category: Text = Field("other", description="cpu, memory, kernel, storage, network, …")
    symptoms: Text = ""
    symptoms_zh: Text = ""
    detection: Text = ""
    detection_zh: Text = ""
    fix: Text = ""
    fix_zh: Text = ""
    verification: Text = ""
    verification_zh: Text = ""
    monitoring: Text = ""
    monitoring_zh: Text = ""
    references: list[Text] = Field([], description="links or citations, one an item")


class RootCauseIn(RootCauseFields):
    title: Text
    team: Id | None = Field(
        None,
        description="the writing team, one where the caller is a responder or lead "
        "(default: the first such team by name)",
    )


class RootCausePatch(Schema):
    """Send only the fields to change."""

    title: Text | NotNull = None
    title_zh: Text | NotNull = None
    category: Text | NotNull = None
    symptoms: Text | NotNull = None
    symptoms_zh: Text | NotNull = None
    detection: Text | NotNull = None
    detection_zh: Text | NotNull = None
    fix: Text | NotNull = None
    fix_zh: Text | NotNull = None
    verification: Text | NotNull = None
    verification_zh: Text | NotNull = None
    monitoring: Text | NotNull = None
    monitoring_zh: Text | NotNull = None
    references: list[Text] | NotNull = None


class FoundInvestigationOut(Schema):
    investigation: int = Field(alias="pk")
    title: str
    status: str
    score: float

    @staticmethod
    def resolve_score(obj) -> float:
        return round(obj.score, 4)


class SearchOut(Schema):
    root_causes: list[RootCauseOut] = Field(description=f"the best {SEARCH_ROOT_CAUSES}")
    investigations: list[FoundInvestigationOut] = Field(
        description="of the caller's teams only, best first"
    )


def _entry(pk: int):
    root_cause = root_cause_get(pk=pk)
    if root_cause is None:
        raise Http404(_("Not found."))
    return root_cause


def _detail(request, root_cause):
    root_cause.visible_cases = list(root_cause_cases(root_cause=root_cause, user=request.user))
    return root_cause


def _writing_team(user, team_id: int | None):
    """The team an entry is written for: the one named (404 outside it, 403 as a viewer), or
    the caller's first team where they write; none for staff outside any team."""
    if team_id is not None:
        return team_for_user(user, team_id, Role.RESPONDER)
    return teams_with_role(user=user, roles=[Role.RESPONDER, Role.LEAD]).first()


@router.get("/root-causes", response={200: RootCauseListOut, **ERRORS})
def root_causes_index(request, filters: Query[RootCauseQuery]):
    """The knowledge base, shared by every team: by category and title, or with `q` the
    entries that match it (in English or Chinese, words or prefixes of three letters or
    more), best first, each with its `score`. `category` narrows either."""
    return {"items": list(root_causes_list(q=filters.q, category=filters.category))}


@router.post("/root-causes", response={201: RootCauseDetailOut, **ERRORS})
def root_causes_create(request, payload: RootCauseIn):
    """A new entry, written in English and (beside it) Chinese. Responders and leads of any
    team, and staff, may write one; the entry belongs to the writing team and is read by all."""
    fields = payload.dict()
    team = _writing_team(request.user, fields.pop("team"))
    root_cause = root_cause_create(user=request.user, team=team, **fields)
    return Status(201, _detail(request, root_cause))


@router.get("/root-causes/{root_cause_id}", response={200: RootCauseDetailOut, **ERRORS})
def root_causes_get(request, root_cause_id: Id):
    """An entry and the investigations where it was confirmed (of the caller's teams only)."""
    return _detail(request, _entry(root_cause_id))


@router.patch("/root-causes/{root_cause_id}", response={200: RootCauseDetailOut, **ERRORS})
def root_causes_patch(request, root_cause_id: Id, payload: RootCausePatch):
    """Change an entry: leads of any team and staff may (everyone reads it)."""
    root_cause = _entry(root_cause_id)
    fields = payload.dict(exclude_unset=True)
    reject_nulls(fields, EDITABLE)
    return _detail(request, root_cause_update(root_cause=root_cause, user=request.user, **fields))


@router.get("/search", response={200: SearchOut, **ERRORS}, throttle=EXPENSIVE)
def search(request, filters: Query[SearchQuery]):
    """Search the knowledge base and the caller's teams' investigations at once, in English
    and Chinese: "powersave", "节能", "透明大页", "futex"."""
    q = filters.q or ""
    return {
        "root_causes": root_causes_list(q=q)[:SEARCH_ROOT_CAUSES] if q.strip() else [],
        "investigations": search_investigations(
            user=request.user, q=q, limit=SEARCH_INVESTIGATIONS
        ),
    }
