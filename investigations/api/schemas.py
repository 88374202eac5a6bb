from datetime import UTC, datetime
from typing import Annotated, Literal

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from ninja import Field, Schema
from ninja.pagination import LimitOffsetPagination
from pydantic import AfterValidator, WithJsonSchema
from pydantic.json_schema import SkipJsonSchema

from investigations import limits
from investigations.choices import (
    MANUAL_EVENT_KINDS,
    ActionKind,
    Direction,
    HostRole,
    HostTransport,
    InvitationStatus,
    Role,
    Severity,
    SideKind,
    Status,
)
from investigations.phrases import stored_text


def _no_nul(value: str) -> str:
    # PostgreSQL text cannot hold NUL; refuse it here with the field's name.
    if "\x00" in value:
        raise ValueError(_("must not contain NUL characters"))
    return value


def _aware(value: datetime) -> datetime:
    return value if value.tzinfo else value.replace(tzinfo=UTC)


# The schema says so too (a pattern of one class, no backtracking).
NO_NUL = "^[^\\u0000]*$"
# And a character that is no space: a blank name or title is refused.
NOT_BLANK = "^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$"
Text = Annotated[str, AfterValidator(_no_nul), Field(json_schema_extra={"pattern": NO_NUL})]


def words(limit: int, *, blank: bool = True) -> object:
    """Text of at most `limit` characters (investigations/limits.py), not blank unless
    `blank`. The service holds these rules and refuses with a 400 naming the field in words,
    as it always has; the schema states them, so that a request valid by it is accepted."""
    extra = {"maxLength": limit, "pattern": NO_NUL if blank else NOT_BLANK}
    if not blank:
        extra["minLength"] = 1
    return Annotated[str, AfterValidator(_no_nul), Field(json_schema_extra=extra)]


def stated(**rules) -> object:
    """Text (no NUL) with the rules a service holds, stated in the schema: the service
    refuses what breaks them with a 400 naming the field, in words, as it always has."""
    return Annotated[str, AfterValidator(_no_nul), WithJsonSchema({"type": "string", **rules})]


def listed(values) -> WithJsonSchema:
    """A text that is one of `values` (Annotated[str, listed(...)]): the service refuses the
    others with a 400 naming the field (as it always has), the schema lists them."""
    return WithJsonSchema({"type": "string", "enum": list(values)})


# Times without a zone are read as UTC.
Time = Annotated[datetime, AfterValidator(_aware)]
# Database ids: anything outside a bigint is refused as input, not sent to the database.
Id = Annotated[int, Field(ge=1, le=2**63 - 1)]
Port = Annotated[int, Field(ge=1, le=65535)]
# Above zero: the service refuses the rest with a 400 naming the field; the schema says so.
Positive = Annotated[float, Field(json_schema_extra={"exclusiveMinimum": 0})]


def one_of(choices) -> object:
    """The values of a choices class as a type: the schema lists them as an enum."""
    return Literal[tuple(choices.values)]


SeverityValue = one_of(Severity)
StatusValue = one_of(Status)
DirectionValue = Literal[tuple(Direction.values)]
SideKindValue = Literal[tuple(SideKind.values)]
RoleValue = Literal[tuple(Role.values)]
HostRoleValue = Literal[tuple(HostRole.values)]
ActionValue = Literal[("", *ActionKind.values)]
TransportValue = Literal[tuple(HostTransport.values)]
ManualKindValue = Literal[tuple(str(k) for k in MANUAL_EVENT_KINDS)]
# A PATCH field that may be left out but not sent as null (refused with a 400 naming it,
# reject_nulls): the schema shows its type without null.
NotNull = SkipJsonSchema[None]


class Pages(LimitOffsetPagination):
    """limit/offset paging, bounded so that no number reaches the database unchecked."""

    class Input(Schema):
        limit: int = Field(50, ge=1, le=200)
        offset: int = Field(0, ge=0, le=10**9)


class TokenIn(Schema):
    username: Text
    password: Text


class TokenOut(Schema):
    token: str
    expires_at: datetime | None = None


class TeamIn(Schema):
    name: words(200, blank=False)


