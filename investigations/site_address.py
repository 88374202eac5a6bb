"""Where people reach this installation, for links that must work outside its pages (a
downloaded postmortem, a chat message)."""

from django.conf import settings
from django.http import HttpRequest


def site_base_url(request: HttpRequest | None = None) -> str:
    """PERFCASE_BASE_URL when it is set: it wins, since behind a proxy the request may name
    an inner address. Else the scheme and host the request came to. Else "" (nothing made
    without a request may guess an address): links are then paths on the site."""
    if settings.BASE_URL:
        return settings.BASE_URL
    if request is not None:
        return request.build_absolute_uri("/").rstrip("/")
    return ""
