"""CPU profiles in a real Chromium: a profile's flame graph searched, the differential view
of side A against side B (the function table first, frames of one side only marked), and a
profile of 20,000 distinct stacks drawn, with how long the drawing took."""

import random

import pytest

from investigations.services.profiles import profile_import
from tests.e2e.test_first_case import open_as

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}

EVENTS = "nginx;main;ngx_process_events"
ECDH = f"{EVENTS};ngx_ssl_handshake;SSL_do_handshake;ECDH_compute_key"
REQUEST = f"{EVENTS};ngx_http_process_request"

# Side A: a TLS terminator built without the assembly P-256, so p256_point_mul burns 61 %.
SIDE_A = f"""\
{ECDH};p256_point_mul 610
{EVENTS};ngx_ssl_handshake;SSL_do_handshake;RSA_sign 40
{REQUEST};ngx_http_parse_request_line 150
{REQUEST};memcpy 100
{EVENTS};epoll_wait 100
"""
# Side B: the same service with the assembly (p256_point_mul_nistz256, which A never ran).
SIDE_B = f"""\
{ECDH};p256_point_mul 4
{ECDH};p256_point_mul_nistz256 96
{EVENTS};ngx_ssl_handshake;SSL_do_handshake;RSA_sign 100
{REQUEST};ngx_http_parse_request_line 400
{REQUEST};memcpy 250
{EVENTS};epoll_wait 150
"""


def watch_console(page) -> list[str]:
    """Every console error and uncaught exception of the page, as it happens."""
    problems = []
    page.on("console", lambda message: message.type == "error" and problems.append(message.text))
    page.on("pageerror", lambda error: problems.append(str(error)))
    return problems


def imported(personas, side: str, name: str, text: str):
    (profile,) = profile_import(
        investigation=personas.investigation,
        user=personas.lead,
        side_key=side,
        format="folded",
        files=[(name, text.encode())],
        host=None,
    )
    return profile


def drawn(page) -> dict:
    """Waits for the flame graph to be drawn; returns what the script recorded."""
    page.wait_for_selector(".flame[data-draw-ms]:not([aria-busy])", timeout=120_000)
    return page.eval_on_selector(".flame", "f => ({...f.dataset})")


def bar_centre(page, name: str) -> tuple[float, float]:
    """Where on the page the bar labelled `name` is (plotly's drag layer lies over the
    bars and takes the clicks: the mouse goes there)."""
    index = page.eval_on_selector_all(
        ".flame-chart .bars .point",
        "(points, name) => points.findIndex(p => p.textContent === name)",
        name,
    )
    assert index >= 0, f"no bar labelled {name}"
    return bar_index_centre(page, index)


def bar_index_centre(page, index: int) -> tuple[float, float]:
    bar = page.locator(".flame-chart .bars .point path").nth(index)
    bar.scroll_into_view_if_needed()
    box = bar.bounding_box()
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def bar_opacities(page) -> list[float]:
    """The opacity of each bar plotly drew, in the order of the trace."""
    return page.eval_on_selector_all(
        ".flame-chart .bars .point path",
        "paths => paths.map(p => parseFloat(getComputedStyle(p).opacity))",
    )


def test_a_profiles_flame_graph_finds_a_function_and_says_its_share(
    personas, sign_in, screenshot, live_server
):
    profile = imported(personas, "a", "nginx-a.folded", SIDE_A)
    page = sign_in(personas.member)
    problems = watch_console(page)
    page.goto(
        f"{live_server.url}/investigations/{personas.investigation.pk}/profiles/{profile.pk}/"
    )
    state = drawn(page)
    assert int(state["bars"]) == 13  # all, nginx, main, ngx_process_events and nine above
    assert page.locator(".flame-chart .bars .point").count() == 13
    # The widest frames carry their names; hovering names the frame, its share and samples.
    labels = page.eval_on_selector_all(
        ".flame-chart .bars .point text", "texts => texts.map(t => t.textContent)"
    )
    assert "ngx_process_events" in labels
    assert bar_opacities(page) == [1.0] * 13

    page.fill(".flame-search", "p256")
    page.wait_for_selector(".flame[data-matches='1']")
    share = page.inner_text(".flame-share")
    assert share == "Matching frames: 1, taking 61% of the profile"
    opacities = bar_opacities(page)
    assert sorted(opacities) == [0.22] * 12 + [1.0]
    screenshot(page, "profile-flame-search")

    # Nested matches count once: "ngx_" is in ngx_process_events and in three frames above
    # it; together they are the whole profile, not more. (The waits are on selectors:
    # Playwright's waits on an expression use eval, which the policy forbids.)
    page.fill(".flame-search", "ngx_")
    page.wait_for_selector(".flame[data-matches='4']")
    assert page.inner_text(".flame-share") == "Matching frames: 4, taking 100% of the profile"

    # A click on a frame zooms into it; the reset button shows the whole profile again.
    page.fill(".flame-search", "")
    page.wait_for_selector(".flame[data-matches='0']")
    page.mouse.click(*bar_centre(page, "ngx_ssl_handshake"))
    page.wait_for_selector(".flame[data-bars='5']:not([aria-busy])")
    assert page.inner_text(".flame-zoomed") == "Zoomed into ngx_ssl_handshake"
    page.click(".flame-reset")
    page.wait_for_selector(".flame[data-bars='13']:not([aria-busy])")
    assert not page.is_visible(".flame-reset")

    # The function table: a name searches the graph.
    page.click("table.functions button[data-flame-search='memcpy']")
    page.wait_for_selector(".flame[data-matches='1']")
    assert page.input_value(".flame-search") == "memcpy"
    assert page.inner_text(".flame-share") == "Matching frames: 1, taking 10% of the profile"
    assert problems == []


