"""A case's likely causes, ranked from all its evidence (selectors/hypotheses.py)."""

from ninja import Field, Router, Schema

from investigations.access import investigation_for_user
from investigations.analysis.hypotheses import LOW_SCORE, Hypothesis
from investigations.analysis.signals import signal_label
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id
from investigations.selectors.hypotheses import case_hypotheses, missing_text, next_step

router = Router(tags=["hypotheses"])
ERRORS = {401: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class EvidenceRefOut(Schema):
    kind: str
    id: int | None
    summary: str
    url: str


class RootCauseRefOut(Schema):
    id: int
    slug: str
    title: str


class ContributionOut(Schema):
    signal: dict
    label: str
    delta: float


class HypothesisOut(Schema):
    rank: int
    root_cause: RootCauseRefOut
    score: float
    # The names `for` and `against` are the contract; `for` is a Python keyword.
    for_: list[EvidenceRefOut] = Field(alias="for")
    against: list[EvidenceRefOut]
    missing: list[str]
    missing_kinds: list[str]
    next_step: str
    # Which signals moved the score, and by how much (-1..1), in the order applied.
    explanation: list[ContributionOut]


class HypothesesOut(Schema):
    items: list[HypothesisOut]
    # What was compared on both sides: the answer when no difference is found.
    compared: list[EvidenceRefOut]
    difference_found: bool
    low_score: float


def hypothesis_item(hypothesis: Hypothesis) -> dict:
    """One hypothesis as the API and a diagnosis run give it."""
    return {
        "rank": hypothesis.rank,
        "root_cause": {
            "id": hypothesis.entry.id,
            "slug": hypothesis.entry.slug,
            "title": hypothesis.entry.title,
        },
        "score": hypothesis.score,
        "for": [item.as_dict() for item in hypothesis.supporting],
        "against": [item.as_dict() for item in hypothesis.against],
        "missing": [missing_text(found["kind"], found["signal"]) for found in hypothesis.missing],
        "missing_kinds": [found["kind"] for found in hypothesis.missing],
        "next_step": next_step(hypothesis),
        "explanation": [
            {
                "signal": contribution.signal,
                "label": signal_label(contribution.signal),
                "delta": round(contribution.delta, 3),
            }
            for contribution in hypothesis.contributions
        ],
    }


@router.get(
    "/investigations/{investigation_id}/hypotheses",
    response={200: HypothesesOut, **ERRORS},
    by_alias=True,
    throttle=EXPENSIVE,
)
def hypotheses_list(request, investigation_id: Id):
    """The case's likely causes, most likely first, each with the evidence for and against
    it, what would settle it and the next step; an empty list with `compared` is the answer
    "no difference found"."""
    investigation = investigation_for_user(request.user, investigation_id)
    found = case_hypotheses(investigation=investigation)
    return {
        "items": [hypothesis_item(h) for h in found["hypotheses"]],
        "compared": [item.as_dict() for item in found["compared"]],
        "difference_found": found["difference_found"],
        "low_score": LOW_SCORE,
    }
