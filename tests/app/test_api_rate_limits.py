"""The API's own rate limits: writes and costly reads, per token, in the shared cache, answered
with 429, a JSON body and Retry-After."""

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.test import Client

from investigations.api import api
from investigations.api.limits import token_rate_key
from tests.conftest import ApiClient, require_real_tool

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.fixture
def small_limits(settings):
    # Per hour: counts are kept in windows of the period, and a test that ran across the
    # end of a window would start afresh (a minute's window ends every minute).
    settings.API_WRITE_RATE = (3, 3600)
    settings.API_EXPENSIVE_RATE = (2, 3600)
    return settings


def note(client: ApiClient, investigation, text="seen"):
    return client.post(
        f"/api/investigations/{investigation.pk}/timeline", {"kind": "note", "summary": text}
    )


def assert_refused(response):
    assert response.status_code == 429
    assert response["Content-Type"].startswith("application/json")
    assert response.body["detail"].startswith("Too many requests")
    assert 1 <= int(response["Retry-After"]) <= 3600


@pytest.mark.django_db
def test_writes_past_the_limit_are_refused_with_retry_after(personas, small_limits):
    client = ApiClient(personas.member)

    answers = [note(client, personas.investigation).status_code for _ in range(3)]
    refused = note(client, personas.investigation)

    assert answers == [201, 201, 201]
    assert_refused(refused)


@pytest.mark.django_db
def test_the_limit_is_per_token(personas, small_limits):
    spent, other_token_same_user = ApiClient(personas.member), ApiClient(personas.member)
    for _ in range(3):
        note(spent, personas.investigation)

    assert_refused(note(spent, personas.investigation))
    assert note(other_token_same_user, personas.investigation).status_code == 201
    assert note(ApiClient(personas.lead), personas.investigation).status_code == 201


@pytest.mark.django_db
def test_reads_that_cost_little_are_not_limited(personas, small_limits):
    client = ApiClient(personas.member)
    for _ in range(3):
        note(client, personas.investigation)

    reads = [
        client.get(f"/api/investigations/{personas.investigation.pk}").status_code
        for _ in range(10)
    ]

    assert reads == [200] * 10


@pytest.mark.django_db
@pytest.mark.parametrize(
    "path",
    [
        "/api/search?q=powersave",
        "/api/investigations/{id}/similar",
        "/api/investigations/{id}/diff",
        "/api/investigations/{id}/postmortem",
        "/api/investigations/{id}/postmortem.md",
    ],
)
def test_costly_reads_have_a_limit_of_their_own(personas, small_limits, path):
    client = ApiClient(personas.member)
    url = path.format(id=personas.investigation.pk)

    answers = [client.get(url).status_code for _ in range(2)]
    refused = client.get(url)

    assert answers == [200, 200]
    assert_refused(refused)
    # Writes are counted apart, and another token still reads.
    assert note(client, personas.investigation).status_code == 201
    assert ApiClient(personas.member).get(url).status_code == 200


@pytest.mark.django_db
def test_an_import_counts_as_a_costly_operation(personas, small_limits):
    client = ApiClient(personas.member)
    url = f"/api/investigations/{personas.investigation.pk}/imports"

    for _ in range(2):
        client.get(f"/api/investigations/{personas.investigation.pk}/diff")
    refused = client.post_multipart(url, {"side": "a", "format": "wrk", "file": []})

    assert refused.status_code == 429 and "Retry-After" in refused


@pytest.mark.django_db
def test_without_a_token_the_address_is_counted(personas, small_limits):
    def sign_in(address):
        return Client(REMOTE_ADDR=address).post(
            "/api/auth/token",
            json.dumps({"username": "nobody", "password": "x"}),
            content_type="application/json",
        )

    # Addresses of this run alone: the counts outlive a test in the shared cache.
    address, neighbour = (f"2001:db8::{uuid.uuid4().hex[:4]}:{n}" for n in (1, 2))
    answers = [sign_in(address).status_code for _ in range(3)]
    refused = sign_in(address)

    assert 429 not in answers
    assert refused.status_code == 429 and "Retry-After" in refused
    assert sign_in(neighbour).status_code != 429


@pytest.mark.django_db
def test_a_limit_of_zero_is_no_limit(personas, settings):
    settings.API_WRITE_RATE = None
    client = ApiClient(personas.member)

    assert {note(client, personas.investigation).status_code for _ in range(5)} == {201}


# Another web process (a second gunicorn worker) asks whether the same token may write.
OTHER_PROCESS = """
import django, sys
django.setup()
from django.http import HttpRequest
from investigations.api.limits import WRITES
request = HttpRequest()
request.method = "POST"
request.api_token_key = sys.argv[1]
print("allowed" if WRITES.allow_request(request) else "refused")
"""


@pytest.mark.django_db
def test_every_process_counts_alike(personas, settings):
    settings.API_WRITE_RATE = (3, 86400)
    if not settings.CELERY_BROKER_URL.startswith("redis://"):
        require_real_tool("the shared store is Redis when the broker is; here it is a file cache")
    client = ApiClient(personas.member)
    for _ in range(3):
        note(client, personas.investigation)
    key = token_rate_key(client.headers["Authorization"].removeprefix("Bearer "))

    def other_process(**env):
        return subprocess.run(
            [sys.executable, "-c", OTHER_PROCESS, key],
            env={**os.environ, "DJANGO_SETTINGS_MODULE": "app.settings", **env},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
        ).stdout.strip()

    # Each question counts: the fourth write of the day is allowed at 5 a day, the fifth
    # refused at 3.
    assert other_process(PERFCASE_API_WRITE_RATE="5/day") == "allowed"
    assert other_process(PERFCASE_API_WRITE_RATE="3/day") == "refused"


def test_the_schema_declares_429_on_limited_operations_only():
    schema = api.get_openapi_schema()
    paths = schema["paths"]

    assert 429 in paths["/api/investigations/{investigation_id}/timeline"]["post"]["responses"]
    assert 429 in paths["/api/search"]["get"]["responses"]
    assert 429 in paths["/api/investigations/{investigation_id}/postmortem"]["get"]["responses"]
    assert 429 not in paths["/api/investigations/{investigation_id}"]["get"]["responses"]
    assert "Retry-After" in paths["/api/search"]["get"]["responses"][429]["headers"]
