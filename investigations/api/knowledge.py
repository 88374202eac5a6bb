"""The knowledge base of root causes (the installation's entries, read by every signed-in
user, and each team's own, read by its members) and the search over it and over the caller's
own investigations."""

from datetime import datetime
from typing import Literal

from django.core.exceptions import PermissionDenied, ValidationError
from django.utils.translation import gettext as _
from ninja import Field, Query, Router, Schema, Status

from investigations.access import knowledge_operator, root_cause_for_user, team_for_user
from investigations.analysis.signals import MAX_SIGNALS
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import (
    ErrorOut,
    Id,
    NotNull,
    StatusValue,
    Text,
    reject_nulls,
    stated,
    words,
)
from investigations.choices import Role, RootCauseCategory
from investigations.limits import ENTRY, SPEC, TITLE
from investigations.selectors.knowledge import (
    root_cause_cases,
    root_cause_history,
    root_causes_list,
    search_investigations,
)
from investigations.selectors.teams import teams_with_role
from investigations.services.knowledge import (
    EDITABLE,
    MAX_REFERENCES,
    root_cause_create,
    root_cause_update,
)

router = Router(tags=["knowledge"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
MAX_QUERY = 200
SEARCH_ROOT_CAUSES = 10
SEARCH_INVESTIGATIONS = 20
Category = stated(enum=["", *RootCauseCategory.values])  # "": other


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
    signals: list[dict] = Field(
        description="how a case's evidence is recognised as this cause when its likely causes "
        "are ranked: [{source, (rule, subject | metric | measure), verdict, weight, direction, "
        "decisive}]"
    )
    team: int | None = Field(
        alias="team_id",
        description="the team that owns it (its members read it, its leads edit it); null for "
        "the installation's entries",
    )
    owner: Literal["team", "installation"] = Field(
        description="installation: read by every signed-in user, edited by operators holding "
        "`change_rootcause` (the entries shipped are); team: the team's own"
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
    status: StatusValue = Field(alias="investigation.status")


class RootCauseDetailOut(RootCauseOut):
    cases: list[CaseOut] = Field(
        alias="visible_cases",
        description="the investigations where it was confirmed, of the caller's teams only",
    )


class RootCauseFields(Schema):
    """The texts of an entry, each in English and in Chinese (`_zh`)."""

    title_zh: words(TITLE) = ""
    category: Category = Field("other", description="cpu, memory, kernel, storage, network, …")
    symptoms: words(ENTRY) = ""
    symptoms_zh: words(ENTRY) = ""
    detection: words(ENTRY) = ""
    detection_zh: words(ENTRY) = ""
    fix: words(ENTRY) = ""
    fix_zh: words(ENTRY) = ""
    verification: words(ENTRY) = ""
    verification_zh: words(ENTRY) = ""
    monitoring: words(ENTRY) = ""
    monitoring_zh: words(ENTRY) = ""
    references: list[words(SPEC)] = Field(
        [],
        description="links or citations, one an item",
        json_schema_extra={"maxItems": MAX_REFERENCES},
    )
    signals: list[dict] = Field(
        [],
        description="the evidence for and against it, with weights (see the README's "
        '"Likely causes"): e.g. {"source": "finding", "rule": "cpu_governor", '
        '"weight": 0.8, "direction": "for", "decisive": true}',
        json_schema_extra={"maxItems": MAX_SIGNALS},
    )


class RootCauseIn(RootCauseFields):
    title: words(TITLE, blank=False)
    team: Id | None = Field(
        None,
        description="the owning team, one the caller leads (default: the one team they lead)",
    )
    owner: Literal["team", "installation"] | None = Field(
        None,
        description="installation: an entry every signed-in user reads, written by operators "
        "holding `add_rootcause` (the default for an operator who leads no team)",
    )


class RootCausePatch(Schema):
    """Send only the fields to change."""

    title: words(TITLE, blank=False) | NotNull = None
    title_zh: words(TITLE) | NotNull = None
    category: Category | NotNull = None
    symptoms: words(ENTRY) | NotNull = None
    symptoms_zh: words(ENTRY) | NotNull = None
    detection: words(ENTRY) | NotNull = None
    detection_zh: words(ENTRY) | NotNull = None
    fix: words(ENTRY) | NotNull = None
    fix_zh: words(ENTRY) | NotNull = None
    verification: words(ENTRY) | NotNull = None
    verification_zh: words(ENTRY) | NotNull = None
    monitoring: words(ENTRY) | NotNull = None
    monitoring_zh: words(ENTRY) | NotNull = None
    references: list[words(SPEC)] | NotNull = None
    signals: list[dict] | NotNull = None


class RevisionOut(Schema):
    id: int
    author: str = Field(alias="author_name", description="the user name of who edited it")
    at: datetime = Field(alias="created_at")
    fields: list[str] = Field(description="the fields changed")
    previous: dict[str, str | list[str]] = Field(description="each changed field's text before")
    current: dict[str, str | list[str]] = Field(description="and after")

    @staticmethod
    def resolve_fields(obj) -> list[str]:
        return sorted(obj.current)


class RevisionListOut(Schema):
    items: list[RevisionOut]


class FoundInvestigationOut(Schema):
    investigation: int = Field(alias="pk")
    title: str
    status: StatusValue
    score: float

    @staticmethod
    def resolve_score(obj) -> float:
        return round(obj.score, 4)


class SearchOut(Schema):
    root_causes: list[RootCauseOut] = Field(description=f"the best {SEARCH_ROOT_CAUSES}")
    investigations: list[FoundInvestigationOut] = Field(
        description="of the caller's teams only, best first"
    )


def _detail(request, root_cause):
    root_cause.visible_cases = list(root_cause_cases(root_cause=root_cause, user=request.user))
    return root_cause


def _owning_team(user, team_id: int | None, owner: str | None):
    """The team a new entry is for: the one named (404 outside it, 403 below lead), else the
    one team the caller leads; None for the installation (whose writers the service checks)."""
    if owner == "installation":
        if team_id is not None:
            raise ValidationError({"team": _("An entry of the installation has no team.")})
        return None
    if team_id is not None:
        return team_for_user(user, team_id, Role.LEAD)
    led = list(teams_with_role(user=user, roles=[Role.LEAD])[:2])
    if len(led) == 1:
        return led[0]
    if led:
        raise ValidationError({"team": _("You lead several teams: name the one it is for.")})
    if owner is None and knowledge_operator(user, "add"):
        return None
    raise PermissionDenied(_("Only the leads of a team may write root causes, for their team."))


@router.get("/root-causes", response={200: RootCauseListOut, **ERRORS})
def root_causes_index(request, filters: Query[RootCauseQuery]):
    """The entries the caller reads (the installation's and their teams' own): by category
    and title, or with `q` those that match it (in English or Chinese, words or prefixes of
    three letters or more), best first, each with its `score`. `category` narrows either."""
    entries = root_causes_list(user=request.user, q=filters.q, category=filters.category)
    return {"items": list(entries)}


@router.post("/root-causes", response={201: RootCauseDetailOut, **ERRORS})
def root_causes_create(request, payload: RootCauseIn):
    """A new entry, written in English and (beside it) Chinese: a lead writes it for a team
    they lead (its members read it); an operator holding `add_rootcause` may write one of
    the installation (`owner: "installation"`), which every signed-in user reads."""
    fields = payload.dict()
    team = _owning_team(request.user, fields.pop("team"), fields.pop("owner"))
    root_cause = root_cause_create(user=request.user, team=team, **fields)
    return Status(201, _detail(request, root_cause))


@router.get("/root-causes/{root_cause_id}", response={200: RootCauseDetailOut, **ERRORS})
def root_causes_get(request, root_cause_id: Id):
    """An entry and the investigations where it was confirmed (of the caller's teams only);
    404 for an entry of a team the caller is not in."""
    return _detail(request, root_cause_for_user(request.user, root_cause_id))


@router.patch("/root-causes/{root_cause_id}", response={200: RootCauseDetailOut, **ERRORS})
def root_causes_patch(request, root_cause_id: Id, payload: RootCausePatch):
    """Change an entry: a team's entry by its leads, an installation's entry by operators
    holding `change_rootcause` (403 for others who read it, 404 for those who do not). Each
    change is kept: see `/history`."""
    root_cause = root_cause_for_user(request.user, root_cause_id, edit=True)
    fields = payload.dict(exclude_unset=True)
    reject_nulls(fields, EDITABLE)
    return _detail(request, root_cause_update(root_cause=root_cause, user=request.user, **fields))


@router.get("/root-causes/{root_cause_id}/history", response={200: RevisionListOut, **ERRORS})
def root_causes_history(request, root_cause_id: Id):
    """Every edit of an entry, newest first: who, when, and each changed field's text before
    and after."""
    root_cause = root_cause_for_user(request.user, root_cause_id)
    return {"items": list(root_cause_history(root_cause=root_cause))}


@router.get("/search", response={200: SearchOut, **ERRORS}, throttle=EXPENSIVE)
def search(request, filters: Query[SearchQuery]):
    """Search the entries the caller reads and the caller's teams' investigations at once, in
    English and Chinese: "powersave", "节能", "透明大页", "futex"."""
    q = filters.q or ""
    found = root_causes_list(user=request.user, q=q)[:SEARCH_ROOT_CAUSES] if q.strip() else []
    return {
        "root_causes": found,
        "investigations": search_investigations(
            user=request.user, q=q, limit=SEARCH_INVESTIGATIONS
        ),
    }
