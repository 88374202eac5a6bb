"""Two wrk results imported onto the two sides through the page, then the ladder page: three
plotly charts with both sides, the per-step table and the verdicts."""

from pathlib import Path

import pytest

from investigations.models import Ladder
from tests.e2e.conftest import panels_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RESULTS = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"


def watch_console(page) -> list[str]:
    """Every console error and uncaught exception of the page, as it happens."""
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems


def texts(locator) -> list[str]:
    """The text of SVG elements (inner_text sees only HTML)."""
    return locator.evaluate_all("elements => elements.map(e => e.textContent)")


def import_onto(page, live_server, investigation, *, side: str, name: str, ladder=None):
    page.goto(f"{live_server.url}/investigations/{investigation.pk}/#ladders")
    panels_loaded(page)
    page.click("details.ladder-import summary")
    form = page.locator("details.ladder-import form")
    form.locator("select[name=import-side]").select_option(side)
    form.locator("select[name=import-format]").select_option("wrk")
    form.locator("input[name=import-file]").set_input_files(str(RESULTS / name))
    if ladder is not None:
        form.locator("select[name=import-ladder]").select_option(str(ladder.pk))
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/ladders/*/")


def test_two_imported_wrk_results_make_a_ladder_page_with_both_sides(
    personas, sign_in, screenshot, live_server
):
    page = sign_in(personas.member)
    problems = watch_console(page)

    # A: 10 connections on a 2 ms endpoint; B: the same load on one that fails 1 in 5.
    import_onto(page, live_server, personas.investigation, side="a", name="wrk-latency.txt")
    assert "Imported 1 file onto side A." in page.inner_text("body")
    ladder = Ladder.objects.get(investigation=personas.investigation)
    import_onto(
        page,
        live_server,
        personas.investigation,
        side="b",
        name="wrk-non2xx.txt",
        ladder=ladder,
    )
    assert page.url == f"{live_server.url}/ladders/{ladder.pk}/"
    assert "Imported 1 file onto side B." in page.inner_text("body")
    assert Ladder.objects.count() == 1
    assert ladder.sides.count() == 2

    page.goto(f"{live_server.url}/ladders/{ladder.pk}/")
    assert page.inner_text("h1").startswith(f"Ladder #{ladder.pk}")
    assert "Imported results" in page.inner_text(".meta")

    # plotly draws throughput and latency as SVG, with a trace per side; imports carry no
    # host samples, so the CPU chart gives way to a note that says so.
    charts = page.locator(".charts .chart")
    assert charts.count() == 2
    for index in range(2):
        charts.nth(index).locator("svg.main-svg").first.wait_for()
    throughput, latency = (charts.nth(i) for i in range(2))
    assert texts(throughput.locator(".gtitle")) == ["Throughput"]
    assert texts(throughput.locator(".legend .legendtext")) == ["A · new cloud", "B · old cloud"]
    assert texts(latency.locator(".legend .legendtext")) == [
        "A · new cloud p50",
        "A · new cloud p99",
        "B · old cloud p50",
        "B · old cloud p99",
    ]
    # One marker per side on the throughput chart (one step each, at 10 connections).
    assert throughput.locator(".scatterlayer .trace").count() == 2
    assert "No host samples: imported results carry none" in page.inner_text(".charts")

    # The per-step table: one load, both sides' numbers, the ratio and the mark.
    rows = page.locator("table.ladder-table tbody tr")
    assert rows.count() == 1
    cells = rows.first.locator("th, td").all_inner_texts()
    assert cells[0] == "10"
    # requests/s: A, B, A/B, the mark (an arrow, and the word for screen readers)
    assert cells[1:5] == ["4,487", "14,320", "0.31", "↓\nworse"]
    assert cells[5:9] == ["2.7", "3.9", "0.71", "↑\nbetter"]  # p99 (ms)
    assert cells[11:13] == ["0", "8,602"]  # errors: B's non-2xx responses, grouped

    # The verdicts, in words.
    verdicts = page.inner_text(".verdicts")
    assert "Knee of side A: not reached within this ladder." in verdicts
    assert "Knee of side B: not reached within this ladder." in verdicts
    assert (
        "Divergence: at 10 the sides' throughput differs by more than 20%: "
        "4,487 requests/s on A, 14,320 on B." in verdicts
    )

    screenshot(page, "ladder-imported")
    assert problems == []


def test_a_side_label_with_markup_shows_as_typed_in_the_charts(
    personas, sign_in, screenshot, live_server
):
    # plotly reads a trace's name as HTML of its own (<b>, <br>, <a href>): a label typed
    # by a team member must not become bold text, a line break or a link to another site.
    label = '<b>new</b> cloud <a href="https://example.com/">status</a><br>2'
    personas.investigation.sides.filter(key="a").update(label=label)
    page = sign_in(personas.member)
    problems = watch_console(page)
    import_onto(page, live_server, personas.investigation, side="a", name="wrk-latency.txt")
    ladder = Ladder.objects.get(investigation=personas.investigation)
    import_onto(
        page,
        live_server,
        personas.investigation,
        side="b",
        name="wrk-plain.txt",
        ladder=ladder,
    )

    page.goto(f"{live_server.url}/ladders/{ladder.pk}/")
    throughput = page.locator(".charts .chart").first
    throughput.locator(".legend .legendtext").first.wait_for()

    assert texts(throughput.locator(".legend .legendtext")) == [f"A · {label}", "B · old cloud"]
    assert page.locator(".charts a").count() == 0
    # The rest of the page (Django's templates) shows it as typed too.
    assert f"A · {label}" in page.inner_text("#ladder-progress")
    screenshot(page, "ladder-hostile-label")
    assert problems == []
