"""The traffic path and the checklist through the JSON API, by every persona."""

from types import SimpleNamespace

import pytest

from investigations.choices import EventKind
from investigations.models import (
    ChecklistItem,
    Investigation,
    PathEdge,
    PathNode,
    Team,
    TimelineEvent,
)
from investigations.services.collections import collection_request
from investigations.services.inventory import host_create, member_add
from investigations.services.investigations import investigation_create
from investigations.services.path import path_edge_create, path_node_create
from tests.conftest import HOSTILE_STRINGS, ApiClient, fresh

pytestmark = pytest.mark.django_db

BIGGEST_ID = 2**63 - 1
NODE_KEYS = {
    "id",
    "kind",
    "label",
    "spec_a",
    "spec_b",
    "values_a",
    "values_b",
    "hosts_a",
    "hosts_b",
    "specs_differ",
    "state",
    "state_note",
    "state_link",
    "state_collection",
    "state_changed_at",
}
EDGE_KEYS = {"id", "source", "target", "protocol", "port", "tls", "reuse", "notes"}
ITEM_KEYS = {
    "key",
    "title",
    "description",
    "status",
    "assignee",
    "auto",
    "evidence",
    "notes",
    "na_reason",
    "custom",
    "completed_at",
}


@pytest.fixture
def world(personas):
    p = personas
    lb = path_node_create(
        investigation=p.investigation, user=p.lead, kind="load_balancer", label="lb"
    )
    app = path_node_create(investigation=p.investigation, user=p.lead, kind="service", label="app")
    joined = path_edge_create(
        investigation=p.investigation, user=p.lead, source=lb, target=app, protocol="http", port=80
    )
    host = host_create(team=p.team, name="app-1", address="10.0.0.1", port=22, username="perf")
    base = f"/api/investigations/{p.investigation.pk}"
    return SimpleNamespace(
        p=p, base=base, lb=lb, app=app, edge=joined, host=host, investigation=p.investigation
    )


def api(world, who: str) -> ApiClient:
    return ApiClient(None if who == "anonymous" else getattr(world.p, who))


def fields(response) -> list:
    return [error["field"] for error in (response.body or {}).get("errors") or []]


def refused_on(response, field: str, status: int = 400) -> str:
    """The answer is `status` in the error shape, naming `field`; returns its message."""
    assert response.status_code == status, (response.status_code, response.content[:1000])
    assert set(response.body) == {"detail", "errors"} and response.body["detail"]
    assert all(set(e) == {"field", "message"} and e["message"] for e in response.body["errors"])
    assert field in fields(response), response.body
    return next(e["message"] for e in response.body["errors"] if e["field"] == field)


def state_of_the_case(investigation) -> tuple:
    investigation = Investigation.objects.get(pk=investigation.pk)
    return (
        list(investigation.path_nodes.values_list("label", "kind", "spec_a", "state")),
        list(investigation.path_edges.values_list("source", "target", "protocol", "port")),
        list(investigation.checklist.values_list("key", "status", "assignee", "notes")),
        investigation.events.count(),
    )


# --- who may do what ------------------------------------------------------------------------

READS = {
    "path": lambda w: f"{w.base}/path",
    "nodes": lambda w: f"{w.base}/path/nodes",
    "edges": lambda w: f"{w.base}/path/edges",
    "checklist": lambda w: f"{w.base}/checklist",
}
WRITES = {
    "path text": lambda w: ("post", f"{w.base}/path/text", {"text": "app -> cache:redis"}, 201),
    "new node": lambda w: ("post", f"{w.base}/path/nodes", {"label": "redis"}, 201),
    "node patch": lambda w: (
        "patch",
        f"{w.base}/path/nodes/{w.lb.pk}",
        {"spec_a": "slb.s2.small"},
        200,
    ),
    "node delete": lambda w: ("delete", f"{w.base}/path/nodes/{w.lb.pk}", None, 204),
    "new edge": lambda w: (
        "post",
        f"{w.base}/path/edges",
        {"source": w.app.pk, "target": w.lb.pk},
        201,
    ),
    "edge patch": lambda w: ("patch", f"{w.base}/path/edges/{w.edge.pk}", {"port": 8080}, 200),
    "edge delete": lambda w: ("delete", f"{w.base}/path/edges/{w.edge.pk}", None, 204),
    "checklist add": lambda w: ("post", f"{w.base}/checklist", {"title": "Check NTP"}, 201),
    "checklist patch": lambda w: (
        "patch",
        f"{w.base}/checklist/ladder",
        {"status": "in_progress"},
        200,
    ),
}


