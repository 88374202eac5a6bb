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
from investigations import jobs
from investigations.choices import HostTransport, ScanStatus
from investigations.connections import endpoint_for
from investigations.models import Host, Job
from investigations.selectors.inventory import SCAN_GRACE_SECONDS, SCAN_JOB, scan_seconds


def _refuse_unscannable(host: Host) -> None:
    if host.transport == HostTransport.LOCAL:
        raise ValidationError(_("A host on the local transport has no SSH host key."))
    if host.jump_host_id:
        endpoint_for(host.jump_host)  # its credential must be there: the caller's to fix


@transaction.atomic
def host_key_scan_request(*, host: Host, user=None) -> Host:
    """Ask a worker to scan the host's key (a new job; the host's last one goes); refused at
    once (ValidationError, or a CollectorError for a jump host without a credential) when
    it cannot be scanned."""
    _refuse_unscannable(host)
    host = Host.objects.select_for_update().get(pk=host.pk)
    last = Job.objects.filter(pk=host.job_id).first()
    now = timezone.now()
    seconds = scan_seconds()
    if (
        last is not None
        and last.status == ScanStatus.SCANNING
        and now - last.created_at < timedelta(seconds=seconds)
    ):
        host.job = last
        return host  # one scan at a time: the one running answers
    host.job = jobs.create(
        SCAN_JOB.name,
        object_id=host.pk,
        status=ScanStatus.SCANNING,
        user=user,
        created_at=now,
        deadline_at=now + timedelta(seconds=seconds + SCAN_GRACE_SECONDS),
    )
    host.save(update_fields=["job"])
    if last is not None:
        last.delete()
    jobs.enqueue(
        "perfcase.host_key_scan", host.pk, soft_time_limit=seconds, time_limit=seconds + 15
    )
    return host


def host_key_scan_run(*, host_id: int) -> None:
    """The worker's scan: the key kept, or the reason it could not be had. Its job is
    claimed first: a scan asked for again meanwhile, or ended, is left alone."""
    host = Host.objects.select_related("jump_host__credential").filter(pk=host_id).first()
    if host is None or host.job_id is None:
        return
    attempt = jobs.claim(host.job_id, status=ScanStatus.SCANNING, claimable=SCAN_JOB.overdue)
    if attempt is None:
        return
    try:
        host_key_scan(host=host)
    except CollectorError as error:
        _scan_end(host.job_id, attempt, ScanStatus.FAILED, error.phrase)
    except ValidationError as error:
        _scan_end(host.job_id, attempt, ScanStatus.FAILED, " ".join(error.messages))
    else:
        _scan_end(host.job_id, attempt, ScanStatus.DONE, None)


def _scan_end(job_id: int, attempt: int | None, status: str, error) -> None:
    jobs.finish(job_id, status=status, attempt=attempt, active=SCAN_JOB.overdue, error=error)


def host_key_scan_failed(*, host_id: int, error) -> None:
    """The host's scan failed (its worker's time ran out), with the reason."""
    job_id = Host.objects.filter(pk=host_id).values_list("job_id", flat=True).first()
    if job_id is not None:
        _scan_end(job_id, None, ScanStatus.FAILED, error)


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
