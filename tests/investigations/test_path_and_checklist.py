"""The traffic path and the guided checklist: services, rules and pages, by every persona."""

import json
import re
from html import escape
from types import SimpleNamespace

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from collectors.facts import FactsSnapshot
from investigations.choices import (
    EventKind,
    FindingStatus,
    HostRole,
    ItemStatus,
    NodeState,
    PathNodeKind,
)
from investigations.models import (
    ChecklistItem,
    Finding,
    Investigation,
    PathEdge,
    PathNode,
    Team,
    TimelineEvent,
)
from investigations.selectors import checklist_progress, path_figure
from investigations.services.checklist import (
    METHOD,
    checklist_item_add,
    checklist_item_update,
    checklist_refresh,
    placement_steps,
)
from investigations.services.collections import collection_request
from investigations.services.facts import facts_store
from investigations.services.findings import finding_set_status
from investigations.services.inventory import host_create, member_add, member_remove
from investigations.services.investigations import investigation_create, investigation_update
from investigations.services.path import (
    path_edge_create,
    path_edge_delete,
    path_edge_update,
    path_from_text,
    path_node_create,
    path_node_delete,
    path_node_set_state,
    path_node_update,
)
from investigations.services.targets import target_claim
from tests.conftest import HOSTILE_STRINGS, fresh, loaded_page
from tests.forms import field_card
from tests.investigations.test_collections import BASE, _store, place_local_hosts

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
STEP_KEYS = [
    "symptom",
    "path",
    "pairs",
    "sides_match",
    "rule_out_path",
    "ladder",
    "host_at_knee",
    "packets_at_knee",
    "profile_at_knee",
    "root_cause",
    "write_up",
]
SHORT_HOSTILE = [s for s in HOSTILE_STRINGS if len(s) <= 200]


# --- helpers --------------------------------------------------------------------------------


def refused(call, *args, **kwargs) -> dict[str, list[str]]:
    """The errors a service refuses with, by field."""
    with pytest.raises(ValidationError) as raised:
        call(*args, **kwargs)
    return raised.value.message_dict


def node(p, label, kind=PathNodeKind.SERVICE, **fields) -> PathNode:
    return path_node_create(
        investigation=p.investigation, user=p.member, kind=kind, label=label, **fields
    )


def edge(p, source, target, **fields) -> PathEdge:
    return path_edge_create(
        investigation=p.investigation, user=p.member, source=source, target=target, **fields
    )


def item(p, key, investigation=None) -> ChecklistItem:
    return ChecklistItem.objects.get(investigation=investigation or p.investigation, key=key)


def events(p, kind) -> list[TimelineEvent]:
    return list(TimelineEvent.objects.filter(investigation=p.investigation, kind=kind))


def summaries(p, kind) -> list[str]:
    return [event.summary for event in events(p, kind)]


def team_host(team, name, address="10.0.0.1"):
    return host_create(team=team, name=name, address=address, port=22, username="perf")


def other_team() -> Team:
    return Team.objects.get(name="Another team")


def rule_out(p, path_node, state=NodeState.RULED_OUT, note="checked on both sides"):
    return path_node_set_state(node=path_node, user=p.member, state=state, note=note)


def is_open(checklist_item) -> bool:
    checklist_item = fresh(checklist_item)
    return (
        checklist_item.status == ItemStatus.TODO
        and not checklist_item.auto
        and checklist_item.evidence == ""
        and checklist_item.completed_at is None
    )


def is_auto_done(checklist_item) -> bool:
    checklist_item = fresh(checklist_item)
    return (
        checklist_item.status == ItemStatus.DONE
        and checklist_item.auto
        and bool(checklist_item.evidence)
        and checklist_item.completed_at is not None
    )


def page(response) -> str:
    return response.content.decode()


def figure_of(response) -> dict:
    """The plotly figure as the browser reads it from the json_script element (of a
    response, or of a page's text)."""
    match = re.search(
        r'<script id="path-figure-data" type="application/json">(.*?)</script>',
        response if isinstance(response, str) else page(response),
        re.S,
    )
    assert match, "the panel carries no path-figure-data"
    return json.loads(match.group(1))


def plotly_shows_as_text(label: str, text: str) -> bool:
    """Plotly reads a trace's text as a little HTML (<b>, <a href>, <br>...): a label shows as
    itself only with its '<' and '>' written as entities ('&' may be either way)."""
    if "<" not in label and ">" not in label:
        return label in text or escape(label, quote=False) in text
    return escape(label, quote=False) in text or (
        label.replace("<", "&lt;").replace(">", "&gt;") in text
    )


def input_value(response, name: str) -> str | None:
    match = re.search(rf'<input[^>]*name="{re.escape(name)}"[^>]*>', page(response))
    if not match:
        return None
    value = re.search(r'value="([^"]*)"', match.group(0))
    return value.group(1) if value else ""


# --- path nodes ----------------------------------------------------------------------------


def test_a_node_is_created_with_its_specifications_values_and_hosts(personas):
    p = personas
    lb_a, lb_b = team_host(p.team, "slb-a"), team_host(p.team, "slb-b", "10.0.0.2")

    lb = node(
        p,
        "  public   slb ",
        kind=PathNodeKind.LOAD_BALANCER,
        spec_a="slb.s2.small",
        spec_b="slb.s3.large",
        values_a={" new  conn/s ": " 5k "},
        values_b={"new conn/s": "50k"},
        hosts_a=[lb_a],
        hosts_b=[lb_b],
    )

    lb = fresh(lb)
    assert (lb.label, lb.kind, lb.spec_a, lb.spec_b) == (
        "public slb",
        "load_balancer",
        "slb.s2.small",
        "slb.s3.large",
    )
    assert (lb.values_a, lb.values_b) == ({"new conn/s": "5k"}, {"new conn/s": "50k"})
    assert (list(lb.hosts_a.all()), list(lb.hosts_b.all())) == ([lb_a], [lb_b])
    assert lb.state == NodeState.NOT_CHECKED
    (event,) = events(p, EventKind.PATH)
    assert (event.summary, event.details, event.author) == (
        "Path: node public slb (Load balancer) added",
        {"node": lb.pk},
        p.member,
    )


@pytest.mark.parametrize("label", ["lb", " lb ", "lb\n", "\tlb"])
def test_a_second_node_with_the_same_label_is_refused_on_the_label(personas, label):
    node(personas, "lb")

    assert refused(node, personas, label) == {
        "label": ["The path already has a node with this label."]
    }
    assert PathNode.objects.count() == 1


def test_labels_differing_in_case_are_different_nodes(personas):
    node(personas, "app")
    node(personas, "App")

    assert PathNode.objects.count() == 2


def test_another_investigation_may_use_the_same_label(personas):
    other = investigation_create(team=personas.team, user=personas.lead, title="Second case")
    node(personas, "app")

    path_node_create(investigation=other, user=personas.lead, kind="service", label="app")

    assert PathNode.objects.filter(label="app").count() == 2


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"label": "x", "kind": "router"}, "kind"),
        ({"label": "x", "kind": ""}, "kind"),
        ({"label": "", "kind": "service"}, "label"),
        ({"label": "  \n ", "kind": "service"}, "label"),
        ({"label": "x" * 201, "kind": "service"}, "label"),
        ({"label": "x" * 10_000, "kind": "service"}, "label"),
        ({"label": "x", "kind": "service", "spec_a": "s" * 2_001}, "spec_a"),
        ({"label": "x", "kind": "service", "spec_b": "s" * 2_001}, "spec_b"),
        ({"label": "x", "kind": "service", "values_a": ["not", "pairs"]}, "values_a"),
        ({"label": "x", "kind": "service", "values_b": {"": "empty key"}}, "values_b"),
        ({"label": "x", "kind": "service", "values_a": {"k" * 201: "v"}}, "values_a"),
        ({"label": "x", "kind": "service", "values_a": {"k": "v" * 1001}}, "values_a"),
        (
            {"label": "x", "kind": "service", "values_b": {f"k{i}": "v" for i in range(51)}},
            "values_b",
        ),
    ],
)
def test_a_bad_node_is_refused_on_the_field_at_fault(personas, fields, field):
    errors = refused(
        path_node_create, investigation=personas.investigation, user=personas.member, **fields
    )

    assert list(errors) == [field]
    assert not PathNode.objects.exists()
    assert events(personas, EventKind.PATH) == []


def test_the_longest_label_and_specification_are_accepted(personas):
    created = node(personas, "x" * 200, spec_a="s" * 2_000)

    assert (len(fresh(created).label), len(fresh(created).spec_a)) == (200, 2_000)


@pytest.mark.parametrize("side", ["hosts_a", "hosts_b"])
def test_hosts_of_another_team_are_refused_and_nothing_is_created(personas, side):
    stranger = team_host(other_team(), "their-box")

    errors = refused(node, personas, "app", **{side: [stranger]})

    assert errors == {side: ["Choose hosts of the investigation's team."]}
    assert not PathNode.objects.exists()
    assert events(personas, EventKind.PATH) == []


