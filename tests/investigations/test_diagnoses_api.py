"""Diagnosis runs through the JSON API: the contract, its defaults, who may, what is refused,
and the advance that starts each stage (no worker here: the advance is called as the task
would call it)."""

import pytest

from investigations.models import Collection, Diagnosis, Ladder, TimelineEvent
from investigations.services.diagnosis_stages import diagnosis_advance
from investigations.services.ladders import ladder_request
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

URL_A = "http://10.0.1.10:8080/checkout"
URL_B = "http://10.0.2.10:8080/checkout"
STAGE_KEYS = {"name", "status", "reason", "collections", "ladder"}


def start(personas, body=None, user=None):
    api = ApiClient(user or personas.member)
    return api.post(f"/api/investigations/{personas.investigation.pk}/diagnoses", body or {})


def test_it_starts_with_every_stage_in_the_methods_order(personas, ladder_hosts):
    created = start(personas)
    assert created.status_code == 202, created.body
    assert {"id", "status", "stages"} <= set(created.body)
    assert created.body["status"] == "queued"
    stages = created.body["stages"]
    assert [s["name"] for s in stages] == ["facts", "baseline", "ladder", "at_knee"]
    assert all(STAGE_KEYS <= set(s) for s in stages)
    assert stages[0] == {**stages[0], "status": "pending", "collections": [], "ladder": None}
    # No load given and no ladder on the case: the ladder stage says so at once.
    assert stages[2]["status"] == "skipped"
    assert "No load to run" in stages[2]["reason"]
    parameters = created.body["parameters"]
    assert parameters["seconds"] == 20 and parameters["budget_seconds"] == 900
    assert parameters["stages"] == ["facts", "baseline", "ladder", "at_knee"]
    followed = ApiClient(personas.viewer).get(f"/api/diagnoses/{created.body['id']}")
    assert followed.status_code == 200 and followed.body["id"] == created.body["id"]
    summaries = TimelineEvent.objects.values_list("summary", flat=True)
    assert any(s.startswith(f"Diagnosis #{created.body['id']} started") for s in summaries)


def test_the_load_defaults_to_the_cases_last_ladder(personas, ladder_hosts):
    ladder_request(
        investigation=personas.investigation,
        user=personas.member,
        side_a_url=URL_A,
        side_b_url=URL_B,
        steps=[5, 10, 20],
        step_seconds=7,
        tool="wrk",
    )
    created = start(personas, {"load": {"steps": [2, 4]}})
    assert created.status_code == 202, created.body
    load = created.body["parameters"]["load"]
    assert (load["side_a_url"], load["side_b_url"]) == (URL_A, URL_B)
    assert load["steps"] == [2, 4] and load["step_seconds"] == 7 and load["tool"] == "wrk"
    assert created.body["stages"][2]["status"] == "pending"


def test_it_is_for_the_team_only(personas, ladder_hosts):
    created = start(personas)
    outsider = ApiClient(personas.outsider)
    assert outsider.get(f"/api/diagnoses/{created.body['id']}").status_code == 404
    assert outsider.post(f"/api/diagnoses/{created.body['id']}/cancel", {}).status_code == 404
    assert start(personas, user=personas.outsider).status_code == 404
    assert start(personas, user=personas.viewer).status_code == 403
    assert ApiClient().get(f"/api/diagnoses/{created.body['id']}").status_code == 401


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"seconds": 0}, "seconds"),
        ({"budget_seconds": 5}, "budget_seconds"),
        ({"process_a": "java; rm -rf /"}, "process_a"),
        ({"load": {"side_a_url": "ftp://x", "side_b_url": URL_B, "steps": [1]}}, "side_a_url"),
        ({"load": {"side_a_url": URL_A, "side_b_url": URL_B, "steps": [4, 2]}}, "steps"),
        ({"load": {"side_a_url": URL_A, "steps": [1, 2]}}, "side_b_url"),
        ({"baseline": {"repeat": 99}}, "baseline"),
    ],
)
def test_it_refuses_bad_input_naming_the_field(personas, ladder_hosts, body, field):
    answer = start(personas, body)
    assert answer.status_code == 400, answer.body
    assert field in {e["field"] for e in answer.body["errors"]}, answer.body
    assert not Diagnosis.objects.exists()


def test_an_unknown_stage_is_refused(personas, ladder_hosts):
    assert start(personas, {"stages": ["facts", "guess"]}).status_code == 422


def test_stages_that_would_not_fit_the_budget_are_cut_and_named(personas, ladder_hosts):
    load = {"side_a_url": URL_A, "side_b_url": URL_B, "steps": [10, 20, 40], "step_seconds": 30}
    created = start(personas, {"load": load, "stages": ["facts", "ladder"], "budget_seconds": 60})
    assert created.status_code == 202, created.body
    facts, baseline, ladder, at_knee = created.body["stages"]
    assert facts["status"] == "pending"
    assert baseline["status"] == at_knee["status"] == "skipped"
    assert baseline["reason"] == "Not asked for."
    assert ladder["status"] == "skipped" and ladder["cut"], ladder
    assert ladder["reason"].startswith("Cut: it needs about")
    summaries = TimelineEvent.objects.values_list("summary", flat=True)
    assert any("Ladder cut to fit the budget" in s for s in summaries), list(summaries)


def test_the_advance_starts_each_stage_once(personas, ladder_hosts):
    created = start(personas, {"stages": ["facts", "ladder"]})
    diagnosis = Diagnosis.objects.get(pk=created.body["id"])
    diagnosis_advance(diagnosis_id=diagnosis.pk, tick=0)
    diagnosis.refresh_from_db()
    facts = diagnosis.stages[0]
    assert diagnosis.status == "running" and facts["status"] == "running"
    assert Collection.objects.get(pk__in=facts["collections"]).kind == "facts"
    # The same advance again (a redelivered task) does nothing.
    diagnosis_advance(diagnosis_id=diagnosis.pk, tick=0)
    assert Collection.objects.count() == 1
    assert Diagnosis.objects.get(pk=diagnosis.pk).tick == 1


def test_cancel_stops_what_it_started_and_ends_the_run(personas, ladder_hosts):
    load = {"side_a_url": URL_A, "side_b_url": URL_B, "steps": [2, 4], "step_seconds": 5}
    created = start(personas, {"load": load, "stages": ["ladder", "at_knee"]})
    diagnosis = Diagnosis.objects.get(pk=created.body["id"])
    diagnosis_advance(diagnosis_id=diagnosis.pk, tick=0)
    ladder_id = Diagnosis.objects.get(pk=diagnosis.pk).stages[2]["ladder"]
    assert ladder_id is not None
    api = ApiClient(personas.member)
    cancelled = api.post(f"/api/diagnoses/{diagnosis.pk}/cancel", {})
    assert cancelled.status_code == 200, cancelled.body
    assert cancelled.body["status"] == "cancelled"
    by_name = {s["name"]: s for s in cancelled.body["stages"]}
    assert by_name["ladder"]["status"] == by_name["at_knee"]["status"] == "cancelled"
    assert Ladder.objects.get(pk=ladder_id).cancel_requested_at is not None
    assert api.post(f"/api/diagnoses/{diagnosis.pk}/cancel", {}).status_code == 400
    # Its next advance finds it ended and starts nothing.
    diagnosis_advance(diagnosis_id=diagnosis.pk, tick=1)
    assert Ladder.objects.count() == 1
