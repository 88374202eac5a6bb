"""Diagnosis runs: the method's stages on both sides in one request (request, cancel, and
what ends with a run the sweep failed). The stages themselves: services/diagnosis_stages.py.
"""

from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.baseline.suite import benchmarks_of
from collectors.phrase import Phrase
from collectors.profile import MAX_SECONDS as MAX_PROFILE_SECONDS
from collectors.profile import validate_process
from investigations import jobs
from investigations.choices import LoadTool
from investigations.models import Diagnosis, Investigation
from investigations.models.diagnoses import DiagnosisStage, DiagnosisStatus, StageStatus
from investigations.phrases import message_of
from investigations.runs import plan_for
from investigations.selectors.diagnoses import DIAGNOSIS_JOB, last_ladder_settings
from investigations.services.diagnosis_stages import (
    ACTIVE,
    KEEP_ALIVE_SECONDS,
    NO_LOAD,
    diagnosis_log,
    diagnosis_stop,
    stage_cut,
    stage_label,
    stage_set,
)
from investigations.services.ladders import (
    SLOT_MARGIN_SECONDS,
    START_DELAY_SECONDS,
    hold_start_seconds,
    ladder_settings_check,
)

STAGES = [stage.value for stage in DiagnosisStage]
DEFAULT_SECONDS = 20
DEFAULT_BUDGET_SECONDS = 900
MIN_BUDGET_SECONDS, MAX_BUDGET_SECONDS = 30, 4 * 3600
# Beyond what it runs on the hosts: connecting, storing, the next advance's look.
STAGE_MARGIN_SECONDS = 15
# A diagnosis's baseline pack, unless told otherwise: every benchmark once, briefly, so that
# a run with the default budget keeps it.
DEFAULT_BASELINE = {"repeat": 1, "seconds": 3}
# After the knee is held: perf script, folding, the capture's analysis.
AT_KNEE_AFTER_SECONDS = 30


# The ladder settings a diagnosis's load may carry (its own or its last ladder's), besides
# the URLs and steps, checked as a ladder checks them.
LADDER_CHECKED = (
    "step_seconds",
    "warmup_seconds",
    "tool",
    "load_kind",
    "stop_error_rate",
    "stop_p99_ms",
    "margin",
)


def _load(load: dict | None, investigation) -> tuple[dict | None, str, dict]:
    """(the load settings, where they came from, errors): the given fields over the last
    ladder's settings."""
    previous = last_ladder_settings(investigation=investigation)
    given = {k: v for k, v in (load or {}).items() if v not in (None, "", [])}
    if not given and previous is None:
        return None, "", {}
    settings = {**(previous or {}), **given}
    settings.setdefault("step_seconds", 30)
    settings.setdefault("warmup_seconds", 5)
    settings.setdefault("tool", LoadTool.WRK)
    missing = {
        key: _("Give this side's URL (no earlier ladder of this case names one).")
        for key in ("side_a_url", "side_b_url")
        if not settings.get(key)
    }
    urls, errors = ladder_settings_check(
        **{key: settings.get(key) or "" for key in ("side_a_url", "side_b_url")},
        **{key: settings[key] for key in LADDER_CHECKED if key in settings},
        steps=settings.get("steps") or [],
    )
    errors.update(missing)
    settings.update({f"side_{side}_url": url for side, url in urls.items()})
    source = "request" if given else "last_ladder"
    return settings, source, errors


