"""Every kind of page of the demo on a 390 x 844 phone in real Chromium (issue 24, "Phones:
still broken"): the page is no wider than the screen (wide tables scroll inside their card),
no word is broken inside itself, no text column is narrower than about eight characters,
fixed or sticky parts take at most a sixth of the height, and no chart's legend or label is
drawn over its axis titles or other labels, and what compares the sides shows both on screen
(the path table's column B was off it). The checks run in the page (LAYOUT_PROBLEMS)
and name each element they fault, so a failure says what to fix."""

from importlib import import_module

import pytest
from django.apps import apps
from django.contrib.auth import get_user_model
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command

from collectors.phrase import Phrase
from investigations.demo import DEMO_TITLE
from investigations.models import Capture, Host, Investigation, Ladder, Profile, RootCause, Team
from investigations.services import captures as capture_services
from investigations.services import collections as collection_services
from investigations.services.captures import capture_analyse_stored, capture_import
from investigations.services.collections import collection_request
from investigations.services.targets import collection_complete_if_done, target_claim, target_fail
from tests.e2e.conftest import panels_loaded
from tests.investigations.test_capture_views import SIDE_A, SIDE_B

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}

# In the page: every layout problem found, each a sentence naming its element. A word is
# "broken" when its letters lie on two lines; only a long unbroken token (a hash, a path)
# marked with the class `token` may be, or a word wider than its whole card.
LAYOUT_PROBLEMS = r"""
() => {
  const W = window.innerWidth, H = window.innerHeight;
  const problems = [];
  const name = (el) => {
    let s = el.tagName.toLowerCase();
    if (el.id) s += "#" + el.id;
    if (typeof el.className === "string" && el.className.trim())
      s += "." + el.className.trim().split(/\s+/).join(".");
    const text = (el.textContent || "").trim().replace(/\s+/g, " ").slice(0, 40);
    return text ? `${s} "${text}"` : s;
  };
  const style = (el) => getComputedStyle(el);
  // (a closed <details>' content keeps its boxes in Chromium, but is not shown)
  const shown = (el) => el.checkVisibility({visibilityProperty: true});
  const scrolls = (el) => /(auto|scroll|hidden|clip)/.test(style(el).overflowX);
  // Inside a box that scrolls or clips it (an absolutely placed element is clipped only by a
  // box that contains its containing block, its offsetParent).
  const insideScroller = (el) => {
    const absolute = style(el).position === "absolute";
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (!scrolls(p)) continue;
      if (!absolute || (el.offsetParent && p.contains(el.offsetParent))) return true;
    }
    return false;
  };
  const measure = document.createElement("canvas").getContext("2d");
  const ch = (el) => { measure.font = style(el).font; return measure.measureText("0").width; };
  const block = (el) => {
    while (el && /^(inline|contents)$/.test(style(el).display)) el = el.parentElement;
    return el;
  };
  const contentWidth = (el) => {
    const s = style(el);
    return el.clientWidth - parseFloat(s.paddingLeft) - parseFloat(s.paddingRight);
  };
  const lines = (rects) => {
    const real = Array.from(rects).filter((r) => r.width > 0 && r.height > 0);
    if (!real.length) return 0;
    const tops = real.map((r) => r.top).sort((a, b) => a - b);
    const half = Math.min(...real.map((r) => r.height)) / 2;
    let count = 1;
    for (let i = 1; i < tops.length; i++) if (tops[i] - tops[i - 1] > half) count++;
    return count;
  };

  // 1. No wider than the screen; name the outermost elements that stick out.
  const width = document.documentElement.scrollWidth;
  if (width > W) {
    const out = [];
    for (const el of document.body.querySelectorAll("*")) {
      if (!shown(el) || insideScroller(el)) continue;
      if (el.getBoundingClientRect().right <= W + 0.5) continue;
      if (out.some((o) => o.contains(el))) continue;
      out.push(el);
    }
    problems.push(`the page is ${width} px wide: ` + out.slice(0, 5).map(name).join("; "));
  }

  // 2. Words broken inside themselves, 3. text columns narrower than eight characters.
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const range = document.createRange();
  const narrow = new Set();
  const broken = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || !/\S/.test(node.data)) continue;
    if (parent.closest("svg, script, style, textarea, select, option, .token, .visually-hidden"))
      continue;
    if (!shown(parent)) continue;
    range.selectNodeContents(node);
    // On one line: nothing broken, nothing squeezed.
    if (lines(range.getClientRects()) < 2) continue;
    const box = block(parent);
    if (box && contentWidth(box) < 8 * ch(box) - 1 && !narrow.has(box)) {
      narrow.add(box);
      problems.push(`a text column ${Math.round(contentWidth(box))} px wide ` +
                    `(under 8 characters): ${name(box)}`);
    }
    const card = parent.closest(".card, main") || document.body;
    for (const match of node.data.matchAll(/\S+/g)) {
      if (/[\u3000-\u9fff\uff00-\uffef]/.test(match[0])) continue;  // Chinese breaks anywhere
      range.setStart(node, match.index);
      range.setEnd(node, match.index + match[0].length);
      const rects = range.getClientRects();
      if (lines(rects) < 2) continue;
      const wide = Array.from(rects).reduce((sum, r) => sum + r.width, 0);
      if (wide > contentWidth(card)) continue;  // wider than its card: it has to break
      // Running text (a column of 16 characters or more) may break a line after a hyphen
      // or a slash, as print does: "short-" / "lived".
      let at = 1;
      range.setStart(node, match.index);
      while (at < match[0].length) {
        range.setEnd(node, match.index + at + 1);
        if (lines(range.getClientRects()) > 1) break;
        at++;
      }
      if (/[-\/\u2010-\u2014]/.test(match[0][at - 1]) && box && contentWidth(box) >= 16 * ch(box))
        continue;
      broken.push(`"${match[0]}" is broken across lines in ${name(box || parent)}`);
    }
  }
  problems.push(...broken.slice(0, 20));

  // 4. Fixed or sticky parts take at most a sixth of the screen's height.
  for (const el of document.body.querySelectorAll("*")) {
    const position = style(el).position;
    if (position !== "fixed" && position !== "sticky") continue;
    if (!shown(el)) continue;
    const height = el.getBoundingClientRect().height;
    if (height > H / 6)
      problems.push(`${name(el)} is ${position} and ${Math.round(height)} px tall`);
  }

  // 5. Charts: no legend over an axis title, no label over another.
  const overlap = (a, b) =>
    a.width > 0 && b.width > 0 && a.left < b.right - 1 && b.left < a.right - 1 &&
    a.top < b.bottom - 1 && b.top < a.bottom - 1;
  for (const plot of document.querySelectorAll(".js-plotly-plot")) {
    if (!shown(plot)) continue;
    const chart = plot.closest("[data-chart]") || plot;
    const label = chart.getAttribute("data-chart") || name(plot);
    const titles = Array.from(plot.querySelectorAll(
      ".infolayer .g-gtitle text, .infolayer [class*='title'] text.xtitle, " +
      ".infolayer [class*='title'] text.ytitle, .infolayer [class*='title'] text[class$='title']"
    )).filter((t) => t.textContent.trim());
    for (const legend of plot.querySelectorAll(".infolayer g.legend")) {
      const box = (legend.querySelector("rect.bg") || legend).getBoundingClientRect();
      for (const title of titles) {
        if (overlap(box, title.getBoundingClientRect()))
          problems.push(`the legend of chart ${label} covers its title "${title.textContent}"`);
      }
    }
    const labels = Array.from(plot.querySelectorAll(
      ".textpoint text, .annotation-text, .infolayer [class*='title'] text"
    )).filter((t) => t.textContent.trim());
    const boxes = labels.map((t) => t.getBoundingClientRect());
    for (let i = 0; i < labels.length; i++)
      for (let j = i + 1; j < labels.length; j++)
        if (overlap(boxes[i], boxes[j]))
          problems.push(`in chart ${label} "${labels[i].textContent}" overprints ` +
                        `"${labels[j].textContent}"`);
  }
  // 6. What compares the sides shows both on screen: a cell of one side (data-side) lies
  // within the screen's width, not scrolled off it beside the other.
  for (const el of document.querySelectorAll("[data-side]")) {
    if (!shown(el)) continue;
    const box = el.getBoundingClientRect();
    if (box.width > 0 && (box.left < -0.5 || box.right > W + 0.5))
      problems.push(`side ${el.dataset.side}'s ${name(el)} is off screen ` +
                    `(${Math.round(box.left)} to ${Math.round(box.right)} px)`);
  }
  return problems;
}
"""


