"""A responder writes the postmortem in the browser, then prints it to a PDF (Chromium's own
print, as a person's Save as PDF does) that carries the case's title, its timeline, in
Chinese too, and the ladder's charts."""

import re
import shutil
import subprocess
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from investigations.choices import EventKind
from investigations.models import Postmortem
from investigations.services.ladder_imports import ladder_import
from investigations.services.timeline import timeline_entry_add
from tests.conftest import ARTIFACTS, PASSWORD, require_real_tool
from tests.e2e.conftest import panels_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

RESULTS = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"


def open_as(browser, live_server, user, **context):
    context = browser.new_context(
        timezone_id="UTC", viewport={"width": 1280, "height": 900}, **context
    )
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/investigations/")
    return page


def pdf_text(path: Path) -> str:
    if shutil.which("pdftotext") is None:
        require_real_tool("pdftotext is not installed (apt-get install poppler-utils)")
    done = subprocess.run(["pdftotext", str(path), "-"], capture_output=True, text=True, check=True)
    return done.stdout


def squeezed(text: str) -> str:
    """Without white space: a PDF's text breaks lines and spaces CJK as it lays them out."""
    return re.sub(r"\s+", "", text)


def a_story(personas):
    """An English action, a Chinese note, and a ladder with both sides' results."""
    now = timezone.now()
    timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.ACTION,
        action="restart",
        summary="Restarted the order-api pool on side A",
        occurred_at=now - timedelta(hours=2),
    )
    timeline_entry_add(
        investigation=personas.investigation,
        user=personas.lead,
        kind=EventKind.NOTE,
        summary="容器性能不如虚拟机：TPS 差一倍",
        occurred_at=now - timedelta(hours=1),
    )
    ladder = ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="b",
        format="locust-csv",
        files=[("locust.csv", (RESULTS / "locust_stats_history.csv").read_bytes())],
    )
    ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="hey",
        files=[("hey.txt", (RESULTS / "hey.txt").read_bytes())],
        ladder=ladder,
        load=2,
    )
    return ladder


def test_the_postmortem_is_written_in_place_and_prints_to_a_pdf(
    browser, personas, live_server, screenshot
):
    ladder = a_story(personas)
    page = open_as(
        browser,
        live_server,
        personas.member,
        locale="zh-CN",
        extra_http_headers={"Accept-Language": "zh-CN,zh;q=0.9"},
    )
    url = f"{live_server.url}/investigations/{personas.investigation.pk}/postmortem/"

    # The case page links to it.
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/")
    panels_loaded(page)
    page.click(f"#postmortem a[href='/investigations/{personas.investigation.pk}/postmortem/']")
    page.wait_for_url(url)
    assert page.get_attribute("html", "lang") == "zh-hans"

    # A written part is edited in place (htmx): no reload, the text shows, the form closes.
    page.fill(
        "#pm-summary-text", "Side A ran the powersave CPU governor. A 侧 CPU 调速器为 powersave。"
    )
    page.click("#pm-summary button[type=submit]")
    page.wait_for_selector("#pm-summary .prose:has-text('powersave CPU governor')")
    assert Postmortem.objects.get().summary.startswith("Side A ran the powersave CPU governor.")
    assert page.locator("#pm-summary details.pm-edit").get_attribute("open") is None
    # An action item, added in place.
    page.fill("#pm-action-title", "Alert when the CPU governor is not performance")
    page.select_option("#pm-action-owner", str(personas.lead.pk))
    page.click("#pm-actions form.pm-action-new button[type=submit]")
    page.wait_for_selector("#pm-actions td:has-text('Alert when the CPU governor')")
    # The timeline tells the story by default, automatic entries in the reader's language.
    timeline = page.inner_text("#pm-events ol.pm-timeline")
    assert "Restarted the order-api pool on side A" in timeline
    assert "容器性能不如虚拟机：TPS 差一倍" in timeline
    assert f"发起调查：{personas.investigation.title}" in timeline
    screenshot(page, "postmortem-page")

    page.goto(url + "print/")
    # Both sides' charts are drawn (plotly) before printing.
    page.wait_for_selector(f"[data-chart='chart-ladder-{ladder.pk}-throughput'] .main-svg")
    assert page.locator(".topbar, form, button").count() == 0
    screenshot(page, "postmortem-print")
    ARTIFACTS.mkdir(exist_ok=True)
    pdf = ARTIFACTS / "postmortem.pdf"
    page.pdf(path=str(pdf), format="A4", print_background=True)

    text = pdf_text(pdf)
    assert text.count("\f") >= 2, "the write-up should span pages"
    flat = squeezed(text)
    assert squeezed(personas.investigation.title) in flat
    assert squeezed("Restarted the order-api pool on side A") in flat
    assert squeezed("容器性能不如虚拟机：TPS 差一倍") in flat
    assert squeezed(f"发起调查：{personas.investigation.title}") in flat
    # (pdftotext may put a heading of the next column between "A" and "侧")
    assert squeezed("Side A ran the powersave CPU governor.") in flat
    assert squeezed("侧 CPU 调速器为 powersave。") in flat
    assert squeezed("Alert when the CPU governor is not performance") in flat
    # The charts came along: their legends are text in the PDF.
    assert squeezed("A · new cloud p99") in flat and squeezed("B · old cloud p50") in flat

    # The Markdown download of the same case, kept beside the PDF.
    download = page.request.get(url.replace("/postmortem/", "/postmortem.md"))
    assert download.headers["content-type"] == "text/markdown; charset=utf-8"
    markdown = download.text()
    (ARTIFACTS / "postmortem.md").write_text(markdown)
    assert markdown.startswith(f"# {personas.investigation.title}\n")
    assert "容器性能不如虚拟机：TPS 差一倍" in markdown
    page.context.close()
