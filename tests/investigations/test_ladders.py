"""Ladder load tests without running load: the services' rules, the imports of results made
elsewhere (real captured outputs), and the pages by every persona."""

import re
from dataclasses import replace
from datetime import timedelta
from html import unescape
from pathlib import Path

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.utils import timezone

from collectors.loadresults import parse
from investigations.analysis.steps import breaking_reason
from investigations.choices import HostRole, ItemStatus, LadderStatus
from investigations.jobs.sweeper import fail_overdue
from investigations.models import (
    ChecklistItem,
    EnvironmentMember,
    Ladder,
    LadderSample,
    LadderSide,
    LadderStep,
    TimelineEvent,
)
from investigations.services.investigations import investigation_create
from investigations.services.ladder_imports import MAX_IMPORT_FILES, ladder_import
from investigations.services.ladder_results import (
    ladder_analysis,
    ladder_claim,
    ladder_finish_if_done,
    ladder_side_finish,
    ladder_step_store,
)
from investigations.services.ladders import ladder_cancel, ladder_request
from tests.conftest import HOSTILE_STRINGS, fresh, jobs_of, loaded_page

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"
URL_A = "http://10.0.1.10:8080/checkout"
URL_B = "https://10.0.2.10/checkout?cart=1"
HX = {"HTTP_HX_REQUEST": "true"}


def capture(name: str) -> bytes:
    return (DATA / name).read_bytes()


def files(*names: str) -> list[tuple[str, bytes]]:
    return [(name, capture(name)) for name in names]


def edited(name: str, old: str, new: str) -> bytes:
    text = capture(name).decode()
    assert text.count(old) == 1, f"{old!r} is not once in {name}"
    return text.replace(old, new).encode()


def rows() -> tuple[int, int, int, int, int]:
    """Everything an import or a request may write."""
    return (
        Ladder.objects.count(),
        LadderSide.objects.count(),
        LadderStep.objects.count(),
        LadderSample.objects.count(),
        TimelineEvent.objects.count(),
    )


def ladder_events(investigation) -> list[str]:
    return list(investigation.events.filter(kind="ladder").values_list("summary", flat=True))


def refused(call, **kwargs) -> dict[str, list[str]]:
    with pytest.raises(ValidationError) as caught:
        call(**kwargs)
    return caught.value.message_dict


def html(response) -> str:
    return response.content.decode()


def form_errors(response, name: str) -> list[str]:
    """A form that failed: the investigation page again (400), its errors beside its fields."""
    assert response.status_code == 400
    return [m for ms in response.context[name].errors.values() for m in ms]


def messages_of(response) -> list[str]:
    return [str(m) for m in response.context["messages"]] if response.context else []


def client_for(personas, who: str) -> Client:
    return Client() if who == "anonymous" else personas.client(getattr(personas, who))


# --- fixtures: load generators placed, a requested ladder, a running one --------------------


def request(personas, **changes) -> Ladder:
    fields = {
        "investigation": personas.investigation,
        "user": personas.member,
        "side_a_url": URL_A,
        "side_b_url": URL_B,
        "steps": [10, 20, 50],
        "step_seconds": 30,
        "warmup_seconds": 5,
        **changes,
    }
    return ladder_request(**fields)


@pytest.fixture
def ladder(personas, ladder_hosts) -> Ladder:
    return request(personas)


@pytest.fixture
def running(ladder) -> Ladder:
    assert len(ladder_claim(ladder_id=ladder.pk, seconds=600)) == 2
    return fresh(ladder)


def result(load: float, rps: float, p99: float = 2.73, requests: int = 10_000, **errors):
    """A step's results: the real wrk capture with this step's numbers in it."""
    (captured,) = parse("wrk", capture("wrk-latency.txt").decode())
    return replace(
        captured,
        load=float(load),
        rps=float(rps),
        requests=requests,
        latency_ms={**captured.latency_ms, "p99": p99},
        errors={**captured.errors, **errors},
    )


def side_of(ladder: Ladder, key: str) -> LadderSide:
    return ladder.sides.get(side__key=key)


def store(ladder: Ladder, key: str, *loads_and_rps) -> None:
    side = side_of(ladder, key)
    for index, (load, rps) in enumerate(loads_and_rps):
        ladder_step_store(ladder_side=side, index=index, result=result(load, rps))


def checklist_ladder_item(investigation) -> ChecklistItem:
    return ChecklistItem.objects.get(investigation=investigation, key="ladder")


# --- ladder_request: the rules, each with its own message ------------------------------------

FIELD_ERRORS = [
    ("steps", [], "Give the loads of the steps, e.g. 10, 20, 50, 100."),
    ("steps", "10, 20", "Give the loads of the steps, e.g. 10, 20, 50, 100."),
    ("steps", [0, 10], "Each step is a whole number from 1 to 10,000."),
    ("steps", [10, 10_001], "Each step is a whole number from 1 to 10,000."),
    ("steps", [10, -5], "Each step is a whole number from 1 to 10,000."),
    ("steps", [10, 2.5], "Each step is a whole number from 1 to 10,000."),
    ("steps", [True, 10], "Each step is a whole number from 1 to 10,000."),
    ("steps", ["10"], "Each step is a whole number from 1 to 10,000."),
    ("steps", list(range(1, 22)), "At most 20 steps."),
    ("step_seconds", 0, "A step lasts 1 to 600 seconds."),
    ("step_seconds", 601, "A step lasts 1 to 600 seconds."),
    ("warmup_seconds", -1, "The warm-up lasts 0 to 300 seconds."),
    ("warmup_seconds", 301, "The warm-up lasts 0 to 300 seconds."),
    ("stop_error_rate", 0, "The error limit is a share above 0 and at most 1 (0.05 = 5 %)."),
    ("stop_error_rate", 1.01, "The error limit is a share above 0 and at most 1 (0.05 = 5 %)."),
    ("stop_error_rate", 5, "The error limit is a share above 0 and at most 1 (0.05 = 5 %)."),
    ("stop_p99_ms", 0, "The p99 limit is a positive number of milliseconds."),
    ("stop_p99_ms", -100, "The p99 limit is a positive number of milliseconds."),
    ("margin", 0, "The margin is a share between 0 and 1 (0.2 = 20 %)."),
    ("margin", 1, "The margin is a share between 0 and 1 (0.2 = 20 %)."),
    ("margin", 20, "The margin is a share between 0 and 1 (0.2 = 20 %)."),
    ("tool", "jmeter", "Choose one of: wrk, hey, ab, k6."),
    ("tool", "", "Choose one of: wrk, hey, ab, k6."),
]


@pytest.mark.parametrize(("field", "value", "message"), FIELD_ERRORS)
def test_request_refuses_a_bad_value_with_the_fields_own_message(
    personas, ladder_hosts, field, value, message
):
    before = rows()

    errors = refused(request, personas=personas, **{field: value})

    assert errors == {field: [message]}
    assert rows() == before


def test_request_reports_every_bad_field_at_once(personas, ladder_hosts):
    errors = refused(
        request,
        personas=personas,
        side_a_url="ftp://x/",
        steps=[],
        step_seconds=0,
        warmup_seconds=-1,
        tool="gatling",
        stop_error_rate=0,
        stop_p99_ms=0,
        margin=1,
    )

    assert set(errors) == {
        "side_a_url",
        "steps",
        "step_seconds",
        "warmup_seconds",
        "tool",
        "stop_error_rate",
        "stop_p99_ms",
        "margin",
    }


@pytest.mark.parametrize(
    ("missing", "named"), [(["a", "b"], "side A and B"), (["a"], "side A"), (["b"], "side B")]
)
def test_request_needs_a_load_generator_on_each_side(personas, ladder_hosts, missing, named):
    EnvironmentMember.objects.filter(side__key__in=missing, role=HostRole.LOAD_GENERATOR).delete()
    before = rows()

    errors = refused(request, personas=personas)

    assert errors == {
        "load_generator": [f"Place a host with the role 'load generator' on {named} first."]
    }
    assert rows() == before


