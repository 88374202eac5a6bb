"""Diagnosis runs: the method's stages on both sides in one request."""

from datetime import datetime

from ninja import Field, Router, Schema, Status

from collectors.profile import MAX_SECONDS as MAX_PROFILE_SECONDS
from investigations.access import diagnosis_for_user, investigation_for_user
from investigations.api.hypotheses import HypothesisOut, hypothesis_item
from investigations.api.ladders import Load, Url
from investigations.api.schemas import ErrorOut, Id, one_of
from investigations.choices import LoadTool, Role
from investigations.models import Diagnosis
from investigations.models.diagnoses import DiagnosisStage, DiagnosisStatus, StageStatus
from investigations.phrases import stored_text
from investigations.selectors.diagnoses import diagnosis_progress, diagnosis_read, stage_out
from investigations.selectors.hypotheses import case_hypotheses
from investigations.services.diagnoses import (
    DEFAULT_BUDGET_SECONDS,
    DEFAULT_SECONDS,
    MAX_BUDGET_SECONDS,
    MIN_BUDGET_SECONDS,
    diagnosis_cancel,
    diagnosis_request,
)
from investigations.services.ladders import MAX_STEPS

router = Router(tags=["diagnoses"])
# A command name as collectors.profile.validate_process takes it, or empty: found on the host.
PROCESS_PATTERN = "^(|[A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,14})$"
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class DiagnosisLoadIn(Schema):
    """The ladder's load, as a ladder takes it; each field left out comes from the case's
    last ladder."""

    side_a_url: Url | None = None
    side_b_url: Url | None = None
    tool: LoadTool | None = None
    steps: list[Load] | None = Field(None, json_schema_extra={"maxItems": MAX_STEPS})
    step_seconds: int | None = Field(None, json_schema_extra={"minimum": 1, "maximum": 600})
    warmup_seconds: int | None = Field(None, json_schema_extra={"minimum": 0, "maximum": 300})


def _baseline_schema(schema: dict) -> None:
    # The baseline collection's own parameters, from its form (kinds/schema.py), made when
    # the schema is (the kinds are registered by then).
    from investigations.kinds.schema import form_schema
    from investigations.runs import plan_for

    words = {key: schema[key] for key in ("description", "default") if key in schema}
    schema.clear()
    schema.update(
        anyOf=[form_schema(plan_for("baseline").parameters_form), {"type": "null"}], **words
    )


class DiagnosisIn(Schema):
    load: DiagnosisLoadIn | None = Field(
        None,
        description="default: the case's last ladder's settings; none at all: the ladder "
        "stage is skipped",
    )
    process_a: str = Field(
        "",
        description="the process to profile on side A's service hosts (a command name); "
        "default: the one listening on side A's URL port, found on the host",
        json_schema_extra={"pattern": PROCESS_PATTERN},
    )
    process_b: str = Field(
        "", description="the same for side B", json_schema_extra={"pattern": PROCESS_PATTERN}
    )
    seconds: int = Field(
        DEFAULT_SECONDS,
        description="how long the knee load is held while sampling, profiling and capturing",
        json_schema_extra={"minimum": 1, "maximum": MAX_PROFILE_SECONDS},
    )
    stages: list[one_of(DiagnosisStage)] | None = Field(
        None,
        description="a subset of facts, baseline, ladder, at_knee; default: all",
        json_schema_extra={"minItems": 1},
    )
    budget_seconds: int = Field(
        DEFAULT_BUDGET_SECONDS,
        description="stages that would not fit are cut, and named",
        json_schema_extra={"minimum": MIN_BUDGET_SECONDS, "maximum": MAX_BUDGET_SECONDS},
    )
    baseline: dict | None = Field(
        None,
        description="the baseline pack's parameters (suite, repeat, seconds, ...), as a "
        "baseline collection takes them; default: every benchmark once for 3 s",
        json_schema_extra=_baseline_schema,
    )


class StageOut(Schema):
    name: one_of(DiagnosisStage)
    status: one_of(StageStatus)
    reason: str
    collections: list[int]
    ladder: int | None
    cut: bool = Field(description="skipped because it would not fit the budget")
    estimate_seconds: int
    seconds_left: int
    started_at: datetime | None
    ended_at: datetime | None


class DiagnosisOut(Schema):
    id: int
    investigation: int
    status: one_of(DiagnosisStatus)
    stages: list[StageOut]
    progress: int = Field(description="percent done, from the stages' estimates")
    seconds_left: int
    parameters: dict
    error: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    hypotheses: list[HypothesisOut] | None = Field(
        description="once the run has completed: the case's likely causes ranked from all its "
        "evidence, as GET /api/investigations/{id}/hypotheses gives them; null before"
    )


def diagnosis_out(diagnosis: Diagnosis) -> dict:
    diagnosis = diagnosis_read(diagnosis)
    percent, left = diagnosis_progress(diagnosis)
    return {
        "id": diagnosis.pk,
        "investigation": diagnosis.investigation_id,
        "status": diagnosis.status,
        "stages": [stage_out(stage) for stage in diagnosis.stages],
        "progress": percent,
        "seconds_left": left,
        "parameters": diagnosis.parameters,
        "error": stored_text(diagnosis.job, "error"),
        "created_at": diagnosis.created_at,
        "started_at": diagnosis.started_at,
        "finished_at": diagnosis.finished_at,
        "hypotheses": (
            [
                hypothesis_item(h)
                for h in case_hypotheses(investigation=diagnosis.investigation)["hypotheses"]
            ]
            if diagnosis.status == DiagnosisStatus.COMPLETED
            else None
        ),
    }


@router.post(
    "/investigations/{investigation_id}/diagnoses",
    response={202: DiagnosisOut, **ERRORS},
    by_alias=True,
)
def diagnoses_create(request, investigation_id: Id, payload: DiagnosisIn):
    """Start a diagnosis: facts and the baseline pack on every pair, the ladder, then at its
    knee sampling, a CPU profile and a packet capture on both sides together."""
    investigation = investigation_for_user(request.user, investigation_id, Role.RESPONDER)
    body = payload.dict()
    load = body.pop("load")
    diagnosis = diagnosis_request(
        investigation=investigation,
        user=request.user,
        load={k: v for k, v in (load or {}).items() if v is not None} or None,
        **body,
    )
    return Status(202, diagnosis_out(diagnosis))


@router.get("/diagnoses/{diagnosis_id}", response={200: DiagnosisOut, **ERRORS}, by_alias=True)
def diagnoses_get(request, diagnosis_id: Id):
    """The run's status, each stage with what it started, progress and time left."""
    return diagnosis_out(diagnosis_for_user(request.user, diagnosis_id))


@router.post(
    "/diagnoses/{diagnosis_id}/cancel", response={200: DiagnosisOut, **ERRORS}, by_alias=True
)
def diagnoses_cancel(request, diagnosis_id: Id):
    """Stop the run and everything it started: its collections and ladders end cancelled,
    their tools stopped on the hosts."""
    diagnosis = diagnosis_cancel(
        diagnosis=diagnosis_for_user(request.user, diagnosis_id, Role.RESPONDER),
        user=request.user,
    )
    return diagnosis_out(diagnosis)
