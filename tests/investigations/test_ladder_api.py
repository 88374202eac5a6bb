"""Ladders and result imports through the JSON API, by every persona."""

from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from collectors.loadresults import parse
from investigations.choices import HostRole, LadderStatus
from investigations.models import Ladder, LadderSide, LadderStep, TimelineEvent
from investigations.services.investigations import investigation_create
from investigations.services.ladder_imports import ladder_import
from investigations.services.ladder_results import (
    ladder_claim,
    ladder_side_finish,
    ladder_step_store,
)
from tests.conftest import HOSTILE_STRINGS, ApiClient, fresh, jobs_of

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"
URL_A = "http://10.0.1.10:8080/checkout"
URL_B = "https://10.0.2.10/checkout"
LADDER_KEYS = {
    "id",
    "investigation",
    "status",
    "tool",
    "load_kind",
    "steps",
    "step_seconds",
    "knees",
    "divergence_step",
    "divergence",
    "sides",
    "results",
    "profiles",  # the CPU profiles taken during its steps
    "captures",  # and the packet captures
    "created_at",
    "finished_at",
    "read",  # after an import: what each file held
    "rerun_of",  # the ladder it runs again, to verify a fix
}
SIDE_KEYS = {
    "side",
    "status",
    "load_generator",
    "url",
    "current_step",
    "breaking_step",
    "breaking_reason",
    "error",
}
# Named by the issue; the API gives a few more.
RESULT_KEYS = {
    "side",
    "step",
    "load",
    "rps",
    "latency_p50_ms",
    "latency_p99_ms",
    "errors",
    "cpu_user",
    "cpu_system",
}


def capture(name: str) -> bytes:
    return (DATA / name).read_bytes()


def api(personas, who: str) -> ApiClient:
    return ApiClient(None if who == "anonymous" else getattr(personas, who))


def fields(response) -> list:
    return [error["field"] for error in (response.body or {}).get("errors") or []]


def refused_on(response, field, status: int = 400) -> str:
    """The answer is `status` in the error shape, naming `field`; returns its message."""
    assert response.status_code == status, (response.status_code, response.content[:1000])
    assert set(response.body) == {"detail", "errors"} and response.body["detail"]
    assert all(set(e) == {"field", "message"} and e["message"] for e in response.body["errors"])
    assert field in fields(response), response.body
    return next(e["message"] for e in response.body["errors"] if e["field"] == field)


def denied(response, status: int) -> None:
    assert response.status_code == status, (response.status_code, response.content[:500])
    assert response.body["detail"]


def rows() -> tuple[int, int, int, int]:
    return (
        Ladder.objects.count(),
        LadderSide.objects.count(),
        LadderStep.objects.count(),
        TimelineEvent.objects.count(),
    )


def ladders_url(personas) -> str:
    return f"/api/investigations/{personas.investigation.pk}/ladders"


def imports_url(personas) -> str:
    return f"/api/investigations/{personas.investigation.pk}/imports"


BODY = {"side_a_url": URL_A, "side_b_url": URL_B, "steps": [10, 20, 50], "step_seconds": 30}


@pytest.fixture
def created(personas, ladder_hosts) -> dict:
    response = ApiClient(personas.member).post(ladders_url(personas), BODY)
    assert response.status_code == 201, response.body
    return response.body


def upload(client: ApiClient, url: str, *uploads, **data):
    """A multipart POST with the client's token; `file` repeats for each upload."""
    if uploads:
        data["file"] = list(uploads)
    response = client.client.post(url, data=data, headers=client.headers)
    response.body = response.json() if response.content else None
    return response


def files(*names: str) -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(name, capture(name)) for name in names]


# --- POST /api/investigations/{id}/ladders ------------------------------------------------


