"""Verifying a fix: a ladder run again with the same settings (`POST /api/ladders/{id}/rerun`),
the two runs compared (`GET /api/ladders/{id}/compare?with=`), the checklist's step, the
ladder's page, the postmortem and the timeline. Results are stored as a worker would store
them, without running load; the last test reruns a short real ladder (hey on sshd test
hosts, through a real worker)."""

from dataclasses import replace
from html import unescape
from pathlib import Path

import pytest

from collectors.loadresults import parse
from investigations.analysis.ladder import Point
from investigations.analysis.ladder_compare import compare
from investigations.choices import HostRole, ItemStatus, LadderStatus
from investigations.models import ChecklistItem, EnvironmentMember, Ladder
from investigations.services.inventory import host_create, member_add
from investigations.services.investigations import investigation_create
from investigations.services.ladder_imports import ladder_import
from investigations.services.ladder_results import (
    ladder_claim,
    ladder_side_finish,
    ladder_step_store,
)
from investigations.services.ladders import ladder_request
from tests.conftest import ApiClient, wait_for
from tests.ladders import require
from tests.loadservers import http_server

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"
URL_A = "http://10.0.1.10:8080/checkout"
URL_B = "https://10.0.2.10/checkout"
LOADS = [10, 20, 50]
# Requests/s per load: B scales, A stops at 20 (a gap of 150 % at 50).
BEFORE = {"a": [1000, 1900, 2000], "b": [1000, 2000, 5000]}
CLOSED = {"a": [1000, 2000, 4800], "b": [1000, 2000, 5000]}  # 4 % apart: within 20 %
NARROWED = {"a": [1000, 2000, 3500], "b": [1000, 2000, 5000]}  # 43 %
UNCHANGED = {"a": [1000, 1900, 2100], "b": [1000, 2000, 5000]}  # 138 %
WIDER = {"a": [1000, 1500, 1000], "b": [1000, 2000, 5000]}  # 400 %
WRK = parse("wrk", (DATA / "wrk-latency.txt").read_text())[0]


def start(personas, user=None) -> Ladder:
    return ladder_request(
        investigation=personas.investigation,
        user=user or personas.member,
        side_a_url=URL_A,
        side_b_url=URL_B,
        steps=LOADS,
        step_seconds=7,
        warmup_seconds=2,
        tool="hey",
        stop_p99_ms=900.0,
        margin=0.2,
    )


def run(ladder: Ladder, shapes: dict, capture_callbacks) -> Ladder:
    """The ladder's steps stored as its run would store them, then both sides ended."""
    ladder_claim(ladder_id=ladder.pk, seconds=600)
    for key, rps in shapes.items():
        side = ladder.sides.get(side__key=key)
        for index, (load, value) in enumerate(zip(LOADS, rps, strict=True)):
            ladder_step_store(
                ladder_side=side,
                index=index,
                result=replace(
                    WRK,
                    load=float(load),
                    rps=float(value),
                    requests=5000,
                    latency_ms={**WRK.latency_ms, "p99": 10.0, "p50": 2.0},
                ),
            )
    with capture_callbacks(execute=True):
        for side in ladder.sides.all():
            ladder_side_finish(side_id=side.pk, status=LadderStatus.COMPLETED)
    ladder.refresh_from_db()
    return ladder


@pytest.fixture
def before(personas, ladder_hosts, django_capture_on_commit_callbacks) -> Ladder:
    return run(start(personas), BEFORE, django_capture_on_commit_callbacks)


def rerun_api(personas, ladder, who="member"):
    return ApiClient(getattr(personas, who)).post(f"/api/ladders/{ladder.pk}/rerun")


def rerun_with(personas, ladder, shapes, capture_callbacks) -> Ladder:
    response = rerun_api(personas, ladder)
    assert response.status_code == 201, response.body
    return run(Ladder.objects.get(pk=response.body["id"]), shapes, capture_callbacks)


def root_cause_item(personas) -> ChecklistItem:
    return ChecklistItem.objects.get(investigation=personas.investigation, key="root_cause")


# --- POST /api/ladders/{id}/rerun -----------------------------------------------------------


