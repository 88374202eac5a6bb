"""A body property the schema declares nullable takes null: for every operation with a JSON
body and every property of it whose type allows null, a real request on the demo's data with
that property null (and the required ones valid) is not refused as malformed (422) nor with
an error naming the property (400). A property the API refuses as null is declared without
null (schemas.NotNull)."""

import itertools
import re

import pytest

from investigations.api import api
from investigations.models import PathNode
from tests.conftest import ApiClient

COUNTER = itertools.count()


def _resolve(schema: dict, components: dict) -> dict:
    while "$ref" in schema:
        schema = components[schema["$ref"].rsplit("/", 1)[-1]]
    return schema


def _nullable(prop: dict) -> bool:
    return prop.get("type") == "null" or any(
        member.get("type") == "null" for member in prop.get("anyOf", [])
    )


def _path(template: str, ids: dict) -> str:
    def value(match):
        name = match.group(1)
        if name == "key":
            return "a" if "/sides/" in template else ids["checklist_key"]
        return str(ids[name])

    return re.sub(r"\{(\w+)\}", value, template)


def _valid(name: str, prop: dict, ids: dict, nodes: list[int]):
    """A value for a required property that the API accepts on the demo's data."""
    unique = f"null check {next(COUNTER)}"
    by_name = {
        "team": ids["team_id"],
        "id": ids["action_id"],
        "source": nodes[0],
        "target": nodes[1],
        "kind": "note",
        "side_a_url": "http://a.example/",
        "side_b_url": "http://b.example/",
        "steps": [10, 20],
        "address": "192.0.2.10",
        "username": "perf",
    }
    if name in by_name:
        return by_name[name]
    if "enum" in prop:
        return prop["enum"][0]
    return unique


def _json_bodies():
    schema = api.get_openapi_schema()
    components = schema["components"]["schemas"]
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            content = operation.get("requestBody", {}).get("content", {})
            if "application/json" in content:
                body = _resolve(content["application/json"]["schema"], components)
                yield method, path, body


@pytest.mark.django_db
def test_every_property_declared_nullable_takes_null(real_ids):
    client = ApiClient(real_ids["user"])
    ids = real_ids["ids"]
    nodes = list(
        PathNode.objects.filter(investigation_id=ids["investigation_id"])
        .order_by("pk")
        .values_list("pk", flat=True)[:2]
    )
    refused, tried = [], 0
    for method, path, body in _json_bodies():
        properties = body.get("properties", {})
        for name, prop in properties.items():
            if not _nullable(prop):
                continue
            tried += 1
            sent = {
                required: _valid(required, properties[required], ids, nodes)
                for required in body.get("required", [])
            }
            sent[name] = None
            response = getattr(client, method)(_path(path, ids), sent)
            named = {error["field"] for error in (response.body or {}).get("errors") or []}
            if response.status_code == 422 or (response.status_code == 400 and name in named):
                refused.append(f"{method.upper()} {path} {name}: {response.body}")

    assert tried > 20  # the walk found the bodies
    assert refused == [], "\n".join(refused)