def test_a_service_host_is_no_load_generator(personas, ladder_hosts):
    EnvironmentMember.objects.filter(side__key="b", role=HostRole.LOAD_GENERATOR).delete()
    assert EnvironmentMember.objects.filter(side__key="b", role=HostRole.SERVICE).exists()

    assert "side B" in refused(request, personas=personas)["load_generator"][0]


def test_a_load_generator_of_another_investigation_does_not_count(personas, ladder_hosts):
    other = investigation_create(
        team=personas.team, user=personas.lead, title="Another case", side_a_label="x"
    )
    before = rows()

    errors = refused(request, personas=personas, investigation=other)

    assert errors == {
        "load_generator": ["Place a host with the role 'load generator' on side A and B first."]
    }
    assert rows() == before


NO_SCHEME = "Enter an http:// or https:// URL with a host name."
NO_QUOTES = "A URL may not contain spaces, quotes or control characters."
TOO_LONG = "A URL may be at most 2000 characters long."
NOT_ASCII = (
    "Encode characters other than ASCII: the host name in punycode (xn--...), the path as %XX."
)
BAD_URLS = [
    ("", NO_SCHEME),
    ("10.0.1.10:8080/", NO_SCHEME),
    ("ftp://10.0.1.10/file", NO_SCHEME),
    ("file:///etc/passwd", NO_SCHEME),
    ("javascript:alert(1)", NO_SCHEME),
    ("gopher://10.0.1.10:70/", NO_SCHEME),
    ("http://", NO_SCHEME),
    ("http:///path-only", NO_SCHEME),
    ("http://10.0.1.10/a b", NO_QUOTES),
    ("http://10.0.1.10/it's", NO_QUOTES),
    ('http://10.0.1.10/"quoted"', NO_QUOTES),
    ("http://10.0.1.10/`reboot`", NO_QUOTES),
    ("http://10.0.1.10/<script>", NO_QUOTES),
    ("http://10.0.1.10/\nHost: evil", NO_QUOTES),
    ("http://10.0.1.10/tab\there", NO_QUOTES),
    ("http://10.0.1.10/" + "a" * 2000, TOO_LONG),
]


@pytest.mark.parametrize(("url", "message"), BAD_URLS)
@pytest.mark.parametrize("side", ["a", "b"])
def test_request_refuses_a_url_that_is_not_one_plain_http_word(
    personas, ladder_hosts, side, url, message
):
    before = rows()

    errors = refused(request, personas=personas, **{f"side_{side}_url": url})

    assert errors == {f"side_{side}_url": [message]}
    assert rows() == before


@pytest.mark.parametrize(
    "url", ["http://[::1/", "http://[not-an-address]/", "http://容器：x/", "http://a\u2100b/"]
)
def test_request_refuses_a_malformed_host_in_its_own_words(personas, ladder_hosts, url):
    # Not Python's urlsplit() message: the page shows this to people.
    errors = refused(request, personas=personas, side_a_url=url)

    assert errors == {"side_a_url": [NO_SCHEME]}


@pytest.mark.parametrize("url", ["http://10.0.1.10:99999/", "http://10.0.1.10:http/"])
def test_request_refuses_a_port_that_cannot_be(personas, ladder_hosts, url):
    before = rows()

    errors = refused(request, personas=personas, side_a_url=url)

    assert list(errors) == ["side_a_url"]
    assert rows() == before


@pytest.mark.parametrize("hostile", HOSTILE_STRINGS)
def test_request_refuses_hostile_strings_as_urls(personas, ladder_hosts, hostile):
    before = rows()

    errors = refused(request, personas=personas, side_a_url=hostile, side_b_url=f"http://{hostile}")

    assert errors["side_a_url"][0] in (NO_SCHEME, NO_QUOTES, TOO_LONG, NOT_ASCII)
    assert errors["side_b_url"][0] in (NO_SCHEME, NO_QUOTES, TOO_LONG, NOT_ASCII)
    assert rows() == before


def test_request_refuses_a_ladder_longer_than_ninety_minutes(personas, ladder_hosts):
    # 9 steps of 5 + 600 + 4 s: 5,481 s.
    errors = refused(request, personas=personas, steps=list(range(1, 10)), step_seconds=600)

    assert errors == {"steps": ["The ladder would run longer than 90 minutes."]}


def test_request_takes_a_ladder_of_exactly_ninety_minutes(personas, ladder_hosts):
    # 10 steps of 0 + 536 + 4 s: 5,400 s.
    ladder = request(personas, steps=list(range(1, 11)), step_seconds=536, warmup_seconds=0)

    assert ladder.slot_seconds == 540
    assert len(ladder.steps) == 10


def test_request_stores_the_ladder_and_enqueues_it_once_committed(
    personas, ladder_hosts, django_capture_on_commit_callbacks
):
    before = timezone.now()
    with django_capture_on_commit_callbacks() as callbacks:
        ladder = request(
            personas,
            side_a_url=f"  {URL_A}  ",
            steps=[10, 20, 50],
            step_seconds=30,
            warmup_seconds=5,
            tool="hey",
            stop_error_rate=0.1,
            stop_p99_ms=250,
            margin=0.3,
        )

    # One run for both sides, sent to the broker only once the transaction commits.
    assert len(callbacks) == 1

    ladder = fresh(ladder)
    assert (ladder.status, ladder.tool, ladder.steps) == (LadderStatus.QUEUED, "hey", [10, 20, 50])
    assert (ladder.step_seconds, ladder.warmup_seconds) == (30, 5)
    assert (ladder.stop_error_rate, ladder.stop_p99_ms, ladder.margin) == (0.1, 250, 0.3)
    assert ladder.slot_seconds == 5 + 30 + 4
    assert ladder.requested_by == personas.member
    assert timedelta(seconds=2) < ladder.start_at - before < timedelta(seconds=5)
    sides = {s.side.key: s for s in ladder.sides.select_related("side", "load_generator")}
    assert sides["a"].url == URL_A  # stripped
    assert sides["b"].url == URL_B
    assert sides["a"].load_generator == ladder_hosts[("a", HostRole.LOAD_GENERATOR)]
    assert sides["b"].load_generator == ladder_hosts[("b", HostRole.LOAD_GENERATOR)]
    assert {s.status for s in sides.values()} == {LadderStatus.QUEUED}
    (event,) = personas.investigation.events.filter(kind="ladder")
    assert event.summary == (
        f"Ladder started: 10, 20, 50 connections, 30 s a step with hey; "
        f"A: {URL_A} from load-generator-a, B: {URL_B} from load-generator-b"
    )
    assert event.author == personas.member
    assert event.details == {"ladder": ladder.pk}