def test_a_rerun_is_a_new_ladder_with_the_same_settings(personas, before):
    response = rerun_api(personas, before)

    assert response.status_code == 201, response.body
    body = response.body
    assert body["rerun_of"] == before.pk and body["id"] != before.pk
    assert body["status"] == "queued" and body["results"] == []
    rerun = Ladder.objects.get(pk=body["id"])
    settings = (
        "tool",
        "steps",
        "load_kind",
        "step_seconds",
        "warmup_seconds",
        "stop_error_rate",
        "stop_p99_ms",
        "margin",
    )
    assert [getattr(rerun, name) for name in settings] == [
        getattr(before, name) for name in settings
    ]
    assert [(s["side"], s["url"], s["load_generator"]) for s in body["sides"]] == [
        ("a", URL_A, "load-generator-a"),
        ("b", URL_B, "load-generator-b"),
    ]
    assert rerun.rerun_of == before and rerun.requested_by == personas.member
    event = personas.investigation.events.filter(kind="ladder").latest("occurred_at")
    assert event.summary.startswith(
        f"Ladder #{before.pk} run again to verify the fix: Ladder started: 10, 20, 50"
    )
    assert event.details["rerun_of"] == before.pk


def test_the_ladder_api_names_what_a_ladder_reruns(personas, before):
    rerun_id = rerun_api(personas, before).body["id"]
    client = ApiClient(personas.viewer)

    assert client.get(f"/api/ladders/{before.pk}").body["rerun_of"] is None
    assert client.get(f"/api/ladders/{rerun_id}").body["rerun_of"] == before.pk


def test_a_rerun_runs_on_the_same_load_generators_not_the_first_placed(
    personas, before, ladder_hosts
):
    # Another load generator placed on side A, named first: the rerun keeps the original.
    other = host_create(
        team=personas.team, name="a-first-gen", address="10.0.1.99", port=22, username="perf"
    )
    member_add(
        investigation=personas.investigation,
        user=personas.lead,
        host=other,
        side_key="a",
        role=HostRole.LOAD_GENERATOR,
    )

    body = rerun_api(personas, before).body

    assert body["sides"][0]["load_generator"] == "load-generator-a"


def test_a_running_ladder_is_not_rerun(personas, ladder_hosts):
    ladder = start(personas)
    ladder_claim(ladder_id=ladder.pk, seconds=600)

    response = rerun_api(personas, ladder)

    assert response.status_code == 409, response.body
    assert response.body["detail"] == (
        f"Ladder #{ladder.pk} is still running: run it again once it has ended."
    )
    assert Ladder.objects.count() == 1


def test_imported_results_are_not_rerun(personas):
    imported = ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="wrk",
        files=[("wrk.txt", (DATA / "wrk-latency.txt").read_bytes())],
    )

    response = rerun_api(personas, imported)

    assert response.status_code == 400, response.body
    assert response.body["errors"][0]["field"] == "ladder"
    assert "imported from elsewhere" in response.body["detail"]
    assert Ladder.objects.count() == 1


def test_a_load_generator_taken_off_its_side_is_named(personas, before, ladder_hosts):
    EnvironmentMember.objects.filter(host=ladder_hosts[("b", HostRole.LOAD_GENERATOR)]).delete()

    response = rerun_api(personas, before)

    assert response.status_code == 400
    assert response.body["errors"] == [
        {
            "field": "load_generator",
            "message": "load-generator-b is no longer a load generator on side B: place it "
            "there again to run the same ladder.",
        }
    ]


@pytest.mark.parametrize(
    ("who", "status"), [("viewer", 403), ("outsider", 404), ("anonymous", 401)]
)
def test_others_may_not_rerun(personas, before, who, status):
    client = ApiClient(None if who == "anonymous" else getattr(personas, who))

    response = client.post(f"/api/ladders/{before.pk}/rerun")

    assert response.status_code == status
    assert Ladder.objects.count() == 1


# --- GET /api/ladders/{id}/compare ----------------------------------------------------------


@pytest.mark.parametrize(
    ("after", "verdict", "gap_after"),
    [
        (CLOSED, "closed", 5000 / 4800 - 1),
        (NARROWED, "narrowed", 5000 / 3500 - 1),
        (UNCHANGED, "unchanged", 5000 / 2100 - 1),
        (WIDER, "wider", 4.0),
    ],
)
def test_compare_gives_each_verdict(
    personas, before, after, verdict, gap_after, django_capture_on_commit_callbacks
):
    rerun = rerun_with(personas, before, after, django_capture_on_commit_callbacks)

    response = ApiClient(personas.viewer).get(f"/api/ladders/{rerun.pk}/compare?with={before.pk}")

    assert response.status_code == 200, response.body
    body = response.body
    assert body["verdict"] == verdict
    assert (body["before"], body["after"], body["load"], body["margin"]) == (
        before.pk,
        rerun.pk,
        50,
        0.2,
    )
    assert body["gap_before"] == pytest.approx(1.5)
    assert body["gap_after"] == pytest.approx(gap_after)
    assert [
        (s["load"], s["a_before"], s["a_after"], s["b_before"], s["b_after"]) for s in body["steps"]
    ] == [
        (load, BEFORE["a"][i], after["a"][i], BEFORE["b"][i], after["b"][i])
        for i, load in enumerate(LOADS)
    ]
    assert body["reason"].startswith("at 50 ")


