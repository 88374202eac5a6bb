import zoneinfo
from urllib.parse import unquote

from django.utils import timezone

TIME_ZONE_COOKIE = "perfcase_tz"


def browser_time_zone(get_response):
    """Show and read times in the browser's own zone, which base.html puts in a cookie."""

    def middleware(request):
        name = unquote(request.COOKIES.get(TIME_ZONE_COOKIE, ""))
        try:
            timezone.activate(zoneinfo.ZoneInfo(name)) if name else timezone.deactivate()
        except (zoneinfo.ZoneInfoNotFoundError, ValueError, OSError):
            timezone.deactivate()
        return get_response(request)

    return middleware