def test_frame_names_with_markup_show_as_they_are(personas, sign_in, screenshot, live_server):
    # C++ templates and Java constructors carry angle brackets; plotly reads bar and hover
    # texts as a little HTML, and a folded file from elsewhere can hold anything.
    names = [
        "<b>bold</b>",
        "std::vector<int>::push_back",
        "Foo.<init>",
        "a&b &lt",  # (no ";": that separates frames)
        "<img src=x onerror=alert(1)>",
    ]
    text = "".join(f"main;{name} 100\n" for name in names)
    profile = imported(personas, "a", "markup.folded", text)
    page = sign_in(personas.member)
    problems = watch_console(page)
    page.goto(
        f"{live_server.url}/investigations/{personas.investigation.pk}/profiles/{profile.pk}/"
    )
    drawn(page)
    labels = page.eval_on_selector_all(
        ".flame-chart .bars .point text", "texts => texts.map(t => t.textContent)"
    )
    assert sorted(labels) == sorted(["all", "main", *names])
    assert page.locator(".flame-chart img, .flame-chart b, .flame-chart a").count() == 0
    page.mouse.move(*bar_centre(page, "<b>bold</b>"))
    page.wait_for_selector(".flame-chart .hoverlayer .hovertext")
    hover = page.eval_on_selector(".flame-chart .hoverlayer .hovertext", "h => h.textContent")
    assert hover.startswith("<b>bold</b>20% of the profile"), hover
    assert "100 samples" in hover
    assert "<b>bold</b>" in page.inner_text("table.functions")
    page.fill(".flame-search", "<")
    page.wait_for_selector(".flame[data-matches='4']")
    assert page.inner_text(".flame-share") == "Matching frames: 4, taking 80% of the profile"
    screenshot(page, "profile-flame-markup")
    assert problems == []