def test_a_refused_request_enqueues_nothing(
    personas, ladder_hosts, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        refused(request, personas=personas, steps=[])

    assert callbacks == []


# --- ladder_claim -------------------------------------------------------------------------


def test_claim_moves_the_queued_sides_to_running_once(ladder, django_assert_num_queries):
    before = timezone.now()

    claimed = ladder_claim(ladder_id=ladder.pk, seconds=300)

    assert sorted(side.side.key for side in claimed) == ["a", "b"]
    assert fresh(ladder).status == LadderStatus.RUNNING
    for side in ladder.sides.all():
        assert side.status == LadderStatus.RUNNING
        assert side.started_at >= before
        assert side.deadline_at - side.started_at == timedelta(seconds=300)
    # The claimed sides come with what the run needs, without further queries.
    with django_assert_num_queries(0):
        for side in claimed:
            assert side.ladder.investigation.pk == ladder.investigation_id
            assert side.load_generator.name == f"load-generator-{side.side.key}"
            assert side.load_generator.credential is None


def test_a_second_claim_finds_nothing_and_changes_nothing(ladder):
    ladder_claim(ladder_id=ladder.pk, seconds=300)
    deadlines = list(ladder.sides.values_list("job__deadline_at", flat=True))

    assert ladder_claim(ladder_id=ladder.pk, seconds=9000) == []
    assert list(ladder.sides.values_list("job__deadline_at", flat=True)) == deadlines
    assert fresh(ladder).status == LadderStatus.RUNNING


def test_a_cancelled_ladder_is_not_claimed(personas, ladder):
    ladder_cancel(ladder=ladder, user=personas.member)

    assert ladder_claim(ladder_id=ladder.pk, seconds=300) == []
    assert fresh(ladder).status != LadderStatus.RUNNING


# --- ladder_step_store ------------------------------------------------------------------


def test_a_step_keeps_its_results_and_the_service_hosts_samples(running, ladder_hosts):
    side = side_of(running, "a")
    service = ladder_hosts[("a", HostRole.SERVICE)]
    vmstat = [
        {"r": 1, "us": 10, "sy": 4, "id": 86, "st": 0},
        {"r": 3, "us": 20, "sy": 6, "id": 74, "st": 1},
    ]
    mpstat = [
        {"all": {"usr": 15, "idle": 50}, "0": {"usr": 70, "idle": 20}, "1": {"usr": 5, "idle": 80}},
        {"all": {"usr": 15, "idle": 50}, "0": {"usr": 80, "idle": 10}, "1": {"usr": 5, "idle": 90}},
    ]
    planned = timezone.now()

    step = ladder_step_store(
        ladder_side=side,
        index=0,
        result=result(10, 4487.43, p99=2.73, non_2xx=3),
        planned_at=planned,
        started_at=planned + timedelta(milliseconds=12),
        raw_output="x" * 70_000,
        samples=[(service, "vmstat", vmstat), (service, "mpstat", mpstat)],
    )

    step = fresh(step)
    assert (step.index, step.load, step.rps, step.requests) == (0, 10, 4487.43, 10_000)
    assert step.latency_ms["p99"] == 2.73 and step.latency_ms["p50"] == 2.2
    assert step.error_count == 3
    assert step.cpu["us"] == 15 and step.cpu["sy"] == 5 and step.cpu["r"] == 2
    assert step.cpu["busiest_cpu"] == {"host": service.name, "cpu": "0", "busy": 85}
    assert round(step.lateness_ms) == 12
    assert len(step.raw_output) == 65536
    assert sorted(step.samples.values_list("tool", flat=True)) == ["mpstat", "vmstat"]


# --- breaking_reason ----------------------------------------------------------------------


def _stored(running, **changes) -> LadderStep:
    fields = {"load": 10, "rps": 1000, "p99": 50.0, "requests": 1000, **changes}
    errors = fields.pop("errors", {})
    return ladder_step_store(
        ladder_side=side_of(running, "a"),
        index=LadderStep.objects.count(),
        result=result(fields["load"], fields["rps"], fields["p99"], fields["requests"], **errors),
    )


def test_a_step_breaks_above_the_error_limit(running):
    step = _stored(running, requests=1000, errors={"non_2xx": 100})

    assert breaking_reason(running, step) == "10.0% of requests failed (limit 5.0%)"


def test_a_step_at_the_error_limit_does_not_break(running):
    step = _stored(running, requests=1000, errors={"timeout": 50})

    assert breaking_reason(running, step) is None


def test_a_step_of_refused_connections_only_breaks(running):
    step = _stored(running, requests=0, errors={"connect": 20})

    assert breaking_reason(running, step) == "100.0% of requests failed (limit 5.0%)"


def test_a_step_breaks_above_the_p99_limit(running):
    running.stop_p99_ms = 500
    step = _stored(running, p99=1270.0)

    assert breaking_reason(running, step) == "p99 1,270.0 ms (limit 500 ms)"


def test_without_a_p99_limit_latency_never_breaks(running):
    step = _stored(running, p99=99_999.0)

    assert running.stop_p99_ms is None
    assert breaking_reason(running, step) is None


def test_a_step_without_a_p99_does_not_break_on_latency(running):
    running.stop_p99_ms = 500
    step = _stored(running, p99=None)

    assert breaking_reason(running, step) is None


def test_the_error_limit_is_named_before_the_p99_limit(running):
    running.stop_p99_ms = 500
    step = _stored(running, p99=900.0, errors={"read": 200})

    assert breaking_reason(running, step).startswith("20.0% of requests failed")


# --- ladder_side_finish -------------------------------------------------------------------


def test_a_side_that_breaks_says_where_on_the_timeline(running):
    side = side_of(running, "b")
    store(running, "b", (10, 1000), (20, 1200))

    ladder_side_finish(
        side_id=side.pk,
        status=LadderStatus.COMPLETED,
        breaking_step=1,
        breaking="p99 1,270.0 ms (limit 500 ms)",
    )

    side = fresh(side)
    assert side.status == LadderStatus.COMPLETED
    assert (side.breaking_step, side.breaking_reason) == (1, "p99 1,270.0 ms (limit 500 ms)")
    assert side.finished_at is not None
    event = running.investigation.events.filter(kind="ladder").last()
    assert event.summary == "Ladder: side B breaks at 20: p99 1,270.0 ms (limit 500 ms)"
    assert event.details == {"ladder": running.pk, "step": 1, "side": "b"}


def test_finishing_a_side_twice_changes_nothing_the_second_time(
    running, django_capture_on_commit_callbacks
):
    side = side_of(running, "a")
    ladder_side_finish(side_id=side.pk, status=LadderStatus.FAILED, error="wrk: connection refused")
    first = fresh(side)
    events = TimelineEvent.objects.count()

    with django_capture_on_commit_callbacks() as callbacks:
        ladder_side_finish(
            side_id=side.pk,
            status=LadderStatus.COMPLETED,
            breaking_step=0,
            breaking="10.0% of requests failed (limit 5.0%)",
        )

    again = fresh(side)
    assert (again.status, again.error, again.breaking_step, again.finished_at) == (
        LadderStatus.FAILED,
        "wrk: connection refused",
        None,
        first.finished_at,
    )
    assert TimelineEvent.objects.count() == events
    assert callbacks == []


def test_a_side_error_is_capped(running):
    side = side_of(running, "a")

    ladder_side_finish(side_id=side.pk, status=LadderStatus.FAILED, error="e" * 10_000)

    assert len(fresh(side).error) == 4000


# --- ladder_finish_if_done ----------------------------------------------------------------


def finish(ladder, key: str, status=LadderStatus.COMPLETED, error: str = "") -> None:
    ladder_side_finish(side_id=side_of(ladder, key).pk, status=status, error=error)


def test_the_ladder_waits_for_both_sides(running, django_capture_on_commit_callbacks):
    store(running, "a", (10, 1000), (20, 1100), (50, 1150))
    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a")

    assert fresh(running).status == LadderStatus.RUNNING
    assert fresh(running).finished_at is None


def test_a_ladder_completes_with_its_knees_and_divergence(
    personas, running, django_capture_on_commit_callbacks
):
    # A stops scaling at 20; B scales on.
    store(running, "a", (10, 1000), (20, 1100), (50, 1150))
    store(running, "b", (10, 1000), (20, 2000), (50, 5000))

    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a")
        finish(running, "b")

    ladder = fresh(running)
    assert ladder.status == LadderStatus.COMPLETED
    assert ladder.finished_at is not None
    assert ladder.analysis["knees"]["a"]["index"] == 1
    assert ladder.analysis["knees"]["a"]["load"] == 20
    assert ladder.analysis["knees"]["b"] == {
        "index": None,
        "load": None,
        "reason": "not reached within this ladder",
        # The reason's phrase, read in each person's language.
        "phrases": {"reason": ["not reached within this ladder", {}]},
    }
    assert ladder.analysis["divergence"]["index"] == 1
    events = ladder_events(personas.investigation)
    assert events[-2].startswith("Ladder: knee of side A: throughput stops scaling at 20")
    assert not any(e.startswith("Ladder: knee of side B") for e in events)
    assert events[-1] == (
        "Ladder completed: at 20 the sides' throughput differs by more than 20%: "
        "1,100 requests/s on A, 2,000 on B"
    )
    finished = personas.investigation.events.filter(kind="ladder").last()
    assert finished.details == {"ladder": ladder.pk, "status": "completed"}


def test_a_completed_ladder_with_both_sides_ticks_the_checklist(
    personas, running, django_capture_on_commit_callbacks
):
    assert checklist_ladder_item(personas.investigation).status == ItemStatus.TODO
    store(running, "a", (10, 1000), (20, 1100))
    store(running, "b", (10, 1000), (20, 2000))

    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a")
        finish(running, "b")

    item = checklist_ladder_item(personas.investigation)
    assert item.status == ItemStatus.DONE and item.auto
    assert item.evidence == f"ladder #{running.pk}; knee A at 20, B not reached"
    assert personas.investigation.events.filter(
        kind="checklist", summary__startswith="Checklist: 'Ladder load test to the knee' done"
    ).exists()


def test_a_ladder_with_results_on_one_side_only_does_not_tick_the_checklist(
    personas, running, django_capture_on_commit_callbacks
):
    store(running, "a", (10, 1000), (20, 1100))

    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a")
        finish(running, "b", LadderStatus.FAILED, "wrk: unable to connect to 10.0.2.10:443")

    ladder = fresh(running)
    # One side alone compares with nothing: the ladder failed, A's steps are kept.
    assert ladder.status == LadderStatus.FAILED
    assert ladder.sides.get(side__key="a").steps.count() == 2
    assert ladder_events(personas.investigation)[-1].endswith(
        "; side B failed: wrk: unable to connect to 10.0.2.10:443"
    )
    assert checklist_ladder_item(personas.investigation).status == ItemStatus.TODO


def test_a_ladder_fails_when_both_sides_failed(
    personas, running, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a", LadderStatus.FAILED, "ssh: connection refused")
        finish(running, "b", LadderStatus.FAILED, "wrk: command not found")

    assert fresh(running).status == LadderStatus.FAILED
    assert ladder_events(personas.investigation)[-1] == (
        "Ladder failed: no step has results from both sides at the same load: nothing to "
        "compare; side A failed: ssh: connection refused; side B failed: wrk: command not found"
    )
    assert checklist_ladder_item(personas.investigation).status == ItemStatus.TODO


def test_a_ladder_asked_to_cancel_ends_cancelled_even_with_results(
    personas, running, django_capture_on_commit_callbacks
):
    store(running, "a", (10, 1000))
    store(running, "b", (10, 1000))
    ladder_cancel(ladder=running, user=personas.member)

    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a", LadderStatus.CANCELLED, "Cancelled.")
        finish(running, "b", LadderStatus.CANCELLED, "Cancelled.")

    assert fresh(running).status == LadderStatus.CANCELLED
    assert ladder_events(personas.investigation)[-1].startswith("Ladder cancelled: ")
    # Cancelled is not completed: the evidence does not count.
    assert checklist_ladder_item(personas.investigation).status == ItemStatus.TODO


def test_finishing_an_ended_ladder_again_changes_nothing(
    personas, running, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a", LadderStatus.FAILED, "x")
        finish(running, "b", LadderStatus.FAILED, "y")
    ended = fresh(running)
    events = TimelineEvent.objects.count()

    ladder_finish_if_done(ladder_id=running.pk)

    assert fresh(running).finished_at == ended.finished_at
    assert TimelineEvent.objects.count() == events


# --- the sweep, for ladder sides -----------------------------------------------------------


def test_overdue_sides_fail_and_so_does_their_ladder(
    personas, running, django_capture_on_commit_callbacks
):
    jobs_of(running.sides.all()).update(deadline_at=timezone.now() - timedelta(seconds=1))

    with django_capture_on_commit_callbacks(execute=True):
        fail_overdue()

    for side in running.sides.all():
        assert side.status == LadderStatus.FAILED
        assert side.error == "Gave up: no result within the time limit."
    assert fresh(running).status == LadderStatus.FAILED


def test_sides_within_their_deadline_are_left_running(running, django_capture_on_commit_callbacks):
    jobs_of(LadderSide.objects.filter(pk=side_of(running, "a").pk)).update(
        deadline_at=timezone.now() - timedelta(seconds=1)
    )

    with django_capture_on_commit_callbacks(execute=True):
        fail_overdue()

    assert side_of(running, "a").status == LadderStatus.FAILED
    assert side_of(running, "b").status == LadderStatus.RUNNING
    assert fresh(running).status == LadderStatus.RUNNING


def test_queued_sides_are_not_expired(ladder):
    fail_overdue()

    assert {s.status for s in ladder.sides.all()} == {LadderStatus.QUEUED}


# --- ladder_cancel ------------------------------------------------------------------------


def test_cancelling_a_queued_ladder_ends_its_sides_at_once(
    personas, ladder, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        returned = ladder_cancel(ladder=ladder, user=personas.member)

    assert returned.cancel_requested_at is not None
    for side in ladder.sides.all():
        assert (side.status, side.error) == (LadderStatus.CANCELLED, "Cancelled.")
        assert side.finished_at is not None
    assert fresh(ladder).status == LadderStatus.CANCELLED
    cancelled = personas.investigation.events.get(kind="ladder", summary="Ladder cancelled")
    assert cancelled.author == personas.member
    assert ladder_events(personas.investigation)[-1].startswith("Ladder cancelled: ")


def test_cancelling_a_running_ladder_asks_its_sides_to_stop(
    personas, running, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        ladder_cancel(ladder=running, user=personas.member)
        ladder_cancel(ladder=running, user=personas.lead)

    # The run ends them when it sees the request; until then they run.
    assert {s.status for s in running.sides.all()} == {LadderStatus.RUNNING}
    assert fresh(running).status == LadderStatus.RUNNING
    assert fresh(running).cancel_requested_at is not None
    assert ladder_events(personas.investigation).count("Ladder cancelled") == 1


@pytest.mark.parametrize(
    ("status", "word"),
    [
        (LadderStatus.COMPLETED, "completed"),
        (LadderStatus.FAILED, "failed"),
        (LadderStatus.CANCELLED, "cancelled"),
    ],
)
def test_an_ended_ladder_cannot_be_cancelled(personas, ladder, status, word):
    Ladder.objects.filter(pk=ladder.pk).update(status=status)
    events = TimelineEvent.objects.count()

    with pytest.raises(ValidationError) as caught:
        ladder_cancel(ladder=ladder, user=personas.member)

    assert caught.value.messages == [f"The ladder has already {word}."]
    assert fresh(ladder).cancel_requested_at is None
    assert TimelineEvent.objects.count() == events


def test_a_second_cancel_of_a_cancelled_ladder_is_refused(
    personas, ladder, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        ladder_cancel(ladder=ladder, user=personas.member)

    with pytest.raises(ValidationError, match="already cancelled"):
        ladder_cancel(ladder=ladder, user=personas.member)


def test_an_imported_ladder_cannot_be_cancelled(personas):
    imported = ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="ab",
        files=files("ab.txt"),
    )

    with pytest.raises(ValidationError):
        ladder_cancel(ladder=imported, user=personas.member)
    assert fresh(imported).status == LadderStatus.IMPORTED


# --- imports: every format, from the real captures ------------------------------------------

FORMATS = [
    ("wrk", "wrk-latency.txt", None, [10], "concurrency"),
    ("wrk2", "wrk2-readme-u-latency-example2.txt", None, [2000], "rate"),
    ("hey", "hey.txt", 10, [10], "concurrency"),
    ("ab", "ab.txt", None, [10], "concurrency"),
    ("k6-json", "k6-summary-export.json", None, [5], "concurrency"),
    ("k6-text", "k6-text.txt", None, [5], "concurrency"),
    ("jmeter-csv", "jmeter-ladder.jtl", None, [1, 2, 3, 4], "concurrency"),
    ("locust-csv", "locust_stats_history.csv", None, [1, 2, 3], "concurrency"),
]
LABELS = {
    "wrk": "wrk text",
    "wrk2": "wrk2 text",
    "hey": "hey text",
    "ab": "ab text",
    "k6-json": "k6 JSON summary",
    "k6-text": "k6 text summary",
    "jmeter-csv": "JMeter CSV results (JTL)",
    "locust-csv": "Locust stats history CSV",
}


def do_import(personas, *names, side="a", format="wrk", user=None, **options) -> Ladder:
    return ladder_import(
        investigation=personas.investigation,
        user=user or personas.member,
        side_key=side,
        format=format,
        files=files(*names),
        **options,
    )


@pytest.mark.parametrize(("format", "name", "load", "loads", "kind"), FORMATS)
def test_each_format_imports_as_steps_at_its_loads(personas, format, name, load, loads, kind):
    expected = parse(
        format,
        capture(name).decode(),
        **({} if load is None else {"concurrency" if format == "hey" else "rate": load}),
    )

    ladder = do_import(personas, name, side="b", format=format, load=load)

    ladder = fresh(ladder)
    assert ladder.status == LadderStatus.IMPORTED
    assert ladder.tool == "" and ladder.finished_at is not None
    assert ladder.steps == loads and all(isinstance(x, int) for x in ladder.steps)
    assert ladder.requested_by == personas.member
    (side,) = ladder.sides.select_related("side")
    assert (side.side.key, side.status, side.source) == ("b", LadderStatus.IMPORTED, format)
    assert side.load_generator is None and side.url == ""
    steps = list(side.steps.all())
    assert [(s.index, s.load, s.load_kind) for s in steps] == [
        (index, at, kind) for index, at in enumerate(loads)
    ]
    for step, parsed in zip(steps, expected, strict=True):
        assert (step.requests, step.rps, step.latency_ms, step.errors) == (
            parsed.requests,
            parsed.rps,
            parsed.latency_ms,
            parsed.errors,
        )
    assert set(ladder.analysis) == {"knees", "divergence"}
    count = len(loads)
    (event,) = personas.investigation.events.filter(kind="ladder")
    assert event.summary == (
        f"Imported {LABELS[format]} onto side B: {count} step{'s' if count != 1 else ''} "
        f"({', '.join(str(x) for x in loads)})"
    )
    assert event.details == {"ladder": ladder.pk, "side": "b", "format": format}
    assert event.author == personas.member


def test_several_files_become_steps_in_order_of_load(personas):
    # Loads 5, 4 and 3, given in that order.
    ladder = do_import(
        personas,
        "k6-summary-export.json",
        "k6-handle-summary.json",
        "k6-summary-export-default-stats.json",
        format="k6-json",
    )

    steps = list(LadderStep.objects.filter(ladder_side__ladder=ladder))
    assert [(s.index, s.load) for s in steps] == [(0, 3), (1, 4), (2, 5)]
    assert [s.requests for s in steps] == [2508, 5176, 23637]
    assert fresh(ladder).steps == [3, 4, 5]
    assert ladder_events(personas.investigation) == [
        "Imported k6 JSON summary onto side A: 3 steps (3, 4, 5)"
    ]


def test_two_files_at_the_same_load_are_refused(personas):
    before = rows()

    with pytest.raises(ValidationError) as caught:
        do_import(personas, "wrk-latency.txt", "wrk-plain.txt")

    assert caught.value.message_dict == {
        "file": ["More than one result at load 10 (wrk-latency.txt, wrk-plain.txt)."]
    }
    assert rows() == before


def test_more_loads_append_to_an_imported_side_in_order(personas):
    ladder = do_import(personas, "ab.txt", format="ab")  # load 10

    again = do_import(personas, "ab-non2xx.txt", format="ab", ladder=ladder)  # load 5

    assert again.pk == ladder.pk
    steps = list(side_of(ladder, "a").steps.all())
    assert [(s.index, s.load, s.requests) for s in steps] == [(0, 5, 1000), (1, 10, 2000)]
    assert fresh(ladder).steps == [5, 10]
    assert Ladder.objects.count() == 1
    assert ladder_events(personas.investigation)[-1] == ("Imported ab text onto side A: 1 step (5)")


def test_a_load_the_side_already_has_is_refused_and_nothing_is_added(personas):
    ladder = do_import(personas, "ab.txt", format="ab")  # load 10
    before = rows()
    analysis = fresh(ladder).analysis

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="ab",
        # 5 is new, 10 is not: neither is kept.
        files=files("ab-non2xx.txt", "ab.txt"),
        ladder=ladder,
    )

    assert errors == {"file": [f"Side A of ladder #{ladder.pk} already has a step at load 10."]}
    assert rows() == before
    assert fresh(ladder).steps == [10]
    assert fresh(ladder).analysis == analysis


def test_the_other_side_imports_onto_the_same_ladder_and_ticks_the_checklist(personas):
    ladder = do_import(personas, "ab.txt", format="ab")  # A at 10

    do_import(personas, "wrk-latency.txt", side="b", format="wrk", ladder=ladder)  # B at 10

    ladder = fresh(ladder)
    assert sorted(ladder.sides.values_list("side__key", "source")) == [("a", "ab"), ("b", "wrk")]
    assert ladder.steps == [10]
    # Both sides measured at 10: the divergence compares them.
    assert ladder.analysis["divergence"]["index"] == 0
    item = checklist_ladder_item(personas.investigation)
    assert item.status == ItemStatus.DONE and item.auto
    assert item.evidence.startswith(f"ladder #{ladder.pk}")


def test_one_imported_side_does_not_tick_the_checklist(personas):
    do_import(personas, "jmeter-ladder.jtl", format="jmeter-csv")

    assert checklist_ladder_item(personas.investigation).status == ItemStatus.TODO


def test_results_are_not_imported_onto_a_ladder_that_ran_here(personas, ladder):
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="b",
        format="wrk",
        files=files("wrk-latency.txt"),
        ladder=ladder,
    )

    assert errors == {"side": [f"Side B of ladder #{ladder.pk} was run here, not imported."]}
    assert rows() == before


def test_a_ladder_of_another_investigation_is_refused(personas):
    other = investigation_create(
        team=personas.team, user=personas.lead, title="Another case", side_a_label="x"
    )
    theirs = ladder_import(
        investigation=other, user=personas.lead, side_key="a", format="ab", files=files("ab.txt")
    )
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="b",
        format="ab",
        files=files("ab-non2xx.txt"),
        ladder=theirs,
    )

    assert errors == {"ladder": ["Choose a ladder of this investigation."]}
    assert rows() == before


def test_hey_takes_its_concurrency_as_the_load(personas):
    ladder = do_import(personas, "hey-non2xx.txt", format="hey", load=5)

    (step,) = LadderStep.objects.filter(ladder_side__ladder=ladder)
    assert (step.load, step.load_kind) == (5, "concurrency")
    assert step.errors["non_2xx"] == 100


def test_hey_without_its_concurrency_is_refused(personas):
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="hey",
        files=files("hey.txt"),
    )

    assert errors == {
        "file": [
            "hey.txt: hey does not print its concurrency: pass concurrency= (hey -c) or keep "
            "the hey command line in the text"
        ]
    }
    assert rows() == before


def test_wrk2_takes_its_rate_as_the_load(personas):
    ladder = do_import(personas, "wrk2-readme-basic.txt", format="wrk2", load=1500)

    (step,) = LadderStep.objects.filter(ladder_side__ladder=ladder)
    assert (step.load, step.load_kind) == (1500, "rate")
    assert fresh(ladder).steps == [1500]


@pytest.mark.parametrize(
    ("format", "name"),
    [
        ("wrk", "wrk-latency.txt"),
        ("ab", "ab.txt"),
        ("k6-text", "k6-text.txt"),
        ("jmeter-csv", "jmeter-ladder.jtl"),
        ("locust-csv", "locust_stats_history.csv"),
    ],
)
def test_a_load_is_refused_for_formats_that_state_their_own(personas, format, name):
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format=format,
        files=files(name),
        load=10,
    )

    assert errors == {"load": [f"{LABELS[format]} states its own load."]}
    assert rows() == before