def test_editing_a_node_logs_the_fields_that_changed(personas):
    app = node(personas, "app")

    path_node_update(
        node=app, user=personas.lead, label="order-api", spec_a="4 vCPU", kind="service"
    )

    assert fresh(app).label == "order-api"
    assert summaries(personas, EventKind.PATH)[-1] == "Path: node order-api edited (label, spec_a)"
    assert events(personas, EventKind.PATH)[-1].author == personas.lead


def test_editing_a_node_to_another_nodes_label_is_refused_and_changes_nothing(personas):
    node(personas, "lb")
    app = node(personas, "app")

    errors = refused(path_node_update, node=app, user=personas.member, label="lb", spec_a="x")

    assert errors == {"label": ["The path already has a node with this label."]}
    assert (fresh(app).label, fresh(app).spec_a) == ("app", "")


def test_saving_a_node_unchanged_writes_no_event(personas):
    app = node(personas, "app", spec_a="4 vCPU")
    before = len(events(personas, EventKind.PATH))

    path_node_update(node=fresh(app), user=personas.member, label="app", spec_a="4 vCPU")

    assert len(events(personas, EventKind.PATH)) == before


def test_changing_only_a_nodes_hosts_is_on_the_timeline(personas):
    app = node(personas, "app")
    box = team_host(personas.team, "app-1")
    before = len(events(personas, EventKind.PATH))

    path_node_update(node=fresh(app), user=personas.member, hosts_a=[box])

    assert list(fresh(app).hosts_a.all()) == [box]
    assert len(events(personas, EventKind.PATH)) == before + 1
    assert "app" in summaries(personas, EventKind.PATH)[-1]


def test_editing_a_node_with_hosts_of_another_team_changes_nothing(personas):
    app = node(personas, "app")

    errors = refused(
        path_node_update,
        node=fresh(app),
        user=personas.member,
        spec_a="changed",
        hosts_b=[team_host(other_team(), "their-box")],
    )

    assert list(errors) == ["hosts_b"]
    assert fresh(app).spec_a == ""
    assert not fresh(app).hosts_b.exists()


def test_removing_a_node_removes_its_edges_and_says_so(personas):
    lb, app, db = node(personas, "lb"), node(personas, "app"), node(personas, "db")
    edge(personas, lb, app)
    edge(personas, app, db)

    path_node_delete(node=app, user=personas.lead)

    assert list(PathNode.objects.values_list("label", flat=True)) == ["lb", "db"]
    assert not PathEdge.objects.exists()
    assert summaries(personas, EventKind.PATH)[-1] == "Path: node app removed"


# --- path edges -----------------------------------------------------------------------------


def test_an_edge_is_created_with_its_connection_and_logged(personas):
    lb, app = node(personas, "lb"), node(personas, "app")

    joined = edge(personas, lb, app, protocol="https", port=443, reuse="short_lived", tls=True)

    joined = fresh(joined)
    assert (joined.protocol, joined.port, joined.tls, joined.reuse) == (
        "https",
        443,
        True,
        "short_lived",
    )
    assert joined.summary == "HTTPS:443, short-lived"
    event = events(personas, EventKind.PATH)[-1]
    assert (event.summary, event.details) == (
        "Path: lb -> app (HTTPS:443, short-lived)",
        {"edge": joined.pk},
    )


def test_an_edge_summary_says_tls_for_protocols_other_than_https(personas):
    app, db = node(personas, "app"), node(personas, "db")

    joined = edge(personas, app, db, protocol="mysql", port=3306, tls=True, reuse="long_lived")

    assert joined.summary == "MySQL:3306, TLS, long-lived"


def test_an_edge_from_a_node_to_itself_is_refused_on_the_target(personas):
    app = node(personas, "app")

    assert refused(edge, personas, app, app) == {"target": ["An edge joins two different nodes."]}
    assert not PathEdge.objects.exists()


def test_a_second_edge_in_the_same_direction_is_refused_but_the_way_back_is_not(personas):
    lb, app = node(personas, "lb"), node(personas, "app")
    edge(personas, lb, app)

    errors = refused(edge, personas, lb, app, protocol="http")
    edge(personas, app, lb)

    assert errors == {"target": ["These two nodes are already joined in this direction."]}
    assert PathEdge.objects.count() == 2


@pytest.mark.parametrize("port", [0, 65536, 10**9])
def test_a_port_outside_1_to_65535_is_refused(personas, port):
    lb, app = node(personas, "lb"), node(personas, "app")

    assert refused(edge, personas, lb, app, port=port) == {"port": ["A port is 1-65535."]}


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"protocol": "quic"}, "protocol"),
        ({"reuse": "sometimes"}, "reuse"),
        ({"notes": "n" * 10_001}, "notes"),
    ],
)
def test_a_bad_edge_attribute_is_refused_on_its_field(personas, fields, field):
    lb, app = node(personas, "lb"), node(personas, "app")

    assert list(refused(edge, personas, lb, app, **fields)) == [field]


def test_an_edge_from_a_node_of_another_investigation_is_refused_on_the_source(personas):
    other = investigation_create(team=personas.team, user=personas.lead, title="Second case")
    theirs = path_node_create(investigation=other, user=personas.lead, kind="service", label="x")
    app = node(personas, "app")

    errors = refused(edge, personas, theirs, app)

    assert errors == {"source": ["Both nodes must be on this investigation's path."]}
    assert not PathEdge.objects.exists()


def test_an_edge_to_a_node_of_another_investigation_is_refused_on_the_target(personas):
    other = investigation_create(team=personas.team, user=personas.lead, title="Second case")
    theirs = path_node_create(investigation=other, user=personas.lead, kind="service", label="x")
    app = node(personas, "app")

    errors = refused(edge, personas, app, theirs)

    assert list(errors) == ["target"]
    assert not PathEdge.objects.exists()


def test_editing_and_removing_an_edge_are_on_the_timeline(personas):
    lb, app = node(personas, "lb"), node(personas, "app")
    joined = edge(personas, lb, app)

    path_edge_update(edge=joined, user=personas.member, protocol="grpc", port=50051)
    port_refused = refused(path_edge_update, edge=fresh(joined), user=personas.member, port=0)
    path_edge_delete(edge=fresh(joined), user=personas.lead)

    assert port_refused == {"port": ["A port is 1-65535."]}
    assert summaries(personas, EventKind.PATH)[-2:] == [
        "Path: lb -> app now gRPC:50051",
        "Path: lb -> app removed",
    ]
    assert not PathEdge.objects.exists()


# --- the path from one line of text ---------------------------------------------------------


def test_a_line_of_text_draws_the_nodes_and_edges_it_names(personas):
    drawn = path_from_text(
        investigation=personas.investigation,
        user=personas.member,
        text="loadgen -> lb:front -[https:443, short]-> order-api -[mysql:3306]-> db:orders",
    )

    assert [(n.label, n.kind) for n in drawn] == [
        ("loadgen", "load_generator"),
        ("front", "load_balancer"),
        ("order-api", "service"),
        ("orders", "database"),
    ]
    assert [
        (e.source.label, e.target.label, e.protocol, e.port, e.tls, e.reuse)
        for e in PathEdge.objects.select_related("source", "target")
    ] == [
        ("loadgen", "front", "other", None, False, "unknown"),
        ("front", "order-api", "https", 443, True, "short_lived"),
        ("order-api", "orders", "mysql", 3306, False, "unknown"),
    ]
    event = events(personas, EventKind.PATH)[-1]
    assert event.summary == (
        "Path drawn from text: loadgen -> front -> order-api -> orders (4 new nodes, 3 new edges)"
    )
    assert event.details["text"].startswith("loadgen -> lb:front")


def test_drawing_the_same_line_twice_creates_nothing_new_and_keeps_the_states(personas):
    text = "lb -> app -[mysql]-> db:mysql"
    path_from_text(investigation=personas.investigation, user=personas.member, text=text)
    app = PathNode.objects.get(label="app")
    rule_out(personas, app, NodeState.SUSPECT, "CPU at 100% on A")
    path_node_update(node=fresh(app), user=personas.member, kind="gateway", spec_a="4 vCPU")
    nodes_before = list(PathNode.objects.values_list("pk", "label", "kind", "state", "spec_a"))
    edges_before = list(PathEdge.objects.values_list("pk", "source", "target", "protocol"))

    again = path_from_text(investigation=personas.investigation, user=personas.member, text=text)

    assert [n.pk for n in again] == [pk for pk, *_ in nodes_before]
    assert list(PathNode.objects.values_list("pk", "label", "kind", "state", "spec_a")) == (
        nodes_before
    )
    assert list(PathEdge.objects.values_list("pk", "source", "target", "protocol")) == edges_before
    assert fresh(app).state_note == "CPU at 100% on A"
    assert summaries(personas, EventKind.PATH)[-1].endswith("(0 new nodes, 0 new edges)")


