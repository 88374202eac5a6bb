"""What the API promises beyond each endpoint's own answers: every status an operation can
answer is in the schema, and a path that is no endpoint answers JSON like the rest."""

import functools
import json

import pytest
from django.test import Client

from investigations.api import api
from investigations.choices import (
    CaptureStatus,
    CollectionStatus,
    FindingSeverity,
    FindingStatus,
    HostRole,
    ItemStatus,
    LadderStatus,
    NodeState,
    Role,
    ScanStatus,
    Severity,
    Status,
    TargetStatus,
)
from tests.conftest import ApiClient


@functools.cache
def openapi_schema() -> dict:
    """The API's schema, made once for this module's tests (each making costs about a
    second of CPU); they only read it."""
    return api.get_openapi_schema()


def operations():
    schema = openapi_schema()
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_declares_the_errors_it_may_answer():
    missing = [
        (method, path, status)
        for path, method, operation in operations()
        for status in (400, 403, 404, 422) + ((401,) if operation.get("security") else ())
        if status not in operation["responses"] and str(status) not in operation["responses"]
    ]

    assert missing == []


@pytest.mark.django_db
def test_the_statuses_a_fuzzer_met_are_declared(personas):
    declared = {(path, method): operation["responses"] for path, method, operation in operations()}

    bad_query = ApiClient(personas.member).get("/api/hosts", data={"team": "AAA"})
    a_list = Client().post("/api/auth/token", json.dumps([1]), content_type="application/json")

    assert bad_query.status_code == 422 and 422 in declared[("/api/hosts", "get")]
    assert a_list.status_code == 400 and 400 in declared[("/api/auth/token", "post")]


@pytest.mark.django_db
@pytest.mark.parametrize("path", ["/api/nope", "/api/investigations/1/nope", "/api/hosts/x/y/"])
def test_a_path_under_api_that_is_no_endpoint_is_a_json_404(personas, path):
    response = ApiClient(personas.member).get(path)

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    assert response.body["detail"].startswith("No such API path")


METHODS = ["get", "post", "put", "patch", "delete", "options", "head"]


@pytest.mark.django_db
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("caller", ["token", "session", "nobody"])
@pytest.mark.parametrize("path", ["/api/nope", "/api/investigations/1/nope", "/api/hosts/x/y/"])
def test_every_method_to_a_path_that_is_no_endpoint_is_a_json_404(personas, method, caller, path):
    # A browser's session cookie and a client that checks CSRF as browsers' requests are checked.
    client = Client(enforce_csrf_checks=True)
    headers = {}
    if caller == "token":
        headers["Authorization"] = ApiClient(personas.member).headers["Authorization"]
    elif caller == "session":
        client.force_login(personas.member)

    body = {} if method in ("get", "head") else {"data": "{}", "content_type": "application/json"}
    response = getattr(client, method)(path, headers=headers, **body)

    assert response.status_code == 404
    assert response["Content-Type"].startswith("application/json")
    if method != "head":
        assert json.loads(response.content)["detail"].startswith("No such API path")


WRONG_METHODS = [
    ("put", "/api/hosts", "GET, POST"),
    ("delete", "/api/investigations", "GET, POST"),
    ("post", "/api/hosts/1", "DELETE, GET, PATCH"),
    ("options", "/api/teams", "GET, POST"),
    ("post", "/api/openapi.json", "GET, HEAD"),
    ("put", "/api/docs", "GET, HEAD"),
]


@pytest.mark.django_db
@pytest.mark.parametrize(("method", "path", "allowed"), WRONG_METHODS)
@pytest.mark.parametrize("caller", ["token", "session", "nobody"])
def test_a_method_a_known_path_does_not_answer_is_a_json_405_naming_the_allowed(
    personas, method, path, allowed, caller
):
    client = Client(enforce_csrf_checks=True)
    headers = {}
    if caller == "token":
        headers["Authorization"] = ApiClient(personas.member).headers["Authorization"]
    elif caller == "session":
        client.force_login(personas.member)

    response = getattr(client, method)(
        path, data="{}", content_type="application/json", headers=headers
    )

    assert response.status_code == 405
    assert response["Allow"] == allowed
    assert response["Content-Type"].startswith("application/json")
    body = json.loads(response.content)
    assert body["detail"] == f"{method.upper()} is not allowed on this path: use {allowed}."
    assert body["errors"] == [{"field": None, "message": body["detail"]}]


@pytest.mark.django_db
@pytest.mark.parametrize("method", ["get", "post"])
def test_the_api_root_is_a_json_404(personas, method):
    response = getattr(ApiClient(personas.member), method)("/api/")

    assert response.status_code == 404
    assert response.body["detail"].startswith("No such API path")


def _components():
    return openapi_schema()["components"]["schemas"]


def _values(field: dict, components: dict) -> list | None:
    """The enum a property lists, itself or through the component it refers to."""
    while "$ref" in field:
        field = components[field["$ref"].rsplit("/", 1)[-1]]
    return field.get("enum")


def test_every_status_state_severity_and_role_an_answer_names_lists_its_values():
    components = _components()
    without = [
        f"{name}.{prop}"
        for name, schema in components.items()
        if name.endswith("Out")
        for prop, field in schema.get("properties", {}).items()
        if prop in ("status", "state", "severity", "role") and not _values(field, components)
        # the baseline's role is a host role, or empty for the network rows
        and name != "BaselineItemOut"
    ]

    assert without == []


@pytest.mark.parametrize(
    ("schema", "prop", "choices"),
    [
        ("CollectionOut", "status", CollectionStatus),
        ("TargetOut", "status", TargetStatus),
        ("LadderOut", "status", LadderStatus),
        ("LadderSideOut", "status", LadderStatus),
        ("InvestigationOut", "status", Status),
        ("InvestigationOut", "severity", Severity),
        ("FindingOut", "status", FindingStatus),
        ("FindingOut", "severity", FindingSeverity),
        ("ItemOut", "status", ItemStatus),
        ("NodeOut", "state", NodeState),
        ("HostKeyScanOut", "status", ScanStatus),
        ("CaptureOut", "status", CaptureStatus),
        ("MembershipOut", "role", Role),
        ("MemberOut", "role", HostRole),
    ],
)
def test_a_status_lists_the_values_of_its_choices(schema, prop, choices):
    components = _components()
    field = components[schema]["properties"][prop]

    assert set(_values(field, components)) == set(choices.values)


def test_a_collection_may_be_cancelled_as_its_targets():
    statuses = _components()["CollectionOut"]["properties"]["status"]["enum"]

    assert "cancelled" in statuses
    assert set(statuses) - {"completed"} == set(TargetStatus.values) - {"succeeded"}
