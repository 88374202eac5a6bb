"""What a newcomer hit on the first real case: each bug, as it was met (issue 10)."""

import re
from dataclasses import replace
from html import unescape
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from collectors.facts import FactsSnapshot
from collectors.loadresults import parse
from investigations.analysis.ladder import mark
from investigations.choices import EventKind, HostRole
from investigations.services.collections import collection_request
from investigations.services.facts import facts_store
from investigations.services.inventory import host_create, member_add
from investigations.services.ladder_imports import ladder_import
from investigations.services.ladder_results import ladder_claim, ladder_step_store
from investigations.services.ladders import ladder_request
from investigations.services.targets import target_claim
from tests.conftest import loaded_page
from tests.investigations.test_collections import place_local_hosts

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"
HX = {"HTTP_HX_REQUEST": "true"}


def page(response) -> str:
    return unescape(response.content.decode())


def between(text: str, start: str, end: str) -> str:
    """The part of the page from the first `start` to the next `end` after it."""
    begin = text.index(start)
    return text[begin : text.index(end, begin + len(start))]


def detail_url(personas) -> str:
    return reverse("investigation_detail", args=[personas.investigation.pk])


# --- 2. Form errors land beside their fields, in their own form, values kept ------------------


def test_placing_a_host_twice_shows_the_error_in_the_place_form_with_its_values(personas):
    host = host_create(
        team=personas.team, name="db-1", address="10.0.0.5", port=22, username="perf"
    )
    member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=host,
        side_key="a",
        role=HostRole.SERVICE,
    )
    client = personas.client(personas.member)

    response = client.post(
        reverse("member_new", args=[personas.investigation.pk]),
        {"host": host.pk, "side": "a", "role": HostRole.SERVICE},
    )

    assert response.status_code == 400
    text = page(response)
    form = between(text, 'id="member-form"', "</form>")
    assert "This host already has this role on this side" in form
    assert re.search(rf'<option value="{host.pk}" selected>', form)
    assert re.search(r'<option value="service" selected>', form)
    checklist = between(text, 'id="checklist"', "</section>")
    assert "already has this role" not in checklist


def test_an_empty_ladder_form_answers_beside_its_fields_and_keeps_what_was_typed(
    personas, ladder_hosts
):
    response = personas.client(personas.member).post(
        reverse("ladder_new", args=[personas.investigation.pk]),
        {"ladder-side_a_url": "http://10.0.1.10/x", "ladder-steps": "", "ladder-tool": "wrk"},
    )

    assert response.status_code == 400
    text = page(response)
    form = between(text, '<details class="ladder-new"', "</details>")
    assert form.startswith('<details class="ladder-new" open')
    assert 'value="http://10.0.1.10/x"' in form
    assert "This field is required." in form
    assert "This field is required." not in between(text, 'id="checklist"', "</section>")


def test_a_bad_import_names_the_file_in_the_import_form(personas):
    good = (DATA / "wrk-latency.txt").read_bytes()
    response = personas.client(personas.member).post(
        reverse("ladder_import", args=[personas.investigation.pk]),
        {
            "import-side": "a",
            "import-format": "wrk",
            "import-file": [
                SimpleUploadedFile("good.txt", good),
                SimpleUploadedFile("broken.txt", b"not wrk output\n"),
            ],
        },
    )

    assert response.status_code == 400
    form = between(page(response), '<details class="ladder-import"', "</details>")
    assert "broken.txt is not wrk output: it is text whose first line is " in form
    assert form.startswith('<details class="ladder-import" open')


def test_a_failed_checklist_change_keeps_the_typed_note_and_says_why_in_the_step(personas):
    item = personas.investigation.checklist.get(key="symptom")
    note = "p99 from the LB logs, 14:02–14:10"
    response = personas.client(personas.member).post(
        reverse("checklist_item", args=[item.pk]),
        {"status": "not_applicable", "status_was": item.status, "notes": note, "na_reason": ""},
        **HX,
    )

    assert response.status_code == 400
    step = between(page(response), f'id="item-{item.key}"', "</li>")
    assert "Say why this step does not apply." in step
    assert note in step
    assert '<details class="item-more" open>' in step


# --- 3. Import errors name the file -----------------------------------------------------------


def test_an_import_error_names_the_file_even_alone(personas):
    with pytest.raises(ValidationError) as caught:
        ladder_import(
            investigation=personas.investigation,
            user=personas.member,
            side_key="a",
            format="wrk",
            files=[("run-1.txt", b"garbage\n")],
        )
    assert caught.value.message_dict["file"][0].startswith("run-1.txt is not wrk output: ")


# --- 4. A running ladder's page shows each finished step --------------------------------------


def step_result(load: float, rps: float):
    (captured,) = parse("wrk", (DATA / "wrk-latency.txt").read_text())
    return replace(captured, load=float(load), rps=float(rps))