@pytest.mark.parametrize("who", ["lead", "member"])
def test_a_responder_starts_a_ladder(personas, ladder_hosts, who):
    response = api(personas, who).post(ladders_url(personas), {**BODY, "tool": "hey"})

    assert response.status_code == 201, response.body
    body = response.body
    assert set(body) == LADDER_KEYS
    ladder = Ladder.objects.get()
    assert body["id"] == ladder.pk and body["investigation"] == personas.investigation.pk
    assert (body["status"], body["tool"], body["steps"]) == ("queued", "hey", [10, 20, 50])
    assert body["step_seconds"] == 30 and body["results"] == [] and body["finished_at"] is None
    assert [set(s) for s in body["sides"]] == [SIDE_KEYS, SIDE_KEYS]
    assert [(s["side"], s["status"], s["url"], s["load_generator"]) for s in body["sides"]] == [
        ("a", "queued", URL_A, "load-generator-a"),
        ("b", "queued", URL_B, "load-generator-b"),
    ]
    assert ladder.requested_by == getattr(personas, who)
    (event,) = personas.investigation.events.filter(kind="ladder")
    assert event.summary.startswith("Ladder started: 10, 20, 50 connections, 30 s a step with hey;")


def test_the_defaults_are_the_issues(personas, ladder_hosts):
    response = ApiClient(personas.lead).post(
        ladders_url(personas), {"side_a_url": URL_A, "side_b_url": URL_B, "steps": [1, 2]}
    )

    assert response.status_code == 201
    ladder = Ladder.objects.get()
    assert (ladder.tool, ladder.step_seconds, ladder.warmup_seconds) == ("wrk", 30, 5)
    assert (ladder.stop_error_rate, ladder.stop_p99_ms, ladder.margin) == (0.05, None, 0.2)


@pytest.mark.parametrize(
    ("who", "status"), [("viewer", 403), ("outsider", 404), ("anonymous", 401)]
)
def test_others_may_not_start_a_ladder(personas, ladder_hosts, who, status):
    before = rows()

    response = api(personas, who).post(ladders_url(personas), BODY)

    denied(response, status)
    assert rows() == before


def test_a_ladder_in_a_missing_investigation_is_404(personas, ladder_hosts):
    response = ApiClient(personas.lead).post("/api/investigations/999999/ladders", BODY)

    denied(response, 404)


@pytest.mark.parametrize(
    ("change", "field", "message"),
    [
        ({"steps": []}, "steps", "Give the loads of the steps, e.g. 10, 20, 50, 100."),
        ({"steps": list(range(1, 22))}, "steps", "At most 20 steps."),
        ({"steps": [0]}, "steps", "Each step is a whole number from 1 to 10,000."),
        ({"step_seconds": 601}, "step_seconds", "A step lasts 1 to 600 seconds."),
        ({"warmup_seconds": 301}, "warmup_seconds", "The warm-up lasts 0 to 300 seconds."),
        (
            {"stop_error_rate": 5},
            "stop_error_rate",
            "The error limit is a share above 0 and at most 1 (0.05 = 5 %).",
        ),
        (
            {"stop_p99_ms": 0},
            "stop_p99_ms",
            "The p99 limit is a positive number of milliseconds.",
        ),
        ({"margin": 20}, "margin", "The margin is a share between 0 and 1 (0.2 = 20 %)."),
        (
            {"side_a_url": "file:///etc/passwd"},
            "side_a_url",
            "Enter an http:// or https:// URL with a host name.",
        ),
        (
            {"side_b_url": "http://10.0.2.10/a b"},
            "side_b_url",
            "A URL may not contain spaces, quotes or control characters.",
        ),
        (
            {"steps": list(range(1, 10)), "step_seconds": 600},
            "steps",
            "The ladder would run longer than 90 minutes.",
        ),
    ],
)
def test_a_bad_ladder_is_400_naming_the_field(personas, ladder_hosts, change, field, message):
    before = rows()

    response = ApiClient(personas.member).post(ladders_url(personas), {**BODY, **change})

    assert refused_on(response, field) == message
    assert response.body["detail"] == message
    assert rows() == before


def test_every_bad_field_is_named_at_once(personas, ladder_hosts):
    response = ApiClient(personas.member).post(
        ladders_url(personas),
        {**BODY, "side_a_url": "ftp://x/", "steps": [], "margin": 0},
    )

    refused_on(response, "steps")
    assert sorted(fields(response)) == ["margin", "side_a_url", "steps"]
    assert response.body["detail"] == "The request is not valid."


