"""Host facts: each host's latest snapshot and the pairs' facts side by side."""

from datetime import datetime

from ninja import Field, Router, Schema

from investigations.access import investigation_for_user
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id
from investigations.selectors import fact_pair_diffs, latest_snapshots

router = Router(tags=["evidence"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class FactsOut(Schema):
    host: int
    host_name: str
    side: str
    collected_at: datetime
    facts: dict
    probes: dict


class DiffRowOut(Schema):
    key: str
    category: str
    a: object | None
    b: object | None
    kind: str = Field(description="same, differs, only_a, only_b or volatile")


class DiffPairOut(Schema):
    roles: list[str]
    host_a: int
    host_b: int
    complete: bool
    differences: int
    rows: list[DiffRowOut]


@router.get("/investigations/{investigation_id}/facts", response={200: list[FactsOut], **ERRORS})
def facts_latest(request, investigation_id: Id):
    """The latest facts snapshot of every host on each side."""
    investigation = investigation_for_user(request.user, investigation_id)
    return [
        {
            "host": snapshot.host_id,
            "host_name": snapshot.host.name,
            "side": side,
            "collected_at": snapshot.collected_at,
            "facts": snapshot.facts,
            "probes": snapshot.probes,
        }
        for (_, side), snapshot in sorted(
            latest_snapshots(investigation=investigation).items(),
            key=lambda item: (item[0][1], item[1].host.name),
        )
    ]


@router.get(
    "/investigations/{investigation_id}/diff",
    response={200: list[DiffPairOut], **ERRORS},
    throttle=EXPENSIVE,
)
def facts_diff(request, investigation_id: Id, only_differences: bool = False):
    """Each host pair's facts side by side; volatile facts are shown but never counted."""
    investigation = investigation_for_user(request.user, investigation_id)
    return [
        {
            "roles": [str(role) for role in diff.pair.roles],
            "host_a": diff.pair.a.host_id,
            "host_b": diff.pair.b.host_id,
            "complete": diff.pair.complete,
            "differences": diff.differences,
            "rows": [row.__dict__ for row in diff.rows],
        }
        for diff in fact_pair_diffs(investigation=investigation, only_differences=only_differences)
    ]
