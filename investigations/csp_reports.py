"""Reports of what the Content-Security-Policy blocked, as browsers send them to
/csp-report/ (no sign-in: a browser reports for whoever is on the page).

Anyone can post one, so a report is read as data, never logged as it came: at most
MAX_BYTES of JSON, the fields a report has (each value a JSON string, so quotes and control
characters are escaped, and cut at FIELD_CHARS), at most CSP_REPORTS_PER_MINUTE from one
address.
"""

import ipaddress
import json
import time

from django.conf import settings
from django.core.cache import cache

MAX_BYTES = 4096
FIELD_CHARS = 300
# The fields of a report (report-uri's names), and the Reporting API's names for them.
FIELDS = {
    "document-uri": "documentURL",
    "referrer": "referrer",
    "violated-directive": "violatedDirective",
    "effective-directive": "effectiveDirective",
    "blocked-uri": "blockedURL",
    "disposition": "disposition",
    "source-file": "sourceFile",
    "line-number": "lineNumber",
    "column-number": "columnNumber",
    "status-code": "statusCode",
    "script-sample": "sample",
}


def report_fields(body: bytes) -> dict[str, str] | None:
    """The report's fields as text, or None if the body is no report: report-uri's
    {"csp-report": {...}}, or the Reporting API's [{"type": "csp-violation", "body": {...}}]."""
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if isinstance(data, list) and data and isinstance(data[0], dict):
        report, names = data[0].get("body"), {name: api for name, api in FIELDS.items()}
    elif isinstance(data, dict):
        report, names = data.get("csp-report"), {name: name for name in FIELDS}
    else:
        return None
    if not isinstance(report, dict):
        return None
    return {
        name: str(report[key])[:FIELD_CHARS]
        for name, key in names.items()
        if isinstance(report.get(key), (str, int, float))
    }


def report_line(fields: dict[str, str], address: str) -> str:
    """One line of key=value pairs, each value a JSON string (escaped, quoted)."""
    pairs = {"client": address, **fields}
    return " ".join(f"{name}={json.dumps(value)}" for name, value in pairs.items())


def _sender(address: str) -> str:
    # One IPv6 host holds a /64: counted as one sender, or it could send from each address.
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return "unknown"
    if ip.version == 6:
        return str(ipaddress.ip_network(f"{ip}/64", strict=False).network_address)
    return str(ip)


def report_allowed(address: str) -> tuple[bool, int]:
    """Whether one more report from `address` may be logged this minute, and the seconds
    until the next minute (for Retry-After). A counter in the cache, one per minute."""
    now = time.time()
    minute = int(now // 60)
    key = f"csp-report:{_sender(address)}:{minute}"
    cache.add(key, 0, timeout=120)
    try:
        count = cache.incr(key)
    except ValueError:  # expired between add and incr
        cache.set(key, 1, timeout=120)
        count = 1
    return count <= settings.CSP_REPORTS_PER_MINUTE, max(1, int(60 - now % 60))