def test_compare_is_the_same_both_ways_round(personas, before, django_capture_on_commit_callbacks):
    rerun = rerun_with(personas, before, NARROWED, django_capture_on_commit_callbacks)
    client = ApiClient(personas.viewer)

    one = client.get(f"/api/ladders/{rerun.pk}/compare?with={before.pk}").body
    other = client.get(f"/api/ladders/{before.pk}/compare?with={rerun.pk}").body

    assert one == other and one["before"] == before.pk


def test_compare_matches_steps_by_load(personas, before, django_capture_on_commit_callbacks):
    # The rerun's side B broke at 20: its 50 is missing, so the runs compare at 20.
    rerun = Ladder.objects.get(pk=rerun_api(personas, before).body["id"])
    ladder_claim(ladder_id=rerun.pk, seconds=600)
    for key, loads in {
        "a": [(10, 1000), (20, 2000), (50, 2000)],
        "b": [(10, 1000), (20, 2000)],
    }.items():
        side = rerun.sides.get(side__key=key)
        for index, (load, rps) in enumerate(loads):
            ladder_step_store(
                ladder_side=side, index=index, result=replace(WRK, load=float(load), rps=float(rps))
            )

    body = ApiClient(personas.viewer).get(f"/api/ladders/{rerun.pk}/compare?with={before.pk}").body

    assert body["load"] == 20 and body["verdict"] == "closed"
    assert body["steps"][2] == {
        **body["steps"][2],
        "load": 50,
        "a_after": 2000,
        "b_after": None,
        "gap_after": None,
    }


def test_compare_with_nothing_in_common_has_no_verdict(personas, before):
    rerun = Ladder.objects.get(pk=rerun_api(personas, before).body["id"])

    body = ApiClient(personas.viewer).get(f"/api/ladders/{rerun.pk}/compare?with={before.pk}").body

    assert body["verdict"] is None and body["load"] is None and body["gap_after"] is None
    assert body["reason"] == (
        "no load has results from both sides in both runs: nothing to compare"
    )


@pytest.mark.parametrize(
    ("query", "status"),
    [("", 422), ("?with=abc", 422), ("?with=0", 422), ("?with=999999", 404)],
)
def test_a_bad_with_is_refused(personas, before, query, status):
    response = ApiClient(personas.viewer).get(f"/api/ladders/{before.pk}/compare{query}")

    assert response.status_code == status, response.body
    assert response.body["detail"]


def test_a_ladder_is_not_compared_with_itself(personas, before):
    response = ApiClient(personas.viewer).get(f"/api/ladders/{before.pk}/compare?with={before.pk}")

    assert response.status_code == 400
    assert response.body["errors"][0]["field"] == "with"


def test_a_ladder_of_another_case_is_404(personas, before, ladder_hosts):
    other_case = investigation_create(team=personas.team, user=personas.lead, title="Other")
    other = Ladder.objects.create(investigation=other_case, steps=LOADS)

    response = ApiClient(personas.lead).get(f"/api/ladders/{before.pk}/compare?with={other.pk}")

    assert response.status_code == 404


@pytest.mark.parametrize(("who", "status"), [("outsider", 404), ("anonymous", 401)])
def test_others_may_not_compare(personas, before, who, status):
    client = ApiClient(None if who == "anonymous" else getattr(personas, who))
    rerun_id = rerun_api(personas, before).body["id"]

    response = client.get(f"/api/ladders/{rerun_id}/compare?with={before.pk}")

    assert response.status_code == status


def test_the_gap_counts_p99_as_divergence_does():
    # A rate ladder holds the requests/s: only the p99 tells the sides apart.
    def points(p99_a, p99_b):
        return {
            "a": [Point(0, 100, 100, 1, p99_a, 0)],
            "b": [Point(0, 100, 100, 1, p99_b, 0)],
        }

    comparison = compare(points(300, 100), points(110, 100), 0.2)

    assert comparison.verdict == "closed"
    assert comparison.gap_before == pytest.approx(2.0)
    assert comparison.gap_after == pytest.approx(0.1)
    assert compare(points(300, 100), points(290, 100), 0.2).verdict == "unchanged"


