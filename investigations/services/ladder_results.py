"""A ladder's run and results: the sides claimed by the worker, their progress, each step's
results, each side's end, what ends with sides the sweep failed, and once both ended the ladder's
status, analysis and timeline (requested in services/ladders.py)."""

from datetime import timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_noop

from collectors.loadresults import StepResult
from collectors.phrase import Phrase, as_phrase, joined
from investigations import jobs
from investigations.analysis.ladder import Point, find_divergence, find_knee, slower_side
from investigations.analysis.steps import cpu_average, generator_busy, ladder_outcome
from investigations.choices import ENDED_LADDER_STATUSES, EventKind, LadderStatus
from investigations.models import Job, Ladder, LadderSide, LadderStep
from investigations.phrases import stored_phrase, with_phrases
from investigations.selectors import ladder_points, ladder_sides
from investigations.selectors.ladder_compare import ladder_comparison
from investigations.selectors.ladders import LADDER_SIDE_JOB
from investigations.services.checklist import checklist_refresh
from investigations.services.timeline import timeline_event_log


def ladder_log(*, ladder: Ladder, summary: Phrase, user=None, **details) -> None:
    timeline_event_log(
        investigation=ladder.investigation,
        kind=EventKind.LADDER,
        summary=summary,
        author=user,
        details={"ladder": ladder.pk, **details},
    )


def ladder_claim(*, ladder_id: int, seconds: int) -> list[LadderSide]:
    """The ladder's queued sides -> running, once: a redelivered task finds nothing to claim
    (the status is asked of the locked job rows themselves)."""
    now = timezone.now()
    with transaction.atomic():
        ids = list(
            Job.objects.select_for_update()
            .filter(
                pk__in=LadderSide.objects.filter(ladder_id=ladder_id).values("job_id"),
                status=LadderStatus.QUEUED,
            )
            .values_list("pk", flat=True)
        )
        Job.objects.filter(pk__in=ids).update(
            status=LadderStatus.RUNNING,
            began_at=now,
            attempts=F("attempts") + 1,
            deadline_at=now + timedelta(seconds=seconds),
        )
        if ids:
            Ladder.objects.filter(pk=ladder_id, status=LadderStatus.QUEUED).update(
                status=LadderStatus.RUNNING
            )
    return list(
        LadderSide.objects.filter(job__in=ids).select_related(
            "job", "ladder__investigation", "side", "load_generator__credential"
        )
    )


def ladder_side_add(
    *, ladder: Ladder, side, status: str = LadderStatus.QUEUED, deadline_at=None, **fields
) -> LadderSide:
    """A side of the ladder and its job: queued for a worker (until `deadline_at`), or
    ended at once (imported results)."""
    ended = status not in (LadderStatus.QUEUED, LadderStatus.RUNNING)
    job = jobs.create(
        LADDER_SIDE_JOB.name,
        status=status,
        user=ladder.requested_by,
        deadline_at=deadline_at,
        finished_at=timezone.now() if ended else None,
    )
    ladder_side = LadderSide.objects.create(ladder=ladder, side=side, job=job, **fields)
    Job.objects.filter(pk=job.pk).update(object_id=ladder_side.pk)
    return ladder_side


def ladder_side_progress(*, side_id: int, step: int) -> None:
    LadderSide.objects.filter(pk=side_id, job__status=LadderStatus.RUNNING).update(
        current_step=step
    )


@transaction.atomic
def ladder_step_store(
    *,
    ladder_side: LadderSide,
    index: int,
    result: StepResult,
    planned_at=None,
    started_at=None,
    raw_output: str = "",
    samples=(),
    generator_samples=(),
) -> LadderStep:
    """One step's results; samples are (host, tool, series) of the side's service hosts,
    generator_samples its load generator's (which may be one of them)."""
    cpu = cpu_average(samples)
    busy = generator_busy(generator_samples)
    if busy is not None:
        cpu["generator"] = {"host": generator_samples[0][0].name, "busy": busy}
    step = LadderStep.objects.create(
        ladder_side=ladder_side,
        index=index,
        load=result.load,
        load_kind=result.load_kind,
        planned_at=planned_at,
        started_at=started_at,
        duration_s=result.duration_s,
        requests=result.requests,
        rps=result.rps,
        transfer_bytes_per_s=result.transfer_bytes_per_s,
        latency_ms=dict(result.latency_ms),
        errors=dict(result.errors),
        cpu=cpu,
        raw_output=raw_output[:65536],
    )
    kept = {(host.pk, tool) for host, tool, _ in samples}
    extra = [sample for sample in generator_samples if (sample[0].pk, sample[1]) not in kept]
    for host, tool, series in [*samples, *extra]:
        step.samples.create(host=host, tool=tool, series=series)
    return step


