"""Sign-in protection (django-axes): where a sign-in comes from, the lock of a user name at one
address, the growing wait of an address that fails often, and the answers when refused."""

import ipaddress
import math

from axes.handlers.database import AxesDatabaseHandler
from axes.models import AccessAttempt
from django.conf import settings
from django.db.models import Max, Sum
from django.http import HttpRequest, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

# A longer X-Forwarded-For is read no further: no real path has more proxies than this.
MAX_FORWARDED_HOPS = 20


def _address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.strip())
    except ValueError:
        return None


def _trusted(address) -> bool:
    return any(
        address in ipaddress.ip_network(network, strict=False)
        for network in settings.TRUSTED_PROXIES
    )


def client_ip(request: HttpRequest) -> str:
    """The address a request comes from: the peer's (REMOTE_ADDR), unless the peer is one of
    PERFCASE_TRUSTED_PROXIES. Then X-Forwarded-For is read from the right, past the trusted
    proxies, to the first address none of them is: a client may write anything at the left
    of the header, so nothing left of the address our own proxy saw is believed."""
    peer = request.META.get("REMOTE_ADDR", "")
    address = _address(peer)
    if not settings.TRUSTED_PROXIES or address is None or not _trusted(address):
        return peer
    hops = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")
    for hop in reversed(hops[-MAX_FORWARDED_HOPS:]):
        forwarded = _address(hop)
        if forwarded is None:
            break  # not an address: the last proxy we trust is all we know
        address = forwarded
        if not _trusted(address):
            break
    return str(address)


def address_wait_seconds(ip_address: str | None) -> int:
    """How many seconds this address must still wait before its next sign-in: none until it
    has failed PERFCASE_LOGIN_ADDRESS_FAILURES times (any user names, within the lockout
    window), then 2 s after its last failure, doubling with each further failure up to
    PERFCASE_LOGIN_ADDRESS_MAX_DELAY_SECONDS. A throttle, not a sleep: no worker waits."""
    if not ip_address:
        return 0
    now = timezone.now()
    seen = AccessAttempt.objects.filter(
        ip_address=ip_address, attempt_time__gte=now - settings.AXES_COOLOFF_TIME
    ).aggregate(failures=Sum("failures_since_start"), last=Max("attempt_time"))
    beyond = (seen["failures"] or 0) - settings.LOGIN_ADDRESS_FAILURES
    if beyond < 0:
        return 0
    delay = min(2 ** min(beyond + 1, 30), settings.LOGIN_ADDRESS_MAX_DELAY_SECONDS)
    left = delay - (now - seen["last"]).total_seconds()
    return math.ceil(left) if left > 0 else 0


class SignInHandler(AxesDatabaseHandler):
    """django-axes' database handler, with the address's wait on top of its lock of a user
    name at one address (AXES_LOCKOUT_PARAMETERS)."""

    def is_locked(self, request, credentials=None) -> bool:
        if super().is_locked(request, credentials):
            return True
        wait = address_wait_seconds(getattr(request, "axes_ip_address", None))
        if wait:
            request.perfcase_retry_after = wait
            return True
        return False


def lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return ngettext(
        "Too many failed sign-ins for this user name from this address: signing in with it "
        "from here is refused for %(minutes)s minute. A team lead can unlock you on the team "
        "page.",
        "Too many failed sign-ins for this user name from this address: signing in with it "
        "from here is refused for %(minutes)s minutes. A team lead can unlock you on the team "
        "page.",
        minutes,
    ) % {"minutes": minutes}


def wait_message(seconds: int) -> str:
    return ngettext(
        "Too many failed sign-ins from this address: wait %(seconds)s second before signing "
        "in again.",
        "Too many failed sign-ins from this address: wait %(seconds)s seconds before signing "
        "in again.",
        seconds,
    ) % {"seconds": seconds}


def lockout_response(request: HttpRequest, *args, **kwargs):
    """429, in JSON for the API, as a page otherwise; an address's wait says how long in
    Retry-After."""
    wait = getattr(request, "perfcase_retry_after", None)
    message = wait_message(wait) if wait else lockout_message()
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {"detail": message, "errors": [{"field": None, "message": message}]}, status=429
        )
    else:
        heading = _("Signing in is paused") if wait else _("Signing in is locked")
        response = render(
            request,
            "registration/locked_out.html",
            {"message": message, "heading": heading},
            status=429,
        )
    if wait:
        response["Retry-After"] = str(wait)
    return response