def call(client: ApiClient, method: str, path: str, body):
    if method in ("get", "delete"):
        return getattr(client, method)(path)
    return getattr(client, method)(path, body)


@pytest.mark.parametrize("who", ["member", "viewer", "outsider", "anonymous"])
@pytest.mark.parametrize("name", list(READS))
def test_the_team_reads_the_path_and_the_checklist_and_no_one_else(world, name, who):
    response = api(world, who).get(READS[name](world))

    expected = {"member": 200, "viewer": 200, "outsider": 404, "anonymous": 401}[who]
    assert response.status_code == expected
    if expected != 200:
        assert response.body["detail"]


@pytest.mark.parametrize("who", ["member", "viewer", "outsider", "anonymous"])
@pytest.mark.parametrize("name", list(WRITES))
def test_only_responders_change_the_path_and_the_checklist(world, name, who):
    method, path, body, success = WRITES[name](world)
    before = state_of_the_case(world.investigation)

    response = call(api(world, who), method, path, body)

    expected = {"member": success, "viewer": 403, "outsider": 404, "anonymous": 401}[who]
    assert response.status_code == expected, response.content[:500]
    assert (state_of_the_case(world.investigation) != before) is (who == "member")
    if expected >= 400:
        assert response.body["detail"]


def test_the_lead_changes_the_path_too(world):
    response = ApiClient(world.p.lead).post(f"{world.base}/path/nodes", {"label": "redis"})

    assert response.status_code == 201


def test_a_node_or_edge_of_another_investigation_is_not_found_through_this_one(world):
    p = world.p
    other = investigation_create(team=p.team, user=p.lead, title="Second case")
    theirs = path_node_create(investigation=other, user=p.lead, kind="service", label="x")
    client = ApiClient(p.member)

    answers = [
        client.patch(f"{world.base}/path/nodes/{theirs.pk}", {"spec_a": "mine now"}),
        client.delete(f"{world.base}/path/nodes/{theirs.pk}"),
        client.patch(f"/api/investigations/{other.pk}/path/edges/{world.edge.pk}", {"port": 1}),
        client.delete(f"/api/investigations/{other.pk}/path/edges/{world.edge.pk}"),
    ]

    assert [a.status_code for a in answers] == [404, 404, 404, 404]
    assert fresh(theirs).spec_a == "" and PathEdge.objects.filter(pk=world.edge.pk).exists()


# --- shapes ---------------------------------------------------------------------------------


def test_the_path_is_its_nodes_and_edges(world):
    body = ApiClient(world.p.viewer).get(f"{world.base}/path").body

    assert set(body) == {"nodes", "edges"}
    assert [set(n) for n in body["nodes"]] == [NODE_KEYS, NODE_KEYS]
    assert [(n["id"], n["label"], n["kind"], n["state"]) for n in body["nodes"]] == [
        (world.lb.pk, "lb", "load_balancer", "not_checked"),
        (world.app.pk, "app", "service", "not_checked"),
    ]
    assert body["edges"] == [
        {
            "id": world.edge.pk,
            "source": world.lb.pk,
            "target": world.app.pk,
            "protocol": "http",
            "port": 80,
            "tls": False,
            "reuse": "unknown",
            "notes": "",
        }
    ]


def test_a_node_is_created_with_everything_it_can_say(world):
    response = ApiClient(world.p.member).post(
        f"{world.base}/path/nodes",
        {
            "kind": "database",
            "label": "orders db",
            "spec_a": "RDS 4 vCPU",
            "spec_b": "ECS 8 vCPU",
            "values_a": {"max_connections": "500"},
            "values_b": {"max_connections": "2000"},
            "hosts_a": [world.host.pk],
        },
    )

    assert response.status_code == 201
    body = response.body
    assert set(body) == NODE_KEYS
    assert (body["kind"], body["label"], body["hosts_a"], body["hosts_b"]) == (
        "database",
        "orders db",
        [world.host.pk],
        [],
    )
    assert (body["values_a"], body["specs_differ"], body["state"]) == (
        {"max_connections": "500"},
        True,
        "not_checked",
    )
    assert (body["state_collection"], body["state_changed_at"]) == (None, None)
    listed = ApiClient(world.p.viewer).get(f"{world.base}/path/nodes").body
    assert [n["label"] for n in listed] == ["lb", "app", "orders db"]


