"""A diagnosis's stages: starting each one (ordinary collections and ladders of the case),
seeing it end, and the advance that moves the run on (tasks.diagnosis_advance).

The run is a chain of short tasks, not one long one: each advance looks at the running
stage, ends it when its collections and ladder have ended, starts the next, and queues the
next advance a few seconds on. Every advance carries the run's `tick`; the one that runs
moves the tick on, so a redelivered or duplicated task (an older tick) does nothing, and
the job's deadline moves on with each advance, so a chain that dies is failed by the sweep.
"""

import logging
from datetime import datetime, timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_noop

from collectors.errors import CollectorError
from collectors.phrase import Phrase, as_phrase, joined, ngettext_noop
from investigations import jobs
from investigations.choices import (
    ENDED_LADDER_STATUSES,
    CaptureStatus,
    EventKind,
    LadderStatus,
    TargetStatus,
)
from investigations.models import Capture, Collection, Diagnosis, Ladder
from investigations.models.diagnoses import (
    ENDED_STAGE_STATUSES,
    DiagnosisStage,
    DiagnosisStatus,
    StageStatus,
)
from investigations.phrases import stored_text, with_phrases
from investigations.runs.service_process import (
    ProcessNotFound,
)
from investigations.selectors.collections import read_targets
from investigations.selectors.diagnoses import (
    diagnosis_progress,
    stage_left_seconds,
)
from investigations.services.collections import collection_cancel, collection_request
from investigations.services.diagnosis_knee import StageSkipped, service_name, start_at_knee
from investigations.services.ladders import (
    ladder_cancel,
    ladder_request,
)
from investigations.services.timeline import label_phrase, timeline_event_log

logger = logging.getLogger(__name__)

POLL_SECONDS = 2
# Beyond its running stage's own time: how long a run may go without an advance before the
# sweep fails it (its chain of tasks was lost with a worker).
KEEP_ALIVE_SECONDS = 180
# A stage still running this long past its estimate is stopped (its hosts hang, say).
OVERTIME_SECONDS = 300
ACTIVE = (DiagnosisStatus.QUEUED, DiagnosisStatus.RUNNING)


EMPTY_CAPTURE = Phrase(
    gettext_noop(
        "the capture saw no packets (its filter or interface missed the traffic), so it is "
        "not compared"
    )
)
NO_LOAD = Phrase(
    gettext_noop(
        "No load to run: give the sides' URLs and steps (load), or run a ladder on this case "
        "once, and the next diagnosis takes its settings."
    )
)


def diagnosis_log(diagnosis: Diagnosis, summary: Phrase, user=None, **details) -> None:
    timeline_event_log(
        investigation=diagnosis.investigation,
        kind=EventKind.COLLECTION,
        summary=summary,
        author=user,
        details={"diagnosis": diagnosis.pk, **details},
    )


def stage_label(name: str) -> Phrase:
    return label_phrase(DiagnosisStage(name).label)


def stage_set(stage: dict, status: str, reason=None) -> None:
    """The stage -> `status`, with its reason (a Phrase is read in each person's language)."""
    stage["status"] = status
    if reason is not None:
        stage["phrases"] = {}
        stage.update(with_phrases({"reason": as_phrase(reason)}, limits={"reason": 2000}))
    now = timezone.now().isoformat()
    if status == StageStatus.RUNNING:
        stage["started_at"] = now
    elif status in ENDED_STAGE_STATUSES:
        stage["ended_at"] = now


def _refused(error: ValidationError) -> str:
    return " ".join(str(message) for message in error.messages)


# --- starting a stage -------------------------------------------------------------------


def _start_collection(diagnosis, stage, kind, parameters=None):
    collection = collection_request(
        investigation=diagnosis.investigation,
        user=diagnosis.requested_by,
        kind=kind,
        parameters=parameters or {},
    )
    stage["collections"] = [collection.pk]


