"""From inventory rows to the plain connection settings the collectors take."""

from functools import partial

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.errors import CollectorError
from collectors.local import LocalConnection
from collectors.phrase import Phrase
from collectors.ssh import Connection, Endpoint, HostKey
from investigations.choices import HostTransport
from investigations.models import Host
from investigations.vault import unseal


class NotConfigured(CollectorError):
    settings_fault = True


def endpoint_for(host: Host, *, depth: int = 0) -> Endpoint:
    """The host's connection settings, its credential decrypted, its jump host followed."""
    if host.credential is None:
        raise NotConfigured(
            Phrase(
                gettext_noop("%(host)s has no credential: choose one on the host's page."),
                host=host.name,
            )
        )
    try:
        private_key = unseal(host.credential.encrypted_private_key)
        passphrase = (
            unseal(host.credential.encrypted_passphrase)
            if host.credential.encrypted_passphrase
            else ""
        )
    except ImproperlyConfigured as error:
        raise NotConfigured(str(error)) from None
    trusted = (
        HostKey(host.host_key_type, host.host_key_fingerprint)
        if host.host_key_fingerprint
        else None
    )
    jump = None
    if host.jump_host_id and depth < 5:
        jump = endpoint_for(host.jump_host, depth=depth + 1)
    return Endpoint(
        name=host.name,
        address=host.address,
        port=host.port,
        username=host.username,
        private_key=private_key,
        passphrase=passphrase,
        host_key=trusted,
        jump=jump,
        connect_timeout=settings.SSH_CONNECT_TIMEOUT,
    )


def connector_for(host: Host):
    """What opens a connection to the host (a context manager when called), decided now:
    the credential decrypted, the jump host followed, so that opening needs no database."""
    if host.transport == HostTransport.LOCAL:
        if not settings.LOCAL_TRANSPORT:
            raise NotConfigured(
                Phrase(
                    gettext_noop(
                        "%(host)s uses the local transport, which is off "
                        "(PERFCASE_LOCAL_TRANSPORT=1 turns it on)."
                    ),
                    host=host.name,
                )
            )
        return partial(LocalConnection, host.name)
    return partial(Connection, endpoint_for(host))


def open_connection(host: Host):
    """A connection context manager for the host: SSH, or the local transport."""
    return connector_for(host)()


def unready_reason(host: Host) -> str | None:
    """Why a collection from this host would fail before it starts, or None."""
    if host.transport == HostTransport.LOCAL:
        return None if settings.LOCAL_TRANSPORT else _("the local transport is off")
    if host.credential_id is None:
        return _("no credential")
    if not host.host_key_fingerprint:
        return _("host key not trusted yet")
    return None
