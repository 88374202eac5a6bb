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
from django.core.management import call_command
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

from investigations.management.commands.load_demo import DEMO_TITLE
from investigations.models import (
    ActionItem,
    Capture,
    Collection,
    Credential,
    Finding,
    Host,
    Investigation,
    Ladder,
    Membership,
    PathEdge,
    PathNode,
    Profile,
    RootCause,
    TimelineEvent,
)
from investigations.services.inventory import credential_create
from investigations.services.tokens import api_token_create

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


def first_pk(queryset):
    return queryset.order_by("pk").values_list("pk", flat=True).first()


@pytest.fixture
def real_ids(db, settings, make_key):
    """The demo's data, and the ids of one object of each kind the paths name."""
    settings.DEBUG = True  # load_demo runs in DEBUG only (its password is published)
    call_command("load_demo", verbosity=0)
    settings.DEBUG = False
    case = Investigation.objects.get(title=DEMO_TITLE)
    user = case.lead
    credential_create(team=case.team, user=user, name="fuzz", private_key=make_key().text)
    ids = {
        "investigation_id": case.pk,
        "team_id": case.team_id,
        "host_id": first_pk(Host.objects.filter(team=case.team)),
        "credential_id": first_pk(Credential.objects.filter(team=case.team)),
        "collection_id": first_pk(Collection.objects.filter(investigation=case)),
        "event_id": first_pk(TimelineEvent.objects.filter(investigation=case)),
        "finding_id": first_pk(Finding.objects.filter(investigation=case)),
        "ladder_id": first_pk(Ladder.objects.filter(investigation=case)),
        "node_id": first_pk(PathNode.objects.filter(investigation=case)),
        "edge_id": first_pk(PathEdge.objects.filter(investigation=case)),
        "profile_id": first_pk(Profile.objects.filter(investigation__team=case.team)),
        "capture_id": first_pk(Capture.objects.filter(investigation__team=case.team)),
        "action_id": first_pk(ActionItem.objects.filter(investigation=case)),
        "root_cause_id": first_pk(RootCause.objects.all()),
        "membership_id": first_pk(Membership.objects.filter(team=case.team)),
        "member_id": user.pk,
    }
    _, raw = api_token_create(user=user, name="schemathesis")
    return {"token": raw, "ids": {name: pk for name, pk in ids.items() if pk is not None}}


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