def test_a_missing_load_generator_is_400(personas):
    response = ApiClient(personas.member).post(ladders_url(personas), BODY)

    assert refused_on(response, "load_generator") == (
        "Place a host with the role 'load generator' on side A and B first."
    )
    assert not Ladder.objects.exists()


@pytest.mark.parametrize("hostile", HOSTILE_STRINGS)
def test_hostile_urls_are_refused(personas, ladder_hosts, hostile):
    response = ApiClient(personas.member).post(
        ladders_url(personas), {**BODY, "side_a_url": hostile, "side_b_url": hostile}
    )

    assert response.status_code == 400, response.body
    assert sorted(fields(response)) == ["side_a_url", "side_b_url"]
    assert not Ladder.objects.exists()


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"side_a_url": URL_A, "side_b_url": URL_B}, "steps"),
        ({**BODY, "steps": "10, 20"}, "steps"),
        ({**BODY, "steps": [10, "many"]}, "steps.1"),
        ({**BODY, "tool": "jmeter"}, "tool"),
        ({**BODY, "side_a_url": "http://10.0.1.10/\x00"}, "side_a_url"),
        ({**BODY, "step_seconds": "thirty"}, "step_seconds"),
    ],
)
def test_a_body_of_the_wrong_shape_is_422_naming_the_field(personas, ladder_hosts, body, field):
    response = ApiClient(personas.member).post(ladders_url(personas), body)

    refused_on(response, field, status=422)
    assert not Ladder.objects.exists()


@pytest.mark.parametrize("steps", [[True, 10], [10, False]])
def test_a_boolean_is_no_step(personas, ladder_hosts, steps):
    # The service refuses booleans as loads; the API must not turn true into 1 first.
    response = ApiClient(personas.member).post(ladders_url(personas), {**BODY, "steps": steps})

    assert response.status_code in (400, 422), response.body
    assert all(field.startswith("steps") for field in fields(response)), response.body
    assert not Ladder.objects.exists()


def test_a_body_that_is_no_json_object_is_refused(personas, ladder_hosts):
    response = ApiClient(personas.member).post(ladders_url(personas), [BODY])

    assert response.status_code in (400, 422)
    assert response.body["errors"]
    assert not Ladder.objects.exists()


# --- GET /api/ladders/{id} ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("who", "status"),
    [("lead", 200), ("member", 200), ("viewer", 200), ("outsider", 404), ("anonymous", 401)],
)
def test_who_may_read_a_ladder(personas, created, who, status):
    response = api(personas, who).get(f"/api/ladders/{created['id']}")

    if status != 200:
        denied(response, status)
        return
    assert response.status_code == 200
    assert set(response.body) == LADDER_KEYS
    assert response.body["id"] == created["id"] and response.body["status"] == "queued"


@pytest.mark.parametrize("ladder_id", ["999999", "0", "-1", "abc", str(2**64)])
def test_a_missing_or_impossible_ladder_id_is_refused(personas, ladder_id):
    response = ApiClient(personas.lead).get(f"/api/ladders/{ladder_id}")

    assert response.status_code in (404, 422), response.status_code
    assert response.body["detail"]


