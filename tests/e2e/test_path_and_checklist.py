"""The traffic path typed as text, drawn by plotly, a hop ruled out, the checklist moving."""

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from investigations.models import ChecklistItem, PathNode
from tests.e2e.conftest import panels_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def progress(page) -> tuple[int, int]:
    bar = page.locator("#checklist-progress progress")
    return int(bar.get_attribute("value")), int(bar.get_attribute("max"))


def click_node(page, index: int, label: str, attempts: int = 3) -> None:
    """Click the path picture's node `index` until its details (titled `label`) open.
    plotly takes the clicks on its drag layer above the markers, so the click goes where the
    marker is; it tells a click on a marker by the hover the mouse's move computed, which a
    busy machine can leave unfinished at the click: then nothing opens, and the click is
    made again."""
    detail = page.locator(f"#path-node-detail h3:has-text('{label}')")
    for attempt in range(attempts):
        box = page.locator("#path-figure .scatterlayer .point").nth(index).bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        page.mouse.move(x, y)
        page.mouse.click(x, y)
        try:
            detail.wait_for(timeout=10_000)
            return
        except PlaywrightTimeout:
            if attempt == attempts - 1:
                raise
            page.mouse.move(0, 0)


def test_a_typed_path_is_drawn_and_ruling_out_the_lb_moves_the_checklist(
    personas, sign_in, screenshot, live_server
):
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/")
    panels_loaded(page)
    before = progress(page)
    assert before == (0, 11)

    page.fill(
        "input[name=path-text]",
        "wrk -[https:443, short]-> lb:slb -> gateway -> app -[mysql:3306, long]-> db:mysql",
    )
    page.click("#path-panel button:has-text('Draw')")

    # plotly draws one marker per node, with its label, left to right.
    page.wait_for_selector("#path-figure .scatterlayer .point")
    assert page.locator("#path-figure .scatterlayer .point").count() == 5
    labels = page.eval_on_selector_all(
        "#path-figure .textpoint", "points => points.map(p => p.textContent)"
    )
    # Each label is the node's name, then its kind on the next line.
    assert labels == [
        "wrkLoad generator",
        "slbLoad balancer",
        "gatewayGateway or ingress",
        "appService",
        "mysqlDatabase",
    ]
    assert "HTTPS:443, short-lived" in page.inner_text("#path-figure")
    # Drawing the path completed its checklist step; the bar moved without a reload.
    page.wait_for_function(  # a function, not an expression: the CSP forbids eval
        "() => document.querySelector('#checklist-progress progress').getAttribute('value') === '1'"
    )
    assert ChecklistItem.objects.get(investigation=personas.investigation, key="path").auto

    # Click the load balancer in the picture: its details open in the panel.
    click_node(page, 1, "slb")
    page.select_option("#path-node-detail select[name=state-state]", "ruled_out")
    page.fill(
        "#path-node-detail textarea[name=state-note]",
        "New connections peak at 9k/s of 50k/s allowed",
    )
    page.click("#path-node-detail button:has-text('Save state')")
    page.wait_for_selector("#path-node-detail .badge:has-text('Ruled out')")
    assert PathNode.objects.get(label="slb").state == "ruled_out"

    # The other hops ruled out or suspect too: the "rule out the path" step completes.
    for label, state in (
        ("wrk", "ruled_out"),
        ("gateway", "ruled_out"),
        ("app", "suspect"),
        ("mysql", "ruled_out"),
    ):
        page.click(f"table.path-nodes a:has-text('{label}')")
        page.wait_for_selector(f"#path-node-detail h3:has-text('{label}')")
        page.select_option("#path-node-detail select[name=state-state]", state)
        page.fill("#path-node-detail textarea[name=state-note]", f"checked {label}")
        page.click("#path-node-detail button:has-text('Save state')")
        page.wait_for_selector(
            f"table.path-nodes tr:has-text('{label}') .badge:not(:has-text('Not checked'))"
        )
    page.wait_for_function(
        "() => document.querySelector('#checklist-progress progress').getAttribute('value') === '2'"
    )
    assert progress(page) == (2, 11)
    screenshot(page, "path-and-checklist")


def test_a_syntax_error_names_its_column_and_keeps_the_text(personas, sign_in, live_server):
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/")
    panels_loaded(page)

    page.fill("input[name=path-text]", "lb -> -> app")
    page.click("#path-panel button:has-text('Draw')")

    page.wait_for_selector("#path-panel .error")
    assert "Column 7: expected a node name" in page.inner_text("#path-panel .error")
    assert page.input_value("input[name=path-text]") == "lb -> -> app"
    assert not PathNode.objects.exists()


def test_a_colleague_sees_an_assignment_without_reloading(personas, sign_in, live_server):
    member = sign_in(personas.member)
    lead = sign_in(personas.lead)
    url = f"{live_server.url}/investigations/{personas.investigation.pk}/"
    member.goto(url)
    panels_loaded(member)
    lead.goto(url)
    panels_loaded(lead)

    item = lead.locator("#item-ladder")
    item.locator("select[name=assignee]").select_option("max")
    lead.wait_for_selector("#item-ladder:has-text('→ max')")

    member.wait_for_selector("#item-ladder:has-text('→ max')", timeout=10_000)
    assert ChecklistItem.objects.get(key="ladder").assignee == personas.member