def test_a_node_without_a_kind_is_a_service(world):
    body = ApiClient(world.p.member).post(f"{world.base}/path/nodes", {"label": "worker"}).body

    assert body["kind"] == "service"


def test_a_node_is_edited_and_its_hosts_replaced(world):
    client = ApiClient(world.p.member)
    client.patch(f"{world.base}/path/nodes/{world.app.pk}", {"hosts_b": [world.host.pk]})

    response = client.patch(
        f"{world.base}/path/nodes/{world.app.pk}",
        {"label": "order-api", "spec_b": "8 vCPU", "hosts_b": []},
    )

    assert response.status_code == 200
    assert (response.body["label"], response.body["spec_b"], response.body["hosts_b"]) == (
        "order-api",
        "8 vCPU",
        [],
    )
    assert (response.body["spec_a"], response.body["kind"]) == ("", "service")


def test_an_empty_patch_changes_nothing(world):
    before = state_of_the_case(world.investigation)

    response = ApiClient(world.p.member).patch(f"{world.base}/path/nodes/{world.lb.pk}", {})

    assert response.status_code == 200 and response.body["label"] == "lb"
    assert state_of_the_case(world.investigation) == before


def test_a_node_is_ruled_out_with_a_note_and_a_link(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}",
        {
            "state": "ruled_out",
            "state_note": "3k new conn/s of 50k",
            "state_link": "https://grafana.example/d/slb",
        },
    )

    assert response.status_code == 200
    body = response.body
    assert (body["state"], body["state_note"], body["state_link"]) == (
        "ruled_out",
        "3k new conn/s of 50k",
        "https://grafana.example/d/slb",
    )
    assert body["state_changed_at"] is not None
    event = TimelineEvent.objects.filter(kind=EventKind.PATH).last()
    assert event.details == {"node": world.lb.pk, "old": "not_checked", "new": "ruled_out"}


def test_a_node_is_suspected_on_a_collection_of_the_investigation(world):
    p = world.p
    member_add(
        investigation=p.investigation, user=p.lead, host=world.host, side_key="a", role="service"
    )
    collection = collection_request(investigation=p.investigation, user=p.member)

    response = ApiClient(p.member).patch(
        f"{world.base}/path/nodes/{world.app.pk}",
        {"state": "suspect", "state_collection": collection.pk},
    )

    assert response.status_code == 200
    assert (response.body["state"], response.body["state_collection"]) == (
        "suspect",
        collection.pk,
    )


def test_a_node_is_deleted_with_its_edges(world):
    response = ApiClient(world.p.member).delete(f"{world.base}/path/nodes/{world.app.pk}")

    assert (response.status_code, response.content) == (204, b"")
    assert list(PathNode.objects.values_list("label", flat=True)) == ["lb"]
    assert not PathEdge.objects.exists()


def test_an_edge_is_created_edited_and_deleted(world):
    client = ApiClient(world.p.member)

    created = client.post(
        f"{world.base}/path/edges",
        {
            "source": world.app.pk,
            "target": world.lb.pk,
            "protocol": "grpc",
            "port": 50051,
            "tls": True,
            "reuse": "long_lived",
            "notes": "health checks",
        },
    )
    edited = client.patch(
        f"{world.base}/path/edges/{created.body['id']}", {"port": None, "reuse": "short_lived"}
    )
    deleted = client.delete(f"{world.base}/path/edges/{created.body['id']}")

    assert created.status_code == 201
    assert created.body == {
        "id": created.body["id"],
        "source": world.app.pk,
        "target": world.lb.pk,
        "protocol": "grpc",
        "port": 50051,
        "tls": True,
        "reuse": "long_lived",
        "notes": "health checks",
    }
    assert edited.status_code == 200
    assert (edited.body["port"], edited.body["reuse"], edited.body["protocol"]) == (
        None,
        "short_lived",
        "grpc",
    )
    assert deleted.status_code == 204
    assert list(PathEdge.objects.values_list("pk", flat=True)) == [world.edge.pk]