def test_a_ladder_reads_with_its_results_knees_and_divergence(
    personas, created, ladder_hosts, django_capture_on_commit_callbacks
):
    ladder = Ladder.objects.get(pk=created["id"])
    ladder_claim(ladder_id=ladder.pk, seconds=600)
    (wrk,) = parse("wrk", capture("wrk-latency.txt").decode())
    service = ladder_hosts[("a", HostRole.SERVICE)]
    vmstat = [{"us": 30, "sy": 10, "st": 1, "id": 59}, {"us": 50, "sy": 20, "st": 3, "id": 27}]
    shapes = {"a": [(10, 1000), (20, 1100), (50, 1150)], "b": [(10, 1000), (20, 2000), (50, 5000)]}
    for key, loads in shapes.items():
        side = ladder.sides.get(side__key=key)
        for index, (load, rps) in enumerate(loads):
            ladder_step_store(
                ladder_side=side,
                index=index,
                result=replace(wrk, load=float(load), rps=float(rps), requests=5000),
                samples=[(service, "vmstat", vmstat)] if key == "a" else [],
            )
    with django_capture_on_commit_callbacks(execute=True):
        for side in ladder.sides.all():
            ladder_side_finish(side_id=side.pk, status=LadderStatus.COMPLETED)

    response = ApiClient(personas.viewer).get(f"/api/ladders/{ladder.pk}")

    body = response.body
    assert response.status_code == 200
    assert body["status"] == "completed" and body["finished_at"] is not None
    assert body["knees"]["a"]["load"] == 20 and body["knees"]["a"]["index"] == 1
    assert body["knees"]["b"]["load"] is None
    assert "throughput stops scaling at 20" in body["knees"]["a"]["reason"]
    assert body["divergence_step"] == 1
    assert body["divergence"].startswith("at 20 the sides' throughput differs by more than 20%")
    assert len(body["results"]) == 6
    assert all(RESULT_KEYS <= set(r) for r in body["results"])
    first = next(r for r in body["results"] if (r["side"], r["step"]) == ("a", 0))
    assert {key: first[key] for key in RESULT_KEYS} == {
        "side": "a",
        "step": 0,
        "load": 10,
        "rps": 1000,
        "latency_p50_ms": 2.2,
        "latency_p99_ms": 2.73,
        "errors": 0,
        "cpu_user": 40,
        "cpu_system": 15,
    }
    assert first["cpu_steal"] == 2 and first["errors_by_kind"]["non_2xx"] == 0
    other = next(r for r in body["results"] if (r["side"], r["step"]) == ("b", 2))
    assert (other["load"], other["rps"], other["cpu_user"]) == (50, 5000, None)


def test_reading_a_ladder_gives_up_on_overdue_sides(
    personas, created, django_capture_on_commit_callbacks
):
    ladder_claim(ladder_id=created["id"], seconds=600)
    jobs_of(LadderSide.objects.all()).update(deadline_at=timezone.now() - timedelta(seconds=1))

    with django_capture_on_commit_callbacks(execute=True):
        ApiClient(personas.viewer).get(f"/api/ladders/{created['id']}")
    response = ApiClient(personas.viewer).get(f"/api/ladders/{created['id']}")

    assert response.body["status"] == "failed"
    assert {s["error"] for s in response.body["sides"]} == {
        "Gave up: no result within the time limit."
    }


# --- POST /api/ladders/{id}/cancel ---------------------------------------------------------


