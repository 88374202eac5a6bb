import json
from datetime import datetime
from typing import Literal

from ninja import Field, Router, Schema, Status
from pydantic import ConfigDict, field_validator
from pydantic_core import PydanticCustomError

from investigations.access import collection_for_user, finding_for_user, investigation_for_user
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
from investigations.kinds import collected_kinds
from investigations.kinds.schema import kind_parameters_schema
from investigations.phrases import stored_text
from investigations.selectors import collection_with_targets, findings_for
from investigations.services.collections import collection_cancel, collection_request
from investigations.services.findings import finding_set_status

router = Router(tags=["evidence"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


# The facts fields as pydantic held them before their form's schema documented them: still
# held here (a wrong type is a 422), so that every body is answered as it was.
FactsPath = stated(pattern="^/[A-Za-z0-9._@+/-]{0,254}$")
COMMON = {
    "hosts": {
        "anyOf": [
            {"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 2**63 - 1}},
            {"type": "null"},
        ],
        "default": None,
        "description": "default: every host placed on a side (profile: the service hosts)",
    }
}


def _kinds_schema(schema: dict, model) -> None:
    """The request's schema: `kind` and `hosts`, and each registered kind's own fields, made
    from its plan's form (kinds/schema.py), one member of a oneOf a kind."""
    collected = collected_kinds()
    keys = [str(kind.key) for kind in collected]
    default = str(CollectionKind.FACTS)
    schema["properties"] = {
        "kind": {"type": "string", "enum": keys, "default": default, "title": "Kind"},
        **COMMON,
    }
    schema["oneOf"] = [
        kind_parameters_schema(kind, common=COMMON, default=kind.key == default)
        for kind in collected
    ]


class CollectionIn(Schema):
    """The kind, the hosts, and the kind's own parameters, validated by its plan's form
    (investigations/runs/<kind>.py): the schema of each kind's fields is made from that form
    (one member of `oneOf` a kind; `kind` defaults to facts)."""

    model_config = ConfigDict(extra="allow", json_schema_extra=_kinds_schema)

    kind: object = CollectionKind.FACTS
    hosts: list[Id] | None = None
    service: Text = ""
    paths: list[FactsPath] = []

    @field_validator("kind")
    @classmethod
    def _registered(cls, value):
        keys = [str(kind.key) for kind in collected_kinds()]
        if not isinstance(value, str) or value not in keys:
            expected = " or ".join([", ".join(f"'{key}'" for key in keys[:-1]), f"'{keys[-1]}'"])
            raise PydanticCustomError("enum", "Input should be {expected}", {"expected": expected})
        return value


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
    timings: dict[str, float] = Field(
        description="where the target's time went once it ended, in seconds a phase: queue "
        "(the request to its claim), connect (to an open connection), wait (for the "
        "collection's common start), probe (the plan's remote work), parse (its parsing, "
        "where the kind times it apart; else 0 and counted in probe), store; {} before"
    )

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
