from datetime import datetime
from typing import Literal

from ninja import Field, Router, Schema, Status
from pydantic import ConfigDict

from investigations.access import collection_for_user, finding_for_user, investigation_for_user
from investigations.api.schemas import ErrorOut, Id, Text
from investigations.choices import ENDED_TARGET_STATUSES, CollectionKind, Role
from investigations.selectors import (
    collection_with_targets,
    fact_pair_diffs,
    findings_for,
    latest_snapshots,
)
from investigations.services.collections import collection_request
from investigations.services.findings import finding_set_status

router = Router(tags=["evidence"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class CollectionIn(Schema):
    """The kind, the hosts, and the kind's own parameters (validated by its plan's form:
    investigations/runs/<kind>.py); those of host facts are listed."""

    model_config = ConfigDict(extra="allow")

    kind: CollectionKind = CollectionKind.FACTS
    hosts: list[Id] | None = Field(None, description="default: every host placed on a side")
    service: Text = Field("", description="a process name or PID whose limits to record")
    paths: list[Text] = Field([], description="paths whose mount options to record")


class TargetOut(Schema):
    host: int = Field(alias="host_id")
    host_name: str = Field(alias="host.name")
    side: str = Field(alias="side.key")
    status: str
    progress: int
    step: str
    started_at: datetime | None
    began_at: datetime | None = Field(
        description="when its plan began measuring: the targets of one collection begin together"
    )
    finished_at: datetime | None
    error: str


class CollectionOut(Schema):
    id: int
    investigation: int = Field(alias="investigation_id")
    kind: str
    status: str
    parameters: dict
    start_at: datetime
    created_at: datetime
    completed_at: datetime | None
    targets: list[TargetOut]

    @staticmethod
    def resolve_status(obj) -> str:
        statuses = {t.status for t in obj.targets.all()}
        if not statuses <= set(ENDED_TARGET_STATUSES):
            return "running" if "running" in statuses else "queued"
        return "failed" if statuses == {"failed"} else "completed"

    @staticmethod
    def resolve_targets(obj) -> list:
        return list(obj.targets.all())


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


class FindingOut(Schema):
    id: int
    rule: str
    subject: str
    severity: str
    title: str
    explanation: str
    recommendation: str
    side_a: str
    side_b: str
    status: str
    host_a: int | None = Field(alias="host_a_id")
    host_b: int | None = Field(alias="host_b_id")
    first_seen_at: datetime
    last_seen_at: datetime
    resolved_at: datetime | None


class FindingPatch(Schema):
    status: Literal["open", "confirmed", "dismissed"]


@router.post(
    "/investigations/{investigation_id}/collections", response={201: CollectionOut, **ERRORS}
)
def collections_create(request, investigation_id: Id, payload: CollectionIn):
    """Collect evidence from hosts placed on the sides; one target per host and side."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    collection = collection_request(
        investigation=investigation,
        user=request.user,
        kind=payload.kind,
        host_ids=payload.hosts,
        parameters=payload.dict(exclude={"kind", "hosts"}),
    )
    return Status(201, collection_with_targets(collection_id=collection.pk))


@router.get("/collections/{collection_id}", response={200: CollectionOut, **ERRORS})
def collections_get(request, collection_id: Id):
    """Status and one entry per target; poll it until `status` is completed or failed."""
    collection_for_user(request.user, collection_id)
    return collection_with_targets(collection_id=collection_id)


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


@router.get("/investigations/{investigation_id}/diff", response={200: list[DiffPairOut], **ERRORS})
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


@router.get(
    "/investigations/{investigation_id}/findings", response={200: list[FindingOut], **ERRORS}
)
def findings_list(
    request,
    investigation_id: Id,
    status: Literal["", "open", "confirmed", "dismissed", "resolved"] = "",
):
    investigation = investigation_for_user(request.user, investigation_id)
    return findings_for(investigation=investigation, status=status)


@router.patch("/findings/{finding_id}", response={200: FindingOut, **ERRORS})
def findings_patch(request, finding_id: Id, payload: FindingPatch):
    """Confirm or dismiss a finding (status: confirmed, dismissed or open)."""
    finding = finding_for_user(request.user, finding_id, Role.RESPONDER)
    return finding_set_status(finding=finding, user=request.user, status=payload.status)
