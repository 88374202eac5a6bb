"""The case page's "Diagnose": the form (prefilled, kept when refused, errors beside their
fields), the run's stages live, cancel, by every persona, in Chinese too."""

import pytest
from django.utils import translation

from investigations.models import Diagnosis
from investigations.services.diagnoses import diagnosis_cancel, diagnosis_request
from investigations.services.ladders import ladder_request
from tests.conftest import loaded_page

pytestmark = pytest.mark.django_db

URL_A = "http://10.0.1.10:8080/checkout"
URL_B = "http://10.0.2.10:8080/checkout"


def case_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/"


def new_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/diagnoses/"


def form(**changes) -> dict:
    return {
        "diagnosis-stages": ["facts", "ladder"],
        "diagnosis-side_a_url": URL_A,
        "diagnosis-side_b_url": URL_B,
        "diagnosis-steps": "2, 4",
        "diagnosis-step_seconds": "5",
        "diagnosis-tool": "wrk",
        "diagnosis-seconds": "10",
        "diagnosis-process_a": "",
        "diagnosis-process_b": "",
        "diagnosis-budget_seconds": "900",
        **{f"diagnosis-{k}": v for k, v in changes.items()},
    }


def test_the_case_page_offers_diagnose_prefilled_from_the_last_ladder(personas, ladder_hosts):
    ladder_request(
        investigation=personas.investigation,
        user=personas.member,
        side_a_url=URL_A,
        side_b_url=URL_B,
        steps=[5, 10, 20],
        step_seconds=7,
    )
    page = loaded_page(personas.client(personas.member), case_url(personas))
    assert "<summary>Diagnose</summary>" in page
    assert f'name="diagnosis-side_a_url" value="{URL_A}"' in page
    assert 'name="diagnosis-steps" value="5, 10, 20"' in page
    assert 'name="diagnosis-step_seconds" value="7"' in page
    assert "No diagnosis yet." in page


def test_viewers_see_the_run_but_not_the_form(personas, ladder_hosts):
    diagnosis_request(investigation=personas.investigation, user=personas.member)
    page = loaded_page(personas.client(personas.viewer), case_url(personas))
    assert "Diagnosis #" in page and 'name="diagnosis-seconds"' not in page
    assert "Cancel the diagnosis" not in page


def test_a_responder_starts_one_and_follows_its_stages(personas, ladder_hosts):
    client = personas.client(personas.member)
    response = client.post(new_url(personas), form())
    diagnosis = Diagnosis.objects.get()
    assert response.status_code == 302
    assert response["Location"] == f"{case_url(personas)}#diagnosis"
    assert diagnosis.parameters["load"]["steps"] == [2, 4]
    assert diagnosis.parameters["stages"] == ["facts", "ladder"]
    assert diagnosis.requested_by == personas.member

    live = client.get(f"/diagnoses/{diagnosis.pk}/", HTTP_HX_REQUEST="true")
    assert live.status_code == 200
    text = live.content.decode()
    assert 'hx-trigger="every 2s"' in text and "left" in text
    assert "Host facts" in text and "Not asked for." in text
    assert "Cancel the diagnosis" in text

    diagnosis_cancel(diagnosis=diagnosis, user=personas.member)
    ended = client.get(f"/diagnoses/{diagnosis.pk}/", HTTP_HX_REQUEST="true")
    assert ended.status_code == 286  # htmx stops polling
    assert "hx-trigger" not in ended.content.decode()


def test_a_refused_form_keeps_what_was_typed_with_each_error_beside_its_field(
    personas, ladder_hosts
):
    client = personas.client(personas.member)
    response = client.post(
        new_url(personas),
        form(side_a_url="ftp://nowhere", steps="4, 2", process_b="java;rm"),
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 400
    text = response.content.decode()
    assert 'value="ftp://nowhere"' in text and 'value="4, 2"' in text
    assert 'value="java;rm"' in text
    fields = {
        chunk.split('name="diagnosis-', 1)[1].split('"', 1)[0]: chunk
        for chunk in text.split('<div class="field')[1:]
        if 'name="diagnosis-' in chunk
    }
    for field in ("side_a_url", "steps", "process_b"):
        assert fields[field].startswith(" has-error") and 'class="error"' in fields[field], field
    assert not fields["side_b_url"].startswith(" has-error")
    assert '<details class="diagnosis-new" open>' in text
    assert not Diagnosis.objects.exists()


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("outsider", 404)])
def test_only_responders_start_or_cancel_one(personas, ladder_hosts, who, status):
    client = personas.client(getattr(personas, who))
    assert client.post(new_url(personas), form()).status_code == status
    diagnosis = diagnosis_request(investigation=personas.investigation, user=personas.member)
    assert client.post(f"/diagnoses/{diagnosis.pk}/cancel/").status_code == status
    assert Diagnosis.objects.get().status == "queued"


def test_the_panel_reads_in_chinese(personas, ladder_hosts):
    diagnosis_request(investigation=personas.investigation, user=personas.member)
    client = personas.client(personas.member)
    with translation.override("zh-hans"):
        page = loaded_page(client, case_url(personas), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "诊断" in page
    assert "Diagnose" not in page and "Not asked for" not in page
