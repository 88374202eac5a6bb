"""In a real browser, two of issue 24's smaller problems (bug 13): after a failed placing the
address bar holds the case page's own address (the form's answered 405 on reload), and a
title pasted beyond its limit is kept and counted instead of silently cut by maxlength."""

import pytest

from investigations.choices import HostRole
from investigations.limits import TITLE
from investigations.services.inventory import host_create, member_add
from tests.e2e.conftest import panels_loaded
from tests.e2e.test_first_case import case_url

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_after_a_failed_placing_the_address_is_the_case_pages_and_reloads(
    personas, sign_in, live_server
):
    host = host_create(
        team=personas.team, name="order-api-a", address="10.0.1.10", port=22, username="perf"
    )
    member_add(
        investigation=personas.investigation,
        user=personas.lead,
        host=host,
        side_key="a",
        role=HostRole.SERVICE,
    )
    page = sign_in(personas.member)
    page.goto(case_url(live_server, personas))
    panels_loaded(page)
    page.click("summary:has-text('Place a host on a side')")
    form = page.locator("#member-form")
    form.locator("select[name=host]").select_option(str(host.pk))
    form.locator("select[name=side]").select_option("a")
    form.locator("select[name=role]").select_option(HostRole.SERVICE)
    form.locator("button[type=submit]").click()
    page.wait_for_load_state()
    assert "already has this role on this side" in page.locator("#member-form").inner_text()

    assert page.url == case_url(live_server, personas)
    response = page.reload(wait_until="domcontentloaded")
    assert response.status == 200
    assert page.inner_text("h1") == personas.investigation.title


def test_a_title_pasted_beyond_its_limit_is_kept_counted_and_refused_beside_its_field(
    personas, sign_in, live_server
):
    title = "Checkout p99 doubled after the move to the new cloud; " * 100  # 5,500 characters
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/new/")

    page.fill("input[name=title]", title)

    assert page.input_value("input[name=title]") == title  # not its first 200 characters
    count = page.locator("input[name=title] + .char-count")
    assert count.is_visible()
    assert count.inner_text() == f"{len(title):,} / {TITLE}"
    assert "over" in count.get_attribute("class")

    page.click("button[type=submit]")
    page.wait_for_load_state()
    field = page.locator(".field:has(input[name=title])")
    assert "200" in field.locator(".error").inner_text()
    assert page.input_value("input[name=title]") == title
