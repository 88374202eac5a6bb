"""Strings that have broken other apps, typed into the page forms: kept intact, shown escaped."""

import pytest
from django.utils.html import escape

from investigations.choices import EventKind, SideKind
from investigations.models import Host, Investigation, Team, TimelineEvent
from investigations.services.inventory import host_create
from tests.conftest import HOSTILE_STRINGS, loaded_page

pytestmark = pytest.mark.django_db

IDS = ["markup", "sql", "shell", "cjk", "emoji", "ten-thousand"]
hostile = pytest.mark.parametrize("text", HOSTILE_STRINGS, ids=IDS)
NAME_LIMIT = 200


def page_of(response) -> str:
    assert response.status_code == 200, response.status_code
    return response.content.decode()


def assert_shown_escaped(page: str, text: str) -> None:
    assert escape(text) in page
    if escape(text) != text:
        assert text not in page
    # Nothing of the markup string may arrive as markup.
    assert "<script>alert" not in page
    assert "<img src=x" not in page


def edit_form(investigation, **overrides) -> dict:
    data = {
        "title": investigation.title,
        "severity": investigation.severity,
        "symptom_direction": investigation.symptom_direction,
    }
    data.update(overrides)
    return data


def new_form(team, **overrides) -> dict:
    data = {
        "team": team.pk,
        "title": "plain title",
        "severity": "sev3",
        "symptom_direction": "lower",
        "side_a_label": "A",
        "side_a_kind": SideKind.OTHER,
        "side_b_label": "B",
        "side_b_kind": SideKind.OTHER,
    }
    data.update(overrides)
    return data


def detail(personas, investigation) -> str:
    return loaded_page(personas.client(personas.viewer), f"/investigations/{investigation.pk}/")


@hostile
def test_a_title_is_kept_and_shown_escaped(personas, text):
    client = personas.client(personas.member)

    response = client.post("/investigations/new/", new_form(personas.team, title=text))

    assert response.status_code == 302
    investigation = Investigation.objects.exclude(pk=personas.investigation.pk).get()
    assert investigation.title == text
    assert_shown_escaped(detail(personas, investigation), text)
    assert_shown_escaped(page_of(client.get("/investigations/")), text)
    assert_shown_escaped(page_of(client.get(f"/investigations/{investigation.pk}/edit/")), text)


@hostile
def test_notes_are_kept_and_shown_escaped(personas, text):
    investigation = personas.investigation

    response = personas.client(personas.member).post(
        f"/investigations/{investigation.pk}/edit/", edit_form(investigation, notes=text)
    )

    assert response.status_code == 302
    investigation.refresh_from_db()
    assert investigation.notes == text
    assert_shown_escaped(detail(personas, investigation), text)


@hostile
def test_the_symptom_metric_is_kept_and_shown_escaped(personas, text):
    investigation = personas.investigation
    client = personas.client(personas.member)

    response = client.post(
        f"/investigations/{investigation.pk}/edit/", edit_form(investigation, symptom_metric=text)
    )

    assert response.status_code == 302
    investigation.refresh_from_db()
    assert investigation.symptom_metric == text
    assert_shown_escaped(detail(personas, investigation), text)
    assert_shown_escaped(page_of(client.get("/investigations/")), text)


@hostile
def test_the_symptom_load_is_kept_and_shown_escaped(personas, text):
    investigation = personas.investigation

    response = personas.client(personas.member).post(
        f"/investigations/{investigation.pk}/edit/",
        edit_form(investigation, symptom_metric="p99", symptom_value_a="1", symptom_load=text),
    )

    assert response.status_code == 302
    investigation.refresh_from_db()
    assert investigation.symptom_load == text
    assert_shown_escaped(detail(personas, investigation), text)


