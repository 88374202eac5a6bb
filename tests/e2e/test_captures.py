"""Packet captures in a real Chromium: two synthetic captures compared (the table's marks,
both sides on each chart, each side's connections packet by packet), a capture's page, a
capture imported through the page and the panel following its analysis, the pages in
Chinese and on a 390 px phone. Every page runs under the Content-Security-Policy the app
will send: scripts from our files only."""

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from investigations.models import Capture
from investigations.services import captures as capture_services
from investigations.services.captures import capture_analyse_stored, capture_import
from tests.e2e.conftest import panels_loaded
from tests.e2e.test_first_case import open_as
from tests.e2e.test_profiles import PHONE, watch_console
from tests.investigations.test_capture_views import SIDE_A, SIDE_B, keepalive_side

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def no_worker(monkeypatch, settings, tmp_path):
    """The files in a directory of the test's own; the analysis run by the test itself
    instead of a worker (nothing is left on the broker)."""
    settings.MEDIA_ROOT = str(tmp_path / "media")
    queued = []
    monkeypatch.setattr(
        capture_services, "enqueue", lambda name, capture_id, **options: queued.append(capture_id)
    )
    return queued


def analysed(personas, side: str, name: str, data: bytes) -> Capture:
    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.lead,
        side_key=side,
        uploads=[SimpleUploadedFile(name, data)],
    )
    capture_analyse_stored(capture_id=capture.pk, seconds=60)
    capture.refresh_from_db()
    assert capture.job.status == "ready", capture.job.error
    return capture


def texts(locator) -> list[str]:
    return [text.strip() for text in locator.all_text_contents()]


def chart(page, name: str):
    """The chart drawn from the json_script `name`, once plotly has drawn it."""
    target = page.locator(f'[data-chart="chart-{name}"]')
    target.locator("svg.main-svg").first.wait_for(timeout=60_000)
    return target


def test_two_captures_compare_with_marks_and_both_sides_drawn(
    personas, sign_in, screenshot, live_server
):
    a = analysed(personas, "a", "checkout-a.pcap", SIDE_A)
    b = analysed(personas, "b", "checkout-b.pcapng", SIDE_B)
    page = sign_in(personas.member)
    problems = watch_console(page)
    page.goto(
        f"{live_server.url}/investigations/{personas.investigation.pk}/captures/compare/"
        f"?a={a.pk}&b={b.pk}"
    )

    assert page.inner_text("h1") == "Packet captures compared"
    # The table: A opens a connection for each request, B one for all of them.
    rows = page.locator("table.capture-compare tbody tr")
    by_label = {
        row.locator("th").inner_text(): row.locator("td").all_inner_texts() for row in rows.all()
    }
    # A's capture ran longer than B's: a rate over each whole capture is not judged.
    cells = by_label["new connections per second"]
    assert cells[3].startswith("–") and "no verdict" in cells[3]
    assert by_label["requests per connection"][3].startswith("↓")
    assert by_label["retransmissions"][3].startswith("≈")
    assert by_label["packets"][3] == ""
    assert (
        page.get_attribute(
            "table.capture-compare tbody tr:has(th:text-is('requests per connection')) .mark",
            "title",
        )
        == "worse on side A"
    )

    # Both sides on each chart, in their colours; each side's connections on its own.
    for name in ("connections", "traffic", "intervals", "waits"):
        drawn = chart(page, f"compare-{name}")
        legend = " ".join(texts(drawn.locator(".legend .legendtext")))
        assert "A · new cloud" in legend and "B · old cloud" in legend, (name, legend)
    connections = chart(page, "compare-connections")
    assert texts(connections.locator(".gtitle")) == ["New connections per second"]
    assert connections.locator(".scatterlayer .trace").count() == 2
    strokes = connections.locator(".scatterlayer .trace path.js-line").evaluate_all(
        "paths => paths.map(p => p.style.stroke)"
    )
    assert strokes == ["rgb(0, 114, 178)", "rgb(213, 94, 0)"]  # blue A, vermilion B
    for side, count in (("a", 8), ("b", 1)):
        timeline = chart(page, f"compare-timeline-{side}")
        ticks = texts(timeline.locator(".yaxislayer-above .ytick text"))
        assert len(ticks) == count and all(t.startswith("#") for t in ticks), ticks
        assert timeline.locator(".scatterlayer .trace .point").count() > 10
    # Side A's silences are shaded on its connections' lines.
    assert chart(page, "compare-timeline-a").locator(".shapelayer path").count() >= 8

    screenshot(page, "capture-compare")
    assert problems == []