def _estimate(name: str, *, load: dict | None, seconds: int, baseline: dict) -> int:
    """About how long the stage runs, for the budget and the time left."""
    if name == DiagnosisStage.FACTS:
        return plan_for(name).expected_seconds(plan_for(name).clean({}))
    if name == DiagnosisStage.BASELINE:
        # What the benchmarks take on a host, not the pack's upper bound (its time limit).
        parameters = plan_for(name).clean(dict(baseline))
        each = {"fio": 4 * parameters["seconds"] + 15, "fixed": 10}
        return sum(
            each.get(benchmark.runs_for, parameters["seconds"] + 3) * parameters["repeat"]
            for benchmark in benchmarks_of(parameters["suite"])
        )
    warmup = (load or {}).get("warmup_seconds", 5)
    if name == DiagnosisStage.LADDER:
        steps = len((load or {}).get("steps") or [])
        slot = warmup + (load or {}).get("step_seconds", 30) + SLOT_MARGIN_SECONDS
        return START_DELAY_SECONDS + steps * slot
    return hold_start_seconds() + warmup + seconds + 2 + SLOT_MARGIN_SECONDS + AT_KNEE_AFTER_SECONDS


def _check(value, low: int, high: int, field: str, errors: dict, message) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        errors[field] = message


@transaction.atomic
def diagnosis_request(
    *,
    investigation: Investigation,
    user,
    load: dict | None = None,
    process_a: str = "",
    process_b: str = "",
    seconds: int | None = None,
    stages: list[str] | None = None,
    budget_seconds: int | None = None,
    baseline: dict | None = None,
) -> Diagnosis:
    """Start a diagnosis: its stages planned (and those that would not fit the budget cut),
    logged, and its first advance queued."""
    seconds = DEFAULT_SECONDS if seconds is None else seconds
    budget_seconds = DEFAULT_BUDGET_SECONDS if budget_seconds is None else budget_seconds
    errors: dict = {}
    _check(
        seconds,
        1,
        MAX_PROFILE_SECONDS,
        "seconds",
        errors,
        _("Hold the knee 1 to %(max)s seconds.") % {"max": MAX_PROFILE_SECONDS},
    )
    _check(
        budget_seconds,
        MIN_BUDGET_SECONDS,
        MAX_BUDGET_SECONDS,
        "budget_seconds",
        errors,
        _("The budget is %(low)s to %(high)s seconds.")
        % {"low": MIN_BUDGET_SECONDS, "high": MAX_BUDGET_SECONDS},
    )
    chosen = STAGES if stages is None else list(dict.fromkeys(stages))
    unknown = [s for s in chosen if s not in STAGES]
    if unknown or not chosen:
        errors["stages"] = _("Choose among: %(choices)s.") % {"choices": ", ".join(STAGES)}
    processes = {}
    for key, value in (("process_a", process_a), ("process_b", process_b)):
        value = (value or "").strip()
        try:
            processes[key] = validate_process(value) if value else ""
        except ValueError as error:
            errors[key] = message_of(error)
    settings, source, load_errors = _load(load, investigation)
    errors.update(load_errors)
    baseline_parameters = {}
    if DiagnosisStage.BASELINE in chosen:
        form = plan_for("baseline").parameters_form(data={**DEFAULT_BASELINE, **(baseline or {})})
        if not form.is_valid():
            errors["baseline"] = "; ".join(
                f"{name}: {' '.join(messages)}" for name, messages in form.errors.items()
            )
        else:
            baseline_parameters = {**DEFAULT_BASELINE, **(baseline or {})}
    if errors:
        raise ValidationError(errors)
    planned = []
    spent = 0
    for name in STAGES:
        stage = {"name": name, "status": StageStatus.PENDING, "reason": "", "phrases": {}}
        stage.update(collections=[], ladder=None, cut=False)
        stage["estimate_seconds"] = (
            _estimate(name, load=settings, seconds=seconds, baseline=baseline_parameters)
            + STAGE_MARGIN_SECONDS
        )
        if name not in chosen:
            stage["estimate_seconds"] = 0
            stage_set(stage, StageStatus.SKIPPED, Phrase(gettext_noop("Not asked for.")))
        elif name == DiagnosisStage.LADDER and settings is None:
            stage["estimate_seconds"] = 0
            stage_set(stage, StageStatus.SKIPPED, NO_LOAD)
        elif spent + stage["estimate_seconds"] > budget_seconds:
            stage_cut(stage, budget_seconds - spent)
            stage["estimate_seconds"] = 0
        else:
            spent += stage["estimate_seconds"]
        planned.append(stage)
    job = jobs.create(
        DIAGNOSIS_JOB.name,
        status=DiagnosisStatus.QUEUED,
        user=user,
        deadline_at=timezone.now() + timedelta(seconds=KEEP_ALIVE_SECONDS),
    )
    diagnosis = Diagnosis.objects.create(
        investigation=investigation,
        requested_by=user if user is not None and user.is_authenticated else None,
        parameters={
            "load": settings,
            "load_from": source,
            "process_a": processes["process_a"],
            "process_b": processes["process_b"],
            "seconds": seconds,
            "stages": chosen,
            "budget_seconds": budget_seconds,
            "baseline": baseline_parameters,
        },
        stages=planned,
        job=job,
    )
    job.object_id = diagnosis.pk
    job.save(update_fields=["object_id"])
    cut = [s["name"] for s in planned if s["cut"]]
    diagnosis_log(
        diagnosis,
        Phrase(
            gettext_noop("Diagnosis #%(number)s started: %(stages)s"),
            number=diagnosis.pk,
            stages=", ".join(chosen),
        ),
        user=user,
        stages=chosen,
    )
    for name in cut:
        diagnosis_log(
            diagnosis,
            Phrase(
                gettext_noop("Diagnosis #%(number)s: %(stage)s cut to fit the budget"),
                number=diagnosis.pk,
                stage=stage_label(name),
            ),
            stage=name,
            cut=True,
        )
    jobs.enqueue("perfcase.diagnosis_advance", diagnosis.pk, diagnosis.tick)
    return diagnosis