def test_a_path_is_drawn_from_text_and_the_whole_path_returned(world):
    client = ApiClient(world.p.member)

    first = client.post(
        f"{world.base}/path/text", {"text": "loadgen -> lb -[https:443, tls]-> app -> db:orders"}
    )
    again = client.post(
        f"{world.base}/path/text", {"text": "loadgen -> lb -[https:443, tls]-> app -> db:orders"}
    )

    assert first.status_code == again.status_code == 201
    assert [n["label"] for n in first.body["nodes"]] == ["lb", "app", "loadgen", "orders"]
    assert [n["id"] for n in first.body["nodes"][:2]] == [world.lb.pk, world.app.pk]
    assert len(first.body["edges"]) == 3
    assert again.body == first.body


def test_the_checklist_is_the_method_in_order_then_the_teams_own_steps(world):
    client = ApiClient(world.p.member)
    added = client.post(f"{world.base}/checklist", {"title": "Compare JVM flags"})

    body = client.get(f"{world.base}/checklist").body

    assert added.status_code == 201
    assert (added.body["key"], added.body["custom"], added.body["status"]) == (
        "custom-compare-jvm-flags",
        True,
        "todo",
    )
    assert [set(i) for i in body] == [ITEM_KEYS] * 12
    assert [i["key"] for i in body] == [
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
        "custom-compare-jvm-flags",
    ]
    path = body[1]
    assert (path["status"], path["auto"], path["evidence"]) == (
        "done",
        True,
        "2 nodes joined by 1 edge",
    )


def test_a_checklist_item_is_changed_by_its_key(world):
    client = ApiClient(world.p.member)

    response = client.patch(
        f"{world.base}/checklist/write_up",
        {
            "status": "not_applicable",
            "na_reason": "a drill, nothing to write",
            "assignee": "vera",
            "notes": "see the runbook",
        },
    )
    unassigned = client.patch(f"{world.base}/checklist/write_up", {"assignee": ""})

    assert response.status_code == 200
    assert set(response.body) == ITEM_KEYS
    assert (
        response.body["status"],
        response.body["na_reason"],
        response.body["assignee"],
        response.body["notes"],
        response.body["auto"],
    ) == ("not_applicable", "a drill, nothing to write", "vera", "see the runbook", False)
    assert unassigned.body["assignee"] is None
    assert ChecklistItem.objects.get(key="write_up").status == "not_applicable"


# --- errors name the field ------------------------------------------------------------------


def test_a_bad_kind_is_named(world):
    response = ApiClient(world.p.member).post(
        f"{world.base}/path/nodes", {"label": "x", "kind": "router"}
    )

    refused_on(response, "kind", 422)


def test_unknown_hosts_are_named(world):
    client = ApiClient(world.p.member)
    theirs = host_create(
        team=Team.objects.get(name="Another team"),
        name="their-box",
        address="10.9.9.9",
        port=22,
        username="x",
    )

    created = client.post(f"{world.base}/path/nodes", {"label": "x", "hosts_a": [theirs.pk]})
    patched = client.patch(
        f"{world.base}/path/nodes/{world.lb.pk}", {"hosts_b": [world.host.pk, BIGGEST_ID]}
    )

    refused_on(created, "hosts_a")
    refused_on(patched, "hosts_b")
    assert not fresh(world.lb).hosts_b.exists()
    assert not PathNode.objects.filter(label="x").exists()


def test_a_duplicate_label_is_named(world):
    client = ApiClient(world.p.member)

    created = client.post(f"{world.base}/path/nodes", {"label": "lb"})
    renamed = client.patch(f"{world.base}/path/nodes/{world.app.pk}", {"label": " lb "})

    assert refused_on(created, "label") == "The path already has a node with this label."
    refused_on(renamed, "label")
    assert fresh(world.app).label == "app"


@pytest.mark.parametrize("state", ["ruled_out", "suspect"])
def test_a_state_without_evidence_names_the_evidence_field(world, state):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}", {"state": state, "state_note": "  "}
    )

    message = refused_on(response, "state_note")
    assert message == "Give the evidence: a note, a link, a file or a collection."
    assert fresh(world.lb).state == "not_checked"


def test_a_link_that_is_not_http_names_the_link_field(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}",
        {"state": "suspect", "state_link": "javascript:alert(1)"},
    )

    refused_on(response, "state_link")