def test_the_diff_puts_the_largest_self_difference_first_and_marks_one_sided_frames(
    personas, sign_in, screenshot, live_server
):
    a = imported(personas, "a", "nginx-a.folded", SIDE_A)
    b = imported(personas, "b", "nginx-b.folded", SIDE_B)
    page = sign_in(personas.member)
    problems = watch_console(page)
    url = f"{live_server.url}/investigations/{personas.investigation.pk}/profiles/diff/"
    page.goto(f"{url}?a={a.pk}&b={b.pk}")

    # The table people read first: p256_point_mul, 61 % self on A, 0.4 % on B.
    first = page.locator("table.functions-diff tbody tr").first
    cells = first.locator("td").all_inner_texts()
    assert cells[:4] == ["p256_point_mul", "61.00 %", "0.40 %", "-60.60"]
    assert "more-a" in first.get_attribute("class")
    assert (
        "The largest difference: p256_point_mul, 61.0 % self on A, 0.4 % on B."
        in page.inner_text(".headline")
    )

    state = drawn(page)
    bars = int(state["bars"])
    # Both sides' frames: B's p256_point_mul_nistz256 has a bar, hatched as one-sided.
    assert bars == 14
    hatched = page.eval_on_selector_all(
        ".flame-chart .bars .point path",
        "paths => paths.flatMap((p, i) => /url\\(/.test(p.style.fill) ? [i] : [])",
    )
    assert len(hatched) == 1
    page.mouse.move(*bar_index_centre(page, hatched[0]))
    page.wait_for_selector(".flame-chart .hoverlayer .hovertext")
    hover = page.eval_on_selector(".flame-chart .hoverlayer .hovertext", "h => h.textContent")
    assert hover == (
        "p256_point_mul_nistz256A: 0% · B: 9.6% · B − A: +9.6 pointsOnly side B ran this frame"
    )
    page.mouse.move(0, 0)
    assert "more on A" in page.inner_text(".flame-legend")
    assert "hatched: on one side only" in page.inner_text(".flame-legend")

    page.fill(".flame-search", "p256_point_mul")
    page.wait_for_selector(".flame[data-matches='2']")
    assert page.inner_text(".flame-share") == "Matching frames: 2, taking 61% of A and 10% of B"
    screenshot(page, "profile-diff")

    # A's shape cannot draw what A never ran: it is listed under the graph instead.
    page.select_option("#flame-shape", "a")
    page.wait_for_selector(".flame[data-bars='13']:not([aria-busy])")
    assert "shape=a" in page.url
    missing = page.inner_text(".flame-missing")
    assert "Frames only side B ran" in missing
    assert "p256_point_mul_nistz256" in missing
    screenshot(page, "profile-diff-shape-a")

    # Coloured by what each frame ran itself: ssl_handshake called everything it did.
    page.select_option("#flame-measure", "self")
    page.wait_for_function("() => location.search.includes('measure=self')")
    # Drawn from the self measure's answer (not only "not busy": that held once, 1 run in
    # many, while the chart still showed the total measure's bars).
    page.wait_for_function(
        "() => (document.querySelector('.flame-chart').data || [{}])[0].hovertext"
        "?.some((text) => text.includes('itself'))"
    )
    page.wait_for_selector(".flame:not([aria-busy])")
    page.mouse.move(*bar_centre(page, "ngx_ssl_handshake"))
    page.wait_for_selector(".flame-chart .hoverlayer .hovertext")
    hover = page.eval_on_selector(".flame-chart .hoverlayer .hovertext", "h => h.textContent")
    assert "A, itself: 0% · B, itself: 0% · B − A: 0 points" in hover, hover
    assert problems == []


