"""Real Chromium (Debian's /usr/bin/chromium) driven by Playwright against a live server."""

import shutil
from urllib.parse import quote

import pytest
from django.conf import settings
from django.test import Client

from investigations.middleware import TIME_ZONE_COOKIE
from tests.conftest import ARTIFACTS, require_real_tool

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="package")
def browser():
    # Package scope: Playwright's event loop must be gone before other tests use the ORM.
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        require_real_tool("chromium is not installed")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        require_real_tool("playwright (Python package) is not installed")
    with pytest.MonkeyPatch.context() as patch, sync_playwright() as playwright:
        # Playwright's sync API runs an event loop in this thread; the ORM calls that tests
        # and their teardown make between browser steps are still plain synchronous calls.
        patch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


def panels_loaded(page, timeout: float = 30_000) -> None:
    """Waits until htmx has filled every panel frame of an investigation page (the page
    draws only the frames; each panel comes from its own URL)."""
    page.wait_for_function("() => document.querySelector('.frame') === null", timeout=timeout)


@pytest.fixture
def sign_in(browser, live_server):
    """Open a fresh browser session signed in as a user; returns its page."""
    contexts = []

    def open_as(user, time_zone: str = "UTC"):
        context = browser.new_context(
            timezone_id=time_zone, viewport={"width": 1280, "height": 900}
        )
        contexts.append(context)
        # Signed in by the session cookie the sign-in form would leave, and the time zone
        # cookie its page would set: the form itself is driven by test_first_case.py,
        # test_teams.py and the other tests that sign in by hand, and going through it for
        # every browser was a sixth of a browser test's CPU.
        client = Client()
        client.force_login(user)
        cookies = {
            settings.SESSION_COOKIE_NAME: client.cookies[settings.SESSION_COOKIE_NAME].value,
            TIME_ZONE_COOKIE: quote(time_zone, safe=""),
        }
        url = live_server.url
        context.add_cookies([{"name": k, "value": v, "url": url} for k, v in cookies.items()])
        page = context.new_page()
        page.goto(f"{url}/investigations/")
        return page

    yield open_as
    for context in contexts:
        context.close()


@pytest.fixture
def screenshot():
    ARTIFACTS.mkdir(exist_ok=True)

    def take(page, name: str):
        page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)

    return take
