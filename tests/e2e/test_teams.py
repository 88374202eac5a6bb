"""In a real browser on a 390 px phone: a lead's team page with pending invitations and a
member's sign-in locks, and the invitee accepting on their own teams page."""

import pytest
from django.test import Client

from investigations.choices import Role
from investigations.models import Membership
from investigations.services.invitations import invitation_create
from tests.conftest import PASSWORD, make_user

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PHONE = {"width": 390, "height": 844}


def open_on_phone(browser, live_server, user):
    page = browser.new_context(timezone_id="UTC", viewport=PHONE).new_page()
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", user.username)
    page.fill("input[name=password]", PASSWORD)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/investigations/")
    return page


def fits(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"{page.url} is {width} px wide on a 390 px phone"


def test_team_pages_with_invitations_and_locks_fit_a_phone_and_accepting_works(
    browser, personas, live_server, settings, screenshot
):
    nina = make_user("nina")
    for name in ("nina", "someone-with-a-rather-long-user-name-from-the-directory"):
        invitation_create(
            team=personas.team, invited_by=personas.lead, username=name, role="viewer"
        )
    for address in ("198.51.100.7", "2001:db8:1234:5678:9abc:def0:1234:5678"):
        for _ in range(settings.AXES_FAILURE_LIMIT):
            Client(REMOTE_ADDR=address).post(
                "/accounts/login/", {"username": "max", "password": "guess"}
            )

    lead = open_on_phone(browser, live_server, personas.lead)
    lead.goto(f"{live_server.url}/teams/{personas.team.pk}/")
    assert lead.locator("form.sign-in-lock").count() == 2
    assert "Pending invitations" in lead.inner_text("main")
    screenshot(lead, "team-lead-phone-390")
    fits(lead)

    invitee = open_on_phone(browser, live_server, nina)
    invitee.goto(f"{live_server.url}/teams/")
    screenshot(invitee, "team-invitations-phone-390")
    fits(invitee)
    invitee.click("#invitations button[value=accept]")
    invitee.wait_for_url(f"{live_server.url}/teams/{personas.team.pk}/")

    assert Membership.objects.get(team=personas.team, user=nina).role == Role.VIEWER