@transaction.atomic
def diagnosis_cancel(*, diagnosis: Diagnosis, user) -> Diagnosis:
    """Stop the run and everything it started (its collections and ladders end cancelled,
    their tools stopped on the hosts)."""
    diagnosis = (
        Diagnosis.objects.select_for_update(of=("self",)).select_related("job").get(pk=diagnosis.pk)
    )
    if diagnosis.job.status not in ACTIVE:
        raise ValidationError(_("This diagnosis has already ended."))
    diagnosis.cancel_requested_at = timezone.now()
    jobs.cancel(diagnosis.job_id)
    diagnosis_stop(
        diagnosis,
        user=user,
        status=StageStatus.CANCELLED,
        reason=Phrase(gettext_noop("Cancelled.")),
    )
    diagnosis.save(update_fields=["stages", "cancel_requested_at"])
    jobs.finish(diagnosis.job_id, status=DiagnosisStatus.CANCELLED, active=ACTIVE)
    diagnosis_log(
        diagnosis,
        Phrase(gettext_noop("Diagnosis #%(number)s cancelled"), number=diagnosis.pk),
        user=user,
    )
    diagnosis.job.refresh_from_db()
    return diagnosis


@jobs.after_overdue(DIAGNOSIS_JOB.name)
def diagnoses_overdue(diagnosis_ids: list[int]) -> None:
    """The sweep failed these runs (their chain of advances was lost): what they started is
    stopped and their stages say so."""
    for diagnosis_id in diagnosis_ids:
        with transaction.atomic():
            diagnosis = (
                Diagnosis.objects.select_for_update(of=("self",))
                .select_related("investigation")
                .filter(pk=diagnosis_id)
                .first()
            )
            if diagnosis is None:
                continue
            diagnosis_stop(
                diagnosis,
                user=None,
                status=StageStatus.FAILED,
                reason=Phrase(gettext_noop("The run stopped: its worker was lost.")),
            )
            diagnosis.save(update_fields=["stages"])
            diagnosis_log(
                diagnosis,
                Phrase(
                    gettext_noop("Diagnosis #%(number)s failed: its worker was lost"),
                    number=diagnosis.pk,
                ),
            )
