"""The investigation page's panels: each one at its own URL, alone for htmx or on a page of its
own without JavaScript, drawn inline on the page first; a registered panel joins the page."""

import re
from html import unescape

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client, override_settings
from django.utils.html import escape

from collectors.facts import FactsSnapshot
from investigations.services.collections import collection_request, target_claim
from investigations.services.facts import facts_store
from investigations.views import panels
from tests.conftest import HOSTILE_STRINGS
from tests.investigations.test_collections import place_local_hosts

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
PANELS = [
    "symptom",
    "times",
    "path",
    "environment",
    "evidence",
    "baseline",
    "profiles",
    "captures",
    "ladders",
    "findings",
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
    return panels._registry


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


# --- the page draws them all, each refreshable on its own ---------------------------------------


def test_the_page_draws_every_panel_with_its_url_for_htmx_and_without(personas):
    investigation = personas.investigation
    page = html(client_for(personas, "member").get(page_url(investigation)))

    for name in PANELS:
        url = panel_url(investigation, name)
        tag = card_tag(page, name)
        assert f'hx-get="{url}"' in tag
        assert f'hx-trigger="refresh-{name} from:body"' in tag
        assert f'<a class="panel-link" href="{url}">' in page
    order = [page.index(f'<section class="card" id="{name}"') for name in PANELS]
    assert order == sorted(order)


def without_csrf(text: str) -> str:
    """The page, its CSRF tokens aside (each response masks them anew)."""
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", text)


def test_the_page_and_a_refresh_draw_the_same_card(personas):
    """One partial for both: what htmx swaps in is what the page drew first."""
    client = client_for(personas, "lead")
    page = without_csrf(html(client.get(page_url(personas.investigation))))

    for name in PANELS:
        card = html(client.get(panel_url(personas.investigation, name), **HX)).strip()
        assert without_csrf(card) in page, name


def test_the_polls_inside_the_panels_are_kept(personas):
    page = html(client_for(personas, "member").get(page_url(personas.investigation)))

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
        page = html(client.get(page_url(investigation)))
        alone = client.get(panel_url(investigation, "sketches"), **HX)
        fallback = client.get(panel_url(investigation, "sketches"))

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

    row = re.search(r'<div class="grid-2">\s*<section class="card" id="symptom"', page)
    assert row, "symptom and times side by side"
    after_symptom = page[row.end() :]
    assert after_symptom.index('id="times"') < after_symptom.index('id="path"')