def test_a_longer_line_adds_only_what_is_new(personas):
    path_from_text(investigation=personas.investigation, user=personas.member, text="lb -> app")

    path_from_text(
        investigation=personas.investigation, user=personas.member, text="lb -> app -> redis"
    )

    assert list(PathNode.objects.values_list("label", flat=True)) == ["lb", "app", "redis"]
    assert PathEdge.objects.count() == 2
    assert re.search(r"\(1 new nodes?, 1 new edges?\)$", summaries(personas, EventKind.PATH)[-1])


def test_a_line_that_does_not_parse_is_refused_with_its_column_and_draws_nothing(personas):
    errors = refused(
        path_from_text, investigation=personas.investigation, user=personas.member, text="a -> -> b"
    )

    assert errors == {"text": ["Column 6: expected a node name"]}
    assert not PathNode.objects.exists()
    assert events(personas, EventKind.PATH) == []


def test_a_line_with_a_label_too_long_is_refused_on_the_text_with_its_column(personas):
    errors = refused(
        path_from_text,
        investigation=personas.investigation,
        user=personas.member,
        text="lb -> " + "x" * 201,
    )

    assert list(errors) == ["text"]
    assert errors["text"][0].startswith("Column 7: ")
    assert not PathNode.objects.exists()


def test_a_line_over_5000_characters_is_refused(personas):
    text = " -> ".join(f"node{i:04}" for i in range(700))

    errors = refused(
        path_from_text, investigation=personas.investigation, user=personas.member, text=text
    )

    assert errors == {"text": ["Keep the path under 5,000 characters."]}


# --- node states and their evidence ---------------------------------------------------------


@pytest.mark.parametrize("state", [NodeState.RULED_OUT, NodeState.SUSPECT])
@pytest.mark.parametrize("note", ["", "   \n "])
def test_a_state_without_evidence_is_refused(personas, state, note):
    app = node(personas, "app")

    errors = refused(path_node_set_state, node=app, user=personas.member, state=state, note=note)

    assert errors == {"note": ["Give the evidence: a note, a link, a file or a collection."]}
    assert fresh(app).state == NodeState.NOT_CHECKED


def test_a_state_change_is_on_the_timeline_with_old_and_new(personas):
    app = node(personas, "app")

    rule_out(personas, app, NodeState.SUSPECT, "run queue 40 on A, 2 on B")
    rule_out(personas, fresh(app), NodeState.RULED_OUT, "same after the fix")

    changes = [e for e in events(personas, EventKind.PATH) if "old" in e.details]
    assert [(e.summary, e.details, e.author) for e in changes] == [
        (
            "Path: app suspect: run queue 40 on A, 2 on B",
            {"node": app.pk, "old": "not_checked", "new": "suspect"},
            personas.member,
        ),
        (
            "Path: app ruled out: same after the fix",
            {"node": app.pk, "old": "suspect", "new": "ruled_out"},
            personas.member,
        ),
    ]
    app = fresh(app)
    assert (app.state_changed_by, app.state_changed_at is not None) == (personas.member, True)


def test_a_link_alone_is_evidence_and_must_be_http(personas):
    app = node(personas, "app")

    bad = refused(
        path_node_set_state,
        node=app,
        user=personas.member,
        state="ruled_out",
        link="javascript:alert(1)",
    )
    path_node_set_state(
        node=app, user=personas.member, state="ruled_out", link="https://grafana.example/d/1"
    )

    assert list(bad) == ["link"]
    assert (fresh(app).state, fresh(app).state_link) == ("ruled_out", "https://grafana.example/d/1")


def test_a_collection_of_this_investigation_is_evidence_and_one_of_another_is_not(personas):
    app = node(personas, "app")
    a, b = team_host(personas.team, "app-a"), team_host(personas.team, "app-b", "10.0.0.2")
    for host, side in ((a, "a"), (b, "b")):
        member_add(
            investigation=personas.investigation,
            user=personas.lead,
            host=host,
            side_key=side,
            role="service",
        )
    ours = collection_request(investigation=personas.investigation, user=personas.member)
    other = investigation_create(team=personas.team, user=personas.lead, title="Second case")
    member_add(investigation=other, user=personas.lead, host=a, side_key="a", role="service")
    theirs = collection_request(investigation=other, user=personas.lead)

    errors = refused(
        path_node_set_state, node=app, user=personas.member, state="suspect", collection=theirs
    )
    assert errors == {"collection": ["Choose a collection of this investigation."]}
    assert fresh(app).state == NodeState.NOT_CHECKED

    path_node_set_state(node=app, user=personas.member, state="suspect", collection=ours)
    assert fresh(app).state_collection == ours


def test_an_unknown_state_is_refused(personas):
    app = node(personas, "app")

    errors = refused(
        path_node_set_state, node=app, user=personas.member, state="maybe", note="why not"
    )

    assert list(errors) == ["state"]


def test_not_checked_again_needs_no_evidence_and_clears_the_old_evidence(
    personas, settings, tmp_path
):
    settings.MEDIA_ROOT = str(tmp_path)
    app = node(personas, "app")
    path_node_set_state(
        node=app,
        user=personas.member,
        state="suspect",
        note="slow",
        link="https://grafana.example/d/1",
        file=SimpleUploadedFile("top.txt", b"load average: 40"),
    )

    path_node_set_state(node=fresh(app), user=personas.member, state="not_checked")

    app = fresh(app)
    assert (app.state, app.state_note, app.state_link, app.state_collection) == (
        "not_checked",
        "",
        "",
        None,
    )
    assert not app.state_file


# --- the two sides' specifications ----------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "differ"),
    [
        ({}, False),
        ({"spec_a": "4 vCPU"}, False),
        ({"spec_a": "4 vCPU, 8 GiB", "spec_b": " 4 vCPU,\n8  GiB "}, False),
        ({"spec_a": "4 vCPU", "spec_b": "8 vCPU"}, True),
        ({"values_a": {"conn/s": "50k"}, "values_b": {"conn/s": " 50k"}}, False),
        ({"values_a": {"conn/s": "5k"}, "values_b": {"conn/s": "50k"}}, True),
        ({"values_a": {"conn/s": "5k"}, "values_b": {"bandwidth": "1 Gbit/s"}}, False),
        (
            {"spec_a": "same", "spec_b": "same", "values_a": {"x": "1"}, "values_b": {"x": "2"}},
            True,
        ),
    ],
)
def test_the_sides_differ_only_when_both_say_something_different(personas, fields, differ):
    assert node(personas, "slb", **fields).specs_differ is differ


# --- the checklist: the method's steps ------------------------------------------------------


def test_every_investigation_gets_the_eleven_steps_of_the_method_in_order(personas):
    items = list(personas.investigation.checklist.all())

    assert [i.key for i in items] == STEP_KEYS == [step.key for step in METHOD]
    assert [i.title for i in items] == [step.title for step in METHOD]
    assert all(i.description for i in items)
    assert {(i.status, i.custom, i.auto) for i in items} == {("todo", False, False)}
    assert [i.position for i in items] == sorted(i.position for i in items)
    assert len({i.position for i in items}) == 11


def test_an_investigation_opened_with_its_symptom_has_that_step_done_at_once(personas):
    investigation = investigation_create(
        team=personas.team,
        user=personas.lead,
        title="Second case",
        symptom_metric="p99 latency",
        symptom_unit="ms",
        symptom_value_a=1445,
        symptom_value_b=557,
    )

    done = item(personas, "symptom", investigation)
    assert is_auto_done(done)
    assert done.evidence == "p99 latency: 1445 ms on A, 557 ms on B"


# The symptom rule: a metric and both values.


def test_the_symptom_step_is_done_when_metric_and_both_values_arrive_and_reopens_when_one_goes(
    personas,
):
    p = personas
    symptom = item(p, "symptom")

    investigation_update(investigation=p.investigation, user=p.lead, symptom_metric="TPS")
    assert is_open(symptom)
    investigation_update(investigation=p.investigation, user=p.lead, symptom_value_a=480)
    assert is_open(symptom)
    investigation_update(investigation=p.investigation, user=p.lead, symptom_value_b=960)
    assert is_auto_done(symptom)
    assert fresh(symptom).evidence == "TPS: 480 on A, 960 on B"

    investigation_update(investigation=p.investigation, user=p.lead, symptom_value_b=None)
    assert is_open(symptom)

    assert summaries(p, EventKind.CHECKLIST) == [
        "Checklist: 'State the symptom exactly' done (TPS: 480 on A, 960 on B)",
        "Checklist: 'State the symptom exactly' reopened: its evidence no longer holds",
    ]
    assert {e.details["item"] for e in events(p, EventKind.CHECKLIST)} == {"symptom"}


