"""A kind is one descriptor: the registry names every kind's parts, the collection request's
schema is made from each kind's own form, and a kind registered from here (a trivial Plan
and form, no file of the app touched) appears everywhere registration alone should make it
appear: the collection request's kinds and schema, the plans, the checklist's steps, a root
cause's evidence, the postmortem and the kind's label."""

import pytest
from django import forms
from django.template import Context, Template
from django.urls import reverse

from investigations.api import api
from investigations.choices import CollectionKind, EvidenceKind
from investigations.kinds import (
    EvidenceSource,
    Kind,
    collected_kinds,
    evidence_kinds,
    kind_named,
    kinds,
    register,
    unregister,
)
from investigations.kinds.schema import form_schema
from investigations.models import RootCause, Side
from investigations.runs import plan_for, plans
from investigations.runs.base import Plan
from investigations.selectors.postmortem import postmortem_of
from investigations.selectors.root_causes import case_root_causes, offered_evidence
from investigations.services.checklist import checklist_steps
from investigations.services.knowledge import case_root_cause_confirm
from tests.conftest import ApiClient

COLLECTIONS = "/api/investigations/{}/collections"


def collection_schema() -> dict:
    return api.get_openapi_schema()["components"]["schemas"]["CollectionIn"]


def member_of(schema: dict, key: str) -> dict:
    (member,) = [m for m in schema["oneOf"] if m["properties"]["kind"]["enum"] == [key]]
    return member


# --- the kinds the app ships ---------------------------------------------------------------


def test_every_kind_the_app_had_is_registered_once():
    keys = [kind.key for kind in kinds()]

    assert len(keys) == len(set(keys))
    assert [k.key for k in collected_kinds()] == CollectionKind.values
    assert [k.key for k in evidence_kinds()] == EvidenceKind.values


def test_the_collection_schema_lists_every_registered_kinds_every_form_field():
    schema = collection_schema()

    assert schema["properties"]["kind"]["enum"] == [k.key for k in collected_kinds()]
    for kind in collected_kinds():
        member = member_of(schema, kind.key)
        assert set(kind.form.base_fields) <= set(member["properties"]), kind.key
        assert {"kind", "hosts"} <= set(member["properties"])


def test_the_schema_says_what_each_form_holds():
    schema = collection_schema()
    capture = member_of(schema, "capture")["properties"]
    profile = member_of(schema, "profile")
    baseline = member_of(schema, "baseline")["properties"]

    assert capture["seconds"] == {
        "type": "integer",
        "minimum": 1,
        "maximum": 300,
        "title": "Seconds",
        "description": "How long to capture (default 10, at most 300)",
    }
    assert profile["properties"]["call_graph"]["enum"] == ["fp", "dwarf", ""]
    assert profile["dependentRequired"] == {"ladder": ["step"], "step": ["ladder"]}
    assert baseline["suite"]["items"]["enum"] == ["compute", "memory", "disk", "network"]
    # Facts is the default kind: the only member whose kind may be left out.
    assert [m.get("required") for m in schema["oneOf"]] == [None] + [["kind"]] * 3


def test_every_kinds_part_it_names_exists():
    for kind in kinds():
        for pattern in kind.urls() if kind.urls else []:
            assert reverse(pattern.name, args=[1] * pattern.pattern.regex.groups) is not None
        assert not kind.checklist or set(kind.checklist) <= set(checklist_steps())
        assert kind.label and kind_named(kind.key) is kind


# --- a kind registered from a test ---------------------------------------------------------


class EchoParameters(forms.Form):
    words = forms.CharField(required=False, max_length=20, label="Words")
    times = forms.IntegerField(required=False, min_value=1, max_value=3)


class EchoPlan(Plan):
    kind = "echo"
    parameters_form = EchoParameters
    target_seconds = 10

    def run(self, run):
        return None

    def store(self, *, target, result) -> None:
        return None


def echo_section(investigation) -> list[str]:
    return [f"echoes of #{investigation.pk}"]


def echo_evidence(investigation):
    return None