@pytest.mark.parametrize("who", ["lead", "member"])
def test_a_responder_cancels_a_queued_ladder(
    personas, created, who, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        response = api(personas, who).post(f"/api/ladders/{created['id']}/cancel")

    assert response.status_code == 200, response.body
    assert set(response.body) == LADDER_KEYS
    assert [(s["status"], s["error"]) for s in response.body["sides"]] == [
        ("cancelled", "Cancelled."),
        ("cancelled", "Cancelled."),
    ]
    assert fresh(Ladder.objects.get(pk=created["id"])).status == LadderStatus.CANCELLED
    assert TimelineEvent.objects.get(summary="Ladder cancelled").author == getattr(personas, who)


def test_the_cancel_answer_says_the_ladder_is_cancelled(
    personas, created, django_capture_on_commit_callbacks
):
    # Both sides were still queued: the ladder ends with the cancel, and the answer says so.
    with django_capture_on_commit_callbacks(execute=True):
        response = ApiClient(personas.member).post(f"/api/ladders/{created['id']}/cancel")

    assert response.body["status"] == "cancelled", response.body["status"]


def test_a_running_ladder_keeps_running_until_its_run_sees_the_cancel(personas, created):
    ladder_claim(ladder_id=created["id"], seconds=600)

    response = ApiClient(personas.member).post(f"/api/ladders/{created['id']}/cancel")

    assert response.status_code == 200
    assert response.body["status"] == "running"
    assert {s["status"] for s in response.body["sides"]} == {"running"}
    assert Ladder.objects.get(pk=created["id"]).cancel_requested_at is not None


@pytest.mark.parametrize(
    ("who", "status"), [("viewer", 403), ("outsider", 404), ("anonymous", 401)]
)
def test_others_may_not_cancel(personas, created, who, status):
    response = api(personas, who).post(f"/api/ladders/{created['id']}/cancel")

    denied(response, status)
    assert Ladder.objects.get(pk=created["id"]).cancel_requested_at is None
    assert {s.status for s in LadderSide.objects.all()} == {LadderStatus.QUEUED}


def test_cancelling_an_ended_ladder_is_400(personas, created, django_capture_on_commit_callbacks):
    client = ApiClient(personas.member)
    with django_capture_on_commit_callbacks(execute=True):
        client.post(f"/api/ladders/{created['id']}/cancel")

    response = client.post(f"/api/ladders/{created['id']}/cancel")

    assert refused_on(response, None) == "The ladder has already cancelled."
    assert response.body["detail"] == "The ladder has already cancelled."


def test_cancelling_a_missing_ladder_is_404(personas):
    denied(ApiClient(personas.lead).post("/api/ladders/999999/cancel"), 404)


# --- POST /api/investigations/{id}/imports -------------------------------------------------


@pytest.mark.parametrize("who", ["lead", "member"])
def test_a_responder_imports_one_file(personas, who):
    response = upload(
        api(personas, who), imports_url(personas), *files("ab.txt"), side="b", format="ab"
    )

    assert response.status_code == 201, response.body
    body = response.body
    assert set(body) == LADDER_KEYS
    assert (body["status"], body["tool"], body["steps"]) == ("imported", "", [10])
    assert [(s["side"], s["status"], s["load_generator"]) for s in body["sides"]] == [
        ("b", "imported", None)
    ]
    (step,) = body["results"]
    assert (step["side"], step["step"], step["load"], step["errors"]) == ("b", 0, 10, 0)
    assert step["rps"] == pytest.approx(2765.5, abs=0.1)
    assert step["latency_p99_ms"] == 5 and step["cpu_user"] is None


def test_repeated_files_become_steps_in_order_of_load(personas):
    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files(
            "k6-summary-export.json",
            "k6-handle-summary.json",
            "k6-summary-export-default-stats.json",
        ),
        side="a",
        format="k6-json",
    )

    assert response.status_code == 201, response.body
    assert response.body["steps"] == [3, 4, 5]
    assert [(r["step"], r["load"]) for r in response.body["results"]] == [(0, 3), (1, 4), (2, 5)]


def test_the_other_side_imports_onto_the_same_ladder(personas):
    client = ApiClient(personas.member)
    first = upload(client, imports_url(personas), *files("ab.txt"), side="a", format="ab")

    second = upload(
        client,
        imports_url(personas),
        *files("wrk-latency.txt"),
        side="b",
        format="wrk",
        ladder=first.body["id"],
    )

    assert second.status_code == 201, second.body
    assert second.body["id"] == first.body["id"]
    assert [s["side"] for s in second.body["sides"]] == ["a", "b"]
    assert second.body["divergence_step"] == 0


def test_hey_imports_with_its_load(personas):
    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files("hey.txt"),
        side="a",
        format="hey",
        load="10",
    )

    assert response.status_code == 201, response.body
    assert response.body["results"][0]["load"] == 10


def test_wrk2_imports_with_its_rate(personas):
    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files("wrk2-readme-basic.txt"),
        side="a",
        format="wrk2",
        load="1500",
    )

    assert response.status_code == 201, response.body
    assert response.body["results"][0]["load"] == 1500
    assert response.body["results"][0]["load_kind"] == "rate"


@pytest.mark.parametrize(
    ("who", "status"), [("viewer", 403), ("outsider", 404), ("anonymous", 401)]
)
def test_others_may_not_import(personas, who, status):
    response = upload(
        api(personas, who), imports_url(personas), *files("ab.txt"), side="a", format="ab"
    )

    denied(response, status)
    assert rows() == (0, 0, 0, personas.investigation.events.count())


