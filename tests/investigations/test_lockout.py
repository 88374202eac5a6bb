"""Password guessing is stopped without locking out the innocent: failed sign-ins lock a
user name at the address they came from (not everywhere), an address that fails often is
slowed with a growing wait (not locked for everyone behind it), a forwarded address counts
only from a trusted proxy, and a team lead sees each lock and lifts it. The same on the
sign-in page, POST /api/auth/token and the admin. API tokens expire."""

import json
import re
from datetime import timedelta
from html import unescape

import pytest
from axes.models import AccessAttempt
from django.db.models import F, Sum
from django.test import Client
from django.utils import timezone

from investigations.models import ApiToken
from investigations.services.tokens import api_token_create
from tests.conftest import PASSWORD, ApiClient, make_user

pytestmark = pytest.mark.django_db

LOCKED = "Too many failed sign-ins for this user name from this address"
SLOWED = "Too many failed sign-ins from this address: wait"


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


SIGN_INS = [page_sign_in, api_sign_in, admin_sign_in]


def signed_in(response, sign_in) -> bool:
    if sign_in is api_sign_in:
        return response.status_code == 200 and "token" in response.json()
    return response.status_code == 302


def make_staff(username: str):
    # The admin's sign-in takes staff only; the lock works alike for anyone.
    user = make_user(username)
    user.is_staff = True
    user.save()
    return user


@pytest.mark.parametrize("sign_in", SIGN_INS)
def test_after_five_failures_from_one_address_the_right_password_is_refused_there(
    personas, settings, sign_in
):
    make_staff("sam")
    client = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(settings.AXES_FAILURE_LIMIT - 1):
        failed = sign_in(client, "sam", "guess")
        assert failed.status_code in (200, 401), failed.status_code
    last_guess = sign_in(client, "sam", "guess")  # the fifth failure locks at once

    refused = sign_in(client, "sam", PASSWORD)

    assert last_guess.status_code == 429
    assert refused.status_code == 429
    assert LOCKED in refused.content.decode()
    assert "15 minutes" in refused.content.decode()
    if sign_in is api_sign_in:
        assert refused["Content-Type"].startswith("application/json")
        assert "token" not in refused.json()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("sign_in", SIGN_INS)
def test_failures_for_a_user_from_one_address_do_not_lock_them_out_from_another(
    personas, settings, sign_in
):
    make_staff("sam")
    attacker = Client(REMOTE_ADDR="198.51.100.7")
    for _ in range(settings.AXES_FAILURE_LIMIT + 2):
        sign_in(attacker, "sam", "guess")

    from_the_attacker = sign_in(attacker, "sam", PASSWORD)
    from_their_desk = sign_in(Client(REMOTE_ADDR="203.0.113.50"), "sam", PASSWORD)

    assert from_the_attacker.status_code == 429
    assert signed_in(from_their_desk, sign_in)


def address_failures(address: str) -> int:
    total = AccessAttempt.objects.filter(ip_address=address).aggregate(
        n=Sum("failures_since_start")
    )
    return total["n"] or 0


def time_passes(seconds: int) -> None:
    """The recorded failures moved into the past, as if the wait had been sat out."""
    AccessAttempt.objects.update(attempt_time=F("attempt_time") - timedelta(seconds=seconds))


@pytest.mark.parametrize("sign_in", SIGN_INS)
def test_an_address_that_fails_often_waits_longer_each_time_and_others_do_not(
    personas, settings, sign_in
):
    settings.LOGIN_ADDRESS_FAILURES = 4
    make_staff("sam")
    office = Client(REMOTE_ADDR="198.51.100.99")
    for number in range(settings.LOGIN_ADDRESS_FAILURES):  # each name fails once: no lock
        assert not signed_in(sign_in(office, f"guess-{number}", "guess"), sign_in)

    waits = []
    for number in range(3):
        refused = sign_in(office, "sam", PASSWORD)  # even the right password must wait
        assert refused.status_code == 429
        assert SLOWED in refused.content.decode()
        waits.append(int(refused["Retry-After"]))
        assert address_failures("198.51.100.99") == settings.LOGIN_ADDRESS_FAILURES + number
        time_passes(60)
        assert not signed_in(sign_in(office, f"more-{number}", "guess"), sign_in)
    from_elsewhere = sign_in(Client(REMOTE_ADDR="203.0.113.51"), "sam", PASSWORD)
    time_passes(60)
    after_the_wait = sign_in(office, "sam", PASSWORD)

    # 2 s, 4 s, 8 s after the last failure (a second less if the request took that long).
    assert waits[0] in (1, 2) and waits[1] in (3, 4) and waits[2] in (7, 8)
    assert signed_in(from_elsewhere, sign_in)
    assert signed_in(after_the_wait, sign_in)


