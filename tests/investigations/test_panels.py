"""The investigation page's panels: each one at its own URL, alone for htmx or on a page of its
own without JavaScript, drawn inline on the page first; a registered panel joins the page."""

import re
from html import unescape

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.utils.html import escape

from collectors.facts import FactsSnapshot
from investigations.services.collections import collection_request
from investigations.services.facts import facts_store
from investigations.services.targets import target_claim
from investigations.views import panels
from tests.conftest import HOSTILE_STRINGS, loaded_page
from tests.investigations.test_collections import place_local_hosts

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
PANELS = [
    "symptom",
    "times",
    "path",
    "environment",
    "diagnosis",
    "evidence",
    "baseline",
    "profiles",
    "captures",
    "ladders",
    "findings",
    "likely_causes",
    "root_cause",
    "checklist",
    "similar",
    "timeline",
    "postmortem",
]
READERS = ["lead", "member", "viewer"]


def page_url(investigation) -> str:
    return f"/investigations/{investigation.pk}/"


def panel_url(investigation, name: str) -> str:
    return f"/investigations/{investigation.pk}/panels/{name}/"


def html(response) -> str:
    return response.content.decode()


def client_for(personas, who: str) -> Client:
    return personas.client(getattr(personas, who))


def card_tag(page: str, name: str) -> str:
    """The opening tag of the panel's card."""
    found = re.search(rf'<section class="card" id="{name}"[^>]*>', page)
    assert found, f"no card for {name}"
    return found.group(0)


@pytest.fixture
def registry(monkeypatch):
    """The registry as the app built it, restored after the test."""
    panels.panels_in_order()  # every feature module imported, so every panel registered
    monkeypatch.setattr(panels, "_registry", dict(panels._registry))
    yield panels._registry
    monkeypatch.undo()
    panels.panels_changed()  # no frame drawn with a panel of this test's stays kept


# --- the registry ---------------------------------------------------------------------------


def test_every_feature_registers_its_panel_in_the_pages_order():
    assert [p.name for p in panels.panels_in_order()] == PANELS


def test_a_name_is_taken_once(registry):
    with pytest.raises(ImproperlyConfigured, match="'evidence'"):
        panels.panel(name="evidence", title="Again", template="x.html", order=1)(lambda r, i: {})


# --- each panel at its own URL, by each persona -----------------------------------------------


@pytest.mark.parametrize("who", READERS)
@pytest.mark.parametrize("name", PANELS)
def test_htmx_gets_the_panels_card_alone(personas, name, who):
    response = client_for(personas, who).get(panel_url(personas.investigation, name), **HX)

    assert response.status_code == 200
    text = html(response)
    assert text.lstrip().startswith(f'<section class="card" id="{name}"')
    assert "<html" not in text
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("who", READERS)
@pytest.mark.parametrize("name", PANELS)
def test_without_htmx_the_panel_is_a_page_of_its_own(personas, name, who):
    investigation = personas.investigation

    response = client_for(personas, who).get(panel_url(investigation, name))

    assert response.status_code == 200
    text = html(response)
    assert text.startswith("<!doctype html>")
    assert card_tag(text, name)
    assert text.count('<section class="card"') == 1
    assert f'href="{page_url(investigation)}#{name}"' in text
    assert investigation.title in text
    assert "HX-Request" in response["Vary"]


@pytest.mark.parametrize("extra", [{}, HX], ids=["page", "htmx"])
@pytest.mark.parametrize("name", PANELS)
def test_an_outsider_gets_404(personas, name, extra):
    response = client_for(personas, "outsider").get(
        panel_url(personas.investigation, name), **extra
    )

    assert response.status_code == 404
    assert personas.investigation.title not in html(response)


def test_someone_signed_out_is_sent_to_sign_in(personas):
    response = Client().get(panel_url(personas.investigation, "timeline"))

    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("extra", [{}, HX], ids=["page", "htmx"])
@pytest.mark.parametrize("name", ["notes", "nothing", "_panel", "Timeline"])
def test_an_unknown_panel_is_404(personas, name, extra):
    response = client_for(personas, "member").get(panel_url(personas.investigation, name), **extra)

    assert response.status_code == 404