def test_a_k6_summary_with_its_own_vus_refuses_a_load(personas):
    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="k6-json",
        files=files("k6-summary-export.json"),
        load=10,
    )

    assert errors == {
        "file": [
            "k6-summary-export.json: metrics.vus: the summary states its own load (5 VUs): "
            "give no load"
        ]
    }


def test_a_load_is_given_with_one_file_at_a_time(personas):
    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="hey",
        files=files("hey.txt", "hey-non2xx.txt"),
        load=10,
    )

    assert errors == {"load": ["Give the load with one file at a time."]}


@pytest.mark.parametrize("load", [0, -5, 10_000_001, float("nan"), "10"])
def test_a_load_that_is_no_positive_number_is_refused(personas, load):
    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="hey",
        files=files("hey.txt"),
        load=load,
    )

    assert errors == {"load": ["The load is a positive number."]}


BROKEN_WRK = "line 12: expected 'Requests/sec: <number>', found 'Requests/sec:   banana'"


def test_a_broken_file_is_refused_with_its_line_and_leaves_no_trace(personas):
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="wrk",
        files=[("wrk.txt", edited("wrk-latency.txt", "4487.43", "banana"))],
    )

    assert errors == {"file": [f"wrk.txt: {BROKEN_WRK}"]}
    assert rows() == before
    assert not Ladder.objects.exists() and not LadderStep.objects.exists()


