"""The traffic path and the guided checklist."""

from datetime import datetime
from typing import Annotated, Literal

from django.core.exceptions import ValidationError
from django.db import transaction
from django.http import Http404
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status

from investigations.access import investigation_for_user
from investigations.api.schemas import (
    NO_NUL,
    NOT_BLANK,
    ErrorOut,
    Id,
    NotNull,
    Port,
    Text,
    reject_nulls,
    stated,
    words,
)
from investigations.choices import (
    ConnectionReuse,
    ItemStatus,
    NodeState,
    PathNodeKind,
    Protocol,
    Role,
)
from investigations.limits import ENTRY, REASON, SPEC, TITLE
from investigations.phrases import stored_text
from investigations.selectors import (
    checklist_item_by_key,
    checklist_items,
    collection_get,
    hosts_in_team,
    path_edge_get,
    path_edges,
    path_node_get,
    path_nodes,
    path_nodes_by_id,
)
from investigations.services.checklist import (
    assignee_named,
    checklist_item_add,
    checklist_item_update,
)
from investigations.services.path import (
    MAX_VALUES,
    path_edge_create,
    path_edge_delete,
    path_edge_update,
    path_from_text,
    path_node_create,
    path_node_delete,
    path_node_set_state,
    path_node_update,
)

router = Router(tags=["method"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
KindValue = Literal[tuple(PathNodeKind.values)]
# Key/value pairs as path_node services hold them (a 400 naming the field), stated.
Values = Annotated[
    dict[Text, Text],
    Field(
        json_schema_extra={
            "maxProperties": MAX_VALUES,
            "propertyNames": {"minLength": 1, "maxLength": 200, "pattern": NOT_BLANK},
            "additionalProperties": {"type": "string", "maxLength": 1000, "pattern": NO_NUL},
        }
    ),
]
ProtocolValue = Literal[tuple(Protocol.values)]
ReuseValue = Literal[tuple(ConnectionReuse.values)]
NodeStateValue = Literal[tuple(NodeState.values)]
ItemStatusValue = Literal[tuple(ItemStatus.values)]


class NodeOut(Schema):
    id: int
    kind: str
    label: str
    spec_a: str
    spec_b: str
    values_a: dict
    values_b: dict
    hosts_a: list[int]
    hosts_b: list[int]
    specs_differ: bool
    state: NodeStateValue
    state_note: str
    state_link: str
    state_collection: int | None = Field(alias="state_collection_id")
    state_changed_at: datetime | None

    @staticmethod
    def resolve_hosts_a(obj) -> list[int]:
        return [host.pk for host in obj.hosts_a.all()]

    @staticmethod
    def resolve_hosts_b(obj) -> list[int]:
        return [host.pk for host in obj.hosts_b.all()]


class NodeIn(Schema):
    kind: KindValue = PathNodeKind.SERVICE
    label: words(200, blank=False)
    spec_a: words(SPEC) = ""
    spec_b: words(SPEC) = ""
    values_a: Values = {}
    values_b: Values = {}
    hosts_a: list[Id] = []
    hosts_b: list[Id] = []


class NodePatch(Schema):
    """Send only what changes. A state other than not_checked needs evidence: a note, a
    link or a collection of this investigation."""

    kind: KindValue | NotNull = None
    label: words(200, blank=False) | NotNull = None
    spec_a: words(SPEC) | NotNull = None
    spec_b: words(SPEC) | NotNull = None
    values_a: Values | NotNull = None
    values_b: Values | NotNull = None
    hosts_a: list[Id] | None = Field(None, description="null: unchanged")
    hosts_b: list[Id] | None = Field(None, description="null: unchanged")
    state: NodeStateValue | NotNull = None
    state_note: words(SPEC) = ""
    state_link: stated(maxLength=2000, pattern="^(https?://[^\\u0000]*)?$") = ""
    state_collection: Id | None = None

    # A hop ruled out or suspect names its evidence.
    model_config = {
        "json_schema_extra": {
            "if": {
                "properties": {"state": {"enum": [NodeState.RULED_OUT, NodeState.SUSPECT]}},
                "required": ["state"],
            },
            "then": {
                "anyOf": [
                    {
                        "properties": {"state_note": {"pattern": NOT_BLANK}},
                        "required": ["state_note"],
                    },
                    {"properties": {"state_link": {"minLength": 1}}, "required": ["state_link"]},
                    {
                        "properties": {"state_collection": {"type": "integer"}},
                        "required": ["state_collection"],
                    },
                ]
            },
        }
    }


class EdgeOut(Schema):
    id: int
    source: int = Field(alias="source_id")
    target: int = Field(alias="target_id")
    protocol: str
    port: int | None
    tls: bool
    reuse: str
    notes: str


class EdgeIn(Schema):
    source: Id
    target: Id
    protocol: ProtocolValue = Protocol.OTHER
    port: Port | None = None
    tls: bool = False
    reuse: ReuseValue = ConnectionReuse.UNKNOWN
    notes: words(SPEC) = ""


class EdgePatch(Schema):
    protocol: ProtocolValue | NotNull = None
    port: Port | None = Field(None, description="null: none")
    tls: bool | NotNull = None
    reuse: ReuseValue | NotNull = None
    notes: words(SPEC) | NotNull = None


class PathTextIn(Schema):
    text: Text = Field(description="e.g. loadgen -> lb -> gateway -> app -[mysql:3306]-> db:mysql")


class PathOut(Schema):
    nodes: list[NodeOut]
    edges: list[EdgeOut]


class ItemOut(Schema):
    key: str
    title: str
    description: str
    status: ItemStatusValue
    assignee: str | None
    auto: bool = Field(description="true while the item is done because its evidence exists")
    evidence: str
    notes: str
    na_reason: str
    custom: bool
    completed_at: datetime | None

    @staticmethod
    def resolve_assignee(obj) -> str | None:
        return obj.assignee.get_username() if obj.assignee else None

    @staticmethod
    def resolve_evidence(obj) -> str:
        return stored_text(obj, "evidence")


class ItemPatch(Schema):
    status: ItemStatusValue | NotNull = None
    assignee: Text | None = Field(None, description="a username; empty string or null to unassign")
    notes: words(ENTRY) | NotNull = None
    na_reason: words(REASON) | NotNull = None


class ItemIn(Schema):
    title: words(TITLE, blank=False)


def _hosts(investigation, ids: list[int] | None, field: str):
    if ids is None:
        return None
    hosts = hosts_in_team(team_id=investigation.team_id, host_ids=ids)
    if len(hosts) != len(set(ids)):
        raise ValidationError({field: _("Choose hosts of the investigation's team.")})
    return hosts


@router.get("/investigations/{investigation_id}/path", response={200: PathOut, **ERRORS})
def path_get(request, investigation_id: Id):
    investigation = investigation_for_user(request.user, investigation_id)
    return {
        "nodes": list(path_nodes(investigation=investigation)),
        "edges": list(path_edges(investigation=investigation)),
    }


@router.post("/investigations/{investigation_id}/path/text", response={201: PathOut, **ERRORS})
def path_text(request, investigation_id: Id, payload: PathTextIn):
    """Create the nodes and edges a line of text names; existing nodes are reused."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    path_from_text(investigation=investigation, user=request.user, text=payload.text)
    return Status(201, path_get(request, investigation_id))


@router.get(
    "/investigations/{investigation_id}/path/nodes", response={200: list[NodeOut], **ERRORS}
)
def nodes_list(request, investigation_id: Id):
    return path_nodes(investigation=investigation_for_user(request.user, investigation_id))


@router.post("/investigations/{investigation_id}/path/nodes", response={201: NodeOut, **ERRORS})
def nodes_create(request, investigation_id: Id, payload: NodeIn):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    fields = payload.dict(exclude={"hosts_a", "hosts_b"})
    node = path_node_create(
        investigation=investigation,
        user=request.user,
        hosts_a=_hosts(investigation, payload.hosts_a, "hosts_a"),
        hosts_b=_hosts(investigation, payload.hosts_b, "hosts_b"),
        **fields,
    )
    return Status(201, node)


def _node(request, investigation_id: int, node_id: int, role=Role.VIEWER):
    investigation = investigation_for_user(request.user, investigation_id, role)
    node = path_node_get(investigation=investigation, node_id=node_id)
    if node is None:
        raise Http404
    return investigation, node


@router.patch(
    "/investigations/{investigation_id}/path/nodes/{node_id}", response={200: NodeOut, **ERRORS}
)
@transaction.atomic
def nodes_patch(request, investigation_id: Id, node_id: Id, payload: NodePatch):
    investigation, node = _node(request, investigation_id, node_id, Role.RESPONDER)
    fields = payload.dict(exclude_unset=True)
    state_fields = {k: fields.pop(k) for k in list(fields) if k.startswith("state")}
    hosts = {
        side: _hosts(investigation, fields.pop(side, None), side) for side in ("hosts_a", "hosts_b")
    }
    reject_nulls({**fields, **state_fields}, [*fields, "state"])
    node = path_node_update(node=node, user=request.user, **hosts, **fields)
    if "state" in state_fields:
        collection = None
        if state_fields.get("state_collection"):
            collection = collection_get(
                investigation=investigation, collection_id=state_fields["state_collection"]
            )
            if collection is None:
                raise ValidationError(
                    {"state_collection": _("No such collection in this investigation.")}
                )
        try:
            node = path_node_set_state(
                node=node,
                user=request.user,
                state=state_fields["state"],
                note=state_fields.get("state_note", ""),
                link=state_fields.get("state_link", ""),
                collection=collection,
            )
        except ValidationError as error:
            # The service names its arguments; the API's fields carry a state_ prefix.
            renamed = {
                f"state_{k}" if k in ("note", "link", "collection") else k: v
                for k, v in error.message_dict.items()
            }
            raise ValidationError(renamed) from None
    return _node(request, investigation_id, node_id)[1]


@router.delete(
    "/investigations/{investigation_id}/path/nodes/{node_id}", response={204: None, **ERRORS}
)
def nodes_delete(request, investigation_id: Id, node_id: Id):
    _, node = _node(request, investigation_id, node_id, Role.RESPONDER)
    path_node_delete(node=node, user=request.user)
    return Status(204, None)


@router.get(
    "/investigations/{investigation_id}/path/edges", response={200: list[EdgeOut], **ERRORS}
)
def edges_list(request, investigation_id: Id):
    return path_edges(investigation=investigation_for_user(request.user, investigation_id))


@router.post("/investigations/{investigation_id}/path/edges", response={201: EdgeOut, **ERRORS})
def edges_create(request, investigation_id: Id, payload: EdgeIn):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    nodes = path_nodes_by_id(investigation=investigation, node_ids=[payload.source, payload.target])
    missing = [f for f in ("source", "target") if getattr(payload, f) not in nodes]
    if missing:
        raise ValidationError({f: _("No such node on this investigation's path.") for f in missing})
    edge = path_edge_create(
        investigation=investigation,
        user=request.user,
        source=nodes[payload.source],
        target=nodes[payload.target],
        **payload.dict(exclude={"source", "target"}),
    )
    return Status(201, edge)


def _edge(request, investigation_id: int, edge_id: int):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    edge = path_edge_get(investigation=investigation, edge_id=edge_id)
    if edge is None:
        raise Http404
    return edge


@router.patch(
    "/investigations/{investigation_id}/path/edges/{edge_id}", response={200: EdgeOut, **ERRORS}
)
def edges_patch(request, investigation_id: Id, edge_id: Id, payload: EdgePatch):
    edge = _edge(request, investigation_id, edge_id)
    fields = payload.dict(exclude_unset=True)
    reject_nulls(fields, [name for name in fields if name != "port"])
    return path_edge_update(edge=edge, user=request.user, **fields)


@router.delete(
    "/investigations/{investigation_id}/path/edges/{edge_id}", response={204: None, **ERRORS}
)
def edges_delete(request, investigation_id: Id, edge_id: Id):
    path_edge_delete(edge=_edge(request, investigation_id, edge_id), user=request.user)
    return Status(204, None)


@router.get("/investigations/{investigation_id}/checklist", response={200: list[ItemOut], **ERRORS})
def checklist_list(request, investigation_id: Id):
    """The method's steps and the team's own, in order."""
    return checklist_items(investigation=investigation_for_user(request.user, investigation_id))


@router.post("/investigations/{investigation_id}/checklist", response={201: ItemOut, **ERRORS})
def checklist_add(request, investigation_id: Id, payload: ItemIn):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    return Status(
        201, checklist_item_add(investigation=investigation, user=request.user, title=payload.title)
    )


@router.patch(
    "/investigations/{investigation_id}/checklist/{key}", response={200: ItemOut, **ERRORS}
)
def checklist_patch(request, investigation_id: Id, key: Text, payload: ItemPatch):
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    item = checklist_item_by_key(investigation=investigation, key=key)
    if item is None:
        raise Http404
    changes = payload.dict(exclude_unset=True)
    if "assignee" in changes:
        changes["assignee"] = assignee_named(username=changes["assignee"])
    reject_nulls(changes, ["status", "notes", "na_reason"])
    return checklist_item_update(item=item, user=request.user, **changes)
