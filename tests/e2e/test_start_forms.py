"""Each start form of the investigation page, sent from Chromium with a bad value: the page
comes back with the form open, the error under its own field (in view), and what was typed
still in the form (issue 24, bug 1)."""

import pytest

from tests.e2e.conftest import panels_loaded
from tests.investigations.test_collections import place_local_hosts

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

# The form (a CSS selector inside the page), the <details> it is folded in (or None), the
# fields typed (the first one bad), and what the bad field's card says.
START_FORMS = {
    "capture": (
        "details.capture-new form",
        "details.capture-new",
        {"filter": "tcp port 8899 and", "seconds": "20"},
        "tcpdump cannot compile this filter",
    ),
    "profile": (
        "details.profile-new form",
        "details.profile-new",
        {"seconds": "500", "frequency": "49"},
        "less than or equal to 120",
    ),
    "baseline": (
        "details.baseline-new form",
        "details.baseline-new",
        {"scratch_dir": "/dev/shm/../sda", "file_mb": "64"},
        "no .. and no spaces",
    ),
    "facts": (
        "#evidence form",
        None,
        {"service": "java; rm -rf /", "paths": "/data"},
        "A process name",
    ),
    "ladder": (
        "details.ladder-new form",
        "details.ladder-new",
        {
            "ladder-steps": "ten twenty",
            "ladder-side_a_url": "http://a.example/",
            "ladder-side_b_url": "http://b.example/",
        },
        "",
    ),
}


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("kind", list(START_FORMS))
def test_a_start_form_with_a_bad_value_comes_back_open_with_the_error_under_its_field(
    personas, sign_in, screenshot, live_server, kind, width
):
    place_local_hosts(personas)
    selector, details, typed, message = START_FORMS[kind]
    bad = next(iter(typed))
    page = sign_in(personas.member)
    page.set_viewport_size({"width": width, "height": 844})
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/")
    panels_loaded(page)

    if details:
        page.click(f"{details} summary")
    form = page.locator(selector)
    for name, value in typed.items():
        form.locator(f"[name='{name}']").fill(value)
    # The server's answer is under test: the browser's own check (max="120") would stop
    # some values before they are sent.
    form.evaluate("f => { f.noValidate = true; }")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    page.wait_for_load_state("load")

    form = page.locator(selector)
    if details:
        assert page.locator(details).evaluate("d => d.open")  # the form is open
    card = form.locator(".field", has=page.locator(f"[name='{bad}']"))
    assert "has-error" in card.get_attribute("class")
    error = card.locator(".error")
    assert message in error.inner_text()
    error.wait_for(state="visible")
    assert error.evaluate(  # scrolled into view, not left at the top of the page
        "e => { const r = e.getBoundingClientRect();"
        " return r.top >= 0 && r.bottom <= window.innerHeight; }"
    )
    for name, value in typed.items():  # what was typed, kept
        assert form.locator(f"[name='{name}']").input_value() == value
    # The error is the field's, not a banner at the top of the page.
    assert page.locator(".messages").count() == 0
    screenshot(page, f"start-form-{kind}-{width}")