def test_a_broken_file_among_good_ones_is_named_and_nothing_is_imported(personas):
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="ab",
        files=[
            ("good.txt", capture("ab.txt")),
            ("broken.txt", capture("ab-non2xx.txt")[:700]),
        ],
    )

    (message,) = errors["file"]
    assert message.startswith("broken.txt: line ")
    assert "expected" in message
    assert rows() == before


def test_a_broken_file_onto_an_existing_ladder_adds_nothing(personas):
    ladder = do_import(personas, "ab.txt", format="ab")
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="b",
        format="wrk",
        files=[("wrk.txt", edited("wrk-latency.txt", "4487.43", "banana"))],
        ladder=ladder,
    )

    assert errors == {"file": [f"wrk.txt: {BROKEN_WRK}"]}
    assert rows() == before
    assert list(ladder.sides.values_list("side__key", flat=True)) == ["a"]


def test_a_file_that_is_not_utf8_is_refused(personas):
    latin1 = capture("wrk-latency.txt").decode().replace("sleep", "sléep").encode("latin-1")
    before = rows()

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="wrk",
        files=[("wrk.txt", latin1)],
    )

    byte = latin1.index("é".encode("latin-1"))
    assert errors == {"file": [f"wrk.txt: not UTF-8 text (byte {byte})."]}
    assert rows() == before


