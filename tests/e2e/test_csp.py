"""Every page works under the Content-Security-Policy: real Chromium loads each kind of
page of the demo (charts drawn by plotly, the flame graph, htmx panels, the API docs) and
fails on any violation the browser reports."""

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from investigations.demo import DEMO_TITLE
from investigations.models import Host, Investigation, Ladder, Profile, Team
from tests.e2e.conftest import panels_loaded

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", function (e) {
  window.__violations.push(e.violatedDirective + " " + (e.blockedURI || "inline"));
});
"""


def test_every_page_keeps_working_under_the_content_security_policy(browser, live_server, settings):
    settings.DEBUG = True  # the demo's password is published: load_demo runs in DEBUG only
    call_command("load_demo", verbosity=0)
    demo = get_user_model().objects.get(username="demo")
    case = Investigation.objects.get(title=DEMO_TITLE)
    ladder = Ladder.objects.filter(investigation=case).first()
    past = Profile.objects.filter(investigation__status="closed").first()
    host = Host.objects.filter(team__memberships__user=demo).first()
    team = Team.objects.filter(memberships__user=demo).first()
    drawn = ".main-svg"  # plotly drew the figure
    pages = {
        "/investigations/": None,
        f"/investigations/{case.pk}/": "#path .main-svg",
        f"/investigations/{case.pk}/baseline/": f"[data-chart='baseline-ratios'] {drawn}",
        f"/investigations/{case.pk}/facts/diff/": None,
        f"/investigations/{case.pk}/postmortem/": None,
        f"/investigations/{case.pk}/postmortem/print/": drawn,
        f"/ladders/{ladder.pk}/": drawn,
        f"/investigations/{past.investigation_id}/profiles/{past.pk}/": f"#flame {drawn}",
        f"/hosts/{host.pk}/": None,
        "/hosts/": None,
        f"/teams/{team.pk}/": None,
        "/knowledge/": None,
        "/search/?q=governor": None,
        "/profile/": None,
        "/api/docs": ".swagger-ui",
    }
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_init_script(WATCH)
    page = context.new_page()
    console = []
    page.on(
        "console",
        lambda message: (
            console.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", "perfcase-demo")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/investigations/")

    seen = {}
    for path, ready in pages.items():
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        assert "script-src 'self'" in response.headers["content-security-policy"], path
        if ready:  # the page's script ran: the chart or the docs are there
            page.wait_for_selector(ready, timeout=15000)
        panels_loaded(page)  # an investigation page's panels are in, scripts and all
        page.wait_for_load_state("networkidle")
        seen[path] = page.evaluate("window.__violations")
    context.close()

    assert {path: found for path, found in seen.items() if found} == {}
    assert console == []
