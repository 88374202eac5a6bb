"""Sign-in lockout (django-axes): who is signing in from where, and the answer when too many
sign-ins failed."""

from django.conf import settings
from django.http import HttpRequest, JsonResponse
from django.shortcuts import render
from django.utils.translation import gettext as _


def client_ip(request: HttpRequest) -> str:
    """The address a sign-in comes from: the peer's, or behind our TLS proxy the last
    address of X-Forwarded-For (the one the proxy added; earlier ones a client can forge)."""
    if settings.BEHIND_TLS_PROXY:
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "")
        if forwarded.strip():
            return forwarded.split(",")[-1].strip()
    return request.META.get("REMOTE_ADDR", "")


def lockout_message() -> str:
    minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
    return _(
        "Too many failed sign-ins for this user or from this address: signing in is refused "
        "for %(minutes)s minutes. A team lead can unlock you on the team page."
    ) % {"minutes": minutes}


def lockout_response(request: HttpRequest, *args, **kwargs):
    """429, in JSON for the API, as a page otherwise."""
    message = lockout_message()
    if request.path.startswith("/api/"):
        return JsonResponse(
            {"detail": message, "errors": [{"field": None, "message": message}]}, status=429
        )
    return render(request, "registration/locked_out.html", {"message": message}, status=429)