def test_a_panel_of_an_investigation_that_does_not_exist_is_404(personas):
    response = client_for(personas, "lead").get("/investigations/999999/panels/timeline/", **HX)

    assert response.status_code == 404


def test_a_panel_url_refuses_post(personas):
    response = client_for(personas, "member").post(
        panel_url(personas.investigation, "timeline"), **HX
    )

    assert response.status_code == 405


# --- the page holds their frames; htmx loads each, each refreshable on its own -----------------


def frame_tag(page: str, name: str) -> str:
    """The opening tag of the panel's frame, which htmx fills."""
    found = re.search(rf'<section class="card frame" id="{name}"[^>]*>', page)
    assert found, f"no frame for {name}"
    return found.group(0)


def test_the_page_holds_every_panels_frame_loaded_by_htmx_and_linked_without(personas):
    investigation = personas.investigation
    page = html(client_for(personas, "member").get(page_url(investigation)))

    for name in PANELS:
        url = panel_url(investigation, name)
        tag = frame_tag(page, name)
        assert f'hx-get="{url}"' in tag
        assert f'hx-trigger="load, refresh-{name} from:body"' in tag
        assert 'hx-swap="outerHTML"' in tag
        assert f'<a class="panel-link" href="{url}">' in page
        assert f'<noscript><p><a href="{url}">Open this section</a></p></noscript>' in page
    order = [page.index(f'id="{name}"') for name in PANELS]
    assert order == sorted(order)
    assert 'id="timeline-list"' not in page  # no panel's content: each comes on its own


def test_the_frames_follow_each_readers_language_and_the_pages_query(personas):
    investigation = personas.investigation
    client = client_for(personas, "member")

    english = html(client.get(page_url(investigation)))
    chinese = html(client.get(page_url(investigation), HTTP_ACCEPT_LANGUAGE="zh-CN"))
    again = html(client.get(page_url(investigation)))
    asked = html(client.get(page_url(investigation), {"node": "7", "kind": "note"}))

    assert ">Timeline</a>" in english and "Loading…" in english
    assert ">时间线</a>" in chinese and "正在加载…" in chinese and "Loading…" not in chinese
    assert again == english.replace(_csrf(english), _csrf(again))
    timeline = panel_url(investigation, "timeline")
    assert f'hx-get="{timeline}?node=7&amp;kind=note"' in frame_tag(asked, "timeline")


def _csrf(page: str) -> str:
    return re.search(r'"X-CSRFToken": "([^"]+)"', page).group(1)


def test_once_loaded_each_card_refreshes_on_its_event_and_loads_no_more(personas):
    page = loaded_page(client_for(personas, "member"), page_url(personas.investigation))

    for name in PANELS:
        tag = card_tag(page, name)
        assert f'hx-trigger="refresh-{name} from:body"' in tag
    assert ' frame"' not in page


def test_the_page_runs_no_panels_queries(personas, django_assert_max_num_queries):
    """However long the case, the page costs the same few queries: session, user, language,
    investigation, role."""
    client = client_for(personas, "lead")
    client.get(page_url(personas.investigation))  # the session's first use aside

    with django_assert_max_num_queries(5):
        response = client.get(page_url(personas.investigation))

    assert response.status_code == 200


def test_the_page_holds_the_headers_frame_which_htmx_fills(personas):
    investigation = personas.investigation
    client = client_for(personas, "lead")
    page = html(client.get(page_url(investigation)))
    head = client.get(f"/investigations/{investigation.pk}/head/", **HX)

    url = f"/investigations/{investigation.pk}/head/"
    assert re.search(rf'<div class="case-head frame" id="case-head" hx-get="{url}"', page)
    assert investigation.title in page and "Mark mitigated" not in page
    assert head.status_code == 200 and "HX-Request" in head["Vary"]
    text = html(head)
    assert text.lstrip("\n").split(">", 1)[0].count('id="case-head"') == 1
    assert '<span class="badge' in text and "Lead: lena" in text
    assert "Mark mitigated" in text and "Close without a root cause" in text
    assert 'id="checklist-progress"' in text


