"""A responder opens an investigation and logs a back-dated action; a colleague sees it live."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from investigations.models import Investigation, TimelineEvent
from tests.e2e.conftest import panels_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SHANGHAI = ZoneInfo("Asia/Shanghai")


def test_a_back_dated_action_lands_in_its_place_and_reaches_a_colleague(
    personas, sign_in, screenshot, live_server
):
    responder = sign_in(personas.member, time_zone="Asia/Shanghai")
    responder.click("text=Open an investigation")
    responder.select_option("select[name=team]", str(personas.team.pk))
    responder.fill("input[name=title]", "Order API: TPS halved in containers")
    responder.fill("input[name=symptom_metric]", "TPS")
    responder.fill("input[name=symptom_value_a]", "1150")
    responder.fill("input[name=symptom_value_b]", "2300")
    responder.select_option("select[name=symptom_direction]", "higher")
    responder.fill("input[name=side_a_label]", "container")
    responder.fill("input[name=side_b_label]", "VM")
    responder.click("button:has-text('Open investigation')")
    responder.wait_for_selector("h1.title")
    panels_loaded(responder)
    assert "A is 2.00× worse than B" in responder.inner_text("#symptom")
    investigation = Investigation.objects.get(title="Order API: TPS halved in containers")

    colleague = sign_in(personas.lead)
    colleague.goto(f"{live_server.url}/investigations/{investigation.pk}/")
    panels_loaded(colleague)
    opened = colleague.locator("ol.timeline li").count()
    assert opened >= 1

    # Two hours ago in the responder's own zone (the form reads it in the browser's zone).
    back_then = datetime.now(SHANGHAI).replace(second=0, microsecond=0) - timedelta(hours=2)
    responder.select_option("#timeline-form select[name=kind]", "action")
    responder.select_option("#timeline-form select[name=action]", "restart")
    responder.fill("#timeline-form input[name=occurred_at]", back_then.strftime("%Y-%m-%dT%H:%M"))
    responder.fill(
        "#timeline-form textarea[name=summary]", "Restarted the container pool <b>twice</b>"
    )
    responder.click("button:has-text('Add to timeline')")
    responder.wait_for_selector("ol.timeline li:has-text('Restarted the container pool')")

    # Without a reload, the event appears first: it happened before the case was opened.
    items = responder.locator("ol.timeline li")
    assert items.count() == opened + 1
    assert "Restarted the container pool <b>twice</b>" in items.nth(0).inner_text()
    assert back_then.strftime("%Y-%m-%d %H:%M") in items.nth(0).inner_text()
    assert "Investigation opened" in items.nth(1).inner_text()
    event = TimelineEvent.objects.get(investigation=investigation, kind="action")
    assert event.occurred_at == back_then
    assert responder.input_value("#timeline-form textarea[name=summary]") == ""

    # The colleague's open page polls: the action shows up within a few seconds.
    colleague.wait_for_selector(
        "ol.timeline li:has-text('Restarted the container pool')", timeout=10_000
    )
    assert "Restarted the container pool" in colleague.locator("ol.timeline li").nth(0).inner_text()
    screenshot(responder, "timeline-responder")
    screenshot(colleague, "timeline-colleague")


def test_a_note_without_javascript_errors_keeps_what_was_typed(personas, sign_in, live_server):
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/")
    panels_loaded(page)
    page.select_option("#timeline-form select[name=kind]", "action")
    page.fill("#timeline-form textarea[name=summary]", "Scaled out, but forgot the action type")
    page.click("button:has-text('Add to timeline')")

    page.wait_for_selector("#timeline-form .error")
    assert "Choose what kind of action this was." in page.inner_text("#timeline-form")
    assert (
        page.input_value("#timeline-form textarea[name=summary]")
        == "Scaled out, but forgot the action type"
    )


def test_a_link_to_the_timeline_stays_there_while_the_panels_above_it_load(
    personas, sign_in, live_server
):
    """The page draws frames and htmx fills them: the panels above the timeline grow after
    the browser has jumped to #timeline, and the page keeps the timeline in view."""
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/#timeline")
    panels_loaded(page)
    page.wait_for_timeout(300)  # the last settle

    top, at_end, height = page.evaluate(
        """() => [document.getElementById('timeline').getBoundingClientRect().top,
                  window.scrollY + window.innerHeight >= document.body.scrollHeight - 2,
                  window.innerHeight]"""
    )
    # At the top of the window, or as near as the page's end lets it come.
    assert abs(top) < 40 or (at_end and 0 <= top < height / 2), f"the timeline is at {top} px"
    assert page.evaluate("() => window.scrollY") > 500
