"""The API's rate limits: writes, and the reads that cost the most, counted per token.

A django-ninja throttle (ninja.throttling.BaseThrottle), so ninja answers a refusal through
the API's handler for `Throttled` (429, JSON) with `Retry-After`. Its own SimpleRateThrottle
reads a list of times from the cache and writes it back, so requests that arrive together
on several workers all pass; this one counts with the cache's atomic increment (Redis INCR)
in fixed windows instead. A client may thus send up to twice its rate across the end of one
window and the start of the next, never more.
"""

import hashlib
import logging
import math
import threading
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from ninja.throttling import BaseThrottle

from investigations.security import client_ip

logger = logging.getLogger(__name__)

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def rate_key(request: HttpRequest) -> str:
    """Whom a request is counted against: its token, else its signed-in user, else its
    address."""
    token = getattr(request, "api_token_key", None)
    if token:
        return f"token:{token}"
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return f"user:{user.pk}"
    return f"address:{client_ip(request)}"


def token_rate_key(raw: str) -> str:
    # The cache sees a hash of a hash: never the token, nor the digest the database keeps.
    return hashlib.sha256(f"rate:{raw}".encode()).hexdigest()[:32]


class ApiRateLimit(BaseThrottle):
    """At most the rate named by `setting` ((requests, seconds) or None for no limit, read on
    every request so that tests and operators can change it), for requests of `methods` (all
    when None)."""

    def __init__(self, scope: str, setting: str, methods: frozenset[str] | None = None):
        self.scope = scope
        self.setting = setting
        self.methods = methods
        # ninja asks wait() right after allow_request(); threads must not see each other's.
        self._local = threading.local()

    def applies_to(self, methods) -> bool:
        return self.methods is None or any(method in self.methods for method in methods)

    def allow_request(self, request: HttpRequest) -> bool:
        rate = getattr(settings, self.setting)
        if rate is None or (self.methods is not None and request.method not in self.methods):
            return True
        count, seconds = rate
        now = time.time()
        window = int(now // seconds)
        key = f"api-rate:{self.scope}:{rate_key(request)}:{seconds}:{window}"
        try:
            cache.add(key, 0, timeout=seconds + 1)
            used = cache.incr(key)
        except Exception:
            # A limit protects the service; its store being down must not take the API down.
            logger.warning("API rate limit not counted: the cache did not answer", exc_info=True)
            return True
        self._local.wait = (window + 1) * seconds - now
        return used <= count

    def wait(self) -> float | None:
        return max(1, math.ceil(getattr(self._local, "wait", 1)))


WRITES = ApiRateLimit("writes", "API_WRITE_RATE", WRITE_METHODS)
EXPENSIVE_READS = ApiRateLimit("expensive", "API_EXPENSIVE_RATE")
# For an operation that costs much: a write counts as both.
EXPENSIVE = [WRITES, EXPENSIVE_READS]
