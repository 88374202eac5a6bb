"""Reads of diagnosis runs: their job (overdue work read as failed), their stages with the
time each has left, and the settings a new run starts from."""

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from investigations.choices import NEVER_RAN, OVERDUE_MESSAGE, LadderStatus
from investigations.jobs import JobKind, read_job, register
from investigations.models import Diagnosis, Investigation, Ladder
from investigations.models.diagnoses import ENDED_STAGE_STATUSES, DiagnosisStatus, StageStatus
from investigations.phrases import stored_text

# A diagnosis's work: the advance task that starts each stage and waits for it
# (services/diagnosis_stages.py); its deadline moves on with every advance.
DIAGNOSIS_JOB = register(
    JobKind(
        "diagnosis",
        overdue={
            DiagnosisStatus.QUEUED.value: NEVER_RAN,
            DiagnosisStatus.RUNNING.value: OVERDUE_MESSAGE,
        },
    )
)


def diagnosis_read(diagnosis: Diagnosis) -> Diagnosis:
    """The diagnosis with its job read (overdue: as failed, without writing)."""
    read_job(diagnosis.job, DIAGNOSIS_JOB)
    return diagnosis


def diagnosis_latest(*, investigation: Investigation) -> Diagnosis | None:
    """The case's newest diagnosis, its job loaded and read."""
    diagnosis = investigation.diagnoses.select_related("job").first()
    return diagnosis_read(diagnosis) if diagnosis is not None else None


def _when(value):
    return parse_datetime(value) if isinstance(value, str) else value


def stage_left_seconds(stage: dict, now=None) -> int:
    """About how long the stage still needs: its estimate, less what it has run."""
    if stage["status"] in ENDED_STAGE_STATUSES:
        return 0
    estimate = int(stage.get("estimate_seconds") or 0)
    started = _when(stage.get("started_at"))
    if stage["status"] != StageStatus.RUNNING or started is None:
        return estimate
    ran = ((now or timezone.now()) - started).total_seconds()
    return max(0, int(estimate - ran))


def diagnosis_progress(diagnosis: Diagnosis, now=None) -> tuple[int, int]:
    """(percent done, seconds left), from the stages' estimates."""
    now = now or timezone.now()
    total = sum(int(s.get("estimate_seconds") or 0) for s in diagnosis.stages) or 1
    left = sum(stage_left_seconds(s, now) for s in diagnosis.stages)
    if diagnosis.job.status not in (DiagnosisStatus.QUEUED, DiagnosisStatus.RUNNING):
        return 100, 0
    return min(99, int(100 * (total - left) / total)), left


def stage_out(stage: dict) -> dict:
    """A stage as the API and the page show it, its reason in the reader's language."""
    return {
        "name": stage["name"],
        "status": stage["status"],
        "reason": stored_text(stage, "reason"),
        "collections": list(stage.get("collections") or []),
        "ladder": stage.get("ladder"),
        "cut": bool(stage.get("cut")),
        "estimate_seconds": int(stage.get("estimate_seconds") or 0),
        "seconds_left": stage_left_seconds(stage),
        "started_at": _when(stage.get("started_at")),
        "ended_at": _when(stage.get("ended_at")),
    }


def last_ladder(*, investigation: Investigation) -> Ladder | None:
    """The case's newest ladder that ran here (not imported) with a URL on each side,
    preferring one of more than one step (a knee held again is one step)."""
    ladders = [
        ladder
        for ladder in investigation.ladders.exclude(status=LadderStatus.IMPORTED)
        .prefetch_related("sides__side")
        .order_by("-created_at", "-id")[:20]
        if all(side and side.url for side in ladder.sides_in_order)
    ]
    stepped = [ladder for ladder in ladders if len(ladder.steps) > 1]
    return (stepped or ladders or [None])[0]


def last_ladder_settings(*, investigation: Investigation) -> dict | None:
    """The load settings of the case's last ladder, as a diagnosis takes them, or None."""
    ladder = last_ladder(investigation=investigation)
    if ladder is None:
        return None
    side_a, side_b = ladder.sides_in_order
    return {
        "side_a_url": side_a.url,
        "side_b_url": side_b.url,
        "tool": ladder.tool,
        "steps": [int(s) if float(s).is_integer() else s for s in ladder.steps],
        "step_seconds": ladder.step_seconds,
        "warmup_seconds": ladder.warmup_seconds,
        "load_kind": ladder.load_kind,
        "stop_error_rate": ladder.stop_error_rate,
        "stop_p99_ms": ladder.stop_p99_ms,
        "margin": ladder.margin,
    }


def highest_held_load(*, ladder: Ladder) -> float | None:
    """The highest load of a step both sides ran and held (below their breaking steps)."""
    held = {}
    for side in ladder.sides.select_related("side", "job").prefetch_related("steps"):
        limit = side.breaking_step if side.breaking_step is not None else 10**9
        held[side.side.key] = {
            step.index: step.load for step in side.steps.all() if step.index < limit
        }
    common = set(held.get("a", {})) & set(held.get("b", {}))
    return held["a"][max(common)] if common else None