def layout_problems(page) -> list[str]:
    return page.evaluate(LAYOUT_PROBLEMS)


def furnish_demo() -> Investigation:
    """The demo, with what a newcomer's case also shows: a capture on each side and a CPU
    profile whose targets failed with a long message (the one printed a letter a line)."""
    # The knowledge base the migrations ship, gone if an earlier test of this database
    # flushed it (transactional tests empty every table).
    import_module("investigations.migrations.0013_root_causes").ship(apps, None)
    import_module("investigations.migrations.0027_root_cause_signals").ship_signals(apps, None)
    call_command("load_demo", verbosity=0)
    case = Investigation.objects.get(title=DEMO_TITLE)
    for side, file_name, data in (
        ("a", "checkout-a.pcap", SIDE_A),
        ("b", "checkout-b.pcapng", SIDE_B),
    ):
        (capture,) = capture_import(
            investigation=case,
            user=case.lead,
            side_key=side,
            uploads=[SimpleUploadedFile(file_name, data)],
        )
        capture_analyse_stored(capture_id=capture.pk, seconds=60)
    collection = collection_request(
        investigation=case, user=case.lead, kind="profile", parameters={"seconds": 30}
    )
    for target in collection.targets.all():
        claimed = target_claim(target_id=target.pk, seconds=60)
        target_fail(
            target_id=claimed.pk,
            attempt=claimed.attempts,
            error=Phrase(
                "perf_event_paranoid is %(level)s and sudo needs a password on %(host)s",
                level="4",
                host=claimed.host.name,
            ),
        )
    collection_complete_if_done(collection_id=collection.pk)
    return case