class TeamOut(Schema):
    id: int
    name: str
    role: RoleValue


class MembershipIn(Schema):
    # A user name as Django's user model holds it (150 characters at most).
    username: words(150, blank=False)
    role: RoleValue = Role.RESPONDER


class MembershipOut(Schema):
    id: int
    username: str
    role: RoleValue


class InvitationOut(Schema):
    id: int
    team: int
    team_name: str
    username: str
    role: RoleValue
    status: Literal[("invited", *InvitationStatus.values)] = Field(
        description="`invited` in the answer to an invitation, else its state"
    )
    invited_by: str | None
    expires_at: datetime


class SideOut(Schema):
    key: str
    label: str
    kind: str


class SidePatch(Schema):
    label: words(limits.SHORT, blank=False) | None = None
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


class EvidenceRef(Schema):
    kind: str = Field(description="finding, profile, capture, ladder or event")
    id: int


class CaseRootCauseOut(Schema):
    id: int = Field(description="the knowledge-base entry")
    title: str
    title_zh: str
    category: str
    evidence: list[EvidenceRef]
    fix: str
    confirmed_by: str | None
    confirmed_at: datetime


class InvestigationOut(Schema):
    """Read from an Investigation row; load it with tags, sides and lead to avoid N+1."""

    id: int
    team: int
    title: str
    status: StatusValue
    severity: SeverityValue
    tags: list[str]
    symptom: SymptomOut
    started_at: datetime | None
    detected_at: datetime | None
    mitigated_at: datetime | None
    resolved_at: datetime | None
    lead: str | None
    notes: str
    sides: list[SideOut]
    root_causes: list[CaseRootCauseOut] = Field(
        [], description="the root causes confirmed on the case, with their evidence and fix"
    )
    close_reason: str = Field("", description="why a lead closed it without a root cause")
    created_at: datetime
    updated_at: datetime

    @staticmethod
    def resolve_root_causes(obj) -> list[dict]:
        return [
            {
                "id": found.root_cause_id,
                "title": found.root_cause.title,
                "title_zh": found.root_cause.title_zh,
                "category": found.root_cause.category,
                "evidence": found.evidence,
                "fix": found.fix,
                "confirmed_by": found.confirmed_by.get_username() if found.confirmed_by else None,
                "confirmed_at": found.confirmed_at,
            }
            for found in obj.case_root_causes.all()
        ]

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
    tags: list[Text] = []
    symptom_metric: words(limits.SHORT) = ""
    symptom_unit: Text = ""
    symptom_load: words(limits.SHORT) = ""
    symptom_value_a: Positive | None = None
    symptom_value_b: Positive | None = None
    symptom_direction: DirectionValue = Direction.LOWER_IS_BETTER
    started_at: Time | None = None
    detected_at: Time | None = None
    mitigated_at: Time | None = None
    resolved_at: Time | None = None
    lead: Text | None = Field(None, description="username of a team member")
    notes: words(limits.NOTES) = ""


class InvestigationIn(InvestigationFields):
    team: Id
    title: words(limits.TITLE, blank=False)
    side_a_label: words(limits.SHORT, blank=False) = "A"
    side_a_kind: SideKindValue = SideKind.OTHER
    side_b_label: words(limits.SHORT, blank=False) = "B"
    side_b_kind: SideKindValue = SideKind.OTHER


class InvestigationPatch(InvestigationFields):
    """Send only the fields to change. `status` moves along open → mitigated → resolved → closed."""

    title: words(limits.TITLE, blank=False) | NotNull = None
    status: StatusValue | None = None
    severity: SeverityValue | NotNull = None
    symptom_metric: words(limits.SHORT) | None = None
    symptom_unit: Text | None = None
    symptom_load: words(limits.SHORT) | None = None
    symptom_direction: DirectionValue | NotNull = None
    notes: words(limits.NOTES) | None = None
    root_cause: Id | None = Field(
        None, description="the case's root cause: a knowledge-base entry (null: none)"
    )
    root_causes: list[Id] | None = Field(None, description="or several: exactly these entries")
    close_reason: words(limits.REASON) | None = Field(
        None, description="with status closed and no root cause: why it closes without one"
    )
    tags: list[Text] | None = None


