"""Ladders end to end: real wrk on sshd test hosts against two real HTTP servers of different
capacity, through the JSON API and a real Celery worker."""

import glob
import shutil
import time
from datetime import timedelta

import pytest

from investigations.models import Ladder, LadderSample, LadderStep, TimelineEvent
from tests.conftest import ApiClient, wait_for
from tests.ladders import none_left, require
from tests.loadservers import http_server

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def placed(place_ladder_hosts):
    require("wrk")
    return place_ladder_hosts()


def test_the_weaker_side_reaches_its_knee_first_and_the_sides_diverge(
    personas, celery_worker, placed
):
    api = ApiClient(personas.member)
    # Every request waits 50 ms on both sides; on A it then holds A's one shared resource for
    # 60 ms more. A can never pass 1000 / 60 = 17 req/s, and 4 connections already get at most
    # +83 % over 1 (a knee needs under +150 %), while B is still far below what even a busy
    # machine serves (80 req/s at 4). A's limit is a hard one: a busy machine only lowers rps.
    with http_server(wait_ms=50, hold_ms=60) as weak, http_server(wait_ms=50) as strong:
        created = api.post(
            f"/api/investigations/{personas.investigation.pk}/ladders",
            {
                "side_a_url": weak,
                "side_b_url": strong,
                "steps": [1, 4, 16],
                "step_seconds": 2,
                "warmup_seconds": 1,
                "tool": "wrk",
            },
        )
        assert created.status_code == 201, created.body
        ladder = wait_for(
            lambda: (
                (body := api.get(f"/api/ladders/{created.body['id']}").body)["status"]
                in ("completed", "failed", "cancelled")
                and body
            ),
            timeout=120,
        )

    assert ladder["status"] == "completed", ladder
    results = {(r["side"], r["load"]): r for r in ladder["results"]}
    assert len(results) == 6
    for side in ("a", "b"):
        assert results[(side, 1)]["rps"] > 0 and results[(side, 1)]["latency_p99_ms"] >= 10
    # What a ladder promises, not how fast this machine is today: the weaker side reaches its
    # knee first (or alone), and the sides diverge no later than that knee, A the worse there.
    knee_a, knee_b = ladder["knees"]["a"], ladder["knees"]["b"]
    assert knee_a["load"] is not None, ladder["knees"]
    assert knee_b["load"] is None or knee_b["load"] > knee_a["load"], ladder["knees"]
    assert ladder["divergence_step"] is not None, ladder["divergence"]
    diverged_at = ladder["steps"][ladder["divergence_step"]]
    assert diverged_at <= knee_a["load"]
    assert "differs by more than 20%" in ladder["divergence"]
    a, b = results[("a", diverged_at)], results[("b", diverged_at)]
    assert a["rps"] < b["rps"] or a["latency_p99_ms"] > b["latency_p99_ms"], (a, b)
    # Both sides ran each step together: on one planned moment, neither before it (how
    # close to it is measured by make bench, not asserted on a busy machine).
    by_step = {}
    for result in ladder["results"]:
        by_step.setdefault(result["step"], []).append(result)
    for pair in by_step.values():
        a, b = sorted(pair, key=lambda r: r["side"])
        assert a["planned_at"] == b["planned_at"], (a, b)
        for side in (a, b):
            assert _seconds(side["started_at"]) >= _seconds(side["planned_at"]), side
    # A step's planned start is its measured load's, after the warm-up: lateness (started_at
    # less planned_at) never counts the warm-up itself.
    stored = Ladder.objects.get(pk=created.body["id"])
    for step in LadderStep.objects.filter(ladder_side__ladder=stored):
        slot = stored.start_at + timedelta(seconds=step.index * stored.slot_seconds)
        assert step.planned_at == slot + timedelta(seconds=stored.warmup_seconds), step
    # The service hosts were sampled every second during each step.
    assert results[("a", 4)]["cpu_user"] is not None
    service = [placed[(side, "service")] for side in "ab"]
    assert LadderSample.objects.filter(tool="vmstat", host__in=service).count() == 6
    vmstat = LadderSample.objects.filter(tool="vmstat", host__in=service).first().series
    assert len(vmstat) >= 2 and {"r", "cs", "in", "us", "sy", "st"} <= set(vmstat[0])
    if shutil.which("mpstat"):  # sysstat: per-CPU series, and the busiest CPU of each step
        mpstat = LadderSample.objects.filter(tool="mpstat").first().series
        assert {"all", "0"} <= set(mpstat[0]) and "soft" in mpstat[0]["0"]
        assert results[("a", 16)]["busiest_cpu"]["busy"] > 0
    # So was each side's load generator, to tell a late start on a saturated one.
    generators = [placed[(side, "load_generator")] for side in "ab"]
    assert LadderSample.objects.filter(tool="vmstat", host__in=generators).count() == 6
    for step in LadderStep.objects.filter(ladder_side__ladder=stored):
        generator = step.ladder_side.load_generator
        assert step.cpu["generator"]["host"] == generator.name, step.cpu
        assert 0 <= step.cpu["generator"]["busy"] <= 100, step.cpu
    summaries = list(TimelineEvent.objects.filter(kind="ladder").values_list("summary", flat=True))
    assert summaries[0].startswith("Ladder started: 1, 4, 16 connections")
    assert any(s.startswith("Ladder: knee of side A:") for s in summaries)
    assert summaries[-1].startswith("Ladder completed:")
    assert none_left("wrk")


def test_cancel_stops_both_sides_and_leaves_no_wrk_running(personas, celery_worker, placed):
    api = ApiClient(personas.member)
    with http_server(wait_ms=5) as server:
        created = api.post(
            f"/api/investigations/{personas.investigation.pk}/ladders",
            {
                "side_a_url": server,
                "side_b_url": server,
                "steps": [2, 4, 8],
                "step_seconds": 60,
                "warmup_seconds": 0,
            },
        )
        assert created.status_code == 201, created.body
        ladder_id = created.body["id"]
        wait_for(lambda: not none_left("wrk"), timeout=30)

        cancelled = api.post(f"/api/ladders/{ladder_id}/cancel")
        assert cancelled.status_code == 200

        started = time.monotonic()
        ladder = wait_for(
            lambda: (
                (body := api.get(f"/api/ladders/{ladder_id}").body)["status"] == "cancelled"
                and body
            ),
            timeout=30,
        )
        wait_for(lambda: none_left("wrk"), timeout=10)
        assert time.monotonic() - started < 15
        # The samplers on the service hosts were stopped with the load.
        wait_for(lambda: none_left("vmstat") and none_left("mpstat"), timeout=10)
    assert {side["status"] for side in ladder["sides"]} == {"cancelled"}
    assert ladder["results"] == []  # the first 60 s step never finished
    assert TimelineEvent.objects.filter(kind="ladder", summary="Ladder cancelled").exists()
    # No PID file left: every wrapped tool (load and samplers) has ended.
    assert not glob.glob(f"/tmp/perfcase-{ladder_id}-*.pid")


def test_a_side_without_a_load_generator_is_refused_by_name(personas, placed):
    from investigations.models import EnvironmentMember

    EnvironmentMember.objects.filter(side__key="b", role="load_generator").delete()

    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/ladders",
        {"side_a_url": "http://127.0.0.1:9/", "side_b_url": "http://127.0.0.1:9/", "steps": [1]},
    )

    assert response.status_code == 400
    assert response.body["errors"][0]["field"] == "load_generator"
    assert "side B" in response.body["errors"][0]["message"]


def _seconds(stamp: str) -> float:
    from datetime import datetime

    return datetime.fromisoformat(stamp).timestamp()