@hostile
def test_a_side_label_edited_on_the_page_is_kept_and_shown_escaped(personas, text):
    investigation = personas.investigation

    response = personas.client(personas.member).post(
        f"/investigations/{investigation.pk}/sides/a/", {"a-label": text, "a-kind": SideKind.VM}
    )

    assert response.status_code == 302
    assert investigation.sides.get(key="a").label == text
    page = detail(personas, investigation)
    assert_shown_escaped(page, text)
    # The timeline names the new label too.
    assert escape(f"Side A is now {text} (Virtual machine)") in page


@hostile
def test_a_side_label_given_when_opening_is_kept_and_shown_escaped(personas, text):
    response = personas.client(personas.member).post(
        "/investigations/new/", new_form(personas.team, side_b_label=text)
    )

    assert response.status_code == 302
    investigation = Investigation.objects.exclude(pk=personas.investigation.pk).get()
    assert investigation.sides.get(key="b").label == text
    assert_shown_escaped(detail(personas, investigation), text)


@hostile
def test_a_timeline_summary_is_kept_and_shown_escaped(personas, text):
    investigation = personas.investigation
    client = personas.client(personas.member)

    response = client.post(
        f"/investigations/{investigation.pk}/timeline/", {"kind": EventKind.NOTE, "summary": text}
    )

    assert response.status_code == 302
    assert TimelineEvent.objects.get(kind=EventKind.NOTE).summary == text
    assert_shown_escaped(detail(personas, investigation), text)
    partial = client.get(f"/investigations/{investigation.pk}/timeline/", HTTP_HX_REQUEST="true")
    assert_shown_escaped(page_of(partial), text)


@hostile
def test_a_timeline_summary_posted_with_htmx_comes_back_escaped(personas, text):
    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/timeline/",
        {"kind": EventKind.ACTION, "action": "fix", "summary": text},
        HTTP_HX_REQUEST="true",
    )

    assert TimelineEvent.objects.get(kind=EventKind.ACTION).summary == text
    assert_shown_escaped(page_of(response), text)


@hostile
def test_a_team_name_is_kept_and_shown_escaped_or_refused_when_too_long(personas, text):
    client = personas.client(personas.member)

    response = client.post("/teams/", {"name": text})

    if len(text) > NAME_LIMIT:
        page = page_of(response)
        assert "A team name has at most 200 characters." in page
        assert not Team.objects.filter(name=text).exists()
        assert Team.objects.count() == 2
        return
    team = Team.objects.get(name=text)
    assert response.status_code == 302
    assert_shown_escaped(page_of(client.get(f"/teams/{team.pk}/")), text)
    assert_shown_escaped(page_of(client.get("/teams/")), text)


@hostile
def test_a_host_name_is_kept_and_shown_escaped_or_refused_when_too_long(personas, text):
    client = personas.client(personas.member)
    data = {
        "team": personas.team.pk,
        "name": text,
        "address": "10.0.0.1",
        "port": "22",
        "username": "perf",
    }

    response = client.post("/hosts/", data, follow=True)

    if len(text) > NAME_LIMIT:
        page = page_of(response)
        assert "A host name has at most 200 characters." in page
        assert not Host.objects.exists()
        return
    host = Host.objects.get(name=text)
    assert_shown_escaped(page_of(response), text)  # the list, with "Host … added."
    assert_shown_escaped(page_of(client.get(f"/hosts/{host.pk}/")), text)


@hostile
def test_a_placed_host_name_is_shown_escaped_in_the_investigation(personas, text):
    host = host_create(
        team=personas.team, name=text[:NAME_LIMIT], address="10.0.0.1", port=22, username="perf"
    )

    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/members/",
        {"host": host.pk, "side": "a", "role": "service"},
    )

    assert response.status_code == 302
    assert_shown_escaped(detail(personas, personas.investigation), host.name)


@hostile
def test_a_search_is_echoed_escaped(personas, text):
    response = personas.client(personas.member).get("/investigations/", {"q": text})

    page = page_of(response)
    assert f'value="{escape(text)}"' in page
    if escape(text) != text:
        assert text not in page