class CredentialIn(Schema):
    team: Id
    name: Text
    private_key: Text = Field(description="OpenSSH or PEM private key; never returned")
    passphrase: Text = ""


class CredentialOut(Schema):
    id: int
    team: int = Field(alias="team_id")
    name: str
    key_type: str
    fingerprint: str
    created_at: datetime


# A host's address and login as the inventory's validators read them (validators.py): the
# user name's grammar is a pattern; an address's characters are, but the grammar of host
# names and IPv4/IPv6 forms is the validator's alone (its 400 names the field).
HostAddress = stated(
    pattern=r"^[A-Za-z0-9.:\[\]-]+$",
    minLength=1,
    maxLength=255,
    description="a host name, an IPv4 address or an IPv6 address (brackets allowed)",
)
UnixUser = stated(pattern=r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$", minLength=1, maxLength=32)


# The service refuses a blank host name, or one over 200 characters, with a 400 naming it.
HostName = words(200, blank=False)


class HostIn(Schema):
    team: Id
    name: HostName
    address: HostAddress
    port: Port = 22
    username: UnixUser
    credential: Id | None = None
    jump_host: Id | None = None
    transport: TransportValue = Field(
        HostTransport.SSH, description="local runs probes on Perfcase's own machine (if enabled)"
    )


class HostPatch(Schema):
    name: HostName | NotNull = None
    address: HostAddress | NotNull = None
    port: Port | NotNull = None
    username: UnixUser | NotNull = None
    credential: Id | None = Field(None, description="null: none")
    jump_host: Id | None = Field(None, description="null: none")
    transport: TransportValue | NotNull = None


class HostOut(Schema):
    id: int
    team: int = Field(alias="team_id")
    name: str
    address: str
    port: int
    username: str
    credential: int | None = Field(alias="credential_id")
    jump_host: int | None = Field(alias="jump_host_id")
    transport: str
    host_key_type: str
    host_key_fingerprint: str


class MemberIn(Schema):
    host: Id
    side: Literal["a", "b"]
    role: HostRoleValue


class MemberOut(Schema):
    id: int
    host: int = Field(alias="host_id")
    host_name: str = Field(alias="host.name")
    side: str = Field(alias="side.key")
    role: HostRoleValue


class EventIn(Schema):
    occurred_at: Time | None = Field(None, description="defaults to now; may lie in the past")
    kind: ManualKindValue
    action: ActionValue = ""
    summary: words(limits.ENTRY, blank=False)

    # A note has no action type; an action names one.
    model_config = {
        "json_schema_extra": {
            "allOf": [
                {
                    "if": {"properties": {"kind": {"const": "note"}}},
                    "then": {"properties": {"action": {"const": ""}}},
                },
                {
                    "if": {"properties": {"kind": {"const": "action"}}},
                    "then": {
                        "properties": {"action": {"enum": list(ActionKind.values)}},
                        "required": ["action"],
                    },
                },
            ]
        }
    }


class EventOut(Schema):
    id: int
    occurred_at: datetime
    kind: str
    action: str
    summary: str
    author: str | None
    details: dict
    created_at: datetime
    edited_at: datetime | None = None
    history: list = Field(default=[], description="earlier versions, oldest first")

    @staticmethod
    def resolve_author(obj) -> str | None:
        return obj.author.get_username() if obj.author else None

    @staticmethod
    def resolve_summary(obj) -> str:
        return stored_text(obj, "summary")


class EventEdit(Schema):
    occurred_at: Time | None = None
    action: ActionValue | None = None
    summary: words(limits.ENTRY, blank=False) | None = None


class ErrorItem(Schema):
    field: str | None
    message: str


class ErrorOut(Schema):
    detail: str
    errors: list[ErrorItem] | None = None


def reject_nulls(fields: dict, names) -> None:
    """A PATCH may leave these fields out, but not send them as null."""
    nulls = [name for name in names if name in fields and fields[name] is None]
    if nulls:
        raise ValidationError({name: _("This field cannot be null.") for name in nulls})