def test_an_empty_file_is_refused(personas):
    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="wrk",
        files=[("empty.txt", b"")],
    )

    assert errors == {"file": ["empty.txt is not wrk output: it is an empty file."]}


def test_more_than_fifty_files_are_refused(personas):
    before = rows()
    many = [(f"run-{n}.txt", capture("ab.txt")) for n in range(MAX_IMPORT_FILES + 1)]

    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="ab",
        files=many,
    )

    assert errors == {"file": ["At most 50 files at a time."]}
    assert rows() == before


def test_a_file_over_twenty_megabytes_is_refused(personas):
    errors = refused(
        ladder_import,
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="wrk",
        files=[("huge.txt", b" " * (20 * 1024 * 1024 + 1))],
    )

    assert errors == {"file": ["huge.txt: larger than 20 MB."]}


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"side_key": "c"}, {"side": ["Choose side a or b."]}),
        ({"side_key": "A"}, {"side": ["Choose side a or b."]}),
        (
            {"format": "gatling"},
            {
                "format": [
                    "Choose one of: wrk, wrk2, hey, ab, k6-json, k6-text, jmeter-csv, locust-csv."
                ]
            },
        ),
        ({"files": []}, {"file": ["Choose a result file."]}),
    ],
)
def test_an_import_names_the_bad_choice(personas, changes, errors):
    fields = {
        "investigation": personas.investigation,
        "user": personas.member,
        "side_key": "a",
        "format": "wrk",
        "files": files("wrk-latency.txt"),
        **changes,
    }

    assert refused(ladder_import, **fields) == errors
    assert not Ladder.objects.exists()


def test_the_analysis_of_an_imported_pair_compares_by_load(personas):
    ladder = do_import(personas, "locust_stats_history.csv", format="locust-csv")
    do_import(personas, "jmeter-ladder.jtl", side="b", format="jmeter-csv", ladder=ladder)

    analysis = ladder_analysis(ladder=fresh(ladder))

    assert fresh(ladder).steps == [1, 2, 3, 4]
    assert analysis == fresh(ladder).analysis
    assert analysis["divergence"]["index"] is not None


# --- the pages ----------------------------------------------------------------------------


def investigation_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/"


def detail_url(ladder) -> str:
    return f"/ladders/{ladder.pk}/"


def test_investigation_page_shows_the_empty_ladders_section_and_forms_to_responders(personas):
    for who in ("lead", "member"):
        page = loaded_page(client_for(personas, who), investigation_url(personas))

        assert 'id="ladders"' in page and "Ladder load tests" in page
        assert "No ladder yet." in page
        assert f'action="/investigations/{personas.investigation.pk}/ladders/"' in page
        assert f'action="/investigations/{personas.investigation.pk}/imports/"' in page
        assert 'enctype="multipart/form-data"' in page
        assert re.search(r'<input type="file" name="import-file"[^>]* multiple', page)


def test_investigation_page_shows_viewers_the_ladders_without_the_forms(personas):
    page = loaded_page(personas.client(personas.viewer), investigation_url(personas))

    assert "No ladder yet." in page
    assert f'action="/investigations/{personas.investigation.pk}/ladders/"' not in page
    assert 'name="import-file"' not in page and 'name="ladder-steps"' not in page


def test_investigation_page_lists_the_ladders(personas, ladder):
    imported = do_import(personas, "jmeter-ladder.jtl", format="jmeter-csv")

    page = loaded_page(personas.client(personas.viewer), investigation_url(personas))

    assert "No ladder yet." not in page
    assert f'href="/ladders/{ladder.pk}/"' in page and f'href="/ladders/{imported.pk}/"' in page
    assert "10, 20, 50" in page and "1, 2, 3, 4" in page


def test_investigation_page_is_hidden_from_outsiders(personas):
    assert client_for(personas, "outsider").get(investigation_url(personas)).status_code == 404


def test_the_ladder_form_starts_with_the_last_ladders_urls(personas, ladder):
    page = loaded_page(personas.client(personas.member), investigation_url(personas))

    assert f'value="{URL_A}"' in page
    assert f'value="{URL_B.replace("&", "&amp;")}"' in page


