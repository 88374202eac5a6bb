"""Slack-compatible notifications: a delivery row per message, sent by a Celery task."""

import http.client
import json
import socket
from datetime import timedelta
from urllib.parse import urlsplit

from django.conf import settings
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone, translation
from django.utils.translation import gettext

from investigations import jobs
from investigations.choices import DeliveryStatus, EventKind
from investigations.models import Job, Team, TimelineEvent, WebhookDelivery
from investigations.phrases import stored_text
from investigations.selectors.webhooks import DELIVERY_JOB
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


def _deliver(*, team: Team, payload: dict, event: TimelineEvent | None = None, user=None):
    """A delivery of the payload to the team's webhook, its job pending, its task queued."""
    job = jobs.create(DELIVERY_JOB.name, status=DeliveryStatus.PENDING, user=user)
    delivery = WebhookDelivery.objects.create(
        team=team, event=event, url=team.webhook_url, payload=payload, job=job
    )
    Job.objects.filter(pk=job.pk).update(object_id=delivery.pk)
    jobs.enqueue("perfcase.webhook_deliver", delivery.pk)
    return delivery


def webhook_notify(*, event: TimelineEvent) -> WebhookDelivery | None:
    team = event.investigation.team
    if not team.webhook_url:
        return None
    return _deliver(team=team, event=event, payload=_event_payload(event))


def webhook_send_test(*, team: Team, user) -> WebhookDelivery:
    return _deliver(team=team, user=user, payload={"text": _test_text(team=team, user=user)})


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
    delivery = WebhookDelivery.objects.filter(pk=delivery_id).first()
    if delivery is None:
        return False
    stale = timezone.now() - STALE_CLAIM
    attempt = jobs.claim(
        delivery.job_id,
        status=DeliveryStatus.SENDING,
        claimable=[DeliveryStatus.PENDING],
        also=Q(status=DeliveryStatus.SENDING, began_at__lt=stale),
    )
    if attempt is None:
        return False  # delivered, failed, or in another worker's hands
    try:
        _post_json(delivery.url, delivery.payload)
    except WebhookError as error:
        retry = error.transient and not final
        webhook_record_failure(delivery_id=delivery_id, error=str(error), final=not retry)
        return retry
    jobs.finish(
        delivery.job_id,
        status=DeliveryStatus.DELIVERED,
        attempt=attempt,
        active=[DeliveryStatus.SENDING],
        error="",
    )
    return False


def webhook_record_failure(*, delivery_id: int, error: str, final: bool) -> None:
    """The delivery's attempt failed: for good (`final`), or pending its retry."""
    job_id = WebhookDelivery.objects.filter(pk=delivery_id).values_list("job_id", flat=True)
    jobs.finish(
        job_id.first(),
        status=DeliveryStatus.FAILED if final else DeliveryStatus.PENDING,
        active=[DeliveryStatus.PENDING, DeliveryStatus.SENDING],
        error=error[:2000],
        phrases={},
        finished_at=timezone.now() if final else None,
    )
