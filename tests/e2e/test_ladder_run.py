"""A ladder started from the page: live progress, the charts when it ends, and Cancel.

Real wrk on sshd test hosts against two loopback servers, through a real Celery worker,
watched in Chromium."""

import pytest

from investigations.models import Ladder
from tests.conftest import wait_for
from tests.e2e.conftest import panels_loaded
from tests.ladders import none_left, require
from tests.loadservers import http_server

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def placed(place_ladder_hosts):
    require("wrk")
    return place_ladder_hosts()


def start_ladder(page, live_server, investigation, *, a: str, b: str, steps: str, seconds: int):
    page.goto(f"{live_server.url}/investigations/{investigation.pk}/#ladders")
    panels_loaded(page)
    page.click("details.ladder-new summary")
    form = page.locator("details.ladder-new form")
    form.locator("input[name=ladder-side_a_url]").fill(a)
    form.locator("input[name=ladder-side_b_url]").fill(b)
    form.locator("input[name=ladder-steps]").fill(steps)
    form.locator("input[name=ladder-step_seconds]").fill(str(seconds))
    form.locator("input[name=ladder-warmup_seconds]").fill("0")
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/ladders/*/")


def test_a_ladder_started_from_the_page_shows_its_progress_then_its_charts(
    personas, celery_worker, placed, sign_in, screenshot, live_server
):
    page = sign_in(personas.member)
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    # A holds one shared resource 60 ms a request: at most 17 req/s, a knee at 4 even on a
    # busy machine (see test_ladders_end_to_end).
    with http_server(wait_ms=50, hold_ms=60) as weak, http_server(wait_ms=50) as strong:
        start_ladder(
            page, live_server, personas.investigation, a=weak, b=strong, steps="1, 4", seconds=2
        )
        ladder = Ladder.objects.get(investigation=personas.investigation)
        # While it runs, the page's live part polls and the page offers Cancel.
        assert page.locator("#ladder-live[hx-get]").count() == 1
        assert page.locator("button", has_text="Cancel").count() == 1
        page.locator("#ladder-progress progress[value='1']").first.wait_for(timeout=30_000)
        # Each finished step shows as it comes; when it ends, the verdicts and three charts.
        page.locator("h1 .badge", has_text="Completed").wait_for(timeout=60_000)
    charts = page.locator(".charts .chart")
    assert charts.count() == 3
    for index in range(3):
        charts.nth(index).locator("svg.main-svg").first.wait_for()
    cpu_legend = charts.nth(2).locator(".legend .legendtext").all_text_contents()
    assert any(name.endswith("user") for name in cpu_legend), cpu_legend
    assert page.locator("table.ladder-table tbody tr").count() == 2
    assert "Knee of side A" in page.inner_text(".verdicts")
    assert page.locator("button", has_text="Cancel").count() == 0
    screenshot(page, "ladder-run")
    assert Ladder.objects.get(pk=ladder.pk).status == "completed"
    assert problems == []


def test_cancel_on_the_page_stops_the_load_on_both_sides(
    personas, celery_worker, placed, sign_in, live_server
):
    page = sign_in(personas.member)
    with http_server(wait_ms=5) as server:
        start_ladder(
            page, live_server, personas.investigation, a=server, b=server, steps="2, 4", seconds=60
        )
        wait_for(lambda: not none_left("wrk"), timeout=30)
        page.click("button:has-text('Cancel')")
        page.locator("h1 .badge", has_text="Cancelled").wait_for(timeout=30_000)
        wait_for(lambda: none_left("wrk"), timeout=10)
    assert "Cancelled" in page.inner_text("#ladder-progress")
