"""A rerun's before/after comparison on a 390 x 844 phone in real Chromium, in English and
Chinese: the rerun's page and the postmortem fit the screen by the phone test's own checks
(test_phone_layout.py), with the comparison's charts drawn."""

import pytest

from investigations.choices import LadderStatus
from investigations.demo import DEMO_TITLE
from investigations.models import Investigation, Ladder
from investigations.services.ladder_results import ladder_side_add
from tests.e2e.test_phone_layout import PHONE, demo_case, layout_problems, settle

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
__all__ = ["demo_case"]


def rerun_of_the_demo_ladder() -> Ladder:
    """The demo's ladder run again, its results stored as a run would store them: side A
    now as fast as side B."""
    case = Investigation.objects.get(title=DEMO_TITLE)
    before = Ladder.objects.filter(investigation=case).first()
    after = Ladder.objects.create(
        investigation=case,
        tool=before.tool,
        steps=before.steps,
        load_kind=before.load_kind,
        margin=before.margin,
        status=LadderStatus.COMPLETED,
        rerun_of=before,
    )
    sides = {side.side.key: side for side in before.sides.select_related("side")}
    fastest = {step.load: step.rps for step in sides["b"].steps.all()}
    for side in sides.values():
        copy = ladder_side_add(
            ladder=after, side=side.side, status=LadderStatus.COMPLETED, url="http://10.0.0.5/"
        )
        for step in side.steps.all():
            step.pk, step.ladder_side = None, copy
            step.rps = fastest.get(step.load, step.rps)
            step.save()
    return after


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_a_rerun_and_the_postmortem_fit_a_phone(
    browser, live_server, demo_case, language, screenshot
):
    rerun = rerun_of_the_demo_ladder()
    context = browser.new_context(
        viewport=PHONE, timezone_id="UTC", extra_http_headers={"Accept-Language": language}
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", "perfcase-demo")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/investigations/")

    found = {}
    for path in (
        f"/ladders/{rerun.pk}/",
        f"/investigations/{demo_case.pk}/postmortem/",
        f"/investigations/{demo_case.pk}/postmortem/print/",
    ):
        assert page.goto(f"{live_server.url}{path}").status == 200, path
        settle(page)
        assert page.locator(".rerun-compare .chart:has(.main-svg)").count() == 2, path
        found[path] = layout_problems(page)
        screenshot(page, f"phone-rerun-{language}-{len(found)}")
    context.close()

    assert {path: problems for path, problems in found.items() if problems} == {}