@pytest.fixture
def running_ladder(personas, ladder_hosts):
    ladder = ladder_request(
        investigation=personas.investigation,
        user=personas.member,
        side_a_url="http://10.0.1.10/",
        side_b_url="http://10.0.2.10/",
        steps=[10, 20, 50, 100, 200],
        step_seconds=30,
        warmup_seconds=5,
    )
    ladder_claim(ladder_id=ladder.pk, seconds=600)
    return ladder


def test_a_running_ladder_page_says_running_and_draws_no_verdict_before_a_step(
    personas, running_ladder
):
    client = personas.client(personas.member)
    text = page(client.get(reverse("ladder_detail", args=[running_ladder.pk])))

    head = between(text, "<h1>", "</h1>")
    assert "Running" in head and "Queued" not in head
    assert "No step has finished yet" in text
    assert "Knee of side" not in text


def test_a_running_ladder_shows_its_finished_steps_and_polls_for_more(personas, running_ladder):
    for key in "ab":
        side = running_ladder.sides.get(side__key=key)
        ladder_step_store(ladder_side=side, index=0, result=step_result(10, 900))
    client = personas.client(personas.member)
    url = reverse("ladder_detail", args=[running_ladder.pk])

    text = page(client.get(url))
    assert "No step has finished yet" not in text
    assert "not reached in the first step" in text
    assert "<th>10</th>" in between(text, '<table class="list ladder-table">', "</table>")
    version = re.search(r'\?v=([^"]+)"', text).group(1)

    assert client.get(url, {"v": version}, **HX).status_code == 204
    side = running_ladder.sides.get(side__key="a")
    ladder_step_store(ladder_side=side, index=1, result=step_result(20, 1800))
    again = client.get(url, {"v": version}, **HX)
    assert again.status_code == 200
    assert "<th>20</th>" in page(again)


# --- 7. One symmetric verdict ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b"), [(1.25, 1.0), (1.0, 1.25), (0.8, 1.0), (1.0, 0.8), (5.0, 4.0), (4.0, 5.0)]
)
def test_the_verdict_is_the_same_both_ways_round(a, b):
    there, back = (
        mark(a, b, higher_is_better=True, margin=0.2),
        mark(b, a, higher_is_better=True, margin=0.2),
    )
    assert there != "about equal" and back != "about equal"
    assert {there, back} == {"better", "worse"}


@pytest.mark.parametrize(("a", "b"), [(1.19, 1.0), (1.0, 1.19), (0.85, 1.0), (1.0, 0.85)])
def test_within_the_margin_both_ways_is_about_equal(a, b):
    assert mark(a, b, higher_is_better=True, margin=0.2) == "about equal"


def test_a_zero_differs_from_anything_but_zero():
    assert mark(0.0, 3.0, higher_is_better=True, margin=0.2) == "worse"
    assert mark(0.0, 0.0, higher_is_better=True, margin=0.2) == "about equal"


# --- 8. The empty state after a collection that found nothing -----------------------------------


def test_findings_say_nothing_differs_and_what_was_compared(personas):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    for target in collection.targets.select_related("collection__investigation", "host", "side"):
        target_claim(target_id=target.pk, seconds=60)
        facts_store(target=target, snapshot=FactsSnapshot(facts={"kernel.release": "6.1.0"}))

    response = personas.client(personas.member).get(
        reverse("investigation_panel", args=[personas.investigation.pk, "findings"]), **HX
    )

    text = page(response)
    assert "No findings yet" not in text
    assert "No differences found between the pairs." in text
    assert "app-a · app-b" in text


# --- 9. The timeline says why a step reopened -------------------------------------------------


def test_a_role_on_one_side_only_reopens_the_pairing_step_saying_so(personas):
    place_local_hosts(personas)
    lonely = host_create(
        team=personas.team, name="lg-a", address="10.0.0.9", port=22, username="perf"
    )
    member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=lonely,
        side_key="a",
        role=HostRole.LOAD_GENERATOR,
    )

    said = list(
        personas.investigation.events.filter(kind=EventKind.CHECKLIST).values_list(
            "summary", flat=True
        )
    )
    assert said[-1] == (
        "Checklist: 'Pair the environments' reopened: Load generator has a host on side A only, "
        "none on the other"
    )
    assert not any("evidence is gone" in s for s in said)


# --- Validation -----------------------------------------------------------------------------


def test_steps_that_do_not_step_up_are_refused(personas, ladder_hosts):
    with pytest.raises(ValidationError) as caught:
        ladder_request(
            investigation=personas.investigation,
            user=personas.member,
            side_a_url="http://10.0.1.10/",
            side_b_url="http://10.0.2.10/",
            steps=[100, 50, 10],
            step_seconds=30,
            warmup_seconds=5,
        )
    assert caught.value.message_dict["steps"] == [
        "A ladder steps up: give each load higher than the one before it."
    ]