# --- the checklist, the timeline -------------------------------------------------------------


def test_a_closed_rerun_completes_the_step_and_a_later_open_one_reopens_it(
    personas, before, django_capture_on_commit_callbacks
):
    assert root_cause_item(personas).status == ItemStatus.TODO

    closed = rerun_with(personas, before, CLOSED, django_capture_on_commit_callbacks)

    item = root_cause_item(personas)
    assert (item.status, item.auto) == (ItemStatus.DONE, True)
    assert item.evidence == (
        f"ladder #{closed.pk}, run again after the fix, against #{before.pk}: the gap is closed"
    )
    events = list(personas.investigation.events.values_list("summary", flat=True))
    assert any(
        e.startswith(f"Fix verification: ladder #{closed.pk} against #{before.pk}: at 50")
        and e.endswith("the gap is closed")
        for e in events
    ), events

    later = rerun_with(personas, closed, WIDER, django_capture_on_commit_callbacks)

    item = root_cause_item(personas)
    assert item.status == ItemStatus.TODO
    reopened = personas.investigation.events.filter(kind="checklist").latest("occurred_at")
    assert reopened.summary == (
        "Checklist: 'Name the root cause and verify the fix' reopened: "
        f"ladder #{later.pk}, run again after the fix, against #{closed.pk}: the gap is wider"
    )


def test_an_open_rerun_does_not_complete_the_step(
    personas, before, django_capture_on_commit_callbacks
):
    rerun_with(personas, before, NARROWED, django_capture_on_commit_callbacks)

    assert root_cause_item(personas).status == ItemStatus.TODO


# --- the pages -------------------------------------------------------------------------------


def test_the_ladder_page_offers_a_rerun_to_responders(personas, before):
    for who, offered in (("member", True), ("viewer", False)):
        page = personas.client(getattr(personas, who)).get(f"/ladders/{before.pk}/").content
        assert (f'action="/ladders/{before.pk}/rerun/"'.encode() in page) is offered


def test_the_rerun_button_starts_the_rerun_and_shows_it(personas, before):
    client = personas.client(personas.member)

    response = client.post(f"/ladders/{before.pk}/rerun/")

    rerun = Ladder.objects.get(rerun_of=before)
    assert response.status_code == 302 and response["Location"] == f"/ladders/{rerun.pk}/"
    page = unescape(client.get(response["Location"]).content.decode())
    assert (
        f'Runs <a href="/ladders/{before.pk}/">ladder #{before.pk}</a> again with the same '
        "settings." in page
    )
    assert f"runs ladder #{before.pk} again with the same settings" in page
    assert f'action="/ladders/{rerun.pk}/rerun/"' not in page  # still queued


def test_a_refused_rerun_says_why_on_the_page(personas, ladder_hosts):
    ladder = start(personas)
    client = personas.client(personas.member)

    response = client.post(f"/ladders/{ladder.pk}/rerun/", follow=True)

    assert "is still running: run it again once it has ended." in unescape(
        response.content.decode()
    )
    assert Ladder.objects.count() == 1


def test_the_rerun_page_shows_both_runs_and_the_verdict(
    personas, before, django_capture_on_commit_callbacks
):
    rerun = rerun_with(personas, before, NARROWED, django_capture_on_commit_callbacks)

    page = unescape(personas.client(personas.viewer).get(f"/ladders/{rerun.pk}/").content.decode())

    assert f"Before and after the fix: ladder #{before.pk} and #{rerun.pk}" in page
    assert "The gap narrowed but is not closed." in page
    assert "narrowed from 150% to 43%" in page
    assert 'data-chart="chart-compare-throughput"' in page
    assert 'id="compare-throughput"' in page and 'id="compare-latency"' in page
    assert f"A · VM #{before.pk}" in page or f"#{before.pk}" in page
    original = unescape(
        personas.client(personas.viewer).get(f"/ladders/{before.pk}/").content.decode()
    )
    assert f'href="/ladders/{rerun.pk}/">#{rerun.pk}</a>' in original


def test_the_rerun_page_in_chinese(personas, before, django_capture_on_commit_callbacks):
    rerun = rerun_with(personas, before, CLOSED, django_capture_on_commit_callbacks)

    page = personas.client(personas.viewer).get(
        f"/ladders/{rerun.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans"
    )

    text = unescape(page.content.decode())
    assert "Before and after the fix" not in text and "The gap is closed." not in text
    assert "差距已消除" in text