def test_the_diff_fits_a_phone(browser, personas, live_server, screenshot):
    a = imported(personas, "a", "nginx-a.folded", SIDE_A)
    b = imported(personas, "b", "nginx-b.folded", SIDE_B)
    page = open_as(browser, live_server, personas.member, viewport=PHONE)
    page.goto(
        f"{live_server.url}/investigations/{personas.investigation.pk}/profiles/diff/"
        f"?a={a.pk}&b={b.pk}"
    )
    drawn(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a 390 px phone"
    screenshot(page, "profile-diff-phone-390")
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/profiles/{a.pk}/")
    drawn(page)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide on a 390 px phone"
    page.context.close()


def random_profile(count: int, seed: int) -> str:
    """`count` distinct stacks, 3 to 60 frames deep, fanning out towards the leaves."""
    rng = random.Random(seed)
    functions = [f"fn_{i}" for i in range(5000)]
    stacks: dict[str, int] = {}
    while len(stacks) < count:
        frames = ["app"]
        for depth in range(rng.randint(3, 60)):
            spread = int(rng.paretovariate(1.0 + depth * 0.05)) * (depth + 1)
            frames.append(functions[min(spread, len(functions)) - 1])
        stacks[";".join(frames)] = rng.randint(1, 1000)
    return "".join(f"{stack} {count}\n" for stack, count in stacks.items())


def test_a_profile_of_twenty_thousand_stacks_draws(personas, sign_in, screenshot, live_server):
    profile = imported(personas, "a", "huge.folded", random_profile(20_000, seed=1))
    assert profile.stack_count == 20_000
    page = sign_in(personas.member)
    problems = watch_console(page)
    page.goto(
        f"{live_server.url}/investigations/{personas.investigation.pk}/profiles/{profile.pk}/"
    )
    state = drawn(page)
    bars = int(state["bars"])
    assert 100 < bars <= 4000
    merged = page.inner_text(".flame-note")
    assert "merged into [other]" in merged
    # No timing assertion (CI machines are busy): the numbers are for the record.
    print(
        f"\n20,000 stacks at 0.1 %: {bars} bars; JSON fetched in {state['loadMs']} ms, "
        f"drawn in {state['drawMs']} ms"
    )
    # The most the graph ever draws: asking for every frame wider than 0.01 % raises the
    # threshold to keep about 4,000 bars (half of them "[other]").
    page.select_option("#flame-threshold", "0.01")
    page.wait_for_function(
        "bars => document.querySelector('.flame').dataset.bars !== String(bars) && "
        "!document.querySelector('.flame').hasAttribute('aria-busy')",
        arg=bars,
    )
    state = drawn(page)
    assert "threshold=0.01" in page.url
    print(
        f"20,000 stacks at 0.01 %: {state['bars']} bars; JSON fetched in {state['loadMs']} ms, "
        f"drawn in {state['drawMs']} ms"
    )
    page.fill(".flame-search", "fn_1")
    page.wait_for_function("() => Number(document.querySelector('.flame').dataset.matches) > 0")
    assert "of the profile" in page.inner_text(".flame-share")
    screenshot(page, "profile-flame-20000-stacks")
    assert problems == []


# One sample of 128 frames among 716 (the profile): drawn whole, the graph is
# 129 rows (2,326 px) tall, and the frames that matter are its bottom three rows.
DEEP_STACK = "svc;" + ";".join(f"deep_{depth}" for depth in range(1, 128)) + " 1\n"
HOT = "svc;main;hot_loop 600\nsvc;main;parse 115\n"


def viewport_state(page) -> dict:
    return page.evaluate(
        """() => {
          const viewport = document.querySelector('.flame-viewport');
          const box = viewport.getBoundingClientRect();
          return {top: box.top, bottom: box.bottom, height: box.height,
                  scrollHeight: viewport.scrollHeight, clientHeight: viewport.clientHeight,
                  scrollTop: viewport.scrollTop, window: window.innerHeight};
        }"""
    )


def bar_box(page, name: str) -> dict:
    """Where the bar labelled `name` is now, without scrolling anything to it."""
    index = page.eval_on_selector_all(
        ".flame-chart .bars .point",
        "(points, name) => points.findIndex(p => p.textContent === name)",
        name,
    )
    assert index >= 0, f"no bar labelled {name}"
    return page.locator(".flame-chart .bars .point path").nth(index).bounding_box()


def assert_the_hot_frames_show_first(page, bars: int, screenshot, name: str) -> None:
    state = drawn(page)
    assert int(state["bars"]) == bars
    # The page scrolled to the graph, as the table's links and a reader do.
    page.evaluate("() => document.querySelector('.flame-viewport').scrollIntoView({block: 'end'})")
    view = viewport_state(page)
    # The viewport is bounded and scrolls; it starts at the bottom, where the root is.
    assert view["height"] <= 0.6 * view["window"] + 1, view
    assert view["scrollHeight"] > 2000 > view["clientHeight"], view
    assert view["scrollTop"] + view["clientHeight"] >= view["scrollHeight"] - 1, view
    for frame in ("hot_loop", "main", "svc"):
        box = bar_box(page, frame)
        assert view["top"] <= box["y"] and box["y"] + box["height"] <= view["bottom"] + 1, (
            frame,
            box,
            view,
        )
        assert 0 <= box["y"] and box["y"] + box["height"] <= view["window"], (frame, box)
    screenshot(page, name)
    # The deep stack is there, a scroll up.
    page.evaluate("() => { document.querySelector('.flame-viewport').scrollTop = 0; }")
    top = min(
        page.eval_on_selector_all(
            ".flame-chart .bars .point path",
            "paths => paths.map(p => p.getBoundingClientRect().top)",
        )
    )
    view = viewport_state(page)
    assert view["top"] - 1 <= top <= view["bottom"], (top, view)


def test_a_rare_deep_stack_leaves_the_hot_frames_in_view(
    personas, sign_in, screenshot, live_server
):
    profile = imported(personas, "a", "deep.folded", HOT + DEEP_STACK)
    other = imported(personas, "b", "deep-b.folded", HOT.replace("600", "500") + DEEP_STACK)
    page = sign_in(personas.member)
    problems = watch_console(page)
    case = f"{live_server.url}/investigations/{personas.investigation.pk}"
    page.goto(f"{case}/profiles/{profile.pk}/")
    # all, svc, main, hot_loop, parse, 127 deep frames.
    assert_the_hot_frames_show_first(page, 132, screenshot, "profile-flame-deep-stack")

    # A zoom into a shallow frame draws only its rows: nothing to scroll.
    page.mouse.click(*bar_centre(page, "main"))
    page.wait_for_selector(".flame[data-bars='3']:not([aria-busy])")
    view = viewport_state(page)
    assert view["scrollHeight"] <= view["clientHeight"] + 1, view

    page.goto(f"{case}/profiles/diff/?a={profile.pk}&b={other.pk}")
    assert_the_hot_frames_show_first(page, 132, screenshot, "profile-diff-deep-stack")
    assert problems == []
