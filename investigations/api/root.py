"""The JSON API: /api/, schema at /api/openapi.json, interactive docs at /api/docs."""

import functools
import json
import re

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponseNotAllowed
from django.urls import URLPattern
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.csrf import csrf_exempt
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError, Throttled
from ninja.errors import ValidationError as InputError
from ninja.openapi.schema import OpenAPISchema
from ninja.parser import Parser
from ninja.security import HttpBearer

from collectors.errors import CollectorError
from investigations.api.limits import WRITES, token_rate_key
from investigations.phrases import translate
from investigations.services.tokens import api_token_authenticate


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str):
        user = api_token_authenticate(raw=token) if token else None
        if user is not None:
            request.user = user
            request.api_token_key = token_rate_key(token)
        return user


class ObjectBodyParser(Parser):
    """Bodies are JSON objects: a bare string or list would otherwise pass for a schema."""

    def parse_body(self, request: HttpRequest):
        data = json.loads(request.body)
        if not isinstance(data, dict):
            raise ValueError("the body must be a JSON object")
        return data


# What any operation may answer besides its own: a body that is no JSON object (400), no or
# a bad token (401), a role too low (403), an id not found or not yours (404), a parameter
# of the wrong type (422). Declared on every operation, so that the schema tells all.
COMMON_ERRORS = {
    400: "Bad request: the body or a value was refused; `errors` names the fields.",
    401: "Not authenticated.",
    403: "Your role does not allow it.",
    404: "Not found.",
    422: "A parameter of the wrong type or shape.",
}


TOO_MANY = {
    "description": "Too many requests: this token's rate limit is spent for now.",
    "headers": {
        "Retry-After": {
            "description": "Seconds to wait before trying again.",
            "schema": {"type": "integer"},
        }
    },
}


class PerfcaseSchema(OpenAPISchema):
    def operation_details(self, operation):
        details = super().operation_details(operation)
        error = {"$ref": "#/components/schemas/ErrorOut"}
        responses = details.setdefault("responses", {})
        declared = {**COMMON_ERRORS}
        if any(limit.applies_to(operation.methods) for limit in operation.throttle_objects):
            declared[429] = TOO_MANY
        for status, answer in declared.items():
            if status == 401 and not details.get("security"):
                continue  # open to everyone (signing in)
            if status in responses or str(status) in responses:
                continue
            if isinstance(answer, str):
                answer = {"description": answer}
            responses[status] = {**answer, "content": {"application/json": {"schema": error}}}
        return details


class PerfcaseAPI(NinjaAPI):
    def get_openapi_schema(self, *, path_prefix=None, path_params=None):
        if path_prefix is None:
            path_prefix = self.get_root_path(path_params or {})
        return PerfcaseSchema(self, path_prefix)

    def _get_urls(self):
        # Every answer of the API is JSON: ninja's own answers a method that a path has no
        # operation for with plain text, its root (/api/) with an HTML 404, and the schema and
        # docs with a page whatever the method.
        urls = []
        for url in super()._get_urls():
            if isinstance(url, URLPattern):
                view = {"api-root": api_not_found}.get(url.name) or _json_405(
                    url.callback, only_get=url.name in ("openapi-json", "openapi-view")
                )
                url = URLPattern(url.pattern, view, url.default_args, url.name)
            urls.append(url)
        return urls


def _json_405(view, *, only_get: bool):
    @functools.wraps(view)
    def answer(request, *args, **kwargs):
        if only_get and request.method not in ("GET", "HEAD"):
            return method_not_allowed(request, "GET, HEAD")
        response = view(request, *args, **kwargs)
        if isinstance(response, HttpResponseNotAllowed):
            return method_not_allowed(request, response["Allow"])
        return response

    # API clients send a bearer token, not a form's CSRF token (ninja's views are exempt).
    answer.csrf_exempt = True
    return answer


api = PerfcaseAPI(
    parser=ObjectBodyParser(),
    title="Perfcase API",
    version="1",
    description=(
        "Investigations of 'A is slower than B'. Authenticate with "
        "`POST /api/auth/token` and send `Authorization: Bearer <token>`."
    ),
    auth=BearerToken(),
    # Every write is limited; the costly operations name their limits themselves (EXPENSIVE).
    throttle=[WRITES],
    urls_namespace="api",
)


def _error(request, status: int, detail: str, errors: list[dict] | None = None):
    body = {"detail": detail}
    if errors is not None:
        body["errors"] = errors
    return api.create_response(request, body, status=status)


INPUT_LOCATIONS = ("body", "query", "path", "form", "file", "header", "cookie")


# The tags pydantic puts in a location for a member of a union (a field typed `Text | NotNull`
# fails as "function-after[_no_nul(), str]" and as "none"): not part of the field's name.
UNION_TAG = re.compile(r"^(?:[a-z-]+\[.*\]|none|int|float|str|bool)\Z")