def test_the_symptom_step_reopens_when_the_metric_is_cleared(personas):
    p = personas
    investigation_update(
        investigation=p.investigation,
        user=p.lead,
        symptom_metric="p99",
        symptom_value_a=2.5,
        symptom_value_b=1,
    )
    assert is_auto_done(item(p, "symptom"))

    investigation_update(investigation=p.investigation, user=p.lead, symptom_metric="   ")

    assert is_open(item(p, "symptom"))


# The path rule: two or more nodes joined by edges.


def test_the_path_step_is_done_when_two_nodes_are_joined_and_reopens_when_the_edge_goes(personas):
    p = personas
    path = item(p, "path")
    lb, app = node(p, "lb"), node(p, "app")
    assert is_open(path)

    joined = edge(p, lb, app)
    assert is_auto_done(path)
    assert fresh(path).evidence.startswith("2 nodes joined by 1 edge")

    db = node(p, "db")
    edge(p, app, db)
    assert fresh(path).evidence == "3 nodes joined by 2 edges"

    path_edge_delete(edge=joined, user=p.member)
    assert is_auto_done(path)  # app -> db still joins two nodes
    path_node_delete(node=fresh(db), user=p.member)
    assert is_open(path)


def test_the_path_step_is_done_by_a_line_of_text(personas):
    path_from_text(investigation=personas.investigation, user=personas.member, text="a -> b")

    assert is_auto_done(item(personas, "path"))


# The pairs rule: every side has hosts, every role present on one side has a pair.


def test_the_pairs_step_is_done_when_every_role_has_a_host_on_both_sides(personas):
    p = personas
    pairs = item(p, "pairs")
    app_a, app_b = team_host(p.team, "app-a"), team_host(p.team, "app-b", "10.0.0.2")
    db_a, db_b = team_host(p.team, "db-a", "10.0.0.3"), team_host(p.team, "db-b", "10.0.0.4")

    def place(host, side, role):
        return member_add(
            investigation=p.investigation, user=p.member, host=host, side_key=side, role=role
        )

    place(app_a, "a", HostRole.SERVICE)
    assert is_open(pairs)
    placed_b = place(app_b, "b", HostRole.SERVICE)
    assert is_auto_done(pairs)
    assert fresh(pairs).evidence == "1 role present on both sides"

    place(db_a, "a", HostRole.DATABASE)
    assert is_open(pairs)
    place(db_b, "b", HostRole.DATABASE)
    assert is_auto_done(pairs)
    assert fresh(pairs).evidence == "2 roles present on both sides"

    member_remove(member=placed_b, user=p.member)
    assert is_open(pairs)


def test_a_placement_looks_again_only_at_the_steps_that_read_placements(personas):
    # The steps whose evidence is per pair of hosts; the others read no placement.
    assert set(placement_steps()) == {"pairs", "sides_match", "profile_at_knee", "packets_at_knee"}
    p = personas
    # A step that reads no placement is not looked at again when a host is placed: its item,
    # set here behind the checklist's back, stays as it is.
    ChecklistItem.objects.filter(investigation=p.investigation, key="symptom").update(
        status=ItemStatus.DONE, auto=True, evidence="stale"
    )
    member_add(
        investigation=p.investigation,
        user=p.member,
        host=team_host(p.team, "app-a"),
        side_key="a",
        role=HostRole.SERVICE,
    )
    assert fresh(item(p, "symptom")).evidence == "stale"
    # A write that can change it does look again: no symptom, so the step reopens.
    checklist_refresh(investigation=p.investigation)
    assert is_open(item(p, "symptom"))


# The sides-match rule: facts from both hosts of every pair, no finding left open.


@pytest.fixture
def local_hosts(personas, settings, tmp_path):
    settings.LOCAL_TRANSPORT = True
    settings.MEDIA_ROOT = str(tmp_path)
    settings.COLLECTION_START_DELAY_MS = 0
    return place_local_hosts(personas)


def _store_one_side(personas, host, facts: dict):
    """Facts from one host only, as a collection from that host alone would store them."""
    collection = collection_request(
        investigation=personas.investigation, user=personas.member, host_ids=[host.pk]
    )
    (target,) = collection.targets.select_related("collection__investigation", "host", "side")
    target_claim(target_id=target.pk, seconds=60)
    facts_store(target=target, snapshot=FactsSnapshot(facts=dict(facts)))


def test_the_sides_match_step_waits_for_the_facts_of_both_hosts_of_a_pair(personas, local_hosts):
    sides_match = item(personas, "sides_match")
    host_a, host_b = local_hosts

    _store_one_side(personas, host_a, BASE)
    assert is_open(sides_match)

    _store_one_side(personas, host_b, BASE)
    assert is_auto_done(sides_match)
    assert fresh(sides_match).evidence == "facts from both hosts of 1 pair; 0 findings reviewed"


def test_the_sides_match_step_reopens_for_an_open_finding_and_closes_when_it_is_reviewed(
    personas, local_hosts
):
    p = personas
    sides_match = item(p, "sides_match")
    _store(p, local_hosts, BASE, BASE)
    assert is_auto_done(sides_match)

    _store(p, local_hosts, {**BASE, "cpu.governor": "powersave"}, BASE)
    finding = Finding.objects.get(rule="cpu_governor")
    assert finding.status == FindingStatus.OPEN
    assert is_open(sides_match)

    finding_set_status(finding=finding, user=p.member, status=FindingStatus.DISMISSED)
    assert is_auto_done(sides_match)
    assert fresh(sides_match).evidence == "facts from both hosts of 1 pair; 1 finding reviewed"

    finding_set_status(finding=fresh(finding), user=p.member, status=FindingStatus.OPEN)
    assert is_open(sides_match)


def test_the_sides_match_step_reopens_when_a_new_pair_has_no_facts(personas, local_hosts):
    p = personas
    _store(p, local_hosts, BASE, BASE)
    assert is_auto_done(item(p, "sides_match"))

    for name, side in (("db-a", "a"), ("db-b", "b")):
        member_add(
            investigation=p.investigation,
            user=p.member,
            host=team_host(p.team, name),
            side_key=side,
            role=HostRole.DATABASE,
        )

    assert is_open(item(p, "sides_match"))


def test_the_sides_match_step_is_not_done_without_any_pair(personas):
    checklist_refresh(investigation=personas.investigation)

    assert is_open(item(personas, "sides_match"))


# The rule-out rule: every node ruled out or suspect.


def test_the_rule_out_step_is_done_when_every_node_is_judged_and_reopens_when_one_is_not(personas):
    p = personas
    rule_out_path = item(p, "rule_out_path")
    lb, app = node(p, "lb"), node(p, "app")
    assert is_open(rule_out_path)

    rule_out(p, lb)
    assert is_open(rule_out_path)
    rule_out(p, app, NodeState.SUSPECT, "CPU saturated on A")
    assert is_auto_done(rule_out_path)
    assert fresh(rule_out_path).evidence == "1 ruled out, 1 suspect"

    path_node_set_state(node=fresh(app), user=p.member, state=NodeState.NOT_CHECKED)
    assert is_open(rule_out_path)

    rule_out(p, fresh(app))
    assert is_auto_done(rule_out_path)
    node(p, "db")
    assert is_open(rule_out_path)


def test_the_rule_out_step_is_not_done_for_an_empty_path(personas):
    checklist_refresh(investigation=personas.investigation)

    assert is_open(item(personas, "rule_out_path"))


def test_an_item_in_progress_is_completed_by_its_evidence_too(personas):
    p = personas
    checklist_item_update(item=item(p, "path"), user=p.member, status=ItemStatus.IN_PROGRESS)

    edge(p, node(p, "lb"), node(p, "app"))

    assert is_auto_done(item(p, "path"))


# People's choices are never undone by the rules.


def test_a_step_done_by_hand_stays_done_without_its_evidence(personas):
    p = personas
    checklist_item_update(item=item(p, "path"), user=p.member, status=ItemStatus.DONE)
    lb, app = node(p, "lb"), node(p, "app")
    joined = edge(p, lb, app)

    path_edge_delete(edge=joined, user=p.member)

    done = item(p, "path")
    assert (done.status, done.auto, done.evidence) == ("done", False, "")
    assert done.completed_at is not None


def test_a_step_done_by_the_rules_then_confirmed_by_hand_is_no_longer_reopened(personas):
    p = personas
    lb, app = node(p, "lb"), node(p, "app")
    joined = edge(p, lb, app)
    assert is_auto_done(item(p, "path"))
    checklist_item_update(item=item(p, "path"), user=p.member, status=ItemStatus.IN_PROGRESS)
    checklist_item_update(item=item(p, "path"), user=p.member, status=ItemStatus.DONE)

    path_edge_delete(edge=joined, user=p.member)

    assert (item(p, "path").status, item(p, "path").auto) == ("done", False)


