"""The baseline pack: the table of both sides' medians with a verdict a row, its exports,
and results made elsewhere imported (POST /api/investigations/{id}/imports)."""

from typing import Annotated, Literal

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema
from pydantic import WithJsonSchema

from investigations.access import investigation_for_user
from investigations.analysis.baseline import DEFAULT_MARGIN, NOISY_SPREAD
from investigations.api.imports import ImportReadOut, importer, read_out
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id
from investigations.downloads import baseline_download
from investigations.selectors.baselines import baseline_table
from investigations.services.baselines import baseline_import, baseline_uploads_read

router = Router(tags=["baseline"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
IMPORT_FORMATS = ("fio-json", "iperf3-json", "sysbench-text")


class BaselineItemOut(Schema):
    group: str = Field(description="compute, memory, disk or network")
    benchmark: str
    metric: str
    unit: str
    role: str = Field(description="the hosts' role on their sides; empty for the network rows")
    label: str
    a: float | None = Field(description="side A's median, null where not measured")
    b: float | None
    ratio: float | None = Field(description="A / B")
    verdict: Literal["better", "worse", "about_equal"] | None = Field(
        description="side A against side B, by the metric's direction and the margin; null "
        "where a side has no value or the row is too_noisy"
    )
    higher_is_better: bool
    spread_a: float | None = Field(description="(max - min) / median of A's runs, in percent")
    spread_b: float | None
    status_a: str = Field(description="measured, not_installed, not_measured or failed")
    status_b: str
    note_a: str
    note_b: str
    host_a: str
    host_b: str
    values_a: list[float] = Field(description="every repetition's value")
    values_b: list[float]
    min_a: float | None = Field(description="the lowest of A's repetitions")
    max_a: float | None = Field(description="the highest of A's repetitions")
    min_b: float | None
    max_b: float | None
    cv_a: float | None = Field(
        description="coefficient of variation of A's repetitions (stdev / mean, percent); "
        "null for fewer than two"
    )
    cv_b: float | None
    too_noisy: bool = Field(
        description=f"the repetitions spread wider than {NOISY_SPREAD:g} % of their median "
        "and the gap is within it: no verdict; run the pack with more repetitions"
    )


class BaselineOut(Schema):
    margin: float = Field(description="percent; widened per row to the larger spread")
    items: list[BaselineItemOut]


# The bounds _margin() holds a margin to (refused with a 400 naming it), in the schema.
Margin = Annotated[float, WithJsonSchema({"type": "number", "minimum": 0, "maximum": 1000})]
EXPORT_ANSWER = {
    "responses": {
        200: {
            "description": "The table as a file (format=markdown or format=csv).",
            "content": {
                "text/markdown": {"schema": {"type": "string"}},
                "text/csv": {"schema": {"type": "string"}},
            },
        }
    }
}


def _margin(margin: float) -> float:
    if not 0 <= margin <= 1000:
        raise ValidationError({"margin": _("A margin from 0 to 1000 percent.")})
    return margin


@router.get("/investigations/{investigation_id}/baseline", response={200: BaselineOut, **ERRORS})
def baseline_get(request, investigation_id: Id, margin: Margin = DEFAULT_MARGIN):
    """Each benchmark's newest median on both sides, the ratio A / B and the verdict of A
    against B: better, worse or about_equal."""
    investigation = investigation_for_user(request.user, investigation_id)
    rows = baseline_table(investigation=investigation, margin=_margin(margin))
    return {"margin": margin, "items": [row.as_item() for row in rows]}


@router.get(
    "/investigations/{investigation_id}/baseline/export",
    response={**ERRORS},
    throttle=EXPENSIVE,
    openapi_extra=EXPORT_ANSWER,
)
def baseline_export(
    request,
    investigation_id: Id,
    format: Literal["markdown", "csv"] = "markdown",
    margin: Margin = DEFAULT_MARGIN,
):
    """The table as Markdown (grouped, marked ↑ ↓ ≈) or CSV."""
    investigation = investigation_for_user(request.user, investigation_id)
    return baseline_download(investigation, format, _margin(margin))


class ImportedBaselineOut(Schema):
    imported: int = Field(description="results (metrics) imported")
    read: list[ImportReadOut] = Field(
        [], description="each file's results read and what was skipped, and why"
    )


@importer(
    *IMPORT_FORMATS,
    out=ImportedBaselineOut,
    summary="baseline results (fio --output-format=json, iperf3 -J, sysbench cpu or memory "
    'text), one benchmark a file, an optional role; `{"imported": n}` comes back.',
)
def baselines_import(*, request, investigation, side, format, files, options) -> dict:
    reports = []
    rows = baseline_import(
        investigation=investigation,
        user=request.user,
        side_key=side,
        files=baseline_uploads_read(files),
        role=options.get("role") or "",
        expected=format,
        reports=reports,
    )
    return {"imported": len(rows), "read": read_out(reports)}
