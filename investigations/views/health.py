import logging

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST


def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and `docker compose` health checks: the app and its database answer."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


csp_logger = logging.getLogger("perfcase.csp")


@csrf_exempt
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    """Where browsers report what the Content-Security-Policy blocked: logged, as a warning,
    at most 4 KiB of it (a report is the browser's, not a person's)."""
    csp_logger.warning(
        "Content-Security-Policy violation: %s", request.body[:4096].decode("utf-8", "replace")
    )
    return HttpResponse(status=204)