def test_a_viewer_gets_the_header_without_actions(personas):
    text = html(
        client_for(personas, "viewer").get(
            f"/investigations/{personas.investigation.pk}/head/", **HX
        )
    )

    assert "Lead: lena" in text
    assert "<form" not in text and "Edit" not in text


@pytest.mark.parametrize("who", ["outsider", None])
def test_the_header_is_hidden_from_outsiders_and_the_signed_out(personas, who):
    client = client_for(personas, who) if who else Client()

    response = client.get(f"/investigations/{personas.investigation.pk}/head/", **HX)

    assert response.status_code == (404 if who else 302)
    assert personas.investigation.title not in html(response)


def test_without_htmx_the_header_is_a_page_of_its_own(personas):
    investigation = personas.investigation
    url = f"/investigations/{investigation.pk}/head/"
    page = html(client_for(personas, "member").get(page_url(investigation)))

    response = client_for(personas, "member").get(url)

    assert f'<noscript><p><a href="{url}">Status and actions</a></p></noscript>' in page
    text = html(response)
    assert response.status_code == 200 and text.startswith("<!doctype html>")
    assert "Mark mitigated" in text and investigation.title in text
    assert f'href="{page_url(investigation)}#case-head"' in text


def test_a_page_answering_a_failed_form_draws_everything_in_place(personas):
    """No frame: the failed form shows, with its errors, in its panel, the header above."""
    response = client_for(personas, "member").post(
        f"/investigations/{personas.investigation.pk}/ladders/", {"ladder-steps": "x"}
    )

    page = html(response)
    assert response.status_code == 400
    assert ' frame"' not in page
    assert 'id="case-head"' in page and "Mark mitigated" in page
    for name in PANELS:
        assert card_tag(page, name)


def test_the_header_counts_the_settled_steps_as_the_checklist_does(personas):
    investigation = personas.investigation
    first, second = investigation.checklist.all()[:2]
    first.status, second.status = "done", "not_applicable"
    first.save(update_fields=["status"])
    second.save(update_fields=["status"])
    total = investigation.checklist.count()

    page = loaded_page(client_for(personas, "viewer"), page_url(investigation))
    panel = html(client_for(personas, "viewer").get(panel_url(investigation, "checklist"), **HX))

    assert f'<progress max="{total}" value="2"' in page
    assert f"2/{total} steps of the method" in page
    assert f"<strong>2</strong> of {total} steps done" in panel


