"""Host key pinning: a key is scanned and shown, a person trusts it, a changed key is refused."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from collectors.ssh import Connection, HostKey, scan_host_key
from investigations.choices import HostTransport
from investigations.connections import endpoint_for
from investigations.models import Host


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
