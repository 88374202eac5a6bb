"""Password guessing is stopped: after a few failed sign-ins for one user, or from one
address, the sign-in page, POST /api/auth/token and the admin refuse even the right
password for a while, say so, and a team lead can unlock a member. API tokens expire."""

import json
from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from investigations.models import ApiToken
from investigations.services.tokens import api_token_create
from tests.conftest import PASSWORD, ApiClient

pytestmark = pytest.mark.django_db

LOCKED = "Too many failed sign-ins for this user or from this address"


def page_sign_in(client: Client, username: str, password: str):
    return client.post("/accounts/login/", {"username": username, "password": password})


def api_sign_in(client: Client, username: str, password: str):
    return client.post(
        "/api/auth/token",
        json.dumps({"username": username, "password": password}),
        content_type="application/json",
    )


def admin_sign_in(client: Client, username: str, password: str):
    return client.post("/admin/login/", {"username": username, "password": password})


@pytest.mark.parametrize("sign_in", [page_sign_in, api_sign_in, admin_sign_in])
def test_after_five_failures_even_the_right_password_is_refused_and_says_why(
    personas, settings, sign_in
):
    client = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        failed = sign_in(client, "max", "guess")
        assert failed.status_code in (200, 401), failed.status_code
    last_guess = sign_in(client, "max", "guess")  # the fifth failure locks at once

    refused = sign_in(client, "max", PASSWORD)

    assert last_guess.status_code == 429
    assert refused.status_code == 429
    assert LOCKED in refused.content.decode()
    assert "15 minutes" in refused.content.decode()
    if sign_in is api_sign_in:
        assert refused["Content-Type"].startswith("application/json")
        assert "token" not in refused.json()
    assert "_auth_user_id" not in client.session


def test_the_lock_is_per_user_name_from_any_address(personas, settings):
    for number in range(settings.AXES_FAILURE_LIMIT):
        page_sign_in(Client(REMOTE_ADDR=f"198.51.100.{number + 1}"), "max", "guess")

    elsewhere = page_sign_in(Client(REMOTE_ADDR="203.0.113.50"), "max", PASSWORD)
    someone_else = page_sign_in(Client(REMOTE_ADDR="203.0.113.50"), "vera", PASSWORD)

    assert elsewhere.status_code == 429
    assert someone_else.status_code == 302  # signed in


def test_the_lock_is_per_address_for_any_user_name(personas, settings):
    guesser = Client(REMOTE_ADDR="198.51.100.99")
    for number in range(settings.AXES_FAILURE_LIMIT):
        page_sign_in(guesser, f"guess-{number}", "guess")

    from_there = page_sign_in(guesser, "vera", PASSWORD)
    from_elsewhere = page_sign_in(Client(REMOTE_ADDR="203.0.113.51"), "vera", PASSWORD)

    assert from_there.status_code == 429
    assert from_elsewhere.status_code == 302


def test_a_team_lead_unlocks_a_member_on_the_team_page(personas, settings):
    for number in range(settings.AXES_FAILURE_LIMIT):
        page_sign_in(Client(REMOTE_ADDR=f"198.51.100.{number + 1}"), "max", "guess")
    lead = personas.client(personas.lead)
    page = lead.get(f"/teams/{personas.team.pk}/").content.decode()
    assert "locked out" in page and "Unlock" in page
    membership = personas.team.memberships.get(user=personas.member)
    # A member who is not the lead cannot.
    denied = personas.client(personas.viewer).post(
        f"/memberships/{membership.pk}/", {"unlock": "1"}
    )
    assert denied.status_code in (403, 404)

    lead.post(f"/memberships/{membership.pk}/", {"unlock": "1"})

    assert "locked out" not in lead.get(f"/teams/{personas.team.pk}/").content.decode()
    assert page_sign_in(Client(REMOTE_ADDR="203.0.113.52"), "max", PASSWORD).status_code == 302


def test_a_token_carries_its_expiry_and_stops_working_after_it(personas, settings):
    answer = ApiClient().post("/api/auth/token", {"username": "max", "password": PASSWORD})
    expires = answer.body["expires_at"]
    token, raw = api_token_create(user=personas.member, name="ci")

    assert expires.startswith(
        (timezone.now() + timedelta(days=settings.API_TOKEN_DAYS)).date().isoformat()
    )
    reader = Client(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert reader.get("/api/teams").status_code == 200
    ApiToken.objects.filter(pk=token.pk).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert reader.get("/api/teams").status_code == 401
    profile = personas.client(personas.member).get("/profile/").content.decode()
    assert "Expires" in profile and "expired" in profile