def _table_cells(page: str, ladder) -> list[str]:
    row = re.search(
        rf'<tr>\s*<td><a href="/ladders/{ladder.pk}/">.*?</tr>', page, flags=re.S
    ).group(0)
    return [
        re.sub(r"<[^>]+>", " ", cell).split()
        for cell in re.findall(r"<td[^>]*>(.*?)</td>", row, flags=re.S)
    ]


def test_a_ladder_imported_onto_side_b_only_shows_under_side_b(personas):
    imported = do_import(personas, "ab.txt", side="b", format="ab")

    page = loaded_page(personas.client(personas.viewer), investigation_url(personas))

    cells = _table_cells(page, imported)
    # Ladder, Status, Steps, Side A, Side B, Started.
    assert cells[3] == ["—"], cells
    assert "Imported" in cells[4], cells


@pytest.mark.parametrize(
    ("who", "status"),
    [("lead", 200), ("member", 200), ("viewer", 200), ("outsider", 404), ("anonymous", 302)],
)
def test_ladder_page_by_persona(personas, ladder, who, status):
    response = client_for(personas, who).get(detail_url(ladder))

    assert response.status_code == status
    if who == "anonymous":
        assert "login" in response["Location"]
    if status != 200:
        return
    page = html(response)
    assert f"Ladder #{ladder.pk}" in page
    assert URL_A in page and "load-generator-a" in page and "load-generator-b" in page
    assert f'hx-get="/ladders/{ladder.pk}/?v=' in page and 'hx-trigger="every 2s"' in page
    has_cancel = f'action="/ladders/{ladder.pk}/cancel/"' in page
    assert has_cancel is (who != "viewer")


def test_an_ended_ladder_page_has_no_cancel_button_and_does_not_poll(personas):
    imported = do_import(personas, "locust_stats_history.csv", format="locust-csv")

    page = html(personas.client(personas.lead).get(detail_url(imported)))

    assert f'action="/ladders/{imported.pk}/cancel/"' not in page
    assert "hx-trigger" not in page
    assert "Imported results" in page
    assert "Step by step" in page


def test_a_missing_ladder_is_404(personas):
    assert personas.client(personas.lead).get("/ladders/999999/").status_code == 404


def test_the_progress_partial_answers_200_while_the_ladder_runs(personas, running):
    store(running, "a", (10, 1000))

    response = personas.client(personas.viewer).get(detail_url(running), **HX)

    page = html(response)
    assert response.status_code == 200
    assert "<html" not in page and 'id="ladder-progress"' in page and 'id="ladder-live"' in page
    assert 'hx-trigger="every 2s"' in page
    assert "1/3" in page and "0/3" in page
    assert "HX-Request" in response["Vary"]


def test_the_progress_partial_stops_polling_with_286_once_the_ladder_ended(
    personas, running, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a", LadderStatus.FAILED, "ssh: connection refused")
        finish(running, "b", LadderStatus.FAILED, "ssh: connection refused")

    response = personas.client(personas.viewer).get(detail_url(running), **HX)

    assert response.status_code == 286
    page = html(response)
    assert "hx-trigger" not in page and 'id="ladder-live"' in page
    assert "ssh: connection refused" in page
    assert "HX-Request" in response["Vary"]


def test_the_progress_partial_of_an_imported_ladder_is_286(personas):
    imported = do_import(personas, "ab.txt", format="ab")

    response = personas.client(personas.member).get(detail_url(imported), **HX)

    assert response.status_code == 286


def test_the_full_ladder_page_varies_on_htmx_too(personas, running):
    # One URL answers with the page or the partial: a cache must tell them apart.
    response = personas.client(personas.viewer).get(detail_url(running))

    assert response.status_code == 200
    assert "HX-Request" in response.get("Vary", "")


def test_the_progress_partial_is_hidden_from_outsiders(personas, running):
    assert personas.client(personas.outsider).get(detail_url(running), **HX).status_code == 404


def test_the_ladder_page_shows_the_step_table_with_both_sides(
    personas, running, django_capture_on_commit_callbacks
):
    store(running, "a", (10, 1000), (20, 1100), (50, 1150))
    store(running, "b", (10, 1000), (20, 2000), (50, 5000))
    with django_capture_on_commit_callbacks(execute=True):
        finish(running, "a")
        finish(running, "b")

    page = unescape(html(personas.client(personas.viewer).get(detail_url(running))))

    assert "Step by step" in page
    assert "Knee of side A:" in page and "throughput stops scaling at 20" in page
    assert "Divergence:" in page and "at 20 the sides' throughput differs" in page
    assert "worse" in page and "about equal" in page
    assert 'data-chart="chart-' in page


# --- views: starting a ladder ---------------------------------------------------------------


def ladder_form(**changes) -> dict:
    return {
        "ladder-side_a_url": URL_A,
        "ladder-side_b_url": URL_B,
        "ladder-steps": "10, 20 50",
        "ladder-step_seconds": "30",
        "ladder-warmup_seconds": "5",
        "ladder-tool": "wrk",
        "ladder-stop_error_rate": "5",
        "ladder-stop_p99_ms": "",
        "ladder-margin": "20",
        **{f"ladder-{k}": v for k, v in changes.items()},
    }


def new_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/ladders/"


@pytest.mark.parametrize("who", ["lead", "member"])
def test_a_responder_starts_a_ladder_from_the_page(personas, ladder_hosts, who):
    response = client_for(personas, who).post(new_url(personas), ladder_form())

    ladder = Ladder.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/ladders/{ladder.pk}/"
    assert ladder.steps == [10, 20, 50]
    assert (ladder.stop_error_rate, ladder.margin, ladder.stop_p99_ms) == (0.05, 0.2, None)
    assert ladder.requested_by == getattr(personas, who)


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("outsider", 404)])
def test_only_responders_start_a_ladder(personas, ladder_hosts, who, status):
    response = client_for(personas, who).post(new_url(personas), ladder_form())

    assert response.status_code == status
    assert not Ladder.objects.exists()


def test_starting_a_ladder_is_post_only(personas, ladder_hosts):
    assert personas.client(personas.lead).get(new_url(personas)).status_code == 405


def test_the_page_says_which_side_lacks_a_load_generator(personas):
    response = personas.client(personas.member).post(new_url(personas), ladder_form())

    assert form_errors(response, "ladder_form") == [
        "Place a host with the role 'load generator' on side A and B first."
    ]
    assert not Ladder.objects.exists()


def test_the_page_names_the_bad_url(personas, ladder_hosts):
    response = personas.client(personas.member).post(
        new_url(personas), ladder_form(side_a_url="ftp://10.0.1.10/")
    )

    assert response.context["ladder_form"].errors == {
        "side_a_url": ["Enter an http:// or https:// URL with a host name."]
    }
    assert 'value="ftp://10.0.1.10/"' in html(response)
    assert not Ladder.objects.exists()


def test_the_page_refuses_steps_that_are_not_whole_numbers(personas, ladder_hosts):
    response = personas.client(personas.member).post(
        new_url(personas), ladder_form(steps="10, twenty, 50")
    )

    assert form_errors(response, "ladder_form") == [
        "Give the loads as whole numbers, e.g. 10, 20, 50, 100."
    ]
    assert not Ladder.objects.exists()


@pytest.mark.parametrize("hostile", HOSTILE_STRINGS[:5])
def test_a_hostile_url_is_refused_and_never_shown_raw(personas, ladder_hosts, hostile):
    response = personas.client(personas.member).post(
        new_url(personas), ladder_form(side_a_url=hostile, side_b_url=hostile)
    )

    page = html(response)
    assert not Ladder.objects.exists()
    assert "<script>alert" not in page and "<img src=x" not in page
    assert len(form_errors(response, "ladder_form")) == 2


