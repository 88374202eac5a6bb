"""Evidence made elsewhere: one endpoint, `POST /api/investigations/{id}/imports`, and each
kind handles its own formats.

A kind registers its importer beside its API (`@importer(*formats, out=Schema)`): a function
`(*, request, investigation, side, format, files, options) -> body` (files are the uploads,
unread; options the endpoint's optional fields). The endpoint is built once every kind has
registered (`imports_router()`, called by api/root.py), so that its schema lists every format
and every kind's answer.
"""

from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from ninja import Field, File, Form, Router, Schema, Status
from ninja.files import UploadedFile

from investigations.access import investigation_for_user
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id, NotNull, Text
from investigations.choices import Role

ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class SkipReasonOut(Schema):
    reason: str
    count: int


class ImportReadOut(Schema):
    """What an importer found in one file (collectors.filekind.ReadReport)."""

    file: str
    format: str
    unit: str = Field(description="what was counted: samples, stacks, requests or results")
    read: int = Field(description="how many were read")
    skipped: int = Field(description="how many were left out")
    reasons: list[SkipReasonOut] = Field(description="why they were left out, with counts")
    examples: list[str] = Field(description="the first few left out, 'line N: ...'")


def read_out(reports) -> list[dict]:
    return [report.as_dict() for report in reports or ()]


@dataclass(frozen=True)
class Importer:
    formats: tuple[str, ...]
    out: type  # the schema of what comes back
    handle: Callable
    summary: str  # what comes back, for the endpoint's description


IMPORTERS: dict[str, Importer] = {}


def importer(*formats: str, out: type, summary: str):
    """Register the decorated function as the importer of these formats."""

    def register(handle: Callable) -> Callable:
        for name in formats:
            IMPORTERS[name] = Importer(formats, out, handle, summary)
        return handle

    return register


def imports_router() -> Router:
    router = Router(tags=["imports"])
    kinds = list(dict.fromkeys(IMPORTERS.values()))
    answers = tuple(dict.fromkeys(kind.out for kind in kinds))

    def imports_create(
        request,
        investigation_id: Id,
        side: Form[Text],
        format: Form[Text],
        file: File[list[UploadedFile]],
        # A form has no null: these are left out or sent.
        ladder: Form[Id | NotNull] = None,
        load: Form[float | NotNull] = None,
        role: Form[Text | NotNull] = None,
    ):
        investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
        kind = IMPORTERS.get(format)
        if kind is None:
            raise ValidationError(
                {"format": _("Choose one of: %(choices)s.") % {"choices": ", ".join(IMPORTERS)}}
            )
        body = kind.handle(
            request=request,
            investigation=investigation,
            side=side,
            format=format,
            files=file,
            options={"ladder": ladder, "load": load, "role": role or ""},
        )
        return Status(201, body)

    imports_create.__doc__ = "\n\n".join(
        [
            "Evidence made elsewhere, onto a side. Multipart: side (a or b), format, file "
            "(repeat it for several where the format allows); optional: ladder and load "
            "(load results only), role (baseline results)."
        ]
        + [f"{', '.join(kind.formats)}: {kind.summary}" for kind in kinds]
    )
    router.post(
        "/investigations/{investigation_id}/imports",
        response={201: Union[answers], **ERRORS},  # noqa: UP007 (a tuple of types)
        throttle=EXPENSIVE,
        # At least one file: none is refused as a missing field.
        openapi_extra={
            "requestBody": {
                "content": {
                    "multipart/form-data": {"schema": {"properties": {"file": {"minItems": 1}}}}
                }
            }
        },
    )(imports_create)
    return router