def test_a_step_not_applicable_is_never_completed_by_its_evidence(personas):
    p = personas
    checklist_item_update(
        item=item(p, "rule_out_path"),
        user=p.member,
        status=ItemStatus.NOT_APPLICABLE,
        na_reason="a single host, no path to speak of",
    )

    rule_out(p, node(p, "app"))

    settled = item(p, "rule_out_path")
    assert (settled.status, settled.auto, settled.evidence) == ("not_applicable", False, "")
    assert settled.na_reason == "a single host, no path to speak of"


# People's changes.


@pytest.mark.parametrize("reason", [None, "", "   "])
def test_not_applicable_needs_a_reason(personas, reason):
    kwargs = {} if reason is None else {"na_reason": reason}

    errors = refused(
        checklist_item_update,
        item=item(personas, "ladder"),
        user=personas.member,
        status=ItemStatus.NOT_APPLICABLE,
        **kwargs,
    )

    assert errors == {"na_reason": ["Say why this step does not apply."]}
    assert item(personas, "ladder").status == ItemStatus.TODO
    assert events(personas, EventKind.CHECKLIST) == []


def test_a_step_marked_not_applicable_says_why_on_the_timeline(personas):
    checklist_item_update(
        item=item(personas, "packets_at_knee"),
        user=personas.member,
        status=ItemStatus.NOT_APPLICABLE,
        na_reason="  no root on the hosts ",
    )

    settled = item(personas, "packets_at_knee")
    assert (settled.status, settled.na_reason) == ("not_applicable", "no root on the hosts")
    (event,) = events(personas, EventKind.CHECKLIST)
    assert (event.summary, event.details, event.author) == (
        "Checklist: 'Capture packets at the knee' not applicable: no root on the hosts",
        {"item": "packets_at_knee", "old": "todo", "new": "not_applicable"},
        personas.member,
    )


def test_a_status_change_by_hand_is_on_the_timeline_with_old_and_new(personas):
    checklist_item_update(item=item(personas, "ladder"), user=personas.lead, status="in_progress")
    checklist_item_update(item=item(personas, "ladder"), user=personas.lead, status="done")

    assert [(e.summary, e.details) for e in events(personas, EventKind.CHECKLIST)] == [
        (
            "Checklist: 'Ladder load test to the knee' in progress",
            {"item": "ladder", "old": "todo", "new": "in_progress"},
        ),
        (
            "Checklist: 'Ladder load test to the knee' done",
            {"item": "ladder", "old": "in_progress", "new": "done"},
        ),
    ]
    assert item(personas, "ladder").completed_at is not None


def test_an_unknown_status_is_refused(personas):
    errors = refused(
        checklist_item_update, item=item(personas, "ladder"), user=personas.member, status="later"
    )

    assert list(errors) == ["status"]


def test_only_a_member_of_the_team_can_be_assigned(personas):
    errors = refused(
        checklist_item_update,
        item=item(personas, "ladder"),
        user=personas.member,
        assignee=personas.outsider,
    )

    assert errors == {"assignee": ["Assign a member of the investigation's team."]}
    assert item(personas, "ladder").assignee is None


def test_assigning_and_unassigning_are_on_the_timeline(personas):
    checklist_item_update(
        item=item(personas, "ladder"), user=personas.lead, assignee=personas.viewer
    )
    checklist_item_update(
        item=item(personas, "ladder"), user=personas.lead, assignee=personas.member
    )
    checklist_item_update(item=item(personas, "ladder"), user=personas.lead, assignee=None)

    assert [(e.summary, e.details) for e in events(personas, EventKind.CHECKLIST)] == [
        (
            "Checklist: 'Ladder load test to the knee' assigned to vera",
            {"item": "ladder", "old": None, "new": "vera"},
        ),
        (
            "Checklist: 'Ladder load test to the knee' assigned to max",
            {"item": "ladder", "old": "vera", "new": "max"},
        ),
        (
            "Checklist: 'Ladder load test to the knee' unassigned",
            {"item": "ladder", "old": "max", "new": None},
        ),
    ]
    assert item(personas, "ladder").assignee is None


def test_notes_are_kept_without_an_event(personas):
    checklist_item_update(item=item(personas, "ladder"), user=personas.member, notes="50 → 800 VU")

    assert item(personas, "ladder").notes == "50 → 800 VU"
    assert events(personas, EventKind.CHECKLIST) == []


def test_a_teams_own_steps_get_unique_keys_and_come_last(personas):
    p = personas
    first = checklist_item_add(
        investigation=p.investigation, user=p.member, title="Check NTP drift"
    )
    second = checklist_item_add(
        investigation=p.investigation, user=p.lead, title="Check  NTP drift "
    )
    cjk = checklist_item_add(investigation=p.investigation, user=p.lead, title="检查时钟")

    assert [first.key, second.key, cjk.key] == [
        "custom-check-ntp-drift",
        "custom-check-ntp-drift-2",
        "custom-step",
    ]
    assert second.title == "Check NTP drift"
    keys = list(p.investigation.checklist.values_list("key", flat=True))
    assert keys == [*STEP_KEYS, first.key, second.key, cjk.key]
    assert {(i.custom, i.status) for i in (first, second, cjk)} == {(True, "todo")}
    assert summaries(p, EventKind.CHECKLIST)[0] == "Checklist: step added: 'Check NTP drift'"


@pytest.mark.parametrize(
    ("title", "message"),
    [
        ("", "Write what the step is."),
        (" \n\t ", "Write what the step is."),
        ("x" * 201, "Keep it to 200 characters (this is 201)."),
        ("x" * 10_000, "Keep it to 200 characters (this is 10,000)."),
    ],
)
def test_a_step_needs_a_title_of_at_most_200_characters(personas, title, message):
    errors = refused(
        checklist_item_add, investigation=personas.investigation, user=personas.member, title=title
    )

    assert errors == {"title": [message]}
    assert personas.investigation.checklist.count() == 11


def test_a_title_of_200_characters_is_accepted(personas):
    added = checklist_item_add(
        investigation=personas.investigation, user=personas.member, title="t" * 200
    )

    assert len(fresh(added).title) == 200


def test_progress_counts_the_steps_done_and_not_applicable(personas):
    p = personas
    checklist_item_add(investigation=p.investigation, user=p.member, title="Our own step")
    checklist_item_update(item=item(p, "ladder"), user=p.member, status="done")
    checklist_item_update(item=item(p, "root_cause"), user=p.member, status="in_progress")
    checklist_item_update(
        item=item(p, "write_up"), user=p.member, status="not_applicable", na_reason="a drill"
    )
    edge(p, node(p, "lb"), node(p, "app"))

    assert checklist_progress(p.investigation.checklist.all()) == (3, 12)


# --- pages ----------------------------------------------------------------------------------


@pytest.fixture
def world(personas):
    p = personas
    lb = node(p, "lb", kind=PathNodeKind.LOAD_BALANCER)
    app = node(p, "app")
    joined = edge(p, lb, app, protocol="http", port=80)
    return SimpleNamespace(p=p, investigation=p.investigation, lb=lb, app=app, edge=joined)


def client_for(personas, who: str) -> Client:
    return Client() if who == "anonymous" else personas.client(getattr(personas, who))


def state_of_the_case(investigation) -> tuple:
    """Everything the path and checklist pages can change, to see whether a request did."""
    investigation = Investigation.objects.get(pk=investigation.pk)
    return (
        list(investigation.path_nodes.values_list("label", "kind", "spec_a", "state")),
        list(investigation.path_edges.values_list("source", "target", "protocol")),
        list(investigation.checklist.values_list("key", "status", "assignee")),
        investigation.events.count(),
    )


def _i(w):
    return w.investigation.pk


READS = {
    "path panel": lambda w: reverse("path_panel", args=[_i(w)]),
    "node details": lambda w: reverse("path_node", args=[_i(w), w.lb.pk]),
    "checklist": lambda w: reverse("checklist", args=[_i(w)]),
}
WRITES = {
    "path text": lambda w: (reverse("path_text", args=[_i(w)]), {"path-text": "app -> redis"}),
    "new node": lambda w: (
        reverse("path_node_new", args=[_i(w)]),
        {"node-kind": "cache", "node-label": "redis"},
    ),
    "node edit": lambda w: (
        reverse("path_node", args=[_i(w), w.lb.pk]),
        {"spec-kind": "load_balancer", "spec-label": "lb", "spec-spec_a": "slb.s2.small"},
    ),
    "node state": lambda w: (
        reverse("path_node_state", args=[_i(w), w.lb.pk]),
        {"state-state": "ruled_out", "state-note": "new conn/s well under the limit"},
    ),
    "node remove": lambda w: (reverse("path_node_remove", args=[_i(w), w.lb.pk]), {}),
    "new edge": lambda w: (
        reverse("path_edge_new", args=[_i(w)]),
        {
            "edge-source": w.app.pk,
            "edge-target": w.lb.pk,
            "edge-protocol": "http",
            "edge-reuse": "unknown",
        },
    ),
    "edge remove": lambda w: (reverse("path_edge_remove", args=[_i(w), w.edge.pk]), {}),
    "checklist add": lambda w: (reverse("checklist", args=[_i(w)]), {"step-title": "Check NTP"}),
    "checklist item": lambda w: (
        reverse("checklist_item", args=[item(w.p, "ladder").pk]),
        {"status": "in_progress"},
    ),
}


