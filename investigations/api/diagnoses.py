"""Diagnosis runs: the method's stages on both sides in one request."""

from datetime import datetime

from ninja import Field, Router, Schema, Status

from investigations.access import diagnosis_for_user, investigation_for_user
from investigations.api.ladders import Load, Url
from investigations.api.schemas import ErrorOut, Id, one_of
from investigations.choices import LoadTool, Role
from investigations.models import Diagnosis
from investigations.models.diagnoses import DiagnosisStage, DiagnosisStatus, StageStatus
from investigations.phrases import stored_text
from investigations.selectors.diagnoses import diagnosis_progress, diagnosis_read, stage_out
from investigations.services.diagnoses import (
    DEFAULT_BUDGET_SECONDS,
    DEFAULT_SECONDS,
    diagnosis_cancel,
    diagnosis_request,
)

router = Router(tags=["diagnoses"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


class DiagnosisLoadIn(Schema):
    """The ladder's load, as a ladder takes it; each field left out comes from the case's
    last ladder."""

    side_a_url: Url | None = None
    side_b_url: Url | None = None
    tool: LoadTool | None = None
    steps: list[Load] | None = None
    step_seconds: int | None = Field(None, json_schema_extra={"minimum": 1, "maximum": 600})
    warmup_seconds: int | None = Field(None, json_schema_extra={"minimum": 0, "maximum": 300})


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
    )
    process_b: str = Field("", description="the same for side B")
    seconds: int = Field(
        DEFAULT_SECONDS,
        description="how long the knee load is held while sampling, profiling and capturing",
    )
    stages: list[one_of(DiagnosisStage)] | None = Field(
        None, description="a subset of facts, baseline, ladder, at_knee; default: all"
    )
    budget_seconds: int = Field(
        DEFAULT_BUDGET_SECONDS, description="stages that would not fit are cut, and named"
    )
    baseline: dict | None = Field(
        None,
        description="the baseline pack's parameters (suite, repeat, seconds, ...), as a "
        "baseline collection takes them; default: its defaults",
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
    }


@router.post("/investigations/{investigation_id}/diagnoses", response={202: DiagnosisOut, **ERRORS})
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


@router.get("/diagnoses/{diagnosis_id}", response={200: DiagnosisOut, **ERRORS})
def diagnoses_get(request, diagnosis_id: Id):
    """The run's status, each stage with what it started, progress and time left."""
    return diagnosis_out(diagnosis_for_user(request.user, diagnosis_id))


@router.post("/diagnoses/{diagnosis_id}/cancel", response={200: DiagnosisOut, **ERRORS})
def diagnoses_cancel(request, diagnosis_id: Id):
    """Stop the run and everything it started: its collections and ladders end cancelled,
    their tools stopped on the hosts."""
    diagnosis = diagnosis_cancel(
        diagnosis=diagnosis_for_user(request.user, diagnosis_id, Role.RESPONDER),
        user=request.user,
    )
    return diagnosis_out(diagnosis)
