"""/csp-report/ takes reports from anyone: each is logged as one line of escaped fields,
at most PERFCASE_CSP_REPORTS_PER_MINUTE a minute from one address, the rest answered 429
unlogged; a body past 4 KiB or no report at all is refused unlogged."""

import itertools
import json
import time

import pytest
from django.test import Client

from tests.conftest import log_records

pytestmark = pytest.mark.django_db

_senders = itertools.count(1)


@pytest.fixture
def sender():
    """A client from an address of its own (its /64), so no other test's reports count."""
    return Client(REMOTE_ADDR=f"2001:db8:{next(_senders):x}:{int(time.time()) % 65536:x}::1")


def post(client, body: bytes | str):
    if isinstance(body, str):
        body = body.encode()
    return client.post("/csp-report/", body, content_type="application/csp-report")


def report(**fields) -> str:
    return json.dumps({"csp-report": {"document-uri": "https://perfcase.example/", **fields}})


def test_a_report_with_control_characters_is_one_line_of_escaped_fields(
    sender, console_log, caplog
):
    forged = "x\n2025-01-01 INFO admin password reset OK\r\x1b[31m\x00\u2028"

    answer = post(
        sender,
        report(**{"blocked-uri": forged, "violated-directive": "script-src\r\n'self'"}),
    )

    assert answer.status_code == 204
    assert len([r for r in caplog.records if r.name == "perfcase.csp"]) == 1
    [line] = log_records(console_log.getvalue())
    assert line.startswith('Content-Security-Policy violation: client="2001:db8:')
    assert 'document-uri="https://perfcase.example/"' in line
    assert (
        'blocked-uri="x\\n2025-01-01 INFO admin password reset OK\\r\\u001b[31m\\u0000\\u2028"'
        in line
    )
    assert "violated-directive=\"script-src\\r\\n'self'\"" in line
    for raw in "\r\x1b\x00\u2028":
        assert raw not in console_log.getvalue()


def test_a_report_in_the_reporting_api_format_is_logged_too(sender, console_log):
    body = json.dumps(
        [
            {
                "type": "csp-violation",
                "body": {"documentURL": "https://p.example/\n", "blockedURL": "inline"},
            }
        ]
    )

    assert post(sender, body).status_code == 204
    [line] = log_records(console_log.getvalue())
    assert 'document-uri="https://p.example/\\n" blocked-uri="inline"' in line


def test_reports_past_the_rate_limit_are_answered_429_and_not_logged(sender, settings, caplog):
    settings.CSP_REPORTS_PER_MINUTE = 3
    if time.time() % 60 > 45:  # the count is per minute: begin early in one
        time.sleep(61 - time.time() % 60)

    answers = [post(sender, report()) for _ in range(5)]

    assert [a.status_code for a in answers] == [204, 204, 204, 429, 429]
    assert 1 <= int(answers[3]["Retry-After"]) <= 60
    # Three reports logged, and not a line more: not even Django's "Too Many Requests".
    assert [r.name for r in caplog.records] == ["perfcase.csp"] * 3
    # Another address is counted on its own.
    assert post(Client(REMOTE_ADDR="198.51.100.7"), report()).status_code == 204


@pytest.mark.parametrize(
    "body, status",
    [
        (report(**{"script-sample": "x" * 4096}), 413),
        ("[" * 4000, 400),
        ("not json\nINFO admin password reset OK", 400),
        ('{"csp-report": "a string"}', 400),
    ],
)
def test_a_body_too_large_or_no_report_is_refused_and_not_logged(sender, caplog, body, status):
    assert post(sender, body).status_code == status
    assert caplog.records == []