def test_a_broken_file_is_400_with_its_line_and_leaves_no_trace(personas):
    text = capture("wrk-latency.txt").decode().replace("4487.43", "banana")
    before = rows()

    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        SimpleUploadedFile("wrk.txt", text.encode()),
        side="a",
        format="wrk",
    )

    assert refused_on(response, "file") == (
        "wrk.txt: line 12: expected 'Requests/sec: <number>', found 'Requests/sec:   banana'"
    )
    assert rows() == before


def test_a_broken_file_among_several_is_named(personas):
    name = HOSTILE_STRINGS[0].replace("/", "")
    broken = capture("ab.txt")[:700]
    before = rows()

    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files("ab-non2xx.txt"),
        SimpleUploadedFile(name, broken),
        side="a",
        format="ab",
    )

    message = refused_on(response, "file")
    assert message.startswith(f"{name}: line ")
    assert rows() == before


def test_a_file_that_is_not_utf8_is_400(personas):
    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        SimpleUploadedFile("wrk.txt", b"\xff\xfe" + capture("wrk-latency.txt")),
        side="a",
        format="wrk",
    )

    assert refused_on(response, "file") == "wrk.txt: not UTF-8 text (byte 0)."
    assert not Ladder.objects.exists()


def test_more_than_fifty_files_are_400(personas):
    many = [SimpleUploadedFile(f"run-{n}.txt", b"x") for n in range(51)]

    response = upload(
        ApiClient(personas.member), imports_url(personas), *many, side="a", format="ab"
    )

    assert refused_on(response, "file") == "At most 50 files at a time."
    assert not Ladder.objects.exists()


def test_a_load_for_a_format_that_states_its_own_is_400(personas):
    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files("ab.txt"),
        side="a",
        format="ab",
        load="10",
    )

    assert refused_on(response, "load") == "ab text states its own load."
    assert not Ladder.objects.exists()


@pytest.mark.parametrize(
    ("data", "field"),
    [({"side": "c", "format": "ab"}, "side"), ({"side": "a", "format": "gatling"}, "format")],
)
def test_a_bad_choice_is_400_naming_it(personas, data, field):
    response = upload(ApiClient(personas.member), imports_url(personas), *files("ab.txt"), **data)

    refused_on(response, field)
    assert not Ladder.objects.exists()


def test_a_ladder_of_another_investigation_is_400(personas):
    other = investigation_create(
        team=personas.team, user=personas.lead, title="Another case", side_a_label="x"
    )
    theirs = ladder_import(
        investigation=other,
        user=personas.lead,
        side_key="a",
        format="ab",
        files=[("ab.txt", capture("ab.txt"))],
    )
    before = rows()

    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files("ab-non2xx.txt"),
        side="b",
        format="ab",
        ladder=theirs.pk,
    )

    assert refused_on(response, "ladder") == "No such ladder in this investigation."
    assert rows() == before


def test_a_ladder_that_ran_here_takes_no_import(personas, created):
    before = rows()

    response = upload(
        ApiClient(personas.member),
        imports_url(personas),
        *files("ab.txt"),
        side="a",
        format="ab",
        ladder=created["id"],
    )

    assert refused_on(response, "side") == (
        f"Side A of ladder #{created['id']} was run here, not imported."
    )
    assert rows() == before


def test_a_clashing_load_is_400_and_nothing_is_added(personas):
    client = ApiClient(personas.member)
    first = upload(client, imports_url(personas), *files("ab.txt"), side="a", format="ab")
    before = rows()

    response = upload(
        client,
        imports_url(personas),
        *files("ab-non2xx.txt", "ab.txt"),
        side="a",
        format="ab",
        ladder=first.body["id"],
    )

    assert refused_on(response, "file") == (
        f"Side A of ladder #{first.body['id']} already has a step at load 10."
    )
    assert rows() == before


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"side": "a", "format": "ab"}, "file"),
        ({"format": "ab", "file": "x"}, "side"),
        ({"side": "a", "format": "hey", "file": "x", "load": "ten"}, "load"),
    ],
)
def test_a_form_of_the_wrong_shape_is_422(personas, data, field):
    if "file" in data:
        data = {**data, "file": files("hey.txt")}

    response = upload(ApiClient(personas.member), imports_url(personas), **data)

    refused_on(response, field, status=422)
    assert not Ladder.objects.exists()
