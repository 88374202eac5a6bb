"""Webhooks end to end: a real Celery worker on the real broker posts to a real HTTP server."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from investigations.choices import ActionKind, DeliveryStatus, EventKind, Status
from investigations.models import WebhookDelivery
from investigations.services.investigations import investigation_set_status
from investigations.services.teams import team_set_webhook
from investigations.services.timeline import timeline_entry_add
from tests.conftest import wait_for


@pytest.fixture(autouse=True)
def loopback_allowed(settings):
    """These receivers listen on loopback, which production refuses (the worker is told
    the same by tests/conftest.py's start_worker)."""
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]


class Receiver:
    """A local HTTP server that answers with the queued status codes, then 200."""

    def __init__(self, statuses=()):
        self.statuses = list(statuses)
        self.received: list[dict] = []
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                receiver.received.append({"status": status, "body": body})
                self.send_response(status)
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def receiver():
    servers = []

    def make(statuses=()):
        server = Receiver(statuses)
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.close()


def _finished(delivery_filter):
    def check():
        delivery = WebhookDelivery.objects.filter(**delivery_filter).first()
        if delivery and delivery.job.status in (DeliveryStatus.DELIVERED, DeliveryStatus.FAILED):
            return delivery
        return None

    return check


@pytest.mark.django_db(transaction=True)
def test_status_change_is_delivered_by_the_worker(personas, celery_worker, receiver):
    hook = receiver()
    team_set_webhook(team=personas.team, webhook_url=hook.url)

    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )

    delivery = wait_for(_finished({"team": personas.team, "event__kind": EventKind.STATUS}))
    assert delivery.job.status == DeliveryStatus.DELIVERED
    assert delivery.job.attempts == 1
    assert len(hook.received) == 1
    text = hook.received[0]["body"]["text"]
    assert "Checkout p99 doubled" in text
    assert "Open → Mitigated" in text
    assert f"/investigations/{personas.investigation.pk}/" in text


@pytest.mark.django_db(transaction=True)
def test_a_new_action_is_retried_after_a_server_error(personas, celery_worker, receiver):
    hook = receiver(statuses=[503])
    team_set_webhook(team=personas.team, webhook_url=hook.url)

    timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.ACTION,
        action=ActionKind.ROLLBACK,
        summary="Rolled back <b>release</b> 42 & friends",
    )

    delivery = wait_for(_finished({"team": personas.team, "event__kind": EventKind.ACTION}))
    assert delivery.job.status == DeliveryStatus.DELIVERED
    assert delivery.job.attempts == 2
    assert [r["status"] for r in hook.received] == [503, 200]
    # Slack's control characters are escaped, so user text cannot forge links.
    assert (
        "Roll back: Rolled back &lt;b&gt;release&lt;/b&gt; 42 &amp; friends"
        in (hook.received[1]["body"]["text"])
    )


@pytest.mark.django_db(transaction=True)
def test_a_refusing_webhook_fails_without_retry_and_shows_on_the_team_page(
    personas, celery_worker, receiver
):
    hook = receiver(statuses=[404])
    team_set_webhook(team=personas.team, webhook_url=hook.url)

    investigation_set_status(
        investigation=personas.investigation, user=personas.lead, status=Status.RESOLVED
    )

    delivery = wait_for(_finished({"team": personas.team}))
    assert delivery.job.status == DeliveryStatus.FAILED
    assert delivery.job.attempts == 1
    # The status only: nothing the far side said comes back (no reason phrase, no body).
    assert delivery.job.error == "The webhook answered HTTP 404."
    page = personas.client(personas.lead).get(f"/teams/{personas.team.pk}/")
    assert "The webhook answered HTTP 404." in page.content.decode()


@pytest.mark.django_db(transaction=True)
def test_an_unreachable_webhook_never_blocks_the_page(personas, celery_worker):
    # Nothing listens on port 9 of loopback: the delivery fails in the worker, not the view.
    team_set_webhook(team=personas.team, webhook_url="http://127.0.0.1:9/hook")
    client = personas.client(personas.member)

    response = client.post(
        f"/investigations/{personas.investigation.pk}/status/", {"status": Status.MITIGATED}
    )

    assert response.status_code == 302
    delivery = WebhookDelivery.objects.get(team=personas.team)
    assert delivery.job.status in (DeliveryStatus.PENDING, DeliveryStatus.SENDING)
    # The attempt is counted when the worker claims it, its error once the attempt failed.
    wait_for(lambda: WebhookDelivery.objects.get(pk=delivery.pk).job.error)
    delivery.refresh_from_db()
    assert delivery.job.attempts >= 1
    assert delivery.job.error == "Cannot reach the webhook."


@pytest.mark.django_db
def test_notes_and_edits_are_not_sent(personas):
    team_set_webhook(team=personas.team, webhook_url="http://127.0.0.1:9/hook")
    timeline_entry_add(
        investigation=personas.investigation, user=personas.member, kind=EventKind.NOTE, summary="n"
    )
    assert not WebhookDelivery.objects.exists()


@pytest.mark.django_db
def test_teams_without_a_webhook_send_nothing(personas):
    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )
    assert not WebhookDelivery.objects.exists()