@pytest.fixture
def echo():
    kind = register(
        Kind(
            key="echo",
            label="Echo",
            order=35,
            plan=EchoPlan,
            checklist={"echo_heard": echo_evidence},
            # Its evidence: a side of the case (any model of the case would do).
            evidence=EvidenceSource(
                model=Side,
                rows=lambda investigation: investigation.sides.all(),
                label=lambda side: f"echo of side {side.key}",
                url=lambda side: reverse("investigation_detail", args=[side.investigation_id]),
            ),
            postmortem=echo_section,
        )
    )
    yield kind
    unregister("echo")


def test_a_new_kind_is_collected_with_its_own_plan_and_form(echo):
    assert plan_for("echo").__class__ is EchoPlan
    assert "echo" in plans()
    assert [k.key for k in collected_kinds()] == ["facts", "profile", "capture", "echo", "baseline"]


def test_a_new_kinds_fields_are_in_the_collection_schema(echo):
    schema = collection_schema()

    assert "echo" in schema["properties"]["kind"]["enum"]
    assert member_of(schema, "echo")["properties"]["words"] == {
        "type": "string",
        "pattern": "^[^\\x00]*$",
        "maxLength": 20,
        "title": "Words",
    }
    assert member_of(schema, "echo")["properties"]["times"]["maximum"] == 3
    assert form_schema(EchoParameters)["properties"].keys() == {"words", "times"}


@pytest.mark.django_db
def test_the_collection_request_takes_a_new_kind_and_its_form_holds_its_fields(personas, echo):
    client = ApiClient(personas.member)
    url = COLLECTIONS.format(personas.investigation.pk)

    too_long = client.post(url, {"kind": "echo", "words": "x" * 21})
    no_hosts = client.post(url, {"kind": "echo", "words": "hello", "times": 2})
    unknown = client.post(url, {"kind": "astrology"})

    assert too_long.status_code == 400
    assert [e["field"] for e in too_long.body["errors"]] == ["words"]
    # Accepted as a kind: refused only because no host is placed on a side yet.
    assert no_hosts.status_code == 400
    assert no_hosts.body["errors"][0]["field"] == "hosts"
    assert unknown.status_code == 422
    assert "'echo'" in unknown.body["errors"][0]["message"]


@pytest.mark.django_db
def test_the_kinds_the_request_takes_are_the_registered_ones(personas):
    client = ApiClient(personas.member)

    unknown = client.post(COLLECTIONS.format(personas.investigation.pk), {"kind": "echo"})

    assert unknown.status_code == 422
    assert unknown.body["errors"] == [
        {"field": "kind", "message": "Input should be 'facts', 'profile', 'capture' or 'baseline'"}
    ]


@pytest.mark.django_db
def test_a_new_kind_is_evidence_of_a_root_cause_and_in_the_postmortem(personas, echo):
    investigation = personas.investigation
    side = investigation.sides.get(key="b")
    entry = RootCause.objects.order_by("pk").first()

    offered = offered_evidence(investigation=investigation)
    case_root_cause_confirm(
        investigation=investigation,
        user=personas.lead,
        root_cause=entry,
        evidence=[{"kind": "echo", "id": side.pk}],
    )
    (confirmed,) = case_root_causes(investigation=investigation)
    report = postmortem_of(investigation)

    assert [item.label for item in offered["echo"]] == ["echo of side a", "echo of side b"]
    assert [(e.kind, e.label) for e in confirmed.evidence] == [("echo", "echo of side b")]
    assert [(e.kind_label, e.label) for e in report.root_causes[0].evidence] == [
        ("Echo", "echo of side b")
    ]
    assert report.sections["echo"] == [f"echoes of #{investigation.pk}"]
    assert report.ladders == report.sections["ladder"]


def test_a_new_kind_completes_its_checklist_step_and_is_named_in_pages(echo):
    label = Template("{% load perfcase %}{{ kind|evidence_kind }}")

    assert checklist_steps()["echo_heard"] is echo_evidence
    assert label.render(Context({"kind": "echo"})) == "Echo"
    assert label.render(Context({"kind": "capture"})) == "Packet capture"