def test_a_failed_state_change_undoes_the_rest_of_the_patch(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}", {"label": "renamed", "state": "suspect"}
    )

    assert response.status_code == 400
    assert fresh(world.lb).label == "lb"


def test_a_collection_of_another_investigation_is_named(world):
    p = world.p
    other = investigation_create(team=p.team, user=p.lead, title="Second case")
    member_add(investigation=other, user=p.lead, host=world.host, side_key="a", role="service")
    theirs = collection_request(investigation=other, user=p.lead)

    response = ApiClient(p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}",
        {"state": "suspect", "state_collection": theirs.pk},
    )

    refused_on(response, "state_collection")
    assert fresh(world.lb).state == "not_checked"


@pytest.mark.parametrize("field", ["label", "kind", "spec_a", "values_b", "state"])
def test_a_null_node_field_is_refused_by_name(world, field):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}", {field: None}
    )

    refused_on(response, field)
    assert fresh(world.lb).label == "lb"


@pytest.mark.parametrize("field", ["protocol", "tls", "reuse", "notes"])
def test_a_null_edge_field_is_refused_by_name(world, field):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/edges/{world.edge.pk}", {field: None}
    )

    refused_on(response, field)


@pytest.mark.parametrize("field", ["status", "notes", "na_reason"])
def test_a_null_checklist_field_is_refused_by_name(world, field):
    response = ApiClient(world.p.member).patch(f"{world.base}/checklist/ladder", {field: None})

    refused_on(response, field)


@pytest.mark.parametrize("port", [0, 65536, -1])
def test_a_port_outside_1_to_65535_is_named(world, port):
    client = ApiClient(world.p.member)

    created = client.post(
        f"{world.base}/path/edges", {"source": world.app.pk, "target": world.lb.pk, "port": port}
    )
    patched = client.patch(f"{world.base}/path/edges/{world.edge.pk}", {"port": port})

    refused_on(created, "port", 422)
    refused_on(patched, "port", 422)
    assert fresh(world.edge).port == 80


def test_an_edge_to_itself_or_twice_the_same_way_is_named(world):
    client = ApiClient(world.p.member)

    loop = client.post(f"{world.base}/path/edges", {"source": world.lb.pk, "target": world.lb.pk})
    twice = client.post(f"{world.base}/path/edges", {"source": world.lb.pk, "target": world.app.pk})

    refused_on(loop, "target")
    assert refused_on(twice, "target") == "These two nodes are already joined in this direction."
    assert PathEdge.objects.count() == 1


def test_an_edge_from_a_node_of_another_investigation_is_named(world):
    p = world.p
    other = investigation_create(team=p.team, user=p.lead, title="Second case")
    theirs = path_node_create(investigation=other, user=p.lead, kind="service", label="x")

    response = ApiClient(p.member).post(
        f"{world.base}/path/edges", {"source": theirs.pk, "target": world.lb.pk}
    )

    refused_on(response, "source")
    assert fields(response) == ["source"]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a -> -> b", "Column 6: expected a node name"),
        ("a", "Column 2: a path needs at least two nodes joined by '->'"),
        ("a -[tcp:0]-> b", "Column 5: the port must be 1-65535, not '0'"),
        ("router:x -> y", "Column 1: unknown kind 'router'"),
    ],
)
def test_a_line_that_does_not_parse_names_the_text_and_the_column(world, text, message):
    response = ApiClient(world.p.member).post(f"{world.base}/path/text", {"text": text})

    assert refused_on(response, "text").startswith(message)
    assert PathNode.objects.count() == 2


def test_a_line_with_a_label_too_long_names_the_text_and_the_column(world):
    response = ApiClient(world.p.member).post(
        f"{world.base}/path/text", {"text": "app -> " + "y" * 201}
    )

    assert refused_on(response, "text").startswith("Column 8: ")
    assert PathNode.objects.count() == 2


def test_an_unknown_checklist_key_is_not_found(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/checklist/no-such-step", {"status": "done"}
    )

    assert response.status_code == 404
    assert response.body["detail"]


def test_not_applicable_without_a_reason_is_named(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/checklist/ladder", {"status": "not_applicable"}
    )

    assert refused_on(response, "na_reason") == "Say why this step does not apply."
    assert ChecklistItem.objects.get(key="ladder").status == "todo"


