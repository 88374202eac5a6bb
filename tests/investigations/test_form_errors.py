"""Every form taken through views/forms.py `submit`: a bad value answers 400 with the form
drawn again where it lives, the error under its own field in its own card, what was typed
kept, the form open (issue 24, bug 1: the start forms lost all three)."""

import re

import pytest
from django.http import HttpResponse
from django.urls import reverse
from django.utils.html import escape

from investigations.forms import ChecklistAddForm
from investigations.models import Collection, Ladder
from investigations.views.forms import submit
from tests.forms import error_in_card, field_card
from tests.investigations.test_collections import place_local_hosts

# kind, the field given a bad value, that value, what the field's card says, the panel and
# the <details> the form lives in (None: the form is not folded).
START_FORMS = [
    (
        "capture",
        "filter",
        "tcp port 8899 and",
        "tcpdump cannot compile this filter",
        "captures",
        "capture-new",
    ),
    (
        "profile",
        "seconds",
        "500",
        "Ensure this value is less than or equal to 120.",
        "profiles",
        "profile-new",
    ),
    (
        "baseline",
        "scratch_dir",
        "/dev/shm/../sda",
        "no .. and no spaces",
        "baseline",
        "baseline-new",
    ),
    ("facts", "service", "java; rm -rf /", "A process name", "evidence", None),
]
IDS = [form[0] for form in START_FORMS]


def _page(response) -> str:
    return response.content.decode()


@pytest.fixture
def placed(personas):
    place_local_hosts(personas)
    return personas


@pytest.mark.parametrize("kind, field, value, message, panel, details", START_FORMS, ids=IDS)
def test_a_start_form_with_a_bad_value_answers_the_page_with_the_error_under_its_field(
    placed, kind, field, value, message, panel, details
):
    url = reverse("collection_new", args=[placed.investigation.pk])

    response = placed.client(placed.member).post(url, {"kind": kind, field: value})

    page = _page(response)
    assert response.status_code == 400
    card = field_card(page, field, form=f"{kind}-")
    assert 'class="field has-error"' in card and escape(message) in card
    assert f'value="{escape(value)}"' in card  # what was typed, kept
    if details:
        assert re.search(rf'<details class="{details}"[^>]*\sopen>', page)  # the form open
    # No banner at the top: the error is the field's, and only there.
    assert page.count(escape(message)) == 1
    assert not Collection.objects.exists()


@pytest.mark.parametrize("kind, field, value, message, panel, details", START_FORMS, ids=IDS)
def test_a_start_form_sent_by_htmx_answers_its_panel_again(
    placed, kind, field, value, message, panel, details
):
    url = reverse("collection_new", args=[placed.investigation.pk])

    response = placed.client(placed.member).post(
        url, {"kind": kind, field: value}, headers={"HX-Request": "true"}
    )

    page = _page(response)
    assert response.status_code == 400
    assert page.lstrip().startswith(f'<section class="card" id="{panel}"')
    assert error_in_card(page, field, escape(message), form=f"{kind}-")
    assert "HX-Request" in response["Vary"]


def test_a_start_form_without_errors_still_starts_the_collection(placed):
    url = reverse("collection_new", args=[placed.investigation.pk])

    response = placed.client(placed.member).post(url, {"kind": "facts", "service": "java"})

    assert response.status_code == 302
    assert response["Location"].endswith("#evidence")
    assert Collection.objects.count() == 1


def test_the_ladder_form_with_a_bad_value_is_shown_open_with_the_error_and_the_values(placed):
    url = reverse("ladder_new", args=[placed.investigation.pk])
    data = {
        "ladder-side_a_url": "http://a.example/",
        "ladder-side_b_url": "http://b.example/",
        "ladder-steps": "ten twenty",
        "ladder-load_kind": "connections",
        "ladder-step_seconds": "5",
        "ladder-warmup_seconds": "1",
        "ladder-tool": "wrk",
    }

    response = placed.client(placed.member).post(url, data)

    page = _page(response)
    assert response.status_code == 400
    assert 'class="field has-error"' in field_card(page, "ladder-steps")
    assert 'value="ten twenty"' in field_card(page, "ladder-steps")
    assert 'value="http://a.example/"' in field_card(page, "ladder-side_a_url")
    assert 'value="http://b.example/"' in field_card(page, "ladder-side_b_url")
    assert re.search(r'<details class="ladder-new"\s*open>', page)
    assert not Ladder.objects.exists()


def test_a_services_error_goes_under_the_field_it_names(placed):
    """The form is valid; the service refuses (the host already has this role there)."""
    host = placed.investigation.members.select_related("host").first().host
    url = reverse("member_new", args=[placed.investigation.pk])

    response = placed.client(placed.member).post(
        url, {"host": host.pk, "side": "a", "role": "service"}
    )

    assert response.status_code == 400
    assert error_in_card(_page(response), "host", "This host already has this role on this side.")


def test_a_form_on_a_page_of_its_own_answers_that_page_with_400(personas):
    response = personas.client(personas.member).post(reverse("host_list"), {"name": "web 1"})

    assert response.status_code == 400
    assert 'value="web 1"' in field_card(_page(response), "name")


def test_submit_calls_the_service_with_the_cleaned_values_then_done(db):
    calls = []
    answer = submit(
        ChecklistAddForm({"step-title": "  Check the MTU  "}),
        lambda data: calls.append(data["title"]) or "made",
        done=lambda made: HttpResponse(made),
        failed=lambda form: HttpResponse("again"),
    )

    assert (answer.status_code, answer.content, calls) == (200, b"made", ["Check the MTU"])


def test_submit_answers_400_with_a_service_error_on_its_field(db):
    from django.core.exceptions import ValidationError

    def refuse(data):
        raise ValidationError({"title": "Already on the list.", "other": "Not a field."})

    forms_seen = []
    answer = submit(
        ChecklistAddForm({"step-title": "MTU"}),
        refuse,
        done=lambda made: HttpResponse("made"),
        failed=lambda form: forms_seen.append(form) or HttpResponse("again"),
    )

    (form,) = forms_seen
    assert answer.status_code == 400
    assert form.errors["title"] == ["Already on the list."]
    assert form.non_field_errors() == ["Not a field."]
    assert form["title"].value() == "MTU"


def test_submit_never_calls_the_service_for_an_invalid_form(db):
    answer = submit(
        ChecklistAddForm({"step-title": ""}),
        lambda data: pytest.fail("the service was called"),
        done=lambda made: HttpResponse("made"),
        failed=lambda form: HttpResponse("again"),
    )

    assert answer.status_code == 400
