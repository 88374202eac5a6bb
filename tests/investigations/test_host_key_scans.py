"""Host key scans run in a real worker: the request that asks for one answers at once, a
host that accepts the connection and never speaks ends in words a person can act on, and
the site keeps answering meanwhile."""

import time

import pytest
from django.test import Client

from investigations.services.inventory import host_create
from tests.conftest import ApiClient, host_key_scan_end, host_key_scanned

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_silent_host_is_scanned_in_the_worker_and_says_what_happened(
    personas, celery_worker, silent_port, settings
):
    host = host_create(
        team=personas.team, name="hung", address="127.0.0.1", port=silent_port, username="p"
    )
    api = ApiClient(personas.member)

    asked_at = time.monotonic()
    asked = api.post(f"/api/hosts/{host.pk}/host-key/scan")
    answered_in = time.monotonic() - asked_at
    # Meanwhile the site answers (no web worker waits on the host).
    health = Client().get("/healthz")

    assert asked.status_code == 202 and asked.body["status"] == "scanning", asked.body
    assert answered_in < settings.SSH_CONNECT_TIMEOUT
    assert health.status_code == 200
    ended = host_key_scan_end(api, host, timeout=60)
    assert ended["status"] == "failed" and ended["fingerprint"] is None
    assert ended["error"] == (
        f"127.0.0.1:{silent_port} accepted the connection but sent no SSH banner within "
        f"{settings.SSH_CONNECT_TIMEOUT:g} s"
    )


def test_a_host_that_answers_in_http_is_named_so_by_its_scan(personas, celery_worker, http_port):
    host = host_create(
        team=personas.team, name="web", address="127.0.0.1", port=http_port, username="p"
    )
    api = ApiClient(personas.member)

    asked = api.post(f"/api/hosts/{host.pk}/host-key/scan")

    assert asked.status_code == 202, asked.body
    ended = host_key_scan_end(api, host, timeout=60)
    assert ended["status"] == "failed"
    assert ended["error"] == (
        f"127.0.0.1:{http_port} answered with HTTP, not SSH: is this the right port?"
    )


def test_a_real_host_is_scanned_in_the_worker_and_its_key_shown(personas, celery_worker, sshd_host):
    host = host_create(
        team=personas.team,
        name="real",
        address=sshd_host.address,
        port=sshd_host.port,
        username=sshd_host.username,
    )

    scanned = host_key_scanned(ApiClient(personas.member), host)

    assert scanned["status"] == "done" and scanned["error"] == ""
    assert (scanned["key_type"], scanned["fingerprint"]) == (
        sshd_host.host_key.key_type,
        sshd_host.host_key.fingerprint,
    )
    page = personas.client(personas.viewer).get(f"/hosts/{host.pk}/").content.decode()
    assert sshd_host.host_key.fingerprint in page and "Scanning" not in page
