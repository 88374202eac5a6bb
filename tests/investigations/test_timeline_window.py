"""A long case's timeline is drawn a window at a time: the newest events on the page, the
earlier ones as they scroll into view (htmx), every event exactly once and in time order,
the incident's milestones each in its place once."""

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from investigations.models import TimelineEvent
from investigations.services.investigations import investigation_update
from tests.conftest import loaded_page

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


def many_events(personas, count: int) -> list[int]:
    """`count` notes a minute apart, the last one now (written in bulk: a fixture)."""
    start = timezone.now() - timedelta(minutes=count)
    rows = TimelineEvent.objects.bulk_create(
        TimelineEvent(
            investigation=personas.investigation,
            occurred_at=start + timedelta(minutes=n),
            kind="note",
            summary=f"note number {n}",
            author=personas.member,
        )
        for n in range(count)
    )
    return [row.pk for row in rows]


def shown(html: str) -> list[int]:
    return [int(n) for n in re.findall(r'id="event-(\d+)"', html)]


def earlier_link(html: str) -> str | None:
    found = re.search(r'hx-get="([^"]*before=\d+)"', html)
    return found.group(1).replace("&amp;", "&") if found else None


def test_the_case_page_draws_the_newest_window_and_loads_the_rest_in_place(personas, settings):
    settings.TIMELINE_WINDOW = 100
    ids = many_events(personas, 250)
    before_all = min(
        TimelineEvent.objects.filter(investigation=personas.investigation).values_list(
            "occurred_at", flat=True
        )
    )
    investigation_update(
        investigation=personas.investigation,
        user=personas.lead,
        started_at=before_all - timedelta(minutes=1),
        detected_at=timezone.now() - timedelta(minutes=30),
    )
    client = personas.client(personas.viewer)

    page = loaded_page(client, f"/investigations/{personas.investigation.pk}/")
    seen = shown(page)
    total = TimelineEvent.objects.filter(investigation=personas.investigation).count()
    assert len(seen) == 100
    pages = [page]
    link = earlier_link(page)
    while link:
        window = client.get(link, **HX).content.decode()
        pages.append(window)
        seen = shown(window) + seen
        link = earlier_link(window)

    all_events = [i for i in seen if i in ids]
    assert all_events == ids  # each once, oldest first across the windows
    assert len(pages) == 3 and len(seen) == total
    assert f"Show {total - 100} earlier events" in pages[0]
    assert f"Show {total - 200} earlier events" in pages[1]
    started, detected = (
        f'<strong class="milestone">{label}</strong>' for label in ("Impact started", "Detected")
    )
    joined = "".join(pages)
    assert joined.count(started) == 1 and joined.count(detected) == 1
    assert detected in pages[0] and started in pages[2]


def test_a_short_case_shows_everything_and_no_button(personas):
    many_events(personas, 5)

    page = loaded_page(
        personas.client(personas.viewer), f"/investigations/{personas.investigation.pk}/"
    )

    assert "earlier event" not in page
    assert len(shown(page)) >= 5


def test_a_window_before_an_unknown_event_is_empty(personas):
    many_events(personas, 3)

    answer = personas.client(personas.viewer).get(
        f"/investigations/{personas.investigation.pk}/timeline/?before=999999999", **HX
    )

    assert answer.status_code == 200 and shown(answer.content.decode()) == []