def test_a_captures_page_draws_its_charts_and_lists_its_silences(
    personas, sign_in, screenshot, live_server
):
    a = analysed(personas, "a", "checkout-a.pcap", SIDE_A)
    page = sign_in(personas.member)
    problems = watch_console(page)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/captures/{a.pk}/")

    assert page.inner_text("h1") == "checkout-a.pcap"
    for name in ("connections", "traffic", "intervals", "waits", "timeline"):
        chart(page, f"capture-{name}")
    intervals = chart(page, "capture-intervals")
    assert "gaps beyond 100 ms" in intervals.inner_text()
    assert page.locator("table.gaps tbody tr").count() == 12
    first = page.locator("table.gaps tbody tr").first.locator("td").all_inner_texts()
    assert first[3:] == ["server", "its response"]
    href = page.get_attribute("a[download]", "href")
    assert href.endswith(f"/captures/{a.pk}/pcap/")
    screenshot(page, "capture-detail")
    assert problems == []


def test_a_capture_imported_through_the_page_shows_its_analysis_as_it_ends(
    personas, sign_in, screenshot, live_server, no_worker, tmp_path
):
    path = tmp_path / "side-b.pcapng"
    path.write_bytes(SIDE_B)
    page = sign_in(personas.member)
    problems = watch_console(page)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/#captures")
    panels_loaded(page)

    page.click("details.capture-import summary")
    page.select_option("#id_capture-side", "b")
    page.set_input_files("#id_capture-file", str(path))
    page.click("details.capture-import button[type=submit]")
    page.wait_for_selector("text=Imported 1 capture onto side B: it is being analysed.")
    page.wait_for_selector("#captures tr.capture-analysing")
    assert len(no_worker) == 1

    # The worker's part, done here: the panel, polling, shows the result by itself.
    capture_analyse_stored(capture_id=no_worker[0], seconds=60)
    page.wait_for_selector("#captures tr.capture-ready", timeout=15_000)
    row = page.locator("#captures tr.capture-ready").locator("td").all_inner_texts()
    assert row[0] == "side-b.pcapng" and row[1].startswith("B")
    assert row[3] == str(len(keepalive_side()))
    assert page.locator("#captures [hx-trigger='every 2s']").count() == 0
    screenshot(page, "capture-panel")
    assert problems == []


def test_a_file_that_is_no_capture_is_refused_on_the_page(personas, sign_in, live_server, tmp_path):
    path = tmp_path / "notes.pcap"
    path.write_text("GET / HTTP/1.1\r\n" * 20)
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/#captures")
    panels_loaded(page)

    page.click("details.capture-import summary")
    page.set_input_files("#id_capture-file", str(path))
    page.click("details.capture-import button[type=submit]")

    error = page.locator("details.capture-import .error")
    error.wait_for()
    assert "notes.pcap is not a pcap or pcapng file" in error.inner_text()
    assert page.locator("details.capture-import[open]").count() == 1
    assert Capture.objects.count() == 0


def test_the_capture_pages_in_chinese(browser, personas, live_server, screenshot):
    a = analysed(personas, "a", "checkout-a.pcap", SIDE_A)
    b = analysed(personas, "b", "checkout-b.pcapng", SIDE_B)
    page = open_as(
        browser,
        live_server,
        personas.lead,
        viewport={"width": 1280, "height": 900},
        locale="zh-CN",
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    )
    problems = watch_console(page)
    base = f"{live_server.url}/investigations/{personas.investigation.pk}"
    page.goto(f"{base}/captures/compare/?a={a.pk}&b={b.pk}")

    assert page.get_attribute("html", "lang") == "zh-hans"
    for name in ("connections", "traffic", "intervals", "waits", "timeline-a", "timeline-b"):
        chart(page, f"compare-{name}")
    assert page.locator("table.capture-compare .mark").count() > 10
    screenshot(page, "capture-compare-zh-hans")
    page.goto(f"{base}/captures/{a.pk}/")
    chart(page, "capture-timeline")
    page.goto(f"{base}/")
    panels_loaded(page)
    page.wait_for_selector("#captures")
    assert problems == []
    page.context.close()


def test_the_capture_pages_fit_a_phone(browser, personas, live_server, screenshot):
    a = analysed(personas, "a", "checkout-a.pcap", SIDE_A)
    b = analysed(personas, "b", "checkout-b.pcapng", SIDE_B)
    page = open_as(browser, live_server, personas.member, viewport=PHONE)
    base = f"{live_server.url}/investigations/{personas.investigation.pk}"
    for url, name, shot in (
        (f"{base}/captures/compare/?a={a.pk}&b={b.pk}", "compare-timeline-b", "compare"),
        (f"{base}/captures/{a.pk}/", "capture-timeline", "detail"),
        (f"{base}/panels/captures/", None, "panel"),
    ):
        page.goto(url)
        panels_loaded(page)
        if name:
            drawn = chart(page, name)
            box = drawn.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"], box
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{url} is {width} px wide on a 390 px phone"
        screenshot(page, f"capture-{shot}-phone-390")
    page.context.close()
