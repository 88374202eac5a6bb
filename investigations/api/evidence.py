import json
from datetime import datetime
from typing import Literal

from ninja import Field, Router, Schema, Status
from pydantic import ConfigDict

from investigations.access import collection_for_user, finding_for_user, investigation_for_user
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id, Text, one_of, stated
from investigations.choices import (
    ENDED_TARGET_STATUSES,
    CollectionKind,
    CollectionStatus,
    FindingSeverity,
    FindingStatus,
    Role,
    TargetStatus,
)
from investigations.phrases import stored_text
from investigations.runs.facts import MAX_PATHS
from investigations.selectors import (
    collection_with_targets,
    fact_pair_diffs,
    findings_for,
    latest_snapshots,
)
from investigations.services.collections import collection_cancel, collection_request
from investigations.services.findings import finding_set_status

router = Router(tags=["evidence"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


# The facts plan's grammars (collectors/facts.py), which its form holds with a 400 naming
# the field, stated.
SERVICE_PATTERN = "^([A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,63})?$"
FactsPath = stated(pattern="^/[A-Za-z0-9._@+/-]{0,254}$", **{"not": {"pattern": "/[.][.](/|$)"}})


class CollectionIn(Schema):
    """The kind, the hosts, and the kind's own parameters, validated by its plan's form
    (investigations/runs/<kind>.py). facts: `service` (a process name or PID whose limits to
    record), `paths` (whose mount options to record). profile: `seconds` (10, at most 120),
    `frequency` (99 Hz), `process` (a command name as pgrep -x matches it) or `pid` (neither:
    every CPU), `call_graph` (fp or dwarf), `ladder` and `step` (a step number or "knee").
    baseline: `suite` (groups: compute, memory, disk, network; default all), `repeat` (3),
    `seconds` (5 a timed benchmark), `scratch_dir` (/var/tmp), `file_mb` (256)."""

    model_config = ConfigDict(extra="allow")

    kind: CollectionKind = CollectionKind.FACTS
    hosts: list[Id] | None = Field(
        None, description="default: every host placed on a side (profile: the service hosts)"
    )
    service: Text = Field(
        "",
        description="facts: a process name or PID whose limits to record",
        json_schema_extra={"pattern": SERVICE_PATTERN},
    )
    paths: list[FactsPath] = Field(
        [],
        description="facts: paths whose mount options to record",
        json_schema_extra={"maxItems": MAX_PATHS},
    )


class TargetOut(Schema):
    host: int = Field(alias="host_id")
    host_name: str = Field(alias="host.name")
    side: str = Field(alias="side.key")
    status: one_of(TargetStatus)
    progress: int
    step: str
    started_at: datetime | None
    began_at: datetime | None = Field(
        description="when its plan began measuring: the targets of one collection begin together"
    )
    finished_at: datetime | None
    error: str

    @staticmethod
    def resolve_step(obj) -> str:
        return stored_text(obj, "step")

    @staticmethod
    def resolve_error(obj) -> str:
        return stored_text(obj, "error")


class CollectionOut(Schema):
    id: int
    investigation: int = Field(alias="investigation_id")
    kind: str
    status: one_of(CollectionStatus)
    parameters: dict
    start_at: datetime
    created_at: datetime
    completed_at: datetime | None
    cancel_requested_at: datetime | None = Field(
        description="set once a cancel was asked for: the targets still queued or running "
        "stop what they started on their hosts and end cancelled ('Cancelled.')"
    )
    targets: list[TargetOut]

    @staticmethod
    def resolve_status(obj) -> str:
        statuses = {t.status for t in obj.targets.all()}
        if not statuses <= set(ENDED_TARGET_STATUSES):
            running = TargetStatus.RUNNING in statuses
            return CollectionStatus.RUNNING if running else CollectionStatus.QUEUED
        if TargetStatus.CANCELLED in statuses:
            return CollectionStatus.CANCELLED
        if statuses == {TargetStatus.FAILED}:
            return CollectionStatus.FAILED
        return CollectionStatus.COMPLETED

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


class RootCauseRef(Schema):
    id: int
    title: str
    title_zh: str


class FindingOut(Schema):
    id: int
    rule: str
    subject: str
    severity: one_of(FindingSeverity)
    title: str = Field(description="in the language Accept-Language asks for")
    explanation: str
    recommendation: str
    side_a: str
    side_b: str
    status: one_of(FindingStatus)
    host_a: int | None = Field(alias="host_a_id")
    host_b: int | None = Field(alias="host_b_id")
    first_seen_at: datetime
    last_seen_at: datetime
    resolved_at: datetime | None
    root_cause: RootCauseRef | None = Field(
        None, description="the knowledge-base entry this finding is evidence for"
    )

    @staticmethod
    def resolve_title(obj) -> str:
        return stored_text(obj, "title")

    @staticmethod
    def resolve_root_cause(obj) -> dict | None:
        cause = obj.root_cause
        return cause and {"id": cause.pk, "title": cause.title, "title_zh": cause.title_zh}

    @staticmethod
    def resolve_explanation(obj) -> str:
        return stored_text(obj, "explanation")

    @staticmethod
    def resolve_recommendation(obj) -> str:
        return stored_text(obj, "recommendation")


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
        # The kind's own fields, as sent: its plan's form is their schema.
        parameters={
            name: value
            for name, value in json.loads(request.body or b"{}").items()
            if name not in ("kind", "hosts")
        },
    )
    return Status(201, collection_with_targets(collection=collection))


@router.get("/collections/{collection_id}", response={200: CollectionOut, **ERRORS})
def collections_get(request, collection_id: Id):
    """Status and one entry per target; poll it until `status` is completed, failed or
    cancelled."""
    collection = collection_for_user(request.user, collection_id)
    return collection_with_targets(collection=collection)


@router.post("/collections/{collection_id}/cancel", response={200: CollectionOut, **ERRORS})
def collections_cancel(request, collection_id: Id):
    """Stop a collection: queued targets end at once, running ones stop what they started on
    their hosts (benchmarks, servers, scratch files) within a few seconds. 400 once ended."""
    collection = collection_for_user(request.user, collection_id, Role.RESPONDER)
    collection = collection_cancel(collection=collection, user=request.user)
    return collection_with_targets(collection=collection)


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