def _ladder_arguments(load: dict) -> dict:
    fields = ("side_a_url", "side_b_url", "tool", "steps", "step_seconds", "warmup_seconds")
    more = ("load_kind", "stop_error_rate", "stop_p99_ms", "margin")
    return {k: load[k] for k in fields + more if load.get(k) is not None}


def _start_ladder(diagnosis, stage):
    load = diagnosis.parameters.get("load")
    if not load:
        raise StageSkipped(NO_LOAD)
    ladder = ladder_request(
        investigation=diagnosis.investigation,
        user=diagnosis.requested_by,
        **_ladder_arguments(load),
    )
    stage["ladder"] = ladder.pk


def _start(diagnosis: Diagnosis, stage: dict) -> None:
    """Start the stage: running with what it started, or skipped/failed with the reason."""
    starters = {
        DiagnosisStage.FACTS: lambda: _start_collection(
            diagnosis, stage, "facts", {"service": service_name(diagnosis)}
        ),
        DiagnosisStage.BASELINE: lambda: _start_collection(
            diagnosis, stage, "baseline", diagnosis.parameters.get("baseline")
        ),
        DiagnosisStage.LADDER: lambda: _start_ladder(diagnosis, stage),
        DiagnosisStage.AT_KNEE: lambda: start_at_knee(diagnosis, stage),
    }
    try:
        with transaction.atomic():
            starters[stage["name"]]()
    except StageSkipped as skipped:
        stage_set(stage, StageStatus.SKIPPED, skipped.reason)
    except ProcessNotFound as error:
        stage_set(stage, StageStatus.SKIPPED, error.phrase)
    except ValidationError as error:
        stage_set(stage, StageStatus.SKIPPED, _refused(error))
    except CollectorError as error:
        stage_set(stage, StageStatus.FAILED, error.phrase)
    except Exception as error:  # the run goes on: this stage says what went wrong
        logger.exception("diagnosis %s: stage %s could not start", diagnosis.pk, stage["name"])
        stage_set(
            stage,
            StageStatus.FAILED,
            Phrase(gettext_noop("Could not start: %(error)s"), error=str(error)[:500]),
        )
    else:
        stage_set(stage, StageStatus.RUNNING)
        return
    diagnosis_log(diagnosis, _ended_phrase(diagnosis, stage), stage=stage["name"])


# --- seeing a stage end ------------------------------------------------------------------


def _collections_outcome(ids) -> tuple[bool, list]:
    """(all ended, the targets)."""
    collections = Collection.objects.filter(pk__in=ids).prefetch_related(
        "targets__job", "targets__host", "targets__side"
    )
    targets = [t for c in collections for t in read_targets(c.targets.all())]
    ended = all(t.status not in (TargetStatus.QUEUED, TargetStatus.RUNNING) for t in targets)
    return ended, targets


def _analysing(ids) -> bool:
    return Capture.objects.filter(
        target__collection_id__in=ids, job__status=CaptureStatus.ANALYSING
    ).exists()


def _empty_captures(ids) -> list[Phrase]:
    """What the stage's captures that saw no packets say: kept, but not compared (their
    filter or interface missed the traffic), so the person is told rather than left to
    read "no difference" into them."""
    empty = Capture.objects.filter(
        target__collection_id__in=ids, packets=0, job__status=CaptureStatus.READY
    ).select_related("host", "side")
    return [
        Phrase(
            "%(host)s (%(side)s): %(note)s",
            host=capture.host.name,
            side=capture.side.key.upper(),
            note=EMPTY_CAPTURE,
        )
        for capture in empty.order_by("side__key", "host__name")
    ]