@api.exception_handler(InputError)
def _input_error(request, exc: InputError):
    errors, named = [], set()
    for item in exc.errors:
        # loc is ("body", "payload", "title"), ("query", "limit") or ("file", "file"):
        # name the field only, without where it came from or the schema parameter.
        loc = [str(part) for part in item.get("loc", ())]
        if loc and loc[0] in INPUT_LOCATIONS:
            loc = loc[1:]
        if loc and loc[0] in ("payload", "filters"):
            loc = loc[1:]
        tagged = len(loc) > 1 and UNION_TAG.fullmatch(loc[-1])
        if tagged:
            loc = loc[:-1]
        field = ".".join(loc) or None
        if tagged and field in named:
            continue  # one message per field: the first member's
        named.add(field)
        errors.append({"field": field, "message": item.get("msg", _("Invalid value."))})
    return _error(request, 422, _("The request is not valid."), errors)


@api.exception_handler(ValidationError)
def _rule_error(request, exc: ValidationError):
    if hasattr(exc, "error_dict"):
        errors = [
            {"field": None if field == "__all__" else field, "message": message}
            for field, messages in exc.message_dict.items()
            for message in messages
        ]
    else:
        errors = [{"field": None, "message": message} for message in exc.messages]
    return _error(
        request,
        400,
        errors[0]["message"] if len(errors) == 1 else _("The request is not valid."),
        errors,
    )


@api.exception_handler(PermissionDenied)
def _forbidden(request, exc: PermissionDenied):
    return _error(request, 403, str(exc) or _("You may not do this."))


@api.exception_handler(Http404)
def _not_found(request, exc: Http404):
    return _error(request, 404, _("Not found."))


@api.exception_handler(HttpError)
def _http_error(request, exc: HttpError):
    detail = str(exc)
    if detail.startswith("Cannot parse request body"):
        detail = _("The body must be a JSON object (send Content-Type: application/json).")
    return _error(request, exc.status_code, detail, [{"field": None, "message": detail}])


@api.exception_handler(Throttled)
def _too_many(request, exc: Throttled):
    # ninja adds the Retry-After header to this answer.
    seconds = int(exc.wait or 1)
    detail = ngettext(
        "Too many requests: try again in %(seconds)s second.",
        "Too many requests: try again in %(seconds)s seconds.",
        seconds,
    ) % {"seconds": seconds}
    return _error(request, 429, detail, [{"field": None, "message": detail}])


@api.exception_handler(CollectorError)
def _remote_error(request, exc: CollectorError):
    # A host set up incompletely here is the caller's to fix (400); a host that fails to
    # answer is a gateway error (502). Both say what to do.
    return _error(request, 400 if exc.settings_fault else 502, translate(exc.phrase))


@api.exception_handler(AuthenticationError)
def _unauthorised(request, exc: AuthenticationError):
    return _error(
        request,
        401,
        _("Authenticate: send 'Authorization: Bearer <token>' (POST /api/auth/token)."),
    )


from investigations.api import (  # noqa: E402
    accounts,
    diagnoses,
    evidence,
    hypotheses,
    inventory,
    investigations,
    knowledge,
    method,
    postmortem,
    similar,
)
from investigations.api.imports import imports_router  # noqa: E402
from investigations.kinds import kinds  # noqa: E402

api.add_router("", accounts.router)
api.add_router("", investigations.router)
api.add_router("", inventory.router)
api.add_router("", evidence.router)
api.add_router("", method.router)
api.add_router("", diagnoses.router)
api.add_router("", knowledge.router)
api.add_router("", similar.router)
api.add_router("", hypotheses.router)
api.add_router("", postmortem.router)
# Each registered evidence kind's own endpoints; its API module registers its importers.
for kind in kinds():
    if kind.router is not None:
        api.add_router("", kind.router())
# Last: every kind above has registered the formats it imports.
api.add_router("", imports_router())


def method_not_allowed(request: HttpRequest, allowed: str):
    """A method a known API path does not answer: a JSON 405 naming those it does (also in
    the Allow header), like the API's other errors."""
    allowed = ", ".join(sorted(method.strip() for method in allowed.split(",")))
    detail = _("%(method)s is not allowed on this path: use %(allowed)s.") % {
        "method": request.method,
        "allowed": allowed,
    }
    response = _error(request, 405, detail, [{"field": None, "message": detail}])
    response["Allow"] = allowed
    return response


@csrf_exempt
def api_not_found(request: HttpRequest, *args, **kwargs):
    """A path under /api/ that no endpoint has: a JSON 404 like the API's others, for every
    method. Exempt from CSRF (which would answer a POST with an HTML 403 page): it changes
    nothing, and API clients send a bearer token, not a form's CSRF token."""
    return _error(
        request,
        404,
        _("No such API path: see /api/docs for the endpoints."),
        [{"field": None, "message": _("No such API path.")}],
    )