def test_a_url_with_shell_and_markup_characters_comes_out_escaped(personas, ladder_hosts):
    odd = "http://10.0.1.10/a?x=1&y=$(reboot);(1)!*@%3Cscript%3E"
    ladder = request(personas, side_a_url=odd)

    page = html(personas.client(personas.viewer).get(detail_url(ladder)))
    timeline = loaded_page(personas.client(personas.viewer), investigation_url(personas))

    assert odd.replace("&", "&amp;") in page
    assert odd not in page
    assert odd.replace("&", "&amp;") in timeline


def test_hostile_titles_and_side_labels_come_out_escaped_on_the_ladder_page(personas):
    hostile = HOSTILE_STRINGS[0]
    investigation = investigation_create(
        team=personas.team,
        user=personas.lead,
        title=hostile,
        side_a_label=hostile,
        side_b_label=HOSTILE_STRINGS[2],
    )
    imported = ladder_import(
        investigation=investigation,
        user=personas.lead,
        side_key="a",
        format="ab",
        files=files("ab.txt"),
    )

    for url, extra in ((detail_url(imported), {}), (detail_url(imported), HX)):
        page = html(personas.client(personas.viewer).get(url, **extra))
        assert "<script>alert" not in page and "<img src=x" not in page
        assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page


# --- views: imports ------------------------------------------------------------------------


def import_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/imports/"


def uploads(*names: str) -> list[SimpleUploadedFile]:
    return [SimpleUploadedFile(name, capture(name)) for name in names]


def import_form(*upload_files, **changes) -> dict:
    return {
        "import-side": "a",
        "import-format": "k6-json",
        "import-file": list(upload_files),
        "import-load": "",
        "import-ladder": "",
        **{f"import-{k}": v for k, v in changes.items()},
    }


def test_a_responder_imports_several_files_from_the_page(personas):
    form = import_form(
        *uploads(
            "k6-summary-export.json",
            "k6-handle-summary.json",
            "k6-summary-export-default-stats.json",
        )
    )

    response = personas.client(personas.member).post(import_url(personas), form, follow=True)

    ladder = Ladder.objects.get()
    assert response.redirect_chain[0] == (f"/ladders/{ladder.pk}/", 302)
    assert messages_of(response) == [
        "Imported 3 files onto side A. k6-summary-export.json: 23,637 requests read. "
        "k6-handle-summary.json: 5,176 requests read. k6-summary-export-default-stats.json: "
        "2,508 requests read."
    ]
    assert [s.load for s in LadderStep.objects.all()] == [3, 4, 5]
    assert "Imported results" in html(response)


def test_the_page_imports_onto_an_existing_ladders_other_side(personas):
    ladder = do_import(personas, "ab.txt", format="ab")

    response = personas.client(personas.lead).post(
        import_url(personas),
        import_form(*uploads("wrk-latency.txt"), side="b", format="wrk", ladder=str(ladder.pk)),
    )

    assert response.status_code == 302 and response["Location"] == f"/ladders/{ladder.pk}/"
    assert sorted(ladder.sides.values_list("side__key", flat=True)) == ["a", "b"]


def test_the_page_imports_hey_with_its_load(personas):
    response = personas.client(personas.member).post(
        import_url(personas), import_form(*uploads("hey.txt"), format="hey", load="10")
    )

    assert response.status_code == 302
    assert LadderStep.objects.get().load == 10


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("outsider", 404)])
def test_only_responders_import(personas, who, status):
    response = client_for(personas, who).post(
        import_url(personas), import_form(*uploads("k6-summary-export.json"))
    )

    assert response.status_code == status
    assert not Ladder.objects.exists()


def test_an_anonymous_import_goes_to_sign_in(personas):
    response = Client().post(import_url(personas), import_form(*uploads("k6-summary-export.json")))

    assert response.status_code == 302 and "login" in response["Location"]
    assert not Ladder.objects.exists()


def test_a_broken_upload_is_refused_on_the_page_with_its_line(personas):
    broken = SimpleUploadedFile("wrk.txt", edited("wrk-latency.txt", "4487.43", "banana"))
    before = rows()

    response = personas.client(personas.member).post(
        import_url(personas), import_form(broken, format="wrk")
    )

    assert form_errors(response, "import_form") == [f"wrk.txt: {BROKEN_WRK}"]
    assert rows() == before


def test_a_hostile_file_name_comes_out_escaped(personas):
    name = "<img src=x onerror=alert(1)>.txt"
    good = SimpleUploadedFile("good.txt", capture("wrk-latency.txt"))
    broken = SimpleUploadedFile(name, edited("wrk-latency.txt", "4487.43", "banana"))

    response = personas.client(personas.member).post(
        import_url(personas), import_form(good, broken, format="wrk")
    )

    page = html(response)
    assert form_errors(response, "import_form") == [f"{name}: {BROKEN_WRK}"]
    assert "<img src=x onerror" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;.txt: line 12" in page
    assert not Ladder.objects.exists()


def test_the_page_refuses_a_load_for_a_format_that_states_its_own(personas):
    response = personas.client(personas.member).post(
        import_url(personas), import_form(*uploads("ab.txt"), format="ab", load="10")
    )

    assert form_errors(response, "import_form") == ["ab text states its own load."]
    assert not Ladder.objects.exists()


def test_the_page_refuses_a_ladder_of_another_investigation(personas):
    other = investigation_create(
        team=personas.team, user=personas.lead, title="Another case", side_a_label="x"
    )
    theirs = ladder_import(
        investigation=other, user=personas.lead, side_key="a", format="ab", files=files("ab.txt")
    )

    response = personas.client(personas.member).post(
        import_url(personas),
        import_form(*uploads("ab-non2xx.txt"), format="ab", ladder=str(theirs.pk)),
    )

    assert len(form_errors(response, "import_form")) == 1
    assert Ladder.objects.count() == 1 and LadderStep.objects.count() == 1


def test_the_page_needs_a_file(personas):
    response = personas.client(personas.member).post(import_url(personas), import_form())

    assert form_errors(response, "import_form") == ["Choose a result file."]
    assert not Ladder.objects.exists()


# --- views: cancel -------------------------------------------------------------------------


def cancel_url(ladder) -> str:
    return f"/ladders/{ladder.pk}/cancel/"


@pytest.mark.parametrize("who", ["lead", "member"])
def test_a_responder_cancels_from_the_page(personas, running, who):
    response = client_for(personas, who).post(cancel_url(running), follow=True)

    assert response.redirect_chain[0] == (f"/ladders/{running.pk}/", 302)
    assert messages_of(response) == ["Cancelling: the load tools are being stopped on both sides."]
    assert fresh(running).cancel_requested_at is not None
    assert "Cancelling…" in html(response)


@pytest.mark.parametrize(("who", "status"), [("viewer", 403), ("outsider", 404)])
def test_only_responders_cancel(personas, running, who, status):
    response = client_for(personas, who).post(cancel_url(running))

    assert response.status_code == status
    assert fresh(running).cancel_requested_at is None
    assert not TimelineEvent.objects.filter(summary="Ladder cancelled").exists()


def test_an_anonymous_cancel_goes_to_sign_in(personas, running):
    response = Client().post(cancel_url(running))

    assert response.status_code == 302 and "login" in response["Location"]
    assert fresh(running).cancel_requested_at is None


def test_cancel_is_post_only(personas, running):
    assert personas.client(personas.lead).get(cancel_url(running)).status_code == 405
    assert fresh(running).cancel_requested_at is None


def test_cancelling_an_ended_ladder_says_so(personas):
    imported = do_import(personas, "ab.txt", format="ab")
    Ladder.objects.filter(pk=imported.pk).update(status=LadderStatus.COMPLETED)

    response = personas.client(personas.member).post(cancel_url(imported), follow=True)

    assert messages_of(response) == ["The ladder has already completed."]
