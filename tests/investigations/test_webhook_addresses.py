"""A webhook cannot be made to probe the server's own network: loopback, private,
link-local (cloud metadata) and other non-public addresses are refused when the URL is
saved and again when it is delivered (after resolving the name once), and a failed delivery
says nothing of what the far side answered."""

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from django.core.exceptions import ValidationError

from investigations import jobs
from investigations.choices import DeliveryStatus
from investigations.models import WebhookDelivery
from investigations.services.teams import team_set_webhook
from investigations.services.webhooks import webhook_attempt
from investigations.webhook_addresses import address_allowed
from tests.conftest import require_real_tool

# Every spelling of a loopback address that getaddrinfo (and so the delivery's connection)
# reads as one: inet_aton's decimal, short, hex and octal forms, and IPv6's.
LOOPBACK_SPELLINGS = [
    "2130706433",
    "127.1",
    "0x7f000001",
    "0x7F.1",
    "017700000001",
    "0177.0.0.1",
    "0",
    "[::1]",
    "[0:0:0:0:0:0:0:1]",
    "[::ffff:127.0.0.1]",
    "[::ffff:7f00:1]",
    "[0:0:0:0:0:ffff:7f00:1]",
    "LOCALHOST",
    "localhost.",
]


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:8900/hook",
        "http://127.1.2.3/",
        "http://[::1]:5432/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://0.0.0.0/",
        "http://[fd00:ec2::254]/",
        "http://[::ffff:127.0.0.1]/",
        "http://localhost:5432/",
        "http://printer.local/",
    ],
)
@pytest.mark.django_db
def test_a_webhook_to_a_non_public_address_is_refused_when_saved(personas, url):
    with pytest.raises(ValidationError) as refused:
        team_set_webhook(team=personas.team, webhook_url=url)

    assert "public addresses only" in refused.value.message_dict["webhook_url"][0]
    personas.team.refresh_from_db()
    assert personas.team.webhook_url == ""


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
@pytest.mark.django_db
def test_every_spelling_of_loopback_is_refused_when_saved(personas, host):
    with pytest.raises(ValidationError) as refused:
        team_set_webhook(team=personas.team, webhook_url=f"http://{host}:8900/hook")

    assert "public addresses only" in refused.value.message_dict["webhook_url"][0]
    personas.team.refresh_from_db()
    assert personas.team.webhook_url == ""


@pytest.mark.parametrize("host", ["2130706433", "127.1", "0x7f000001", "017700000001"])
@pytest.mark.django_db
def test_a_numeric_loopback_url_is_refused_on_the_team_page_naming_the_address(personas, host):
    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/webhook/",
        {"webhook_url": f"http://{host}/hook"},
        follow=True,
    )

    page = response.content.decode()
    assert f"Webhooks go to public addresses only, not {host} (127.0.0.1)." in page
    personas.team.refresh_from_db()
    assert personas.team.webhook_url == ""


@pytest.mark.django_db
def test_a_name_that_resolves_to_a_non_public_address_is_refused_when_saved(personas):
    name = socket.gethostname()
    try:
        found = {info[4][0] for info in socket.getaddrinfo(name, 80)}
    except OSError:
        require_real_tool(f"this machine's own name {name} does not resolve")
    if any(address_allowed(address) for address in found):
        require_real_tool(f"this machine's own name {name} resolves to a public address")

    with pytest.raises(ValidationError) as refused:
        team_set_webhook(team=personas.team, webhook_url=f"http://{name}/hook")

    # What the name resolves to is not said: that would map internal DNS for a team lead.
    message = refused.value.message_dict["webhook_url"][0]
    assert message == f"Webhooks go to public addresses only, not {name.lower()}."


@pytest.mark.django_db
def test_an_operator_may_allow_a_network_inside(personas, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["10.20.0.0/16"]

    team_set_webhook(team=personas.team, webhook_url="http://10.20.3.4/hook")

    assert personas.team.webhook_url == "http://10.20.3.4/hook"
    assert address_allowed("10.20.3.4") and not address_allowed("10.21.0.1")
    assert address_allowed("203.0.113.7") is False  # documentation range: not global
    assert address_allowed("8.8.8.8")


class Listener:
    """A local HTTP server answering 501 with a chatty reason and body."""

    def __init__(self):
        self.hits = 0
        listener = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                listener.hits += 1
                self.send_response(501, "Unsupported method ('POST') on the admin port")
                self.end_headers()
                self.wfile.write(b"internal service banner v1.2")

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_port
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def listener():
    running = Listener()
    yield running
    running.close()


def delivery_to(personas, url: str) -> WebhookDelivery:
    """A delivery row as if the URL had been saved before the rules (or by an operator who
    allowed it and then stopped allowing it)."""
    job = jobs.create("webhook_delivery", status=DeliveryStatus.PENDING)
    return WebhookDelivery.objects.create(
        team=personas.team, url=url, payload={"text": "x"}, job=job
    )


@pytest.mark.django_db
def test_a_delivery_to_a_name_that_resolves_to_loopback_is_refused_without_connecting(
    personas, listener
):
    delivery = delivery_to(personas, f"http://localhost:{listener.port}/hook")

    retry = webhook_attempt(delivery_id=delivery.pk, final=False)

    delivery.refresh_from_db()
    assert retry is False and delivery.job.status == DeliveryStatus.FAILED
    assert delivery.job.error == "Webhooks go to public addresses only, not localhost."
    assert listener.hits == 0


@pytest.mark.parametrize("host", LOOPBACK_SPELLINGS)
@pytest.mark.django_db
def test_every_spelling_of_loopback_is_refused_at_delivery_without_connecting(
    personas, listener, host
):
    delivery = delivery_to(personas, f"http://{host}:{listener.port}/hook")

    retry = webhook_attempt(delivery_id=delivery.pk, final=False)

    delivery.refresh_from_db()
    assert retry is False and delivery.job.status == DeliveryStatus.FAILED
    assert delivery.job.error.startswith("Webhooks go to public addresses only, not ")
    assert listener.hits == 0


@pytest.mark.django_db
def test_an_allowed_network_admits_every_spelling_of_its_addresses(personas, listener, settings):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    url = f"http://2130706433:{listener.port}/hook"

    team_set_webhook(team=personas.team, webhook_url=url)
    delivery = delivery_to(personas, url)
    webhook_attempt(delivery_id=delivery.pk, final=True)

    assert personas.team.webhook_url == url
    delivery.refresh_from_db()
    assert listener.hits == 1  # it reached 127.0.0.1: the allowed network


@pytest.mark.django_db
def test_a_failed_delivery_says_the_status_and_nothing_the_far_side_said(
    personas, listener, settings
):
    settings.WEBHOOK_ALLOWED_NETWORKS = ["127.0.0.0/8"]
    delivery = delivery_to(personas, f"http://127.0.0.1:{listener.port}/hook")

    webhook_attempt(delivery_id=delivery.pk, final=True)

    delivery.refresh_from_db()
    assert listener.hits == 1
    assert delivery.job.error == "The webhook answered HTTP 501."
    closed = delivery_to(personas, "http://127.0.0.1:9/hook")
    webhook_attempt(delivery_id=closed.pk, final=True)
    closed.refresh_from_db()
    assert closed.job.error == "Cannot reach the webhook."
    assert json.dumps(delivery.payload) == '{"text": "x"}'
