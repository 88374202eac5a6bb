"""Where a webhook may be delivered: public addresses only, unless an operator allows a
network (PERFCASE_WEBHOOK_ALLOWED_NETWORKS). Loopback, private, link-local (the cloud
metadata service at 169.254.169.254 among them), shared, multicast and reserved addresses
would let a team lead make the server probe its own network.

The name is resolved once, every address it gives is checked, and the delivery connects to
the checked address (never resolving again: a second answer could point elsewhere).
"""

import ipaddress
import socket
from urllib.parse import urlsplit

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


def _literal(host: str):
    try:
        return ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return None


def check_webhook_host(url: str) -> None:
    """At save time, without resolving names: an address or a local name that is refused."""
    host = (urlsplit(url).hostname or "").lower()
    literal = _literal(host)
    local_name = host == "localhost" or host.endswith((".localhost", ".local"))
    if local_name or (literal is not None and not address_allowed(str(literal))):
        raise AddressRefused(
            _("Webhooks go to public addresses only, not %(host)s.") % {"host": host}
        )


def resolve_webhook_host(host: str, port: int) -> str:
    """The one address to connect to: every address the name resolves to must be allowed."""
    literal = _literal(host)
    if literal is not None:
        addresses = [str(literal)]
    else:
        try:
            found = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except OSError:
            raise AddressRefused(_("The webhook's host name does not resolve.")) from None
        addresses = list(dict.fromkeys(info[4][0] for info in found))
    if not addresses or not all(address_allowed(address) for address in addresses):
        raise AddressRefused(_("Webhooks go to public addresses only."))
    return addresses[0]
