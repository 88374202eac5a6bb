"""The schema tells the truth: schemathesis sends every operation of /api/openapi.json
requests the schema calls valid, through the real WSGI application with a real token, on
real data (the demo's cases, hosts, ladders, profiles, findings...), and fails on any server
error, any answer the schema does not declare (status, content type, body), and any request
valid by the schema that the API refuses as invalid (400/422).

Bounded: a few examples per operation (10), so that the whole run takes about a minute on a
quiet 2-core machine.
"""

import time
from dataclasses import dataclass

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
EXAMPLES = 10
RUN = {"operations": 0, "requests": 0}


@dataclass(frozen=True)
class Refusal:
    """A 400 that a request valid by the schema may get: its operation (None: any), the
    field its error names (None: the request as a whole) and words of its message."""

    operation: str | None
    field: str | None
    words: str


INVESTIGATION = "/api/investigations/{investigation_id}"
# What no schema can state, each because it depends on what the database holds (or the
# clock) when the request arrives, not on the request: the only 400s a request valid by the
# schema may get. Everything else a request can get wrong, the schema says.
REFUSALS = {
    # An id or a name in the body or the query that names nothing of this team or case.
    "no such object": [
        Refusal(None, "credential", "No such credential in this team"),
        Refusal(None, "jump_host", "No such jump host in this team"),
        Refusal(None, "lead", "is not a member of the team"),
        Refusal(None, "owner", "must be a member of the investigation's team"),
        Refusal(None, "root_causes", "in the knowledge base"),
        Refusal(None, "events", "No timeline entry"),
        Refusal(None, "hosts_a", "Choose hosts of the investigation's team"),
        Refusal(None, "hosts_b", "Choose hosts of the investigation's team"),
        Refusal(None, "source", "No such node on this investigation's path"),
        Refusal(None, "target", "No such node on this investigation's path"),
        Refusal(None, "state_collection", "No such collection in this investigation"),
        Refusal(None, "a", "No such"),
        Refusal(None, "b", "No such"),
        Refusal(None, "username", "There is no user named"),
        Refusal(None, "assignee", "not a member"),
        Refusal(None, "hosts", "Only hosts placed on a side of this investigation"),
        # A profile or capture during a ladder's step: a ladder of this case.
        Refusal(None, "ladder", "Choose a ladder of this investigation"),
    ],
    # A name that must be unique and is taken.
    "taken": [
        Refusal("POST /api/teams", "name", "already exists"),
        Refusal(None, "label", "already has a node with this label"),
    ],
    # The case or the object is not in a state that allows it.
    "wrong state": [
        Refusal(None, None, "has already ended"),
        Refusal(None, None, "on the local transport has no SSH host key"),
        Refusal(None, None, "nothing to cancel"),
        Refusal(None, None, "Evidence was collected from this host"),
        Refusal(None, None, "placed in investigations"),
        Refusal(None, None, "as their jump host"),
        Refusal(None, "role", "A team needs at least one lead"),
        Refusal(None, "hosts", "Place hosts on the sides first"),
        Refusal(None, "load_generator", "Place a host with the role 'load generator'"),
        Refusal(None, "fingerprint", "Scan the host key first"),
        # A profile or capture during a ladder's step: the ladder's steps and state as stored.
        Refusal(None, "ladder", "Imported results ran elsewhere"),
        Refusal(None, "ladder", "has ended: choose its knee"),
        Refusal(None, "step", "Ladder #"),
        Refusal(None, "step", "choose a later step"),
        Refusal(None, "team", "You lead several teams"),
        # A ladder run again: one run here, from load generators still placed on its sides.
        Refusal("POST /api/ladders/{ladder_id}/rerun", "ladder", "imported from elsewhere"),
        Refusal("POST /api/ladders/{ladder_id}/rerun", "load_generator", "no longer a load"),
        # A diagnosis's load: what it does not give comes from the case's last ladder.
        Refusal(f"POST {INVESTIGATION}/diagnoses", "side_a_url", "no earlier ladder of this"),
        Refusal(f"POST {INVESTIGATION}/diagnoses", "side_b_url", "no earlier ladder of this"),
        Refusal(f"POST {INVESTIGATION}/diagnoses", "steps", "Give the loads of the steps"),
        # A note edited into an action (or back): the entry's kind is stored.
        Refusal(f"PATCH {INVESTIGATION}/timeline/{{event_id}}", "action", ""),
    ],
    # A time is compared with now, or with the case's other times as stored.
    "the clock": [
        Refusal(None, None, "lies in the future"),
        Refusal(None, None, "before 1970"),
        Refusal(None, None, "cannot be before"),
    ],
    # Not state, but rules JSON Schema has no words for; the schema says them in its
    # descriptions: a ladder's loads rise step by step and its steps fit in 90 minutes, the
    # one-line path is a small language with a parser of its own (analysis/pathtext.py), and
    # a host's address is a host name or an IP address.
    "beyond JSON Schema": [
        Refusal(f"POST {INVESTIGATION}/ladders", "steps", "A ladder steps up"),
        Refusal(f"POST {INVESTIGATION}/ladders", "steps", "would run longer than"),
        Refusal(f"POST {INVESTIGATION}/path/text", "text", "Column "),
        # Two ladders compared: `with` is not the path's own id.
        Refusal("GET /api/ladders/{ladder_id}/compare", "with", "with another ladder"),
        Refusal(f"POST {INVESTIGATION}/diagnoses", "steps", "A ladder steps up"),
        # A capture filter's characters are stated; whether tcpdump compiles it is tcpdump's.
        Refusal(None, "filter", "tcpdump cannot compile this filter"),
        Refusal(None, "filter_a", "tcpdump cannot compile this filter"),
        Refusal(None, "filter_b", "tcpdump cannot compile this filter"),
        # A host's address: the schema states its characters; which arrangements of them are
        # a host name or an IPv4/IPv6 address is the validator's (validators.py).
        Refusal(None, "address", "Enter a host name"),
        Refusal(None, "address", "Only an IPv6 address goes in brackets"),
    ],
}
COUNTED = {name: 0 for name in REFUSALS}


def state_refusal(label: str, response) -> str | None:
    """The name of the REFUSALS group every error of this 400 belongs to, or None."""
    try:
        errors = response.json().get("errors") or []
    except ValueError:
        return None
    groups = set()
    for error in errors:
        group = next(
            (
                name
                for name, refusals in REFUSALS.items()
                for refusal in refusals
                if refusal.operation in (None, label)
                and refusal.field in (None, error["field"])
                and refusal.words in error["message"]
            ),
            None,
        )
        if group is None:
            return None
        groups.add(group)
    return min(groups) if errors else None


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
    # A request valid by the schema must never be refused as invalid: no 422, and a 400
    # only for one of the REFUSALS below (run() checks its errors against them).
    schema.config.checks.positive_data_acceptance.expected_statuses = [
        "2xx",
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
        response = case.call()
        group = state_refusal(operation.label, response) if response.status_code == 400 else None
        if group is not None:
            COUNTED[group] += 1
        if group is not None or operation.label in NO_FILE_PARTS:
            checks = [check for check in CHECKS if check is not positive_data_acceptance]
        case.validate_response(response, checks=checks)

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
        f"{time.monotonic() - began:.1f} s, {len(failures)} failing; "
        f"{sum(COUNTED.values())} refusals of state allowed ({COUNTED})"
    )

    assert failures == [], "\n\n".join(failures)
