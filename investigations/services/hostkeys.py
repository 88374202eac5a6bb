"""Host key pinning: a key is scanned and shown, a person trusts it, a changed key is refused.

A scan a person asks for runs in a worker (`host_key_scan_request` enqueues it, the task
calls `host_key_scan_run`): no web request ever waits on a host, however long it takes to
answer or not to.
"""

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from collectors.errors import CollectorError
from collectors.ssh import Connection, HostKey, scan_host_key
from investigations.choices import HostTransport, ScanStatus
from investigations.connections import endpoint_for
from investigations.jobs import enqueue, overdue
from investigations.models import Host
from investigations.phrases import with_phrases
from investigations.selectors.inventory import SCAN_GRACE_SECONDS, SCAN_OVERDUE, scan_seconds


def _refuse_unscannable(host: Host) -> None:
    if host.transport == HostTransport.LOCAL:
        raise ValidationError(_("A host on the local transport has no SSH host key."))
    if host.jump_host_id:
        endpoint_for(host.jump_host)  # its credential must be there: the caller's to fix


@transaction.atomic
def host_key_scan_request(*, host: Host) -> Host:
    """Ask a worker to scan the host's key; refused at once (ValidationError, or a
    CollectorError for a jump host without a credential) when it cannot be scanned."""
    _refuse_unscannable(host)
    host = Host.objects.select_for_update().get(pk=host.pk)
    recent = host.scan_requested_at and timezone.now() - host.scan_requested_at < timedelta(
        seconds=scan_seconds()
    )
    if host.scan_status == ScanStatus.SCANNING and recent:
        return host  # one scan at a time: the one running answers
    host.scan_status, host.scan_error, host.phrases = ScanStatus.SCANNING, "", {}
    host.scan_requested_at = timezone.now()
    host.save(update_fields=["scan_status", "scan_error", "phrases", "scan_requested_at"])
    seconds = scan_seconds()
    enqueue("perfcase.host_key_scan", host.pk, soft_time_limit=seconds, time_limit=seconds + 15)
    return host


def host_key_scan_run(*, host_id: int) -> None:
    """The worker's scan: the key kept, or the reason it could not be had."""
    host = Host.objects.select_related("jump_host__credential").filter(pk=host_id).first()
    if host is None:
        return
    try:
        host_key_scan(host=host)
    except CollectorError as error:
        host_key_scan_failed(host_id=host_id, error=error.phrase)
    except ValidationError as error:
        host_key_scan_failed(host_id=host_id, error=" ".join(error.messages))
    else:
        Host.objects.filter(pk=host_id).update(scan_status=ScanStatus.DONE)


@overdue("host_key_scan")
def host_key_scans_expire_overdue() -> int:
    """Fail the scans no worker finished in time (it was killed, or none runs), as the
    host's page already reads them: the sweep."""
    asked_before = timezone.now() - timedelta(seconds=scan_seconds() + SCAN_GRACE_SECONDS)
    return Host.objects.filter(
        scan_status=ScanStatus.SCANNING, scan_requested_at__lt=asked_before
    ).update(scan_status=ScanStatus.FAILED, **with_phrases({"scan_error": SCAN_OVERDUE}))


def host_key_scan_failed(*, host_id: int, error) -> None:
    Host.objects.filter(pk=host_id).update(
        scan_status=ScanStatus.FAILED, **with_phrases({"scan_error": error})
    )


def host_key_scan(*, host: Host) -> HostKey:
    """Ask the host for its key (through its jump host if it has one) and remember it.

    Raises a CollectorError with a message a person can act on when the host cannot be reached.
    """
    if host.transport == HostTransport.LOCAL:
        raise ValidationError(_("A host on the local transport has no SSH host key."))
    timeout = settings.SSH_CONNECT_TIMEOUT
    if host.jump_host_id:
        with Connection(endpoint_for(host.jump_host)) as jump:
            key = scan_host_key(host.address, host.port, timeout=timeout, via=jump)
    else:
        key = scan_host_key(host.address, host.port, timeout=timeout)
    Host.objects.filter(pk=host.pk).update(
        scanned_key_type=key.key_type,
        scanned_key_fingerprint=key.fingerprint,
        scanned_at=timezone.now(),
    )
    host.scanned_key_type, host.scanned_key_fingerprint = key.key_type, key.fingerprint
    return key


@transaction.atomic
def host_key_trust(*, host: Host, user, fingerprint: str) -> Host:
    """Pin the scanned key, if the person confirms its fingerprint."""
    host = Host.objects.select_for_update().get(pk=host.pk)
    fingerprint = fingerprint.strip()
    if not host.scanned_key_fingerprint:
        raise ValidationError({"fingerprint": _("Scan the host key first, then compare it.")})
    if fingerprint != host.scanned_key_fingerprint:
        raise ValidationError(
            {
                "fingerprint": _(
                    "This is not the key the host presented (%(fingerprint)s). Compare it "
                    "again, or scan again."
                )
                % {"fingerprint": host.scanned_key_fingerprint}
            }
        )
    host.host_key_type = host.scanned_key_type
    host.host_key_fingerprint = host.scanned_key_fingerprint
    host.host_key_trusted_at = timezone.now()
    host.host_key_trusted_by = user
    host.save(
        update_fields=[
            "host_key_type",
            "host_key_fingerprint",
            "host_key_trusted_at",
            "host_key_trusted_by",
        ]
    )
    return host
