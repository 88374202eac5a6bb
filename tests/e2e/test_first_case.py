"""In a real browser, what a newcomer hit on the first real case (issue 10): a note being
typed survives a colleague's change, a form's errors show in the form with what was typed,
the case page on a phone, and the interface in Chinese."""

import pytest

from investigations.choices import HostRole, ItemStatus
from investigations.services.checklist import checklist_item_update
from investigations.services.inventory import host_create, member_add
from investigations.services.path import path_from_text, path_node_update
from tests.conftest import PASSWORD
from tests.e2e.conftest import panels_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def open_as(browser, live_server, user, **context):
    """A signed-in page in a context of its own (viewport, locale)."""
    context = browser.new_context(timezone_id="UTC", **context)
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/investigations/")
    return page


def case_url(live_server, personas) -> str:
    return f"{live_server.url}/investigations/{personas.investigation.pk}/"


def furnish(personas):
    """A case with a path (specs on both sides), hosts on both sides, a long title."""
    nodes = path_from_text(
        investigation=personas.investigation,
        user=personas.lead,
        text="loadgen -> lb:slb -> gateway -> order-api -[mysql:3306, long]-> db:mysql",
    )
    path_node_update(
        node=nodes[3],
        user=personas.lead,
        spec_a="container, 4 vCPU / 8 GB, same image, openjdk 17, -Xmx6g",
        spec_b="VM, 4 vCPU / 8 GB, same image, openjdk 17, -Xmx6g",
    )
    for side in "ab":
        host = host_create(
            team=personas.team,
            name=f"order-api-{side}-with-a-rather-long-host-name",
            address=f"10.0.{1 if side == 'a' else 2}.10",
            port=22,
            username="perf",
        )
        member_add(
            investigation=personas.investigation,
            user=personas.lead,
            host=host,
            side_key=side,
            role=HostRole.SERVICE,
        )


def test_a_note_being_typed_survives_a_colleagues_checklist_change(
    personas, sign_in, live_server, screenshot
):
    page = sign_in(personas.member)
    page.goto(case_url(live_server, personas))
    panels_loaded(page)
    step = page.locator("#item-symptom")
    step.locator("summary").click()
    note = "p99 from the LB access logs, 14:02 to 14:10"
    step.locator("textarea[name=notes]").fill(note)
    notice = step.locator("[data-changed-notice]")
    page.wait_for_timeout(4000)  # a poll while nothing changed: no notice
    assert not notice.is_visible()

    # A colleague changes another step: the panel would redraw within its 3 s poll.
    checklist_item_update(
        item=personas.investigation.checklist.get(key="path"),
        user=personas.lead,
        status=ItemStatus.IN_PROGRESS,
    )
    page.wait_for_timeout(7000)  # two polls: both must leave the typing alone

    assert step.locator("textarea[name=notes]").input_value() == note
    assert step.locator("details.item-more").evaluate("d => d.open")
    # It says that the checklist changed under the open note (issue 24 bug 13).
    assert notice.is_visible()
    assert "has changed since you opened this form" in notice.inner_text()
    step.locator("button:has-text('Save')").click()
    page.wait_for_function("() => document.querySelector('#item-symptom .item-notes') !== null")
    assert note in page.inner_text("#item-symptom .item-notes")
    # Once the note is saved, the colleague's change shows as well.
    page.wait_for_selector("#item-path .badge:has-text('In progress')", timeout=15000)
    assert not page.locator("#item-symptom [data-changed-notice]").is_visible()
    screenshot(page, "checklist-note-survived")


def test_a_failed_form_shows_its_error_in_its_own_form_with_the_values_kept(
    personas, sign_in, live_server, screenshot
):
    furnish(personas)
    page = sign_in(personas.member)
    page.goto(case_url(live_server, personas))
    panels_loaded(page)
    page.click("summary:has-text('Place a host on a side')")
    form = page.locator("#member-form")
    host = personas.team.hosts.get(name__startswith="order-api-a")
    form.locator("select[name=host]").select_option(str(host.pk))
    form.locator("select[name=side]").select_option("a")
    form.locator("select[name=role]").select_option(HostRole.SERVICE)
    form.locator("button[type=submit]").click()
    page.wait_for_load_state()

    form = page.locator("#member-form")
    assert "already has this role on this side" in form.inner_text()
    assert form.locator("select[name=host]").input_value() == str(host.pk)
    assert form.locator("select[name=side]").input_value() == "a"
    assert "already has this role" not in page.inner_text("#checklist")
    # The page opened at the form, not at its top.
    assert form.evaluate(
        "f => { const r = f.getBoundingClientRect(); "
        "return r.top >= 0 && r.bottom <= innerHeight; }"
    )
    screenshot(page, "form-error-in-place")


def test_the_case_page_fits_a_phone(browser, personas, live_server, screenshot):
    furnish(personas)
    page = open_as(browser, live_server, personas.lead, viewport=PHONE)
    page.goto(case_url(live_server, personas))
    panels_loaded(page)
    page.wait_for_selector("#checklist")

    overflow = page.evaluate("document.documentElement.scrollWidth")
    assert overflow <= PHONE["width"], f"the page is {overflow} px wide on a 390 px phone"
    for selector in ["header.topbar nav a", ".head-actions button, .page-head button"]:
        for box in [b for b in page.locator(selector).all() if b.is_visible()]:
            edge = box.bounding_box()
            assert edge["x"] >= 0 and edge["x"] + edge["width"] <= PHONE["width"], selector
    # No word broken mid-word: headings and buttons wrap between words only.
    assert page.evaluate(
        "[...document.querySelectorAll('h1, h2, button, nav a')].every("
        "e => getComputedStyle(e).wordBreak !== 'break-all')"
    )
    # The path's node table: each side's specification on a line of its own under its
    # node, in its own cell, on screen (column B was off it, issue 24).
    specs = page.eval_on_selector_all(
        "table.path-nodes td.spec",
        "cells => cells.filter(c => c.offsetParent).map(c => {"
        " const r = c.getBoundingClientRect();"
        " return [c.dataset.side, getComputedStyle(c).display, r.left, r.right]; })",
    )
    assert {side for side, *_ in specs} == {"A", "B"}
    for side, display, left, right in specs:
        assert display == "block" and left >= 0 and right <= PHONE["width"], (side, left, right)
    screenshot(page, "case-page-phone-390")
    page.context.close()


def test_the_case_page_in_chinese(browser, personas, live_server, screenshot):
    furnish(personas)
    page = open_as(
        browser,
        live_server,
        personas.lead,
        viewport={"width": 1280, "height": 900},
        locale="zh-CN",
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    )
    page.goto(case_url(live_server, personas))
    panels_loaded(page)
    page.wait_for_selector("#checklist")

    assert page.get_attribute("html", "lang") == "zh-hans"
    headings = page.eval_on_selector_all("section.card h2", "hs => hs.map(h => h.innerText)")
    assert "检查清单" in " ".join(headings), headings
    assert "时间线" in " ".join(headings), headings
    assert "Checklist" not in headings
    screenshot(page, "case-page-zh-hans")

    # The switch in the menu goes back to English and remembers it.
    page.click("form.language-switch button[value=en]")
    page.wait_for_load_state()
    assert page.get_attribute("html", "lang") == "en"
    page.goto(case_url(live_server, personas))
    panels_loaded(page)
    assert page.get_attribute("html", "lang") == "en"
    page.context.close()
