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
    # The browser's own check (max="120") does not stop the form: the server answers.
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


def test_an_empty_required_field_hides_no_other_error_of_the_form(personas, sign_in, live_server):
    """Issue 24 bug 13: the browser stopped the form at its empty required field and showed
    that alone; now every error of the form shows at once, each beside its field."""
    place_local_hosts(personas)
    page = sign_in(personas.member)
    page.goto(f"{live_server.url}/investigations/{personas.investigation.pk}/")
    panels_loaded(page)
    page.click("details.ladder-new summary")
    form = page.locator("details.ladder-new form")
    form.locator("[name='ladder-side_a_url']").fill("")
    form.locator("[name='ladder-side_b_url']").fill("ftp://b.example/")
    form.locator("[name='ladder-steps']").fill("ten twenty")
    form.locator("[name='ladder-step_seconds']").fill("0")
    with page.expect_navigation():
        form.locator("button[type=submit]").click()
    page.wait_for_load_state("load")

    form = page.locator("details.ladder-new form")
    errors = {
        "ladder-side_a_url": "This field is required.",
        "ladder-side_b_url": "http",
        "ladder-steps": "whole numbers",
        "ladder-step_seconds": "greater than or equal to 1",
    }
    for name, message in errors.items():
        card = form.locator(".field", has=page.locator(f"[name='{name}']"))
        assert "has-error" in card.get_attribute("class"), name
        assert message in card.locator(".error").inner_text(), name
    assert form.locator("[name='ladder-side_b_url']").input_value() == "ftp://b.example/"