def test_steps_below_one_are_refused_for_what_they_are_on_the_page(personas, ladder_hosts):
    response = personas.client(personas.member).post(
        reverse("ladder_new", args=[personas.investigation.pk]),
        {
            "ladder-side_a_url": "http://10.0.1.10/",
            "ladder-side_b_url": "http://10.0.2.10/",
            "ladder-steps": "0, -5, 10",
            "ladder-step_seconds": "30",
            "ladder-warmup_seconds": "5",
            "ladder-tool": "wrk",
            "ladder-stop_error_rate": "5",
            "ladder-margin": "20",
        },
    )

    assert response.status_code == 400
    assert response.context["ladder_form"].errors == {
        "steps": ["Each step is a whole number from 1 to 10,000."]
    }


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("title", "t" * 5_000, "Keep it to 200 characters (this is 5,000)."),
        ("symptom_value_a", -5, "The value on side A must be above zero (it was -5)."),
        ("symptom_value_b", 0, "The value on side B must be above zero (it was 0)."),
    ],
)
def test_impossible_investigation_values_are_refused_by_the_api_with_the_field(
    personas, field, value, message
):
    from tests.conftest import ApiClient

    response = ApiClient(personas.member).patch(
        f"/api/investigations/{personas.investigation.pk}", {field: value}
    )

    assert response.status_code == 400
    assert {"field": field, "message": message} in response.body["errors"]


def test_a_timeline_entry_over_its_limit_is_refused_on_the_page_and_the_api(personas):
    from tests.conftest import ApiClient

    text = "x" * 20_000
    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/timeline",
        {"kind": "note", "summary": text},
    )
    assert response.status_code == 400
    assert response.body["errors"][0]["field"] == "summary"
    assert "5,000" in response.body["errors"][0]["message"]


def test_a_note_with_an_action_type_is_refused(personas):
    from tests.conftest import ApiClient

    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/timeline",
        {"kind": "note", "action": "restart", "summary": "restarted"},
    )
    assert response.status_code == 400
    assert response.body["errors"][0]["field"] == "action"


def test_the_host_form_shows_every_error_at_once(personas):
    response = personas.client(personas.member).post(
        reverse("host_list"),
        {
            "team": personas.team.pk,
            "name": "",
            "address": "not an address!",
            "port": "",
            "username": "root;reboot",
        },
    )

    errors = response.context["form"].errors
    assert set(errors) == {"name", "address", "port", "username"}


def test_a_host_on_this_machine_needs_no_address_port_or_user(personas, settings):
    settings.LOCAL_TRANSPORT = True
    response = personas.client(personas.member).post(
        reverse("host_list"), {"team": personas.team.pk, "name": "here", "transport": "local"}
    )

    assert response.status_code == 302
    listing = page(personas.client(personas.member).get(reverse("host_list")))
    row = between(listing, ">here<", "</tr>")
    assert "this machine" in row and "@" not in row


@pytest.mark.parametrize(
    "typed",
    ["order-api-7", "openjdk 17", "LB shows 502s", "governor", "conntrack table full"],
)
def test_search_finds_what_people_typed_anywhere_in_a_case(personas, typed):
    from django.utils import timezone

    from investigations.models import Finding
    from investigations.services.path import path_from_text, path_node_update
    from investigations.services.timeline import timeline_entry_add

    nodes = path_from_text(
        investigation=personas.investigation, user=personas.lead, text="lb -> order-api-7"
    )
    path_node_update(node=nodes[1], user=personas.lead, spec_a="openjdk 17, -Xmx6g")
    timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind="note",
        summary="LB shows 502s from 14:02",
    )
    now = timezone.now()
    Finding.objects.create(
        investigation=personas.investigation,
        rule="cpu.governor",
        pair_key="1:2",
        severity="high",
        title="CPU governor differs",
        explanation="powersave on A",
        first_seen_at=now,
        last_seen_at=now,
    )
    checklist = personas.investigation.checklist.get(key="path")
    checklist.notes = "conntrack table full on the LB"
    checklist.save()

    response = personas.client(personas.member).get(reverse("investigation_list"), {"q": typed})

    assert personas.investigation.title in page(response)


def test_search_leaves_out_cases_that_do_not_mention_it(personas):
    response = personas.client(personas.member).get(
        reverse("investigation_list"), {"q": "no case mentions this"}
    )

    assert personas.investigation.title not in page(response)


def test_the_path_add_forms_are_closed_until_asked_for_or_failed(personas):
    client = personas.client(personas.member)
    url = reverse("investigation_detail", args=[personas.investigation.pk])

    closed = loaded_page(client, url)
    assert '<details class="path-add">' in closed

    failed = page(
        client.post(
            reverse("path_node_new", args=[personas.investigation.pk]),
            {"node-kind": "service", "node-label": ""},
            **HX,
        )
    )
    assert '<details class="path-add" open>' in failed