def _outcome(stage: dict) -> tuple[bool, str, "Phrase | str"]:
    """(ended, status, reason) of a running stage, from what it started."""
    ended, targets = _collections_outcome(stage.get("collections") or [])
    ladder = Ladder.objects.filter(pk=stage["ladder"]).first() if stage.get("ladder") else None
    if ladder is not None and ladder.status not in ENDED_LADDER_STATUSES:
        ended = False
    # A capture is still being analysed: its findings are part of what the stage found (a
    # completed run's ranking reads them).
    if ended and _analysing(stage.get("collections") or []):
        ended = False
    if not ended:
        return False, StageStatus.RUNNING, ""
    problems = [
        f"{t.host.name} ({t.side.key.upper()}): {t.error or t.get_status_display()}"
        for t in targets
        if t.status in (TargetStatus.FAILED, TargetStatus.CANCELLED)
    ]
    cancelled = any(t.status == TargetStatus.CANCELLED for t in targets)
    notes = []
    if ladder is not None and ladder.status != LadderStatus.COMPLETED:
        cancelled = cancelled or ladder.status == LadderStatus.CANCELLED
        errors = [s.error for s in ladder.sides.select_related("job") if s.error]
        problems.append(f"ladder #{ladder.pk}: {'; '.join(errors) or ladder.get_status_display()}")
    elif ladder is not None:
        # A side that broke at its first step held no load at all (the URL refused, say).
        for side in ladder.sides.select_related("side", "job").order_by("side__key"):
            if side.breaking_step is None:
                continue
            said = f"{side.side.key.upper()}: {stored_text(side, 'breaking_reason')}"
            (problems if side.breaking_step == 0 else notes).append(said)
    notes += _empty_captures(stage.get("collections") or [])
    if not problems:
        return True, StageStatus.SUCCEEDED, joined(notes) if notes else ""
    status = StageStatus.CANCELLED if cancelled else StageStatus.FAILED
    return True, status, "; ".join(problems)


def _ended_phrase(diagnosis, stage) -> Phrase:
    status = label_phrase(StageStatus(stage["status"]).label)
    reason = stage.get("reason") or ""
    if reason:
        return Phrase(
            gettext_noop("Diagnosis #%(number)s: %(stage)s %(status)s: %(reason)s"),
            number=diagnosis.pk,
            stage=stage_label(stage["name"]),
            status=status,
            reason=as_phrase_of(stage),
        )
    return Phrase(
        gettext_noop("Diagnosis #%(number)s: %(stage)s %(status)s"),
        number=diagnosis.pk,
        stage=stage_label(stage["name"]),
        status=status,
    )


def as_phrase_of(stage: dict):
    phrase = (stage.get("phrases") or {}).get("reason")
    return Phrase.from_json(phrase) if phrase else stage.get("reason", "")


def stop_children(stage: dict, *, user) -> None:
    """Cancel what the stage started that has not ended (its collections, its ladder):
    their runners stop every tool they started on the hosts."""
    for collection in Collection.objects.filter(
        pk__in=stage.get("collections") or [], completed_at__isnull=True
    ):
        try:
            collection_cancel(collection=collection, user=user)
        except ValidationError:
            pass  # it ended meanwhile
    if stage.get("ladder"):
        ladder = Ladder.objects.filter(pk=stage["ladder"]).first()
        if ladder is not None and ladder.status not in ENDED_LADDER_STATUSES:
            try:
                ladder_cancel(ladder=ladder, user=user)
            except ValidationError:
                pass


def diagnosis_stop(diagnosis: Diagnosis, *, user, status: str, reason) -> None:
    """Every stage not ended -> `status` with `reason`; what the running ones started is
    cancelled. The caller saves the diagnosis."""
    for stage in diagnosis.stages:
        if stage["status"] == StageStatus.RUNNING:
            stop_children(stage, user=user)
        if stage["status"] not in ENDED_STAGE_STATUSES:
            stage_set(stage, status, reason)


# --- the advance -------------------------------------------------------------------------


def stage_cut(stage: dict, left: int) -> None:
    """The stage skipped: it needs more than the `left` seconds of the budget."""
    stage["cut"] = True
    stage_set(
        stage,
        StageStatus.SKIPPED,
        Phrase(
            gettext_noop(
                "Cut: it needs about %(seconds)s s and %(left)s s of the budget were left."
            ),
            seconds=stage["estimate_seconds"],
            left=max(0, left),
        ),
    )


def _cut(diagnosis, stage, left: int) -> None:
    stage_cut(stage, left)
    diagnosis_log(diagnosis, _ended_phrase(diagnosis, stage), stage=stage["name"], cut=True)


