"""The traffic path: nodes (hops) and edges, built by hand or from one line of text."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase
from investigations import limits
from investigations.analysis.pathtext import PathSyntaxError, parse_path
from investigations.choices import (
    ConnectionReuse,
    EventKind,
    NodeState,
    PathNodeKind,
    Protocol,
)
from investigations.models import Collection, Investigation, PathEdge, PathNode
from investigations.phrases import message_of
from investigations.services.checklist import checklist_refresh
from investigations.services.timeline import label_phrase, timeline_event_log

MAX_SPEC_CHARS = limits.SPEC
MAX_VALUES = 50
NODE_FIELDS = ["kind", "label", "spec_a", "spec_b", "values_a", "values_b"]
EDGE_FIELDS = ["protocol", "port", "tls", "reuse", "notes"]


# What the timeline says when a hop is marked, without and with the person's note.
STATE_SET = {
    NodeState.NOT_CHECKED: (
        gettext_noop("Path: %(node)s not checked"),
        gettext_noop("Path: %(node)s not checked: %(note)s"),
    ),
    NodeState.RULED_OUT: (
        gettext_noop("Path: %(node)s ruled out"),
        gettext_noop("Path: %(node)s ruled out: %(note)s"),
    ),
    NodeState.SUSPECT: (
        gettext_noop("Path: %(node)s suspect"),
        gettext_noop("Path: %(node)s suspect: %(note)s"),
    ),
}


# The checklist steps whose evidence is the path: the only ones a change to it can move.
PATH_STEPS = ["path", "rule_out_path"]


def _log(investigation: Investigation, summary: Phrase, user, **details) -> None:
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.PATH,
        summary=summary,
        author=user,
        details=details,
    )


def _clean_values(values, field: str) -> dict[str, str]:
    if not isinstance(values, dict):
        raise ValidationError({field: _("Give key/value pairs.")})
    if len(values) > MAX_VALUES:
        raise ValidationError({field: _("At most %(count)s values.") % {"count": MAX_VALUES}})
    clean = {}
    for key, value in values.items():
        key, value = " ".join(str(key).split()), str(value).strip()
        if not key or len(key) > 200 or len(value) > 1000:
            raise ValidationError({field: _("A key is 1-200 characters, a value at most 1000.")})
        clean[key] = value
    return clean


def _check_node(node: PathNode) -> None:
    errors = {}
    node.label = " ".join(node.label.split())
    if not node.label:
        errors["label"] = _("Give the node a label.")
    elif len(node.label) > 200:
        errors["label"] = _("A label has at most 200 characters.")
    if node.kind not in PathNodeKind.values:
        errors["kind"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(PathNodeKind.values)
        }
    for side in ("a", "b"):
        if problem := limits.too_long(getattr(node, f"spec_{side}"), MAX_SPEC_CHARS):
            errors[f"spec_{side}"] = problem
        try:
            setattr(
                node,
                f"values_{side}",
                _clean_values(getattr(node, f"values_{side}"), f"values_{side}"),
            )
        except ValidationError as error:
            errors.update(error.message_dict)
    duplicate = PathNode.objects.filter(
        investigation_id=node.investigation_id, label=node.label
    ).exclude(pk=node.pk)
    if not errors and duplicate.exists():
        errors["label"] = _("The path already has a node with this label.")
    if errors:
        raise ValidationError(errors)


def _set_hosts(node: PathNode, hosts_a, hosts_b) -> None:
    for side, hosts in (("a", hosts_a), ("b", hosts_b)):
        if hosts is None:
            continue
        hosts = list(hosts)
        if any(host.team_id != node.investigation.team_id for host in hosts):
            raise ValidationError({f"hosts_{side}": _("Choose hosts of the investigation's team.")})
        getattr(node, f"hosts_{side}").set(hosts)


@transaction.atomic
def path_node_create(
    *, investigation: Investigation, user, hosts_a=None, hosts_b=None, **fields
) -> PathNode:
    unknown = set(fields) - set(NODE_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    node = PathNode(investigation=investigation, **fields)
    _check_node(node)
    node.save()
    _set_hosts(node, hosts_a, hosts_b)
    _log(
        investigation,
        Phrase(
            gettext_noop("Path: node %(node)s (%(kind)s) added"),
            node=node.label,
            kind=label_phrase(PathNodeKind(node.kind).label),
        ),
        user,
        node=node.pk,
    )
    checklist_refresh(investigation=investigation, keys=PATH_STEPS)
    return node


@transaction.atomic
def path_node_update(*, node: PathNode, user, hosts_a=None, hosts_b=None, **fields) -> PathNode:
    unknown = set(fields) - set(NODE_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    changed = [f for f, v in fields.items() if getattr(node, f) != v]
    for side, hosts in (("hosts_a", hosts_a), ("hosts_b", hosts_b)):
        current = set(getattr(node, side).values_list("pk", flat=True))
        if hosts is not None and {host.pk for host in hosts} != current:
            changed.append(side)
    for field, value in fields.items():
        setattr(node, field, value)
    _check_node(node)
    node.save()
    _set_hosts(node, hosts_a, hosts_b)
    if changed:
        _log(
            node.investigation,
            Phrase(
                gettext_noop("Path: node %(node)s edited (%(fields)s)"),
                node=node.label,
                fields=", ".join(changed),
            ),
            user,
            node=node.pk,
        )
    return node


@transaction.atomic
def path_node_delete(*, node: PathNode, user) -> None:
    investigation, label = node.investigation, node.label
    node.delete()
    _log(investigation, Phrase(gettext_noop("Path: node %(node)s removed"), node=label), user)
    checklist_refresh(investigation=investigation, keys=PATH_STEPS)


@transaction.atomic
def path_node_set_state(
    *,
    node: PathNode,
    user,
    state: str,
    note: str = "",
    link: str = "",
    file=None,
    collection: Collection | None = None,
) -> PathNode:
    """Mark a hop ruled out or suspect (or not checked again), with the evidence for it."""
    errors = {}
    if state not in NodeState.values:
        errors["state"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(NodeState.values)
        }
    if problem := limits.too_long(note, MAX_SPEC_CHARS):
        errors["note"] = problem
    if link and not link.startswith(("http://", "https://")):
        errors["link"] = _("Enter an http:// or https:// link.")
    elif len(link) > 2000:
        errors["link"] = _("A link has at most 2000 characters.")
    if collection is not None and collection.investigation_id != node.investigation_id:
        errors["collection"] = _("Choose a collection of this investigation.")
    if file is not None and file.size > settings.PATH_EVIDENCE_MAX_MB * 1024 * 1024:
        errors["file"] = _("%(file)s: larger than %(size)s MB.") % {
            "file": file.name,
            "size": settings.PATH_EVIDENCE_MAX_MB,
        }
    if state != NodeState.NOT_CHECKED and not (note.strip() or link or file or collection):
        errors["note"] = _("Give the evidence: a note, a link, a file or a collection.")
    if errors:
        raise ValidationError(errors)
    old = node.state
    node.state, node.state_note, node.state_link = state, note.strip(), link
    node.state_collection = collection
    if file is not None:
        node.state_file.save(file.name, file, save=False)
    elif state == NodeState.NOT_CHECKED:
        node.state_file = ""
    node.state_changed_at, node.state_changed_by = timezone.now(), user
    node.save()
    _log(
        node.investigation,
        Phrase(
            STATE_SET[state][bool(node.state_note)], node=node.label, note=node.state_note[:200]
        ),
        user,
        node=node.pk,
        old=old,
        new=state,
    )
    checklist_refresh(investigation=node.investigation, keys=PATH_STEPS)
    return node


def _check_edge(edge: PathEdge) -> None:
    errors = {}
    if edge.source_id == edge.target_id:
        errors["target"] = _("An edge joins two different nodes.")
    for end in ("source", "target"):
        if getattr(edge, end).investigation_id != edge.investigation_id:
            errors[end] = _("Both nodes must be on this investigation's path.")
    if edge.protocol not in Protocol.values:
        errors["protocol"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(Protocol.values)
        }
    if edge.reuse not in ConnectionReuse.values:
        errors["reuse"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(ConnectionReuse.values)
        }
    if edge.port is not None and not 1 <= edge.port <= 65535:
        errors["port"] = _("A port is 1-65535.")
    if problem := limits.too_long(edge.notes, MAX_SPEC_CHARS):
        errors["notes"] = problem
    duplicate = PathEdge.objects.filter(source=edge.source, target=edge.target).exclude(pk=edge.pk)
    if not errors and duplicate.exists():
        errors["target"] = _("These two nodes are already joined in this direction.")
    if errors:
        raise ValidationError(errors)


@transaction.atomic
def path_edge_create(*, investigation: Investigation, user, source, target, **fields) -> PathEdge:
    unknown = set(fields) - set(EDGE_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    edge = PathEdge(investigation=investigation, source=source, target=target, **fields)
    _check_edge(edge)
    edge.save()
    _log(
        investigation,
        Phrase(
            gettext_noop("Path: %(source)s -> %(target)s (%(edge)s)"),
            source=source.label,
            target=target.label,
            edge=edge.summary,
        ),
        user,
        edge=edge.pk,
    )
    checklist_refresh(investigation=investigation, keys=PATH_STEPS)
    return edge


@transaction.atomic
def path_edge_update(*, edge: PathEdge, user, **fields) -> PathEdge:
    unknown = set(fields) - set(EDGE_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    for field, value in fields.items():
        setattr(edge, field, value)
    _check_edge(edge)
    edge.save()
    _log(
        edge.investigation,
        Phrase(
            gettext_noop("Path: %(source)s -> %(target)s now %(edge)s"),
            source=edge.source.label,
            target=edge.target.label,
            edge=edge.summary,
        ),
        user,
        edge=edge.pk,
    )
    return edge


@transaction.atomic
def path_edge_delete(*, edge: PathEdge, user) -> None:
    investigation = edge.investigation
    summary = Phrase(
        gettext_noop("Path: %(source)s -> %(target)s removed"),
        source=edge.source.label,
        target=edge.target.label,
    )
    edge.delete()
    _log(investigation, summary, user)
    checklist_refresh(investigation=investigation, keys=PATH_STEPS)


@transaction.atomic
def path_from_text(*, investigation: Investigation, user, text: str) -> list[PathNode]:
    """Create the nodes and edges a line of text names; existing ones are kept as they are."""
    if len(text) > 5000:
        raise ValidationError({"text": _("Keep the path under 5,000 characters.")})
    try:
        spec = parse_path(text)
    except PathSyntaxError as error:
        raise ValidationError({"text": message_of(error)}) from None
    nodes = {n.label: n for n in investigation.path_nodes.all()}
    added_nodes, added_edges = [], 0
    for wanted in spec.nodes:
        if wanted.label not in nodes:
            node = PathNode(investigation=investigation, label=wanted.label, kind=wanted.kind)
            _check_node(node)
            node.save()
            nodes[node.label] = node
            added_nodes.append(node)
    for wanted in spec.edges:
        source, target = nodes[wanted.source], nodes[wanted.target]
        if PathEdge.objects.filter(source=source, target=target).exists():
            continue
        PathEdge.objects.create(
            investigation=investigation,
            source=source,
            target=target,
            protocol=wanted.protocol,
            port=wanted.port,
            tls=wanted.tls,
            reuse=wanted.reuse,
        )
        added_edges += 1
    _log(
        investigation,
        Phrase(
            gettext_noop(
                "Path drawn from text: %(path)s (%(nodes)s new nodes, %(edges)s new edges)"
            ),
            path=" -> ".join(n.label for n in spec.nodes),
            nodes=len(added_nodes),
            edges=added_edges,
        ),
        user,
        text=text,
    )
    checklist_refresh(investigation=investigation, keys=PATH_STEPS)
    return [nodes[n.label] for n in spec.nodes]