def test_the_postmortem_shows_the_latest_rerun(
    personas, before, django_capture_on_commit_callbacks
):
    first = rerun_with(personas, before, NARROWED, django_capture_on_commit_callbacks)
    latest = rerun_with(personas, first, CLOSED, django_capture_on_commit_callbacks)
    client = personas.client(personas.viewer)
    pk = personas.investigation.pk

    page = unescape(client.get(f"/investigations/{pk}/postmortem/").content.decode())
    printed = unescape(client.get(f"/investigations/{pk}/postmortem/print/").content.decode())
    markdown = client.get(f"/investigations/{pk}/postmortem.md").content.decode()

    for text in (page, printed):
        assert f"Before and after the fix: ladder #{first.pk} and #{latest.pk}" in text
        assert "The gap is closed." in text
        assert "chart-pm-compare-throughput" in text
    assert f"### Before and after the fix: ladder #{first.pk} and #{latest.pk}" in markdown
    assert "**The gap is closed.**" in markdown
    assert "| 50 | 3,500 | 4,800 | 5,000 | 5,000 | 43% | 4% |" in markdown


# --- a real rerun ------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_a_short_ladder_reruns_for_real_and_compares(personas, celery_worker, place_ladder_hosts):
    # hey on sshd test hosts through a real worker: the rerun runs the same ladder again, its
    # verdict lands on the timeline (which verdict depends on the machine: not asserted).
    require("hey")
    place_ladder_hosts()
    api = ApiClient(personas.member)

    def ended(ladder_id: int) -> dict:
        return wait_for(
            lambda: (
                (body := api.get(f"/api/ladders/{ladder_id}").body)["status"]
                in ("completed", "failed", "cancelled")
                and body
            ),
            timeout=120,
        )

    with http_server(wait_ms=5) as url:
        first = api.post(
            f"/api/investigations/{personas.investigation.pk}/ladders",
            {
                "side_a_url": url,
                "side_b_url": url,
                "steps": [1, 4],
                "step_seconds": 1,
                "warmup_seconds": 0,
                "tool": "hey",
            },
        ).body
        assert ended(first["id"])["status"] == "completed"
        response = api.post(f"/api/ladders/{first['id']}/rerun")
        assert response.status_code == 201, response.body
        rerun = ended(response.body["id"])

    assert rerun["status"] == "completed" and rerun["rerun_of"] == first["id"]
    assert (rerun["tool"], rerun["steps"], rerun["step_seconds"]) == ("hey", [1, 4], 1)
    assert {(r["side"], r["load"]) for r in rerun["results"]} == {
        ("a", 1),
        ("a", 4),
        ("b", 1),
        ("b", 4),
    }
    compared = api.get(f"/api/ladders/{rerun['id']}/compare?with={first['id']}").body
    assert compared["load"] == 4 and compared["verdict"] in (
        "closed",
        "narrowed",
        "unchanged",
        "wider",
    )
    verdict = personas.investigation.events.filter(
        kind="ladder", summary__startswith=f"Fix verification: ladder #{rerun['id']}"
    ).get()
    assert verdict.details["verdict"] == compared["verdict"]


def test_the_postmortem_api_gives_the_fix_verification(
    personas, before, django_capture_on_commit_callbacks
):
    path = f"/api/investigations/{personas.investigation.pk}/postmortem"
    client = ApiClient(personas.viewer)
    assert client.get(path).body["fix_verification"] is None

    rerun = rerun_with(personas, before, NARROWED, django_capture_on_commit_callbacks)

    assert client.get(path).body["fix_verification"] == {
        "before": before.pk,
        "after": rerun.pk,
        "verdict": "narrowed",
        "reason": "at 50 the gap between the sides narrowed from 150% to 43%, still beyond "
        "the 20% margin",
        "load": 50,
        "gap_before": 1.5,
        "gap_after": pytest.approx(5000 / 3500 - 1),
    }


def test_the_case_page_lists_a_rerun_with_what_it_reruns(personas, before):
    rerun_id = rerun_api(personas, before).body["id"]

    panel = personas.client(personas.viewer).get(
        f"/investigations/{personas.investigation.pk}/panels/ladders/"
    )

    assert f"#{rerun_id}</a>" in panel.content.decode()
    assert f"rerun of #{before.pk}" in panel.content.decode()
