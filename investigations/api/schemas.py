from datetime import datetime
from typing import Annotated, Literal

from ninja import Field, Schema

from investigations.choices import (
    MANUAL_EVENT_KINDS,
    ActionKind,
    Direction,
    HostRole,
    Role,
    Severity,
    SideKind,
    Status,
)

# Database ids: anything outside a bigint is refused as input, not sent to the database.
Id = Annotated[int, Field(ge=1, le=2**63 - 1)]
Port = Annotated[int, Field(ge=1, le=65535)]
SeverityValue = Literal[tuple(Severity.values)]
StatusValue = Literal[tuple(Status.values)]
DirectionValue = Literal[tuple(Direction.values)]
SideKindValue = Literal[tuple(SideKind.values)]
RoleValue = Literal[tuple(Role.values)]
HostRoleValue = Literal[tuple(HostRole.values)]
ActionValue = Literal[tuple(ActionKind.values)]
ManualKindValue = Literal[tuple(str(k) for k in MANUAL_EVENT_KINDS)]


class TokenIn(Schema):
    username: str
    password: str


class TokenOut(Schema):
    token: str


class TeamIn(Schema):
    name: str


class TeamOut(Schema):
    id: int
    name: str
    role: str


class MembershipIn(Schema):
    username: str
    role: RoleValue = Role.RESPONDER


class MembershipOut(Schema):
    id: int
    username: str
    role: str


class SideOut(Schema):
    key: str
    label: str
    kind: str


class SidePatch(Schema):
    label: str | None = None
    kind: SideKindValue | None = None


class SymptomOut(Schema):
    metric: str
    unit: str
    load: str
    value_a: float | None
    value_b: float | None
    direction: str
    ratio: float | None = Field(
        description="How many times worse A is than B (above 1: A is worse)"
    )


class InvestigationOut(Schema):
    """Read from an Investigation row; load it with tags, sides and lead to avoid N+1."""

    id: int
    team: int
    title: str
    status: str
    severity: str
    tags: list[str]
    symptom: SymptomOut
    started_at: datetime | None
    detected_at: datetime | None
    mitigated_at: datetime | None
    resolved_at: datetime | None
    lead: str | None
    notes: str
    sides: list[SideOut]
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_team(obj) -> int:
        return obj.team_id

    @staticmethod
    def resolve_tags(obj) -> list[str]:
        return [tag.name for tag in obj.tags.all()]

    @staticmethod
    def resolve_lead(obj) -> str | None:
        return obj.lead.get_username() if obj.lead else None

    @staticmethod
    def resolve_sides(obj) -> list:
        return list(obj.sides.all())

    @staticmethod
    def resolve_symptom(obj) -> dict:
        return {
            "metric": obj.symptom_metric,
            "unit": obj.symptom_unit,
            "load": obj.symptom_load,
            "value_a": obj.symptom_value_a,
            "value_b": obj.symptom_value_b,
            "direction": obj.symptom_direction,
            "ratio": obj.symptom_ratio,
        }


class InvestigationFields(Schema):
    """Fields that create and PATCH share. Times without a zone are taken as UTC."""

    severity: SeverityValue = Severity.SEV3
    tags: list[str] = []
    symptom_metric: str = ""
    symptom_unit: str = ""
    symptom_load: str = ""
    symptom_value_a: float | None = None
    symptom_value_b: float | None = None
    symptom_direction: DirectionValue = Direction.LOWER_IS_BETTER
    started_at: datetime | None = None
    detected_at: datetime | None = None
    mitigated_at: datetime | None = None
    resolved_at: datetime | None = None
    lead: str | None = Field(None, description="username of a team member")
    notes: str = ""


class InvestigationIn(InvestigationFields):
    team: Id
    title: str
    side_a_label: str = "A"
    side_a_kind: SideKindValue = SideKind.OTHER
    side_b_label: str = "B"
    side_b_kind: SideKindValue = SideKind.OTHER


class InvestigationPatch(InvestigationFields):
    """Send only the fields to change. `status` moves along open → mitigated → resolved → closed."""

    title: str | None = None
    status: StatusValue | None = None
    severity: SeverityValue | None = None
    symptom_direction: DirectionValue | None = None
    tags: list[str] | None = None


class CredentialIn(Schema):
    team: Id
    name: str
    private_key: str = Field(description="OpenSSH or PEM private key; never returned")
    passphrase: str = ""


class CredentialOut(Schema):
    id: int
    team: int = Field(alias="team_id")
    name: str
    key_type: str
    fingerprint: str
    created_at: datetime


class HostIn(Schema):
    team: Id
    name: str
    address: str
    port: Port = 22
    username: str
    credential: Id | None = None
    jump_host: Id | None = None


class HostPatch(Schema):
    name: str | None = None
    address: str | None = None
    port: Port | None = None
    username: str | None = None
    credential: Id | None = None
    jump_host: Id | None = None


class HostOut(Schema):
    id: int
    team: int = Field(alias="team_id")
    name: str
    address: str
    port: int
    username: str
    credential: int | None = Field(alias="credential_id")
    jump_host: int | None = Field(alias="jump_host_id")


class MemberIn(Schema):
    host: Id
    side: Literal["a", "b"]
    role: HostRoleValue


class MemberOut(Schema):
    id: int
    host: int = Field(alias="host_id")
    host_name: str = Field(alias="host.name")
    side: str = Field(alias="side.key")
    role: str


class EventIn(Schema):
    occurred_at: datetime | None = Field(None, description="defaults to now; may lie in the past")
    kind: ManualKindValue
    action: ActionValue | Literal[""] = ""
    summary: str


class EventOut(Schema):
    id: int
    occurred_at: datetime
    kind: str
    action: str
    summary: str
    author: str | None
    details: dict
    created_at: datetime

    @staticmethod
    def resolve_author(obj) -> str | None:
        return obj.author.get_username() if obj.author else None


class ErrorItem(Schema):
    field: str | None
    message: str


class ErrorOut(Schema):
    detail: str
    errors: list[ErrorItem] | None = None