@pytest.mark.parametrize("who", ["lead", "member", "viewer", "outsider", "anonymous"])
@pytest.mark.parametrize("name", list(READS))
def test_every_reader_of_the_team_sees_the_path_and_checklist_partials(world, name, who):
    url = READS[name](world)

    response = client_for(world.p, who).get(url, **HX)

    expected = {"lead": 200, "member": 200, "viewer": 200, "outsider": 404, "anonymous": 302}[who]
    assert response.status_code == expected
    if who == "anonymous":
        assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("who", ["lead", "member", "viewer", "outsider", "anonymous"])
@pytest.mark.parametrize("name", list(WRITES))
def test_only_responders_and_leads_change_the_path_and_checklist(world, name, who):
    url, data = WRITES[name](world)
    before = state_of_the_case(world.investigation)

    response = client_for(world.p, who).post(url, data, **HX)

    expected = {"lead": 200, "member": 200, "viewer": 403, "outsider": 404, "anonymous": 302}[who]
    assert response.status_code == expected, page(response)[:500]
    changed = state_of_the_case(world.investigation) != before
    assert changed is (who in ("lead", "member"))
    if who == "anonymous":
        assert response["Location"].startswith(reverse("login") + "?next=")


@pytest.mark.parametrize("who", ["lead", "member", "viewer", "outsider"])
def test_my_items_is_a_page_for_every_signed_in_person(world, who):
    assert client_for(world.p, who).get(reverse("my_items")).status_code == 200


def test_my_items_needs_a_sign_in():
    response = Client().get(reverse("my_items"))

    assert (response.status_code, response["Location"].split("?")[0]) == (302, reverse("login"))


@pytest.mark.parametrize(
    "url",
    [
        lambda w: reverse("path_text", args=[_i(w)]),
        lambda w: reverse("path_node_state", args=[_i(w), w.lb.pk]),
        lambda w: reverse("path_node_remove", args=[_i(w), w.lb.pk]),
        lambda w: reverse("path_edge_remove", args=[_i(w), w.edge.pk]),
        lambda w: reverse("checklist_item", args=[item(w.p, "ladder").pk]),
    ],
)
def test_buttons_that_change_things_refuse_get(world, url):
    before = state_of_the_case(world.investigation)

    response = world.p.client(world.p.member).get(url(world), **HX)

    assert response.status_code == 405
    assert state_of_the_case(world.investigation) == before


def test_a_node_or_edge_of_another_investigation_is_not_found_through_this_one(world):
    other = investigation_create(team=world.p.team, user=world.p.lead, title="Second case")
    theirs = path_node_create(investigation=other, user=world.p.lead, kind="service", label="x")
    client = world.p.client(world.p.member)

    details = client.get(reverse("path_node", args=[_i(world), theirs.pk]), **HX)
    remove = client.post(reverse("path_node_remove", args=[_i(world), theirs.pk]), **HX)
    edge_remove = client.post(reverse("path_edge_remove", args=[other.pk, world.edge.pk]), **HX)

    assert (details.status_code, remove.status_code, edge_remove.status_code) == (404, 404, 404)
    assert PathNode.objects.filter(pk=theirs.pk).exists()
    assert PathEdge.objects.filter(pk=world.edge.pk).exists()


# htmx: the panel answers with itself, the figure and a nudge to the checklist.


def test_the_path_panel_carries_the_figure_and_nudges_the_checklist(world):
    response = world.p.client(world.p.viewer).get(reverse("path_panel", args=[_i(world)]), **HX)

    assert response.status_code == 200
    assert [t.name for t in response.templates][0] == "investigations/_path.html"
    assert 'id="path-panel"' in page(response)
    assert "<html" not in page(response)
    assert figure_of(response) == json.loads(
        json.dumps(
            path_figure(
                nodes=world.investigation.path_nodes.all(),
                edges=world.investigation.path_edges.all(),
            )
        )
    )
    assert figure_of(response)["data"][0]["customdata"] == [world.lb.pk, world.app.pk]
    assert response["HX-Trigger"] == "checklistChanged"
    assert "HX-Request" in response["Vary"]


def test_drawing_a_path_from_the_panel_answers_with_the_new_panel(world):
    response = world.p.client(world.p.member).post(
        reverse("path_text", args=[_i(world)]),
        {"path-text": "app -[redis:6379]-> cache:redis"},
        **HX,
    )

    assert response.status_code == 200
    assert response["HX-Trigger"] == "checklistChanged"
    figure = figure_of(response)
    assert len(figure["data"][0]["customdata"]) == 3
    assert "Redis:6379" in [a["text"] for a in figure["layout"]["annotations"]]
    # The form is emptied for the next line.
    assert input_value(response, "path-text") in (None, "")


def test_a_line_that_does_not_parse_answers_400_with_the_column_and_what_was_typed(world):
    response = world.p.client(world.p.member).post(
        reverse("path_text", args=[_i(world)]), {"path-text": "lb -> -> app"}, **HX
    )

    assert response.status_code == 400
    assert "Column 7: expected a node name" in page(response)
    assert input_value(response, "path-text") == "lb -&gt; -&gt; app"
    assert response["HX-Trigger"] == "checklistChanged"
    assert PathNode.objects.count() == 2


def test_a_line_with_a_too_long_label_shows_why_in_the_panel(world):
    response = world.p.client(world.p.member).post(
        reverse("path_text", args=[_i(world)]), {"path-text": "app -> " + "y" * 201}, **HX
    )

    assert response.status_code == 400
    assert "200 characters" in page(response)
    assert PathNode.objects.count() == 2


def test_a_duplicate_node_answers_400_with_the_error_and_what_was_typed(world):
    response = world.p.client(world.p.member).post(
        reverse("path_node_new", args=[_i(world)]),
        {"node-kind": "cache", "node-label": "app"},
        **HX,
    )

    assert response.status_code == 400
    assert "The path already has a node with this label." in page(response)
    assert input_value(response, "node-label") == "app"
    assert 'value="cache" selected' in page(response)
    assert PathNode.objects.count() == 2


def test_a_new_node_opens_its_details_in_the_panel(world):
    response = world.p.client(world.p.member).post(
        reverse("path_node_new", args=[_i(world)]),
        {"node-kind": "cache", "node-label": "redis"},
        **HX,
    )

    assert response.status_code == 200
    assert 'id="path-node-detail"' in page(response)
    assert "<h3>redis" in page(response)
    assert input_value(response, "node-label") in (None, "")


def test_a_duplicate_edge_answers_400_with_the_error(world):
    response = world.p.client(world.p.member).post(
        reverse("path_edge_new", args=[_i(world)]),
        {
            "edge-source": world.lb.pk,
            "edge-target": world.app.pk,
            "edge-protocol": "http",
            "edge-reuse": "unknown",
        },
        **HX,
    )

    assert response.status_code == 400
    assert "These two nodes are already joined in this direction." in page(response)
    assert PathEdge.objects.count() == 1


def test_an_edge_with_port_0_answers_400_on_the_port(world):
    response = world.p.client(world.p.member).post(
        reverse("path_edge_new", args=[_i(world)]),
        {
            "edge-source": world.app.pk,
            "edge-target": world.lb.pk,
            "edge-protocol": "tcp",
            "edge-port": "0",
            "edge-reuse": "unknown",
        },
        **HX,
    )

    assert response.status_code == 400
    assert 'name="edge-port" value="0"' in page(response)
    assert PathEdge.objects.count() == 1


def test_a_state_without_evidence_answers_400_with_the_node_still_open(world):
    response = world.p.client(world.p.member).post(
        reverse("path_node_state", args=[_i(world), world.lb.pk]), {"state-state": "suspect"}, **HX
    )

    assert response.status_code == 400
    assert "Give the evidence: a note, a link, a file or a collection." in page(response)
    assert 'id="path-node-detail"' in page(response)
    assert fresh(world.lb).state == NodeState.NOT_CHECKED


