import zoneinfo
from urllib.parse import unquote

from django.utils import timezone, translation

from investigations.selectors.accounts import user_language

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


def chosen_language(get_response):
    """A signed-in person's own language choice wins over what the browser asks for
    (LocaleMiddleware, before this, has already followed the cookie and Accept-Language)."""

    def middleware(request):
        if request.user.is_authenticated:
            language = user_language(user=request.user)
            if language and language != request.LANGUAGE_CODE:
                translation.activate(language)
                request.LANGUAGE_CODE = translation.get_language()
        return get_response(request)

    return middleware