def _finish(diagnosis: Diagnosis, attempt: int) -> None:
    # The run completed whatever its stages found: each says how it ended, and why.
    statuses = [s["status"] for s in diagnosis.stages]
    status = DiagnosisStatus.COMPLETED
    jobs.finish(diagnosis.job_id, status=status, attempt=attempt, active=ACTIVE, progress=100)
    count = statuses.count(StageStatus.SUCCEEDED)
    diagnosis_log(
        diagnosis,
        Phrase(
            ngettext_noop(
                "Diagnosis #%(number)s finished: %(count)s of %(total)s stages succeeded",
                "Diagnosis #%(number)s finished: %(count)s of %(total)s stages succeeded",
            ),
            number=diagnosis.pk,
            count=count,
            total=len(statuses),
        ),
        status=status,
    )


def diagnosis_advance(*, diagnosis_id: int, tick: int) -> None:
    """One look at the run: end the running stage if what it started has ended, start the
    next, and queue the next look. Safe to run twice (an older `tick` does nothing)."""
    with transaction.atomic():
        diagnosis = (
            Diagnosis.objects.select_for_update(of=("self",))
            .select_related("job", "investigation", "requested_by")
            .filter(pk=diagnosis_id)
            .first()
        )
        if diagnosis is None or diagnosis.tick != tick:
            return
        job = diagnosis.job
        if job.status == DiagnosisStatus.QUEUED:
            if jobs.claim(job.pk, status=DiagnosisStatus.RUNNING, claimable=[job.status]) is None:
                return
            job.refresh_from_db()
        elif job.status != DiagnosisStatus.RUNNING or job.cancel_requested_at is not None:
            return
        attempt = job.attempts
        budget = diagnosis.parameters["budget_seconds"]
        for stage in diagnosis.stages:
            if stage["status"] in ENDED_STAGE_STATUSES:
                continue
            if stage["status"] == StageStatus.RUNNING:
                ended, status, reason = _outcome(stage)
                if not ended and stage_left_seconds(stage) == 0 and _overtime(stage):
                    stop_children(stage, user=diagnosis.requested_by)
                    ended, status = True, StageStatus.FAILED
                    reason = Phrase(
                        gettext_noop("Stopped: it ran far longer than expected (%(seconds)s s)."),
                        seconds=stage["estimate_seconds"],
                    )
                if not ended:
                    break
                stage_set(stage, status, reason)
                diagnosis_log(diagnosis, _ended_phrase(diagnosis, stage), stage=stage["name"])
                continue
            elapsed = (timezone.now() - job.began_at).total_seconds()
            left = int(budget - elapsed)
            if stage["estimate_seconds"] > left:
                _cut(diagnosis, stage, left)
                continue
            _start(diagnosis, stage)
            if stage["status"] == StageStatus.RUNNING:
                break
        running = [s for s in diagnosis.stages if s["status"] not in ENDED_STAGE_STATUSES]
        if not running:
            diagnosis.save(update_fields=["stages"])
            _finish(diagnosis, attempt)
            return
        diagnosis.tick += 1
        diagnosis.save(update_fields=["stages", "tick"])
        percent, seconds_left = diagnosis_progress(diagnosis)
        jobs.progress(
            job.pk,
            attempt=attempt,
            percent=percent,
            step=stage_label(running[0]["name"]),
        )
        jobs.keep_alive(
            job.pk,
            attempt=attempt,
            seconds=stage_left_seconds(running[0]) + KEEP_ALIVE_SECONDS,
        )
        jobs.enqueue(
            "perfcase.diagnosis_advance", diagnosis.pk, diagnosis.tick, countdown=POLL_SECONDS
        )


def _overtime(stage: dict) -> bool:
    started = stage.get("started_at")
    if not started:
        return False
    began = datetime.fromisoformat(started)
    return timezone.now() - began > timedelta(seconds=stage["estimate_seconds"] + OVERTIME_SECONDS)
