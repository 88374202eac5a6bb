"""The demo's pages, as a newcomer met them (issue 24 bug 13): plotly.js only on pages
that draw a chart."""

import html

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from investigations.models import Investigation, Ladder
from investigations.services.postmortem import action_item_create, postmortem_update
from investigations.services.timeline import timeline_entry_add

pytestmark = pytest.mark.django_db

PLOTLY = "vendor/plotly.min.js"


def _page(client, url: str) -> str:
    answer = client.get(url)
    assert answer.status_code == 200, url
    return html.unescape(answer.content.decode())


def test_plotly_is_sent_only_with_a_chart(demo_case):
    client, case = demo_case
    ladder = Ladder.objects.filter(investigation=case).first()
    for url in [
        "/investigations/",
        f"/investigations/{case.pk}/",  # its panels come after it, the path with its chart
        f"/investigations/{case.pk}/panels/checklist/",
        f"/investigations/{case.pk}/postmortem/",
        "/knowledge/",
    ]:
        assert PLOTLY not in _page(client, url), url
    for url in [
        f"/investigations/{case.pk}/panels/path/",
        f"/ladders/{ladder.pk}/",
        f"/investigations/{case.pk}/baseline/",
        f"/investigations/{case.pk}/postmortem/print/",
    ]:
        page = _page(client, url)
        assert f'data-plotly="/static/{PLOTLY}"' in page, url
        assert "data-chart=" in page, url
    # The print view of a past case without a ladder draws no chart: no plotly.js to wait
    # for before the browser's Print (its 2.6 s were plotly.js, parsed before anything ran).
    past = Investigation.objects.exclude(pk=case.pk).filter(ladders__isnull=True).first()
    assert PLOTLY not in _page(client, f"/investigations/{past.pk}/postmortem/print/")


def test_a_finding_no_host_facts_back_says_where_it_came_from(demo_case):
    client, _ = demo_case
    past = Investigation.objects.get(title__startswith="Quote service in containers")
    finding = past.findings.get(rule="cpu_count")
    assert finding.status == "confirmed" and finding.host_a is None

    findings = _page(client, f"/investigations/{past.pk}/panels/findings/")
    item = findings.split(f'id="finding-{finding.pk}"')[1].split("</li>")[0]
    assert "from the case's story" in item
    evidence = _page(client, f"/investigations/{past.pk}/panels/evidence/")
    assert "no host facts back its findings: 1 finding was recorded from figures" in evidence
    assert "Place hosts on both sides" in evidence

    # The main demo case's findings come from its hosts' facts: neither sentence.
    _, case = demo_case
    assert "from the case's story" not in _page(
        client, f"/investigations/{case.pk}/panels/findings/"
    )
    assert "no host facts back" not in _page(client, f"/investigations/{case.pk}/panels/evidence/")


def test_the_print_view_reads_a_longer_story_in_as_many_queries(demo_case):
    """Its 2.6 s were the browser's (plotly.js parsed before anything ran); the server's part
    is a fixed number of queries, however many entries and actions the story has."""
    client, case = demo_case
    url = f"/investigations/{case.pk}/postmortem/print/"

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            _page(client, url)
        return len(captured)

    before = queries()
    user = case.lead
    notes = [
        timeline_entry_add(investigation=case, user=user, kind="note", summary=f"Note {n}")
        for n in range(15)
    ]
    postmortem_update(investigation=case, user=user, events=[note.pk for note in notes])
    for n in range(8):
        action_item_create(investigation=case, user=user, title=f"Action {n}", owner=user)
    page = _page(client, url)
    assert "Note 14" in page and "Action 7" in page
    assert queries() == before
