"""Similar past cases: the resolved and closed cases of the caller's teams most like one."""

from ninja import Field, Query, Router, Schema

from investigations.access import investigation_for_user
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id, StatusValue
from investigations.selectors.similar import similar_cases

router = Router(tags=["knowledge"])
ERRORS = {401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class SimilarRootCauseOut(Schema):
    id: int
    title: str
    title_zh: str


class SimilarOut(Schema):
    investigation: int
    title: str
    status: StatusValue
    score: float = Field(description="a root cause in common counts 10, the rest together less")
    reasons: list[str] = Field(
        description="why it is alike, strongest first, in the reader's language"
    )
    root_causes: list[SimilarRootCauseOut] = Field(description="its confirmed root causes")


class SimilarListOut(Schema):
    items: list[SimilarOut]


class SimilarQuery(Schema):
    limit: int = Field(5, ge=1, le=20)


@router.get(
    "/investigations/{investigation_id}/similar",
    response={200: SimilarListOut, **ERRORS},
    throttle=EXPENSIVE,
)
def similar_list(request, investigation_id: Id, filters: Query[SimilarQuery]):
    """The resolved and closed cases of your teams most like this one, best first: the same
    root cause as its evidence first, then the same findings, differing facts and path
    shape, then alike words in title and symptom."""
    investigation = investigation_for_user(request.user, investigation_id)
    found = similar_cases(investigation=investigation, user=request.user, limit=filters.limit)
    return {
        "items": [
            {
                "investigation": case.pk,
                "title": case.title,
                "status": case.status,
                "score": score,
                "reasons": reasons,
                "root_causes": [
                    {
                        "id": confirmed.root_cause.pk,
                        "title": confirmed.root_cause.title,
                        "title_zh": confirmed.root_cause.title_zh,
                    }
                    for confirmed in case.case_root_causes.all()
                ],
            }
            for case, score, reasons in found
        ]
    }