@pytest.mark.parametrize("username", ["nobody", "otto"])
def test_an_unknown_or_outside_assignee_is_named(world, username):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/checklist/ladder", {"assignee": username}
    )

    refused_on(response, "assignee")
    assert ChecklistItem.objects.get(key="ladder").assignee is None


def test_an_assignee_that_does_not_exist_reads_as_one_outside_the_team(world):
    """Nobody learns from the answer which user names exist."""
    answers = [
        refused_on(
            ApiClient(world.p.member).patch(
                f"{world.base}/checklist/ladder", {"assignee": username}
            ),
            "assignee",
        )
        for username in ("nobody-at-all", "otto")  # otto exists, in another team
    ]

    assert answers[0] == answers[1] == "Assign a member of the investigation's team."


def test_an_unknown_status_is_named(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/checklist/ladder", {"status": "later"}
    )

    refused_on(response, "status", 422)


def test_a_step_title_too_long_is_named(world):
    response = ApiClient(world.p.member).post(f"{world.base}/checklist", {"title": "x" * 10_000})

    refused_on(response, "title")


# --- never a server error -------------------------------------------------------------------


def _bodies_with_nul(world):
    nul = "before\x00after"
    return [
        ("post", f"{world.base}/path/nodes", {"label": nul}, "label"),
        ("post", f"{world.base}/path/nodes", {"label": "x", "spec_a": nul}, "spec_a"),
        ("post", f"{world.base}/path/nodes", {"label": "x", "values_a": {"k": nul}}, "values_a"),
        ("post", f"{world.base}/path/nodes", {"label": "x", "values_b": {nul: "v"}}, "values_b"),
        ("patch", f"{world.base}/path/nodes/{world.lb.pk}", {"label": nul}, "label"),
        (
            "patch",
            f"{world.base}/path/nodes/{world.lb.pk}",
            {"state": "suspect", "state_note": nul},
            "state_note",
        ),
        ("patch", f"{world.base}/path/edges/{world.edge.pk}", {"notes": nul}, "notes"),
        ("post", f"{world.base}/path/text", {"text": f"a -> {nul}"}, "text"),
        ("post", f"{world.base}/checklist", {"title": nul}, "title"),
        ("patch", f"{world.base}/checklist/ladder", {"notes": nul}, "notes"),
        ("patch", f"{world.base}/checklist/ladder", {"assignee": nul}, "assignee"),
        ("patch", f"{world.base}/checklist/ladder", {"na_reason": nul}, "na_reason"),
    ]


def test_nul_characters_are_refused_by_name(world):
    client = ApiClient(world.p.member)
    before = state_of_the_case(world.investigation)

    for method, path, body, field in _bodies_with_nul(world):
        response = call(client, method, path, body)
        assert response.status_code == 422, (path, body, response.content[:300])
        assert fields(response)[0].startswith(field), (path, body, response.body)
    assert state_of_the_case(world.investigation) == before


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", "/api/investigations/{big}/path"),
        ("get", "/api/investigations/{big}/path/nodes"),
        ("post", "/api/investigations/{big}/path/text"),
        ("get", "/api/investigations/{big}/checklist"),
        ("patch", "/api/investigations/{inv}/path/nodes/{big}"),
        ("delete", "/api/investigations/{inv}/path/nodes/{big}"),
        ("patch", "/api/investigations/{inv}/path/edges/{big}"),
        ("delete", "/api/investigations/{inv}/path/edges/{big}"),
    ],
)
@pytest.mark.parametrize("big", [BIGGEST_ID, BIGGEST_ID + 1, 10**40, 0, -1])
def test_huge_ids_in_the_address_are_never_a_server_error(world, method, path, big):
    url = path.format(big=big, inv=world.investigation.pk)

    response = call(ApiClient(world.p.member), method, url, {"text": "a -> b"})

    assert 400 <= response.status_code < 500, (url, response.status_code)
    assert response.body["detail"]


@pytest.mark.parametrize("key", ["a%00b", "k" * 5000, "%F0%9F%94%A5", "..%2F..%2Fladder"])
def test_strange_checklist_keys_are_never_a_server_error(world, key):
    response = ApiClient(world.p.member).patch(f"{world.base}/checklist/{key}", {"status": "done"})

    assert 400 <= response.status_code < 500, (key, response.status_code)
    assert ChecklistItem.objects.get(key="ladder").status == "todo"


