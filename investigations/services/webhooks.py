"""Slack-compatible notifications: a delivery row per message, sent by a Celery task."""

import http.client
import json
import socket
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import F, Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from investigations.choices import DeliveryStatus, EventKind
from investigations.jobs import enqueue
from investigations.models import Team, TimelineEvent, WebhookDelivery
from investigations.phrases import stored_text
from investigations.site_address import site_base_url
from investigations.webhook_addresses import AddressRefused, webhook_address

# A delivery left "sending" longer than this was lost with its worker and may be retried.
STALE_CLAIM = timedelta(minutes=5)


class WebhookError(Exception):
    def __init__(self, message: str, *, transient: bool):
        super().__init__(message)
        self.transient = transient


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _event_payload(event: TimelineEvent) -> dict:
    """The message a chat channel shows, in the installation's language (PERFCASE_LANGUAGE):
    a channel has no reader of its own."""
    investigation = event.investigation
    # Made by a worker, without a request: only a configured address makes a link.
    base_url = site_base_url()
    path = reverse("investigation_detail", args=[investigation.pk])
    title = _slack_escape(investigation.title[:200])
    case = f"<{base_url}{path}|{title}>" if base_url else f"{title} ({path})"
    who = event.author.get_username() if event.author else "Perfcase"
    with translation.override(settings.LANGUAGE_CODE):
        what = stored_text(event, "summary")[:1000]
        if event.kind == EventKind.ACTION:
            what = f"{event.get_action_display()}: {what}"
    return {"text": f"{case} {_slack_escape(what)} ({_slack_escape(who)})"}


def _enqueue(delivery: WebhookDelivery) -> WebhookDelivery:
    enqueue("perfcase.webhook_deliver", delivery.pk)
    return delivery


def webhook_notify(*, event: TimelineEvent) -> WebhookDelivery | None:
    team = event.investigation.team
    if not team.webhook_url:
        return None
    delivery = WebhookDelivery.objects.create(
        team=team, event=event, url=team.webhook_url, payload=_event_payload(event)
    )
    return _enqueue(delivery)


def webhook_send_test(*, team: Team, user) -> WebhookDelivery:
    delivery = WebhookDelivery.objects.create(
        team=team,
        url=team.webhook_url,
        payload={"text": _test_text(team=team, user=user)},
    )
    return _enqueue(delivery)


def _test_text(*, team: Team, user) -> str:
    with translation.override(settings.LANGUAGE_CODE):
        return gettext("Test message from Perfcase for team %(team)s (%(user)s)") % {
            "team": _slack_escape(team.name),
            "user": _slack_escape(user.get_username()),
        }


class _Pinned:
    """A connection to the address checked before, whatever the name resolves to now."""

    def __init__(self, host, port, *, address: str, timeout: float, **options):
        super().__init__(host, port, timeout=timeout, **options)
        self.address = address

    def _socket(self):
        return socket.create_connection((self.address, self.port), self.timeout)


class _PinnedHTTP(_Pinned, http.client.HTTPConnection):
    def connect(self):
        self.sock = self._socket()


class _PinnedHTTPS(_Pinned, http.client.HTTPSConnection):
    def connect(self):
        self.sock = self._context.wrap_socket(self._socket(), server_hostname=self.host)


def _post_json(url: str, payload: dict) -> None:
    """POST the payload to the URL's checked address. Failures say what a person can act on
    and nothing of what the far side said (no reason phrase, no body, no socket error): a
    webhook must not become a way to learn which ports of a network answer."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        address = webhook_address(parts.hostname or "", port)
    except AddressRefused as error:
        raise WebhookError(str(error), transient=False) from None
    kind = _PinnedHTTPS if parts.scheme == "https" else _PinnedHTTP
    connection = kind(
        parts.hostname, port, address=address, timeout=settings.WEBHOOK_TIMEOUT_SECONDS
    )
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        connection.request(
            "POST",
            path,
            body=json.dumps(payload).encode(),
            headers={"Content-Type": "application/json", "User-Agent": "Perfcase webhook"},
        )
        response = connection.getresponse()
        response.read(4096)
        status = response.status
    except (OSError, http.client.HTTPException):
        raise WebhookError("Cannot reach the webhook.", transient=True) from None
    finally:
        connection.close()
    if not 200 <= status < 300:  # redirects are not followed: they could lead anywhere
        transient = status >= 500 or status == 429
        raise WebhookError(f"The webhook answered HTTP {status}.", transient=transient)


def webhook_attempt(*, delivery_id: int, final: bool) -> bool:
    """Send one delivery once. Returns True when it failed in a way worth retrying."""
    now = timezone.now()
    claimed = (
        WebhookDelivery.objects.filter(pk=delivery_id)
        .filter(
            Q(status=DeliveryStatus.PENDING)
            | Q(status=DeliveryStatus.SENDING, claimed_at__lt=now - STALE_CLAIM)
        )
        .update(status=DeliveryStatus.SENDING, claimed_at=now, attempts=F("attempts") + 1)
    )
    if not claimed:
        return False  # delivered, failed, or in another worker's hands
    delivery = WebhookDelivery.objects.get(pk=delivery_id)
    try:
        _post_json(delivery.url, delivery.payload)
    except WebhookError as error:
        retry = error.transient and not final
        webhook_record_failure(delivery_id=delivery_id, error=str(error), final=not retry)
        return retry
    WebhookDelivery.objects.filter(pk=delivery_id).update(
        status=DeliveryStatus.DELIVERED, last_error="", finished_at=timezone.now()
    )
    return False


def webhook_record_failure(*, delivery_id: int, error: str, final: bool) -> None:
    WebhookDelivery.objects.filter(pk=delivery_id).update(
        status=DeliveryStatus.FAILED if final else DeliveryStatus.PENDING,
        last_error=error[:2000],
        finished_at=timezone.now() if final else None,
    )