def demo_pages() -> dict[str, str]:
    """Each kind of page of the demo: {what it is: its path}."""
    demo = get_user_model().objects.get(username="demo")
    case = Investigation.objects.get(title=DEMO_TITLE)
    ladder = Ladder.objects.filter(investigation=case).first()
    profile_a, profile_b = Profile.objects.filter(investigation__status="closed").order_by(
        "investigation", "side__key"
    )[:2]
    capture_a, capture_b = Capture.objects.filter(investigation=case).order_by("side__key")[:2]
    host = Host.objects.filter(team__memberships__user=demo).first()
    team = Team.objects.filter(memberships__user=demo).first()
    root_cause = RootCause.objects.order_by("pk").first()
    base = f"/investigations/{case.pk}"
    past = f"/investigations/{profile_a.investigation_id}"
    return {
        "list": "/investigations/",
        "case": f"{base}/",
        "past case": f"{past}/",
        "ladder": f"/ladders/{ladder.pk}/",
        "profile": f"{past}/profiles/{profile_a.pk}/",
        "profile diff": f"{past}/profiles/diff/?a={profile_a.pk}&b={profile_b.pk}",
        "facts diff": f"{base}/facts/diff/",
        "capture": f"{base}/captures/{capture_a.pk}/",
        "capture comparison": f"{base}/captures/compare/?a={capture_a.pk}&b={capture_b.pk}",
        "baseline": f"{base}/baseline/",
        "knowledge base": "/knowledge/",
        "root cause": f"/knowledge/{root_cause.pk}/",
        "search": "/search/?q=governor",
        "postmortem": f"{base}/postmortem/",
        "postmortem print": f"{base}/postmortem/print/",
        "teams": "/teams/",
        "team": f"/teams/{team.pk}/",
        "hosts": "/hosts/",
        "host": f"/hosts/{host.pk}/",
        "my items": "/checklist/mine/",
        "profile settings": "/profile/",
    }


def settle(page) -> None:
    """The panels are in and every chart on the page is drawn."""
    panels_loaded(page)
    page.wait_for_load_state("networkidle")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('[data-chart]'))"
        ".every(c => c.querySelector('.main-svg') || !c.offsetParent)",
        timeout=30_000,
    )


@pytest.fixture
def demo_case(settings, monkeypatch, tmp_path):
    settings.DEBUG = True  # the demo's password is published: load_demo runs in DEBUG only
    settings.MEDIA_ROOT = str(tmp_path / "media")
    # The test does the workers' part itself: nothing is left on the broker.
    monkeypatch.setattr(capture_services, "enqueue", lambda *args, **options: None)
    monkeypatch.setattr(collection_services, "enqueue", lambda *args, **options: None)
    return furnish_demo()


def test_every_kind_of_page_fits_a_phone(browser, live_server, demo_case, screenshot):
    pages = demo_pages()
    context = browser.new_context(viewport=PHONE, timezone_id="UTC")
    page = context.new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "demo")
    page.fill("input[name=password]", "perfcase-demo")
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/investigations/")

    found = {}
    for what, path in pages.items():
        response = page.goto(f"{live_server.url}{path}")
        assert response.status == 200, path
        settle(page)
        found[what] = layout_problems(page)
        screenshot(page, f"phone-{what.replace(' ', '-')}")
        # Every form and folded part opened: they must fit too.
        page.evaluate("() => document.querySelectorAll('details').forEach(d => { d.open = true; })")
        settle(page)
        found[f"{what}, opened"] = layout_problems(page)
    context.close()

    assert {what: problems for what, problems in found.items() if problems} == {}
