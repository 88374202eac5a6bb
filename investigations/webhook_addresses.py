"""Where a webhook may be delivered: public addresses only, unless an operator allows a
network (PERFCASE_WEBHOOK_ALLOWED_NETWORKS). Loopback, private, link-local (the cloud
metadata service at 169.254.169.254 among them), shared, multicast and reserved addresses
would let a team lead make the server probe its own network.

One check, `webhook_address`, runs when the URL is saved and again at delivery. It resolves
the host with getaddrinfo, as the delivery's connection would, so every spelling of an
address counts as that address: 2130706433, 127.1, 0x7f000001 and 017700000001 are all
127.0.0.1, and [::ffff:127.0.0.1] is too. Every address a name gives is checked, and the
delivery connects to the checked address (never resolving again: a second answer could
point elsewhere).
"""

import ipaddress
import socket

from django.conf import settings
from django.utils.translation import gettext_lazy as _


class AddressRefused(Exception):
    """The webhook's host is an address Perfcase does not send to."""


def _allowed_networks():
    return [
        ipaddress.ip_network(network.strip(), strict=False)
        for network in settings.WEBHOOK_ALLOWED_NETWORKS
        if network.strip()
    ]


def address_allowed(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped:
        ip = ip.ipv4_mapped
    if any(ip in network for network in _allowed_networks()):
        return True
    return ip.is_global and not ip.is_multicast


def _local_name(host: str) -> bool:
    # Names that mean this machine or its link whatever a resolver answers (mDNS included).
    name = host.rstrip(".")
    return name == "localhost" or name.endswith((".localhost", ".local"))


def _refused(host: str, literal: str | None = None) -> AddressRefused:
    # A literal's canonical spelling helps ("0x7f000001 (127.0.0.1)"); what a name resolves
    # to is not said: the answer would map the server's internal DNS for whoever asks.
    if literal is not None and literal != host:
        return AddressRefused(
            _("Webhooks go to public addresses only, not %(host)s (%(address)s).")
            % {"host": host, "address": literal}
        )
    return AddressRefused(_("Webhooks go to public addresses only, not %(host)s.") % {"host": host})


def _resolve(host: str, port: int, numeric: bool) -> list[str]:
    flags = socket.AI_NUMERICHOST if numeric else 0
    found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=flags)
    return list(dict.fromkeys(info[4][0] for info in found))


def webhook_address(host: str, port: int, *, unresolved_ok: bool = False) -> str | None:
    """The one address to connect to: every address the host resolves to must be allowed.

    `host` is the URL's host name as urlsplit gives it (no brackets). A name that does not
    resolve is refused, unless `unresolved_ok` (when the URL is saved: the name may not be
    in DNS yet, or DNS may be away; the delivery checks again), then the answer is None.
    """
    host = host.lower()
    if _local_name(host):
        raise _refused(host)
    try:
        # Any spelling of an address inet_aton or inet_pton reads, without asking DNS.
        addresses = _resolve(host, port, numeric=True)
        literal = addresses[0] if addresses else None
    except (OSError, UnicodeError, ValueError):
        literal = None
        try:
            addresses = _resolve(host, port, numeric=False) if host else []
        except (OSError, UnicodeError, ValueError):
            addresses = []
        if not addresses and (":" in host or "%" in host):
            raise _refused(host) from None  # IPv6 in no form getaddrinfo reads, or zoned
        if not addresses:
            if unresolved_ok:
                return None
            raise AddressRefused(_("The webhook's host name does not resolve.")) from None
    if not all(address_allowed(address) for address in addresses):
        raise _refused(host, literal)
    return addresses[0]