@transaction.atomic
def ladder_side_finish(
    *,
    side_id: int,
    status: str,
    error: "str | Phrase" = "",
    breaking_step: int | None = None,
    breaking: "str | Phrase" = "",
) -> None:
    """A side's end: its status, what went wrong (read in each person's language), and the
    step where it broke."""
    said = with_phrases(
        {"error": as_phrase(error), "breaking_reason": as_phrase(breaking)},
        limits={"error": 4000},
    )
    job_id = LadderSide.objects.filter(pk=side_id).values_list("job_id", flat=True).first()
    updated = Job.objects.filter(
        pk=job_id, status__in=[LadderStatus.QUEUED, LadderStatus.RUNNING]
    ).update(
        status=status,
        finished_at=timezone.now(),
        error=said["error"],
        phrases=said.get("phrases", {}),
    )
    if updated:
        LadderSide.objects.filter(pk=side_id).update(
            breaking_step=breaking_step, breaking_reason=said["breaking_reason"]
        )
    if updated:
        side = LadderSide.objects.select_related("ladder__investigation", "side").get(pk=side_id)
        if breaking_step is not None:
            load = (
                side.ladder.steps[breaking_step] if breaking_step < len(side.ladder.steps) else ""
            )
            ladder_log(
                ladder=side.ladder,
                summary=Phrase(
                    gettext_noop("Ladder: side %(side)s breaks at %(load)s: %(reason)s"),
                    side=side.side.key.upper(),
                    load=load,
                    reason=as_phrase(breaking),
                ),
                step=breaking_step,
                side=side.side.key,
            )
        transaction.on_commit(lambda: ladder_finish_if_done(ladder_id=side.ladder_id))


@jobs.after_overdue(LADDER_SIDE_JOB.name)
def ladder_sides_overdue(side_ids: list[int]) -> None:
    """The sweep failed these sides (their worker died or hung): their ladders may have
    ended with them."""
    ladders = LadderSide.objects.filter(pk__in=side_ids).values_list("ladder_id", flat=True)
    for ladder_id in sorted(set(ladders)):
        ladder_finish_if_done(ladder_id=ladder_id)


def ladder_analysis(*, ladder: Ladder, points: dict[str, list[Point]] | None = None) -> dict:
    """Each side's knee and the divergence step (from `points`, loaded here if not given)."""
    if points is None:
        points = ladder_points(ladder_sides(ladder=ladder))
    knees = {side: find_knee(side_points) for side, side_points in points.items()}
    load, divergence_reason = find_divergence(points["a"], points["b"], ladder.margin)
    # The step's place in the ladder's own list of loads (sides may number theirs apart).
    divergence = next((i for i, step in enumerate(ladder.steps) if step == load), None)
    # Reasons in English, with the phrases they were made from (`phrases`) for each reader.
    return {
        "knees": {
            side: with_phrases({"index": knee.index, "load": knee.load, "reason": knee.reason})
            for side, knee in knees.items()
        },
        # "slower": the side that is slower where they part ("a", "b"; None without).
        "divergence": with_phrases(
            {
                "index": divergence,
                "load": load,
                "reason": divergence_reason,
                "slower": slower_side(points["a"], points["b"], load, ladder.margin),
            }
        ),
    }


# What the timeline says when a ladder ends, with why the sides diverge or not.
ENDED = {
    LadderStatus.COMPLETED: gettext_noop("Ladder completed: %(reason)s"),
    LadderStatus.FAILED: gettext_noop("Ladder failed: %(reason)s"),
    LadderStatus.CANCELLED: gettext_noop("Ladder cancelled: %(reason)s"),
}


@transaction.atomic
def ladder_finish_if_done(*, ladder_id: int) -> None:
    """Once both sides ended: the ladder's status, its analysis, and the timeline."""
    ladder = Ladder.objects.select_for_update().select_related("investigation").get(pk=ladder_id)
    if ladder.status in ENDED_LADDER_STATUSES:
        return
    sides = list(ladder.sides.select_related("side", "job"))
    status = ladder_outcome(
        cancel_requested=ladder.cancel_requested_at is not None,
        side_statuses=[side.status for side in sides],
    )
    if status is None:
        return
    ladder.status = status
    ladder.analysis = ladder_analysis(ladder=ladder)
    ladder.finished_at = timezone.now()
    ladder.save(update_fields=["status", "analysis", "finished_at"])
    for side, knee in ladder.analysis["knees"].items():
        if knee["index"] is not None:
            ladder_log(
                ladder=ladder,
                summary=Phrase(
                    gettext_noop("Ladder: knee of side %(side)s: %(reason)s"),
                    side=side.upper(),
                    reason=stored_phrase(knee, "reason"),
                ),
                side=side,
            )
    summary = Phrase(
        ENDED[ladder.status], reason=stored_phrase(ladder.analysis["divergence"], "reason")
    )
    failures = [
        Phrase(
            gettext_noop("side %(side)s failed: %(error)s"),
            side=s.side.key.upper(),
            error=stored_phrase(s, "error"),
        )
        for s in sides
        if s.status == LadderStatus.FAILED
    ]
    if failures:
        summary = Phrase("%(summary)s; %(failures)s", summary=summary, failures=joined(failures))
    ladder_log(ladder=ladder, summary=summary, status=ladder.status)
    if ladder.rerun_of_id is not None and ladder.status == LadderStatus.COMPLETED:
        _log_fix_verdict(ladder)
    checklist_refresh(investigation=ladder.investigation)


def _log_fix_verdict(rerun: Ladder) -> None:
    """What the rerun says of the fix: the gap closed, narrowed, unchanged or wider."""
    comparison, _points = ladder_comparison(before=rerun.rerun_of, after=rerun)
    ladder_log(
        ladder=rerun,
        summary=Phrase(
            gettext_noop("Fix verification: ladder #%(after)s against #%(before)s: %(reason)s"),
            after=rerun.pk,
            before=rerun.rerun_of_id,
            reason=comparison.reason,
        ),
        rerun_of=rerun.rerun_of_id,
        verdict=comparison.verdict,
    )
