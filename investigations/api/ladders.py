"""Ladder load tests and result imports."""

import math
from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Literal

from django.core.exceptions import ValidationError
from django.http import Http404
from django.utils.translation import gettext as _
from ninja import Field, Query, Router, Schema, Status
from pydantic import BeforeValidator, StrictInt

from investigations.access import investigation_for_user, ladder_for_user
from investigations.analysis.ladder_compare import VERDICTS
from investigations.api.imports import ImportReadOut, importer, read_out
from investigations.api.schemas import ErrorOut, Id, one_of, stated
from investigations.choices import (
    RATE_TOOLS,
    ImportFormat,
    LadderStatus,
    LoadKind,
    LoadTool,
    Role,
)
from investigations.models import Ladder
from investigations.phrases import stored_text
from investigations.selectors import ladder_get, ladder_points, ladder_sides
from investigations.selectors.captures import ladder_captures
from investigations.selectors.ladder_compare import ladder_comparison, ladders_in_order
from investigations.selectors.profiles import ladder_profiles
from investigations.services.ladder_imports import ladder_import, ladder_uploads_read
from investigations.services.ladder_reruns import LadderStillRunning, ladder_rerun
from investigations.services.ladder_results import ladder_analysis
from investigations.services.ladders import MAX_LOAD, MAX_STEPS, ladder_cancel, ladder_request