def test_a_collection_of_another_investigation_is_refused_on_the_page(world):
    p = world.p
    other = investigation_create(team=p.team, user=p.lead, title="Second case")
    member_add(
        investigation=other, user=p.lead, host=team_host(p.team, "h"), side_key="a", role="service"
    )
    theirs = collection_request(investigation=other, user=p.lead)

    response = p.client(p.member).post(
        reverse("path_node_state", args=[_i(world), world.lb.pk]),
        {"state-state": "suspect", "state-collection": theirs.pk},
        **HX,
    )

    assert response.status_code == 400
    assert fresh(world.lb).state == NodeState.NOT_CHECKED


def test_a_state_with_a_note_is_saved_and_shown_with_its_evidence(world):
    response = world.p.client(world.p.member).post(
        reverse("path_node_state", args=[_i(world), world.lb.pk]),
        {
            "state-state": "ruled_out",
            "state-note": "3k new conn/s of 50k",
            "state-link": "grafana.example/d/1",
        },
        **HX,
    )

    assert response.status_code == 200
    lb = fresh(world.lb)
    assert (lb.state, lb.state_note, lb.state_link) == (
        "ruled_out",
        "3k new conn/s of 50k",
        "https://grafana.example/d/1",
    )
    assert "Ruled out by max" in page(response)
    assert "3k new conn/s of 50k" in page(response)
    assert figure_of(response)["data"][0]["marker"]["color"][0] == "#1b7f3b"