def without_csrf(text: str) -> str:
    """The page, its CSRF tokens aside (each response masks them anew)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)


def test_the_loaded_page_and_a_refresh_draw_the_same_card(personas):
    """One partial for both: what htmx swaps in later is what it loaded first."""
    client = client_for(personas, "lead")
    page = without_csrf(loaded_page(client, page_url(personas.investigation)))

    for name in PANELS:
        card = html(client.get(panel_url(personas.investigation, name), **HX)).strip()
        assert without_csrf(card) in page, name


def test_the_polls_inside_the_panels_are_kept(personas):
    page = loaded_page(client_for(personas, "member"), page_url(personas.investigation))

    assert 'id="checklist-panel"' in page
    assert "every 3s, checklistChanged from:body" in page
    assert 'id="timeline-list"' in page
    assert 'id="timeline-form"' in page
    assert 'id="path-panel"' in page
    assert 'id="checklist-progress"' in page


def test_a_viewer_gets_panels_without_writing_controls(personas):
    client = client_for(personas, "viewer")

    for name in PANELS:
        text = html(client.get(panel_url(personas.investigation, name), **HX))
        assert "<form" not in text, name


def test_the_timeline_panel_page_filters_by_kind_without_javascript(personas):
    response = client_for(personas, "member").get(
        panel_url(personas.investigation, "timeline") + "?kind=note"
    )

    assert 'href="?kind=note#timeline"' in html(response)
    assert re.search(r'href="\?kind=note#timeline"[^>]*aria-current="true"', html(response))


@pytest.mark.parametrize("text", HOSTILE_STRINGS[:3], ids=["markup", "sql", "shell"])
def test_the_panel_page_shows_a_hostile_title_escaped(personas, text):
    investigation = personas.investigation
    investigation.title = text
    investigation.save(update_fields=["title"])

    page = html(client_for(personas, "viewer").get(panel_url(investigation, "times")))

    assert "<script>alert" not in page
    assert unescape(page).count(text) >= 1


@pytest.fixture
def finding(personas, settings, tmp_path):
    """An open governor finding, from facts stored as a finished collection stores them."""
    settings.LOCAL_TRANSPORT = True
    settings.MEDIA_ROOT = str(tmp_path / "media")
    investigation = personas.investigation
    place_local_hosts(personas)
    collection = collection_request(investigation=investigation, user=personas.member)
    for target in collection.targets.select_related("side"):
        target = target_claim(target_id=target.pk, seconds=60)
        governor = "powersave" if target.side.key == "a" else "performance"
        facts = {"kernel.release": "6.1.0", "cpu.governor": governor}
        facts_store(target=target, snapshot=FactsSnapshot(facts=facts))
    return investigation.findings.get(rule="cpu_governor")


def test_the_findings_heading_counts_the_open_ones(personas, finding):
    card = html(
        client_for(personas, "viewer").get(panel_url(personas.investigation, "findings"), **HX)
    )

    assert '<span class="count">1 open</span>' in card
    assert escape(finding.title) in card


# --- a new panel needs no change to the page --------------------------------------------------


def sketch_templates():
    """The settings' template engine, with one more template kept in memory."""
    from django.conf import settings

    engine = {**settings.TEMPLATES[0], "APP_DIRS": False}
    engine["OPTIONS"] = {
        **engine["OPTIONS"],
        "loaders": [
            (
                "django.template.loaders.locmem.Loader",
                {
                    "tests/_panel_sketches.html": (
                        '<p class="sketches">{{ sketches }} for {{ investigation.title }}'
                        "{% if can_write %}, with a button{% endif %}</p>"
                    )
                },
            ),
            "django.template.loaders.filesystem.Loader",
            "django.template.loaders.app_directories.Loader",
        ],
    }
    return [engine]


def test_a_registered_panel_joins_the_page_in_its_order(personas, registry):
    seen = []

    @panels.panel(
        name="sketches", title="Sketches", template="tests/_panel_sketches.html", order=52
    )
    def sketches_context(request, investigation) -> dict:
        seen.append((request.user, investigation.pk))
        return {"sketches": "3 drawings", "heading_note": "1 running"}

    investigation = personas.investigation
    client = client_for(personas, "member")
    with override_settings(TEMPLATES=sketch_templates()):
        frames = html(client.get(page_url(investigation)))
        page = loaded_page(client, page_url(investigation))
        alone = client.get(panel_url(investigation, "sketches"), **HX)
        fallback = client.get(panel_url(investigation, "sketches"))

    assert f'hx-get="{panel_url(investigation, "sketches")}"' in frame_tag(frames, "sketches")
    assert "3 drawings" not in frames
    tag = card_tag(page, "sketches")
    assert f'hx-get="{panel_url(investigation, "sketches")}"' in tag
    assert "3 drawings for Checkout p99 doubled" in page
    assert ", with a button" in page
    assert '<span class="count">1 running</span>' in page
    # Between the evidence (50) and the CPU profiles (55).
    assert page.index('id="evidence"') < page.index('id="sketches"') < page.index('id="profiles"')
    assert alone.status_code == 200
    assert html(alone).strip() in page
    assert fallback.status_code == 200
    assert "3 drawings" in html(fallback)
    assert seen == [(personas.member, investigation.pk)] * 3


def test_half_width_neighbours_share_a_row(personas, registry):
    page = html(client_for(personas, "member").get(page_url(personas.investigation)))

    row = re.search(r'<div class="grid-2">\s*<section class="card frame" id="symptom"', page)
    assert row, "symptom and times side by side"
    after_symptom = page[row.end() :]
    assert after_symptom.index('id="times"') < after_symptom.index('id="path"')