router = Router(tags=["ladders"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


def _bounds(**rules) -> dict:
    # The bounds ladder_request holds (a 400 naming the field, as it always was), stated.
    return {"json_schema_extra": rules}


# The URLs validate_url (collectors/loadrun.py) takes, or most of them: http(s), a host name
# of DNS labels, a port, a path of URL characters. The rest are refused with a 400 naming
# the field.
LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
URL_PATTERN = (
    f"^https?://{LABEL}(?:[.]{LABEL}){{0,2}}(?::[1-9][0-9]{{0,3}})?"
    "(?:/[A-Za-z0-9._~!$&()*+,;=:@%/?#-]*)?$"
)
Url = stated(pattern=URL_PATTERN)


def _whole(value):
    # JSON Schema's integer holds 100.0 too; strings and booleans stay refused.
    return int(value) if isinstance(value, float) and value.is_integer() else value


Load = Annotated[StrictInt, BeforeValidator(_whole), Field(**_bounds(minimum=1, maximum=MAX_LOAD))]


class LadderIn(Schema):
    side_a_url: Url
    side_b_url: Url
    steps: list[Load] = Field(
        description="loads in order, each higher than the one before, e.g. [10, 20, 50, 100]",
        **_bounds(minItems=1, maxItems=MAX_STEPS),
    )
    step_seconds: int = Field(30, **_bounds(minimum=1, maximum=600))
    warmup_seconds: int = Field(5, **_bounds(minimum=0, maximum=300))
    tool: LoadTool = LoadTool.WRK
    load_kind: LoadKind = Field(
        LoadKind.CONCURRENCY, description="concurrency, or rate (requests/s; hey and k6)"
    )
    stop_error_rate: float = Field(
        0.05,
        description="a step above this share of errors ends its side",
        **_bounds(exclusiveMinimum=0, maximum=1),
    )
    stop_p99_ms: Annotated[float, Field(**_bounds(exclusiveMinimum=0))] | None = None
    margin: float = Field(
        0.2,
        description="the sides differ beyond this share",
        **_bounds(exclusiveMinimum=0, exclusiveMaximum=1),
    )

    # Only some tools hold a request rate.
    model_config = {
        "json_schema_extra": {
            "if": {
                "properties": {"load_kind": {"const": LoadKind.RATE.value}},
                "required": ["load_kind"],
            },
            "then": {
                "properties": {"tool": {"enum": [tool.value for tool in RATE_TOOLS]}},
                "required": ["tool"],
            },
        }
    }


class StepOut(Schema):
    side: str
    step: int
    load: float
    load_kind: str
    started_at: datetime | None
    planned_at: datetime | None
    duration_s: float | None
    requests: int
    rps: float
    transfer_bytes_per_s: float | None
    latency_avg_ms: float | None
    latency_p50_ms: float | None
    latency_p75_ms: float | None
    latency_p90_ms: float | None
    latency_p99_ms: float | None
    latency_max_ms: float | None
    errors: int
    errors_by_kind: dict
    cpu_user: float | None
    cpu_system: float | None
    cpu_steal: float | None
    busiest_cpu: dict | None = Field(
        description="the busiest single CPU of the service hosts (mpstat): host, cpu, busy %"
    )
    load_generator_busy: float | None = Field(
        None,
        description="how busy the side's load generator's CPUs were over the step (100 - "
        "vmstat's idle, %); 90 or more: it was saturated",
    )


class LadderSideOut(Schema):
    side: str
    status: one_of(LadderStatus)
    load_generator: str | None
    url: str
    current_step: int
    breaking_step: int | None
    breaking_reason: str
    error: str


class LadderOut(Schema):
    id: int
    investigation: int
    status: one_of(LadderStatus)
    tool: str
    load_kind: str
    steps: list[float]
    step_seconds: int
    knees: dict
    divergence_step: int | None
    divergence: str
    sides: list[LadderSideOut]
    results: list[StepOut]
    profiles: list[dict] = Field(
        [], description="CPU profiles taken during its steps: {id, step, side, host}"
    )
    captures: list[dict] = Field(
        [], description="packet captures taken during its steps: {id, step, side, host}"
    )
    created_at: datetime
    finished_at: datetime | None
    read: list[ImportReadOut] = Field(
        [], description="after an import: each file's requests read and what was skipped"
    )
    rerun_of: int | None = Field(
        None, description="the ladder this one runs again with the same settings, if any"
    )


def _taken_during(rows) -> list[dict]:
    return [{"id": r.pk, "step": r.step, "side": r.side.key, "host": r.host_id} for r in rows]


def ladder_out(ladder: Ladder) -> dict:
    sides = ladder_sides(ladder=ladder)
    analysis = ladder.analysis or ladder_analysis(ladder=ladder, points=ladder_points(sides))
    results = []
    for side in sides:
        for step in side.steps.all():
            latency = step.latency_ms
            results.append(
                {
                    "side": side.side.key,
                    "step": step.index,
                    "load": step.load,
                    "load_kind": step.load_kind,
                    "started_at": step.started_at,
                    "planned_at": step.planned_at,
                    "duration_s": step.duration_s,
                    "requests": step.requests,
                    "rps": step.rps,
                    "transfer_bytes_per_s": step.transfer_bytes_per_s,
                    **{
                        f"latency_{k}_ms": latency.get(k)
                        for k in ("avg", "p50", "p75", "p90", "p99", "max")
                    },
                    "errors": step.error_count,
                    "errors_by_kind": step.errors,
                    "cpu_user": step.cpu.get("us"),
                    "cpu_system": step.cpu.get("sy"),
                    "cpu_steal": step.cpu.get("st"),
                    "busiest_cpu": step.cpu.get("busiest_cpu"),
                    "load_generator_busy": (step.cpu.get("generator") or {}).get("busy"),
                }
            )
    return {
        "id": ladder.pk,
        "investigation": ladder.investigation_id,
        "status": ladder.status,
        "tool": ladder.tool,
        "load_kind": ladder.load_kind,
        "steps": ladder.steps,
        "step_seconds": ladder.step_seconds,
        "knees": {
            side: {
                "index": knee.get("index"),
                "load": knee.get("load"),
                "reason": stored_text(knee, "reason"),
            }
            for side, knee in analysis.get("knees", {}).items()
        },
        "divergence_step": analysis.get("divergence", {}).get("index"),
        "divergence": stored_text(analysis.get("divergence", {}), "reason"),
        "sides": [
            {
                "side": side.side.key,
                "status": side.status,
                "load_generator": side.load_generator.name if side.load_generator else None,
                "url": side.url,
                "current_step": side.current_step,
                "breaking_step": side.breaking_step,
                "breaking_reason": stored_text(side, "breaking_reason"),
                "error": stored_text(side, "error"),
            }
            for side in sides
        ],
        "results": results,
        "profiles": _taken_during(ladder_profiles(ladder=ladder)),
        "captures": _taken_during(ladder_captures(ladder=ladder)),
        "created_at": ladder.created_at,
        "finished_at": ladder.finished_at,
        "rerun_of": ladder.rerun_of_id,
    }


@router.post("/investigations/{investigation_id}/ladders", response={201: LadderOut, **ERRORS})
def ladders_create(request, investigation_id: Id, payload: LadderIn):
    """Start a ladder on both sides' load generators (role load_generator)."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    ladder = ladder_request(investigation=investigation, user=request.user, **payload.dict())
    return Status(201, ladder_out(ladder))


@router.get("/ladders/{ladder_id}", response={200: LadderOut, **ERRORS})
def ladders_get(request, ladder_id: Id):
    """Status, each side's knee, the divergence step and every step's results."""
    return ladder_out(ladder_for_user(request.user, ladder_id))


@router.post("/ladders/{ladder_id}/cancel", response={200: LadderOut, **ERRORS})
def ladders_cancel(request, ladder_id: Id):
    """Stop both sides: their load tools and samplers are killed."""
    ladder = ladder_cancel(
        ladder=ladder_for_user(request.user, ladder_id, Role.RESPONDER), user=request.user
    )
    return ladder_out(ladder)


@router.post("/ladders/{ladder_id}/rerun", response={201: LadderOut, 409: ErrorOut, **ERRORS})
def ladders_rerun(request, ladder_id: Id):
    """Run the ladder again with the same settings on the same hosts (to verify a fix): the
    new ladder, its `rerun_of` this one. 409 while this one still runs; 400 for imported
    results, which have no run settings."""
    ladder = ladder_for_user(request.user, ladder_id, Role.RESPONDER)
    try:
        rerun = ladder_rerun(ladder=ladder, user=request.user)
    except LadderStillRunning as error:
        message = " ".join(error.messages)
        return Status(409, {"detail": message, "errors": [{"field": "ladder", "message": message}]})
    return Status(201, ladder_out(rerun))


class LadderCompareStepOut(Schema):
    load: float
    a_before: float | None = Field(description="side A's requests/s in the earlier run")
    a_after: float | None = Field(description="side A's requests/s in the later run")
    b_before: float | None
    b_after: float | None
    p99_a_before: float | None = Field(description="side A's p99 (ms) in the earlier run")
    p99_a_after: float | None
    p99_b_before: float | None
    p99_b_after: float | None
    gap_before: float | None = Field(
        description="how far apart the sides are in the earlier run at this load: the larger "
        "over the smaller, minus one, of requests/s or p99, whichever is further apart"
    )
    gap_after: float | None


class LadderCompareOut(Schema):
    before: int = Field(description="the earlier ladder (created first)")
    after: int = Field(description="the later ladder")
    margin: float
    load: float | None = Field(
        description="where the runs are compared: the highest load both sides hold in both"
    )
    steps: list[LadderCompareStepOut]
    gap_before: float | None = Field(
        description="the sides' gap at `load` in the earlier run (0.5 = 50 %); null when a "
        "side did nothing there or no load compares"
    )
    gap_after: float | None
    verdict: Literal[VERDICTS] | None = Field(
        description="closed, narrowed, unchanged or wider, by the earlier ladder's margin; null "
        "when no load has results from both sides in both runs"
    )
    reason: str


class CompareWith(Schema):
    with_: Id = Field(alias="with", description="the other ladder's id")


def _finite(gap: float | None) -> float | None:
    return None if gap is None or math.isinf(gap) else gap


@router.get("/ladders/{ladder_id}/compare", response={200: LadderCompareOut, **ERRORS})
def ladders_compare(request, ladder_id: Id, filters: Query[CompareWith]):
    """This ladder against another of the same case, load by load: each side's requests/s
    before (the ladder created first) and after, the gap between the sides in each, and
    whether the gap closed, narrowed, stayed or widened, by the ladder's margin."""
    ladder = ladder_for_user(request.user, ladder_id)
    other = ladder_for_user(request.user, filters.with_)
    if other.investigation_id != ladder.investigation_id:
        raise Http404
    if other.pk == ladder.pk:
        raise ValidationError({"with": _("Compare the ladder with another ladder.")})
    before, after = ladders_in_order(ladder, other)
    comparison, _points = ladder_comparison(before=before, after=after)
    return {
        "before": before.pk,
        "after": after.pk,
        "margin": comparison.margin,
        "load": comparison.load,
        "steps": [
            asdict(step)
            | {"gap_before": _finite(step.gap_before), "gap_after": _finite(step.gap_after)}
            for step in comparison.steps
        ],
        "gap_before": _finite(comparison.gap_before),
        "gap_after": _finite(comparison.gap_after),
        "verdict": comparison.verdict,
        "reason": stored_text(comparison, "reason"),
    }


@importer(
    *ImportFormat.values,
    out=LadderOut,
    summary="load results, a ladder comes back (`ladder`: add a side or more steps to it; "
    "`load`: for hey (-c) and wrk2 (-R) output without its command line, and a k6 JSON "
    "summary without a vus metric).",
)
def ladder_results_import(*, request, investigation, side, format, files, options) -> dict:
    onto = None
    if options["ladder"] is not None:
        onto = ladder_get(investigation=investigation, ladder_id=options["ladder"])
        if onto is None:
            raise ValidationError({"ladder": _("No such ladder in this investigation.")})
    created = ladder_import(
        investigation=investigation,
        user=request.user,
        side_key=side,
        format=format,
        files=ladder_uploads_read(files),
        ladder=onto,
        load=options["load"],
    )
    return ladder_out(created) | {"read": read_out(getattr(created, "read_report", None))}