def test_a_file_uploaded_as_evidence_can_be_downloaded_by_the_team_only(world, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    content = b"top - 10:00:01 load average: 41.2, 39.8, 30.1\n"

    response = world.p.client(world.p.member).post(
        reverse("path_node_state", args=[_i(world), world.app.pk]),
        {"state-state": "suspect", "state-file": SimpleUploadedFile("top-a.txt", content)},
        **HX,
    )

    assert response.status_code == 200, page(response)[:1000]
    app = fresh(world.app)
    assert (app.state, app.state_file.name.startswith("path-evidence/")) == ("suspect", True)
    assert app.state_file.read() == content
    link = re.search(r'<a href="([^"]+)">file</a>', page(response))
    assert link, "the node's details link to the file"
    download = world.p.client(world.p.viewer).get(link.group(1))
    assert download.status_code == 200
    assert b"".join(download.streaming_content) == content
    assert world.p.client(world.p.outsider).get(link.group(1)).status_code == 404


def test_editing_a_node_with_bad_values_answers_400_and_keeps_what_was_typed(world):
    response = world.p.client(world.p.member).post(
        reverse("path_node", args=[_i(world), world.lb.pk]),
        {
            "spec-kind": "load_balancer",
            "spec-label": "lb",
            "spec-spec_a": "slb.s2.small",
            "spec-values_a": "new conn/s: 5k\nno separator here",
        },
        **HX,
    )

    assert response.status_code == 400
    assert "Line 2: write &#x27;key: value&#x27;." in page(response)
    assert "slb.s2.small</textarea>" in page(response)
    assert "no separator here</textarea>" in page(response)
    assert fresh(world.lb).spec_a == ""


def test_editing_a_node_saves_specifications_values_and_hosts(world):
    p = world.p
    box = team_host(p.team, "slb-a")

    response = p.client(p.member).post(
        reverse("path_node", args=[_i(world), world.lb.pk]),
        {
            "spec-kind": "load_balancer",
            "spec-label": "public slb",
            "spec-spec_a": "slb.s2.small",
            "spec-spec_b": "slb.s3.large",
            "spec-values_a": "new conn/s: 5k",
            "spec-values_b": "new conn/s = 50k",
            "spec-hosts_a": [box.pk],
        },
        **HX,
    )

    assert response.status_code == 200
    lb = fresh(world.lb)
    assert (lb.label, lb.values_a, lb.values_b) == (
        "public slb",
        {"new conn/s": "5k"},
        {"new conn/s": "50k"},
    )
    assert list(lb.hosts_a.all()) == [box]
    assert lb.specs_differ
    assert "≠ the sides differ" in figure_of(response)["data"][0]["text"][0]


def test_hosts_of_another_team_cannot_be_chosen_on_the_page(world):
    stranger = team_host(other_team(), "their-box")

    response = world.p.client(world.p.member).post(
        reverse("path_node", args=[_i(world), world.lb.pk]),
        {"spec-kind": "load_balancer", "spec-label": "lb", "spec-hosts_b": [stranger.pk]},
        **HX,
    )

    assert response.status_code == 400
    assert not fresh(world.lb).hosts_b.exists()


# Without JavaScript: back to the page, at the panel.


@pytest.mark.parametrize(
    ("name", "anchor"),
    [
        ("path text", "#path"),
        ("new node", "?node={new}#path"),
        ("node edit", "?node={lb}#path"),
        ("node state", "?node={lb}#path"),
        ("node remove", "#path"),
        ("new edge", "#path"),
        ("edge remove", "#path"),
        ("checklist add", "#checklist"),
        ("checklist item", "#checklist"),
    ],
)
def test_without_htmx_a_change_goes_back_to_the_page_at_its_panel(world, name, anchor):
    url, data = WRITES[name](world)

    response = world.p.client(world.p.member).post(url, data)

    new = PathNode.objects.order_by("-pk").first().pk
    detail = reverse("investigation_detail", args=[_i(world)])
    assert response.status_code == 302
    assert response["Location"] == detail + anchor.format(lb=world.lb.pk, new=new)


def test_without_htmx_an_error_is_shown_under_its_field_with_what_was_typed(world):
    client = world.p.client(world.p.member)

    response = client.post(reverse("path_text", args=[_i(world)]), {"path-text": "a -> -> b"})

    # The whole page, the path panel drawn in it with the form, its error and its text.
    assert response.status_code == 400
    card = field_card(page(response), "path-text")
    assert "Column 6: expected a node name" in card
    assert 'value="a -&gt; -&gt; b"' in card


def test_without_htmx_the_panels_are_the_page_itself(world):
    client = world.p.client(world.p.viewer)
    detail = reverse("investigation_detail", args=[_i(world)])

    path = client.get(reverse("path_panel", args=[_i(world)]))
    checklist = client.get(reverse("checklist", args=[_i(world)]))

    assert (path.status_code, path["Location"]) == (302, detail + "#path")
    assert (checklist.status_code, checklist["Location"]) == (302, detail + "#checklist")


# The checklist partial: polled, 204 while unchanged, the header's bar along with it.


def test_the_checklist_answers_204_while_unchanged_and_the_list_once_changed(world):
    client = world.p.client(world.p.viewer)
    url = reverse("checklist", args=[_i(world)])

    first = client.get(url, **HX)
    version = re.search(r"\?v=([^\"&]+)\"", page(first)).group(1)
    unchanged = client.get(url, {"v": version}, **HX)
    checklist_item_update(item=item(world.p, "ladder"), user=world.p.member, status="in_progress")
    changed = client.get(url, {"v": version}, **HX)

    assert first.status_code == 200
    assert (unchanged.status_code, unchanged.content) == (204, b"")
    assert "HX-Request" in unchanged["Vary"]
    assert changed.status_code == 200
    assert 'id="checklist-panel"' in page(changed)
    assert re.search(r'id="checklist-progress"[^>]*hx-swap-oob="true"', page(changed))
    assert "1/11 steps of the method" in page(changed)  # the path of the world is joined


def test_the_checklist_shows_an_auto_step_with_its_evidence(world):
    response = world.p.client(world.p.viewer).get(reverse("checklist", args=[_i(world)]), **HX)

    assert "auto: 2 nodes joined by 1 edge" in page(response)


def test_a_status_set_from_the_checklist_answers_with_the_list(world):
    response = world.p.client(world.p.member).post(
        reverse("checklist_item", args=[item(world.p, "ladder").pk]),
        {"status": "done", "assignee": "max", "notes": "knee at 400 VU", "na_reason": ""},
        **HX,
    )

    assert response.status_code == 200
    ladder = item(world.p, "ladder")
    assert (ladder.status, ladder.assignee, ladder.notes) == (
        "done",
        world.p.member,
        "knee at 400 VU",
    )
    assert "2/11 steps of the method" in page(response)


def test_not_applicable_without_a_reason_answers_400_with_the_reason_asked_for(world):
    response = world.p.client(world.p.member).post(
        reverse("checklist_item", args=[item(world.p, "ladder").pk]),
        {"status": "not_applicable", "na_reason": ""},
        **HX,
    )

    assert response.status_code == 400
    assert "Say why this step does not apply." in page(response)
    assert item(world.p, "ladder").status == ItemStatus.TODO


def test_assigning_someone_outside_the_team_answers_400_and_assigns_no_one(world):
    response = world.p.client(world.p.member).post(
        reverse("checklist_item", args=[item(world.p, "ladder").pk]), {"assignee": "otto"}, **HX
    )

    assert response.status_code == 400
    assert "Assign a member of the investigation&#x27;s team." in page(response)
    assert item(world.p, "ladder").assignee is None


def test_a_step_of_ones_own_with_a_title_too_long_answers_400_and_keeps_what_was_typed(world):
    title = "t" * 201

    response = world.p.client(world.p.member).post(
        reverse("checklist", args=[_i(world)]), {"step-title": title}, **HX
    )

    assert response.status_code == 400
    assert "Keep it to 200 characters (this is 201)." in page(response)
    assert input_value(response, "step-title") == title
    assert world.investigation.checklist.count() == 11


def test_a_step_of_ones_own_added_on_the_page_comes_last(world):
    response = world.p.client(world.p.member).post(
        reverse("checklist", args=[_i(world)]), {"step-title": "Compare JVM flags"}, **HX
    )

    assert response.status_code == 200
    assert list(world.investigation.checklist.values_list("key", flat=True))[-1] == (
        "custom-compare-jvm-flags"
    )
    assert page(response).rindex("Compare JVM flags") > page(response).index("Write it up")


# My items.


def test_my_items_lists_only_my_unfinished_items_in_my_teams_investigations(world):
    p = world.p

    def assign(key, investigation=None, **changes):
        checklist_item_update(
            item=item(p, key, investigation), user=p.lead, assignee=p.member, **changes
        )

    assign("ladder")
    assign("symptom", status="in_progress")
    assign("host_at_knee", status="done")
    assign("write_up", status="not_applicable", na_reason="a drill")
    checklist_item_update(item=item(p, "root_cause"), user=p.lead, assignee=p.lead)
    second = investigation_create(team=p.team, user=p.lead, title="Second case")
    assign("profile_at_knee", second)
    theirs = investigation_create(team=other_team(), user=p.outsider, title="Their case")
    # Somehow assigned: the member is not in that team, so it is not theirs to see.
    ChecklistItem.objects.filter(investigation=theirs, key="ladder").update(assignee=p.member)

    response = p.client(p.member).get(reverse("my_items"))

    assert response.status_code == 200
    listed = [(i.investigation.title, i.key) for i in response.context["items"]]
    assert sorted(listed) == sorted(
        [
            ("Checkout p99 doubled on the new cloud", "ladder"),
            ("Checkout p99 doubled on the new cloud", "symptom"),
            ("Second case", "profile_at_knee"),
        ]
    )
    assert "Their case" not in page(response)
    assert "Write it up" not in page(response)
    assert "Profile the CPU at the knee" in page(response)


def test_my_items_says_so_when_nothing_waits(world):
    response = world.p.client(world.p.viewer).get(reverse("my_items"))

    assert response.context["items"] == []
    assert "Nothing assigned to you is waiting." in page(response)


# The investigation page.


def test_the_investigation_page_shows_progress_the_path_and_the_checklist_with_controls(world):
    html = loaded_page(
        world.p.client(world.p.member),
        reverse("investigation_detail", args=[_i(world)]),
        {"node": world.lb.pk},
    )

    assert re.search(r'<div id="checklist-progress"[^>]*>\s*<progress max="11" value="1"', html)
    assert 'id="path"' in html and 'id="path-panel"' in html and 'id="checklist-panel"' in html
    assert figure_of(html)["data"][0]["customdata"] == [world.lb.pk, world.app.pk]
    for url in [
        reverse("path_text", args=[_i(world)]),
        reverse("path_node_new", args=[_i(world)]),
        reverse("path_edge_new", args=[_i(world)]),
        reverse("path_node_state", args=[_i(world), world.lb.pk]),
        reverse("path_node_remove", args=[_i(world), world.lb.pk]),
        reverse("checklist_item", args=[item(world.p, "ladder").pk]),
        reverse("checklist", args=[_i(world)]),
    ]:
        assert f'action="{url}"' in html, url


def test_a_viewer_sees_the_path_and_checklist_but_no_control_to_change_them(world):
    html = loaded_page(
        world.p.client(world.p.viewer),
        reverse("investigation_detail", args=[_i(world)]),
        {"node": world.lb.pk},
    )

    assert 'id="checklist-progress"' in html and 'id="path-node-detail"' in html
    assert "Ladder load test to the knee" in html
    for url in [
        reverse("path_text", args=[_i(world)]),
        reverse("path_node_new", args=[_i(world)]),
        reverse("path_edge_new", args=[_i(world)]),
        reverse("path_node_state", args=[_i(world), world.lb.pk]),
        reverse("path_node_remove", args=[_i(world), world.lb.pk]),
        reverse("path_edge_remove", args=[_i(world), world.edge.pk]),
        reverse("checklist_item", args=[item(world.p, "ladder").pk]),
    ]:
        assert f'"{url}"' not in html, url
    # The node's own URL shows its details to anyone; only writers get a form posting to it.
    edit = reverse("path_node", args=[_i(world), world.lb.pk])
    assert f'action="{edit}"' not in html and f'hx-post="{edit}"' not in html
    assert "<form" not in html.split('id="path"')[1].split('id="environment"')[0]
    assert "Add step" not in html and "Add node" not in html and 'name="status"' not in html


@pytest.mark.parametrize("node_param", ["99999999999999999999999", "²", "-1", "abc", ""])
def test_a_strange_node_parameter_opens_no_node_and_breaks_nothing(world, node_param):
    client = world.p.client(world.p.viewer)

    detail = client.get(reverse("investigation_detail", args=[_i(world)]), {"node": node_param})
    panel = client.get(reverse("path_panel", args=[_i(world)]), {"node": node_param}, **HX)

    assert (detail.status_code, panel.status_code) == (200, 200)
    assert 'id="path-node-detail"' not in page(detail) + page(panel)


# --- hostile strings ------------------------------------------------------------------------


@pytest.mark.parametrize("label", SHORT_HOSTILE)
def test_a_hostile_label_is_stored_intact_and_shown_escaped_everywhere(world, label):
    p = world.p
    response = p.client(p.member).post(
        reverse("path_node_new", args=[_i(world)]),
        {"node-kind": "service", "node-label": label},
        **HX,
    )
    assert response.status_code == 200
    created = PathNode.objects.get(label=label)

    html = shown = loaded_page(
        p.client(p.viewer), reverse("investigation_detail", args=[_i(world)]), {"node": created.pk}
    )

    assert escape(label) in html
    if "<" in label:
        assert label not in html
        assert "<script>alert" not in html and "<img src=x" not in html
    figure = figure_of(shown)
    index = figure["data"][0]["customdata"].index(created.pk)
    assert plotly_shows_as_text(label, figure["data"][0]["text"][index])
    assert plotly_shows_as_text(label, figure["data"][0]["hovertext"][index])


def test_a_label_of_10000_characters_is_refused_clearly_on_the_page(world):
    response = world.p.client(world.p.member).post(
        reverse("path_node_new", args=[_i(world)]),
        {"node-kind": "service", "node-label": "x" * 10_000},
        **HX,
    )

    assert response.status_code == 400
    assert "A label has at most 200 characters." in page(response)
    assert PathNode.objects.count() == 2


@pytest.mark.parametrize("text", HOSTILE_STRINGS)
def test_hostile_specifications_values_and_notes_are_stored_intact_and_shown_escaped(world, text):
    p = world.p
    value = text[:1000]
    p.client(p.member).post(
        reverse("path_node", args=[_i(world), world.lb.pk]),
        {
            "spec-kind": "load_balancer",
            "spec-label": "lb",
            "spec-spec_a": text,
            "spec-values_b": f"limit: {value}",
        },
        **HX,
    )
    p.client(p.member).post(
        reverse("path_node_state", args=[_i(world), world.lb.pk]),
        {"state-state": "suspect", "state-note": text},
        **HX,
    )

    lb = fresh(world.lb)
    assert (lb.spec_a, lb.values_b, lb.state_note) == (text, {"limit": value}, text)
    html = loaded_page(
        p.client(p.viewer), reverse("investigation_detail", args=[_i(world)]), {"node": lb.pk}
    )
    assert escape(text) in html
    assert "<script>alert" not in html and "<img src=x" not in html


@pytest.mark.parametrize("text", HOSTILE_STRINGS)
def test_hostile_checklist_titles_and_notes_are_stored_intact_and_shown_escaped(world, text):
    p = world.p
    client = p.client(p.member)
    added = client.post(reverse("checklist", args=[_i(world)]), {"step-title": text}, **HX)
    client.post(reverse("checklist_item", args=[item(p, "ladder").pk]), {"notes": text}, **HX)

    assert item(p, "ladder").notes == text
    custom = list(world.investigation.checklist.filter(custom=True).values_list("title", flat=True))
    assert custom == [text]
    assert added.status_code == 200
    html = page(p.client(p.viewer).get(reverse("checklist", args=[_i(world)]), **HX))
    assert escape(text) in html
    assert "<script>alert" not in html and "<img src=x" not in html
