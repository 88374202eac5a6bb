import logging

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST

from investigations.csp_reports import MAX_BYTES, report_allowed, report_fields, report_line
from investigations.security import client_ip


def healthz(request: HttpRequest) -> JsonResponse:
    """For load balancers and `docker compose` health checks: the app and its database answer."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
    return JsonResponse({"status": "ok"})


csp_logger = logging.getLogger("perfcase.csp")


def _unlogged(status: int, **headers) -> HttpResponse:
    # Django logs every 4xx answer (django.request): a flood of refused reports would still
    # write a line each. Refusing them is the point; the refusal is not logged.
    response = HttpResponse(status=status, headers=headers)
    response._has_been_logged = True
    return response


@csrf_exempt
@require_POST
def csp_report(request: HttpRequest) -> HttpResponse:
    """Where browsers report what the Content-Security-Policy blocked: logged as a warning,
    one line of escaped fields (investigations/csp_reports.py), at most
    CSP_REPORTS_PER_MINUTE a minute from one address; more get 429 and are not logged."""
    address = client_ip(request)
    allowed, retry_after = report_allowed(address)
    if not allowed:
        return _unlogged(429, **{"Retry-After": str(retry_after)})
    body = request.read(MAX_BYTES + 1)
    if len(body) > MAX_BYTES:
        return _unlogged(413)
    fields = report_fields(body)
    if fields is None:
        return _unlogged(400)
    csp_logger.warning(
        "Content-Security-Policy violation: %s",
        report_line(fields, address),
        extra={"csp_report": fields},
    )
    return HttpResponse(status=204)
