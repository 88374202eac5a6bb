"""The schema tells the truth: schemathesis sends every operation of /api/openapi.json
requests the schema calls valid, through the real WSGI application with a real token, on
real data (the demo's cases, hosts, ladders, profiles, findings...), and fails on any server
error, any answer the schema does not declare (status, content type, body), and any request
valid by the schema that the API refuses as invalid (400/422).

Bounded: a few examples per operation, so that the whole run takes about a minute.
"""

import time

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.core.wsgi import get_wsgi_application
from django.db import close_old_connections
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
    positive_data_acceptance,
]
EXAMPLES = 15
RUN = {"operations": 0, "requests": 0}


@pytest.fixture
def api_schema(real_ids, settings):
    # The limits are tested on their own (test_api_rate_limits.py); here one token sends
    # hundreds of requests a minute.
    settings.API_WRITE_RATE = settings.API_EXPENSIVE_RATE = None
    # As Django's test client does: a request must not close the test's connection (and
    # with it the transaction that holds the demo data).
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    schema = schemathesis.openapi.from_wsgi("/api/openapi.json", get_wsgi_application())
    schema.config.update(headers={"Authorization": f"Bearer {real_ids['token']}"})
    # A request valid by the schema must never be refused as malformed (422, or 400 for a
    # bound or a null the schema allows). A 400 remains for what no schema can say: a rule
    # about the data (a name that is no user's, a collection already ended, a blank title).
    schema.config.checks.positive_data_acceptance.expected_statuses = [
        "2xx",
        "400",
        "401",
        "403",
        "404",
        "409",
        "429",
    ]
    yield schema
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


# schemathesis 4 sends the generated items of a multipart array of binary strings as
# plain form fields, not as file parts, so the import never receives a file it could
# accept: its other checks run.
NO_FILE_PARTS = {"POST /api/investigations/{investigation_id}/imports"}


def fuzz(operation, path_parameters: dict) -> None:
    """Up to EXAMPLES requests valid by the operation's schema, each answer checked."""

    @given(case=operation.as_strategy(path_parameters=path_parameters))
    @settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
        # The first failure of an operation is reported whole; no time spent shrinking it.
        report_multiple_bugs=False,
    )
    def run(case):
        RUN["requests"] += 1
        checks = CHECKS
        if operation.label in NO_FILE_PARTS:
            checks = [check for check in CHECKS if check is not positive_data_acceptance]
        case.call_and_validate(checks=checks)

    run()


@pytest.mark.django_db
def test_every_operation_answers_as_the_schema_says(api_schema, real_ids):
    began = time.monotonic()
    failures = []
    for result in api_schema.get_all_operations():
        operation = result.ok()
        RUN["operations"] += 1
        fixed = {
            parameter.name: real_ids["ids"][parameter.name]
            for parameter in operation.path_parameters
            if parameter.name in real_ids["ids"]
        }
        try:
            fuzz(operation, fixed)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as failure:  # schemathesis's FailureGroup; each is collected
            failures.append(f"{operation.label}: {failure}")
    print(
        f"\nschemathesis: {RUN['operations']} operations, {RUN['requests']} requests, "
        f"{time.monotonic() - began:.1f} s, {len(failures)} failing"
    )

    assert failures == [], "\n\n".join(failures)