@pytest.mark.parametrize("big", [BIGGEST_ID, BIGGEST_ID + 1, 10**40, -1, 0])
def test_huge_ids_in_the_body_are_named_never_a_server_error(world, big):
    client = ApiClient(world.p.member)

    answers = {
        "source": client.post(f"{world.base}/path/edges", {"source": big, "target": world.lb.pk}),
        "hosts_a": client.post(f"{world.base}/path/nodes", {"label": "x", "hosts_a": [big]}),
        "state_collection": client.patch(
            f"{world.base}/path/nodes/{world.lb.pk}",
            {"state": "suspect", "state_collection": big},
        ),
    }

    for field, response in answers.items():
        assert 400 <= response.status_code < 500, (field, response.status_code)
        assert any(f.startswith(field) for f in fields(response)), (field, response.body)
    assert PathNode.objects.count() == 2 and fresh(world.lb).state == "not_checked"


@pytest.mark.parametrize("text", ["[]", '"label"', "42", "null", "true", "{", '[{"label": "x"}]'])
def test_a_body_that_is_not_a_json_object_is_refused(world, text):
    client = ApiClient(world.p.member)
    writes = [
        ("post", f"{world.base}/path/text"),
        ("post", f"{world.base}/path/nodes"),
        ("patch", f"{world.base}/path/nodes/{world.lb.pk}"),
        ("post", f"{world.base}/path/edges"),
        ("patch", f"{world.base}/path/edges/{world.edge.pk}"),
        ("post", f"{world.base}/checklist"),
        ("patch", f"{world.base}/checklist/ladder"),
    ]
    before = state_of_the_case(world.investigation)

    for method, path in writes:
        response = getattr(client.client, method)(
            path, data=text, content_type="application/json", headers=client.headers
        )
        assert response.status_code == 400, (path, response.status_code, response.content[:300])
        assert response.json()["detail"]
    assert state_of_the_case(world.investigation) == before


def test_a_link_too_long_for_its_column_is_refused_by_name(world):
    response = ApiClient(world.p.member).patch(
        f"{world.base}/path/nodes/{world.lb.pk}",
        {"state": "suspect", "state_link": "https://grafana.example/" + "d" * 2100},
    )

    refused_on(response, "state_link")
    assert fresh(world.lb).state == "not_checked"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"label": "x" * 10_000}, "label"),
        ({"label": "x", "spec_b": "s" * 2_001}, "spec_b"),
        ({"label": "x", "values_a": {f"k{i}": "v" for i in range(51)}}, "values_a"),
        ({"label": "x", "values_a": {"k": "v" * 1001}}, "values_a"),
        ({"label": "x", "values_a": {"k": 1}}, "values_a"),
        ({"label": "x", "hosts_a": "1"}, "hosts_a"),
        ({"label": ["x"]}, "label"),
        ({}, "label"),
    ],
)
def test_a_bad_node_body_is_refused_by_name(world, body, field):
    response = ApiClient(world.p.member).post(f"{world.base}/path/nodes", body)

    assert 400 <= response.status_code < 500
    assert fields(response)[0].startswith(field), response.body
    assert PathNode.objects.count() == 2


@pytest.mark.parametrize("text", HOSTILE_STRINGS[:-1])
def test_hostile_strings_are_kept_intact(world, text):
    client = ApiClient(world.p.member)

    node = client.post(
        f"{world.base}/path/nodes",
        {"label": text, "spec_a": text, "values_b": {"limit": text}},
    )
    state = client.patch(
        f"{world.base}/path/nodes/{node.body['id']}", {"state": "suspect", "state_note": text}
    )
    step = client.post(f"{world.base}/checklist", {"title": text})
    notes = client.patch(f"{world.base}/checklist/ladder", {"notes": text})

    assert (node.status_code, state.status_code, step.status_code, notes.status_code) == (
        201,
        200,
        201,
        200,
    )
    assert (state.body["label"], state.body["spec_a"], state.body["values_b"]) == (
        text,
        text,
        {"limit": text},
    )
    assert (state.body["state_note"], step.body["title"], notes.body["notes"]) == (text, text, text)