def test_the_wait_of_an_address_stops_growing_at_its_maximum(personas, settings):
    settings.LOGIN_ADDRESS_FAILURES = 1
    settings.LOGIN_ADDRESS_MAX_DELAY_SECONDS = 5
    office = Client(REMOTE_ADDR="198.51.100.98")
    for number in range(8):
        time_passes(60)
        page_sign_in(office, f"guess-{number}", "guess")

    refused = page_sign_in(office, "max", PASSWORD)

    assert refused.status_code == 429
    assert 1 <= int(refused["Retry-After"]) <= 5


def forwarded(peer: str, header: str) -> Client:
    return Client(REMOTE_ADDR=peer, HTTP_X_FORWARDED_FOR=header)


@pytest.mark.parametrize("trusted", [[], ["10.0.0.0/8"]])
def test_a_forwarded_address_from_a_peer_that_is_no_trusted_proxy_is_ignored(
    personas, settings, trusted
):
    settings.TRUSTED_PROXIES = trusted
    settings.BEHIND_TLS_PROXY = True  # the scheme's header only: not a licence for addresses
    for number in range(settings.AXES_FAILURE_LIMIT):
        page_sign_in(forwarded("203.0.113.9", f"198.51.100.{number + 1}"), "max", "guess")

    forged_elsewhere = page_sign_in(forwarded("203.0.113.9", "192.0.2.200"), "max", PASSWORD)

    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"203.0.113.9"}
    assert forged_elsewhere.status_code == 429


@pytest.mark.parametrize("sign_in", SIGN_INS)
def test_from_a_trusted_proxy_the_forwarded_address_is_the_clients(personas, settings, sign_in):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8", "fd00::/8"]
    make_staff("sam")
    # A client may forge the left of the header; our proxies append what they saw.
    for _ in range(settings.AXES_FAILURE_LIMIT):
        sign_in(forwarded("10.0.0.2", "6.6.6.6, 198.51.100.7, 10.1.1.1"), "sam", "guess")

    there = sign_in(forwarded("10.0.0.3", "198.51.100.7"), "sam", PASSWORD)
    forging_away = sign_in(forwarded("10.0.0.2", "203.0.113.1, 198.51.100.7"), "sam", PASSWORD)
    colleague = sign_in(forwarded("fd00::1", "198.51.100.8"), "sam", PASSWORD)

    assert set(AccessAttempt.objects.values_list("ip_address", flat=True)) == {"198.51.100.7"}
    assert there.status_code == forging_away.status_code == 429
    assert signed_in(colleague, sign_in)


def lock_cells(page: str) -> list[str]:
    return [
        " ".join(unescape(re.sub(r"<[^>]+>", " ", cell)).split())
        for cell in re.findall(r'<form[^>]*class="inline sign-in-lock".*?</form>', page, re.S)
    ]


def test_a_team_lead_sees_who_is_locked_where_and_why_and_unlocks(personas, settings):
    for _ in range(settings.AXES_FAILURE_LIMIT):
        page_sign_in(Client(REMOTE_ADDR="198.51.100.7"), "max", "guess")
    for _ in range(settings.AXES_FAILURE_LIMIT + 1):
        api_sign_in(Client(REMOTE_ADDR="198.51.100.8"), "max", "guess")
    page_sign_in(Client(REMOTE_ADDR="198.51.100.9"), "max", "guess")  # one slip: no lock
    lead = personas.client(personas.lead)
    url = f"/teams/{personas.team.pk}/"
    today = timezone.localtime().strftime("%Y-%m-%d")

    cells = lock_cells(lead.get(url).content.decode())
    membership = personas.team.memberships.get(user=personas.member)
    denied = personas.client(personas.viewer).post(
        f"/memberships/{membership.pk}/", {"unlock": "1", "address": "198.51.100.7"}
    )
    lead.post(f"/memberships/{membership.pk}/", {"unlock": "1", "address": "198.51.100.7"})
    after = lock_cells(lead.get(url).content.decode())

    assert len(cells) == 2
    assert any("locked out at 198.51.100.7 since " + today in c for c in cells)
    assert any("after 5 failed sign-ins" in c and "198.51.100.7" in c for c in cells)
    assert any("198.51.100.8" in c and "after 5 failed sign-ins" in c for c in cells)
    assert all("Unlock" in c for c in cells)
    assert "locked out" not in personas.client(personas.member).get(url).content.decode()
    assert denied.status_code in (403, 404)
    assert len(after) == 1 and "198.51.100.8" in after[0]
    assert page_sign_in(Client(REMOTE_ADDR="198.51.100.7"), "max", PASSWORD).status_code == 302
    assert page_sign_in(Client(REMOTE_ADDR="198.51.100.8"), "max", PASSWORD).status_code == 429


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
