"""Collection targets: the lifecycle of one host's part of a collection.

queued -> running (claimed, with a deadline and the claim's number in `attempts`) ->
succeeded, failed or cancelled. Every write after the claim names the claim, so a run that
was superseded (its worker was thought dead) changes nothing. A target left running by a
worker that stopped is resumed by the redelivered task; one past its deadline is failed by
the sweep (jobs/sweeper.py), whose follow-up ends their collection.

The plans (runs/) and the kinds' services write through this module; requesting a
collection (services/collections.py) is above them, since it asks the plans.
"""

from datetime import timedelta

from django.core.files import File
from django.db import transaction
from django.db.models import F, Q, QuerySet, Value
from django.db.models.functions import Greatest
from django.utils import timezone
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase, joined, ngettext_noop
from investigations import jobs
from investigations.choices import ENDED_TARGET_STATUSES, EventKind, TargetStatus
from investigations.kinds import kind_named
from investigations.models import Artifact, Collection, CollectionTarget, Job
from investigations.phrases import stored_phrase, with_phrases
from investigations.selectors.collections import TARGET_JOB
from investigations.services.timeline import label_phrase, timeline_event_log

# A target whose worker stopped this many times (killed, restarted) is given up.
MAX_CLAIMS = 3
CANCELLED = Phrase(gettext_noop("Cancelled."))
DONE = Phrase(gettext_noop("done"))


def _jobs(targets) -> QuerySet[Job]:
    """The jobs of these targets (a queryset of them), as one subquery."""
    return Job.objects.filter(pk__in=targets.values("job_id"))


def _claimed(claims) -> Q:
    """Targets under these claims, (target id, claim) pairs."""
    claimed = Q()
    for target_id, attempt in claims:
        claimed |= Q(pk=target_id, job__attempts=attempt)
    return claimed


def targets_resume(*, collection_id: int, target_ids=None) -> None:
    """Targets left running when their worker stopped (a redelivered task finds them):
    queued again to be run now, or failed once they have been claimed MAX_CLAIMS times."""
    running = CollectionTarget.objects.filter(
        collection_id=collection_id, job__status=TargetStatus.RUNNING
    )
    if target_ids is not None:
        running = running.filter(pk__in=target_ids)
    given_up = (
        _jobs(running)
        .filter(attempts__gte=MAX_CLAIMS)
        .update(
            status=TargetStatus.FAILED,
            step="failed",
            finished_at=timezone.now(),
            **with_phrases(
                {
                    "error": Phrase(
                        gettext_noop(
                            "The worker collecting from this host stopped %(times)s times "
                            "(killed or restarted); gave up. Collect again once the workers "
                            "are stable."
                        ),
                        times=MAX_CLAIMS,
                    )
                }
            ),
        )
    )
    _jobs(running).filter(attempts__lt=MAX_CLAIMS).update(
        status=TargetStatus.QUEUED,
        progress=0,
        **with_phrases({"step": Phrase(gettext_noop("resuming: the worker running it stopped"))}),
    )
    if given_up:
        collection_complete_if_done(collection_id=collection_id)


def targets_claim(*, collection_id: int, seconds: int, target_ids=None) -> list:
    """The collection's queued targets -> running, once: a task delivered twice finds
    nothing left to claim. Returns them with host, credential, jump host and side loaded."""
    now = timezone.now()
    with transaction.atomic():
        queued = CollectionTarget.objects.filter(
            collection_id=collection_id, job__status=TargetStatus.QUEUED
        )
        if target_ids is not None:
            queued = queued.filter(pk__in=target_ids)
        # The status is asked of the locked job rows themselves, so a second claim that
        # waited for the first's lock finds them running and takes none.
        job_ids = list(
            _jobs(queued)
            .filter(status=TargetStatus.QUEUED)
            .select_for_update()
            .values_list("pk", flat=True)
        )
        Job.objects.filter(pk__in=job_ids).update(
            status=TargetStatus.RUNNING,
            began_at=now,
            finished_at=None,
            deadline_at=now + timedelta(seconds=seconds),
            attempts=F("attempts") + 1,
            progress=5,
            **with_phrases({"step": Phrase(gettext_noop("starting"))}),
        )
        CollectionTarget.objects.filter(job__in=job_ids).update(began_at=None)
    return list(
        CollectionTarget.objects.filter(job__in=job_ids).select_related(
            "job",
            "collection__investigation",
            "host__credential",
            "host__jump_host__credential",
            "side",
        )
    )


def targets_keep_alive(*, claims: list[tuple[int, int]], seconds: int) -> None:
    """The running targets of these (target id, claim) pairs are alive: their deadlines move
    to at least `seconds` from now (one statement)."""
    if not claims:
        return
    claimed = CollectionTarget.objects.filter(_claimed(claims))
    _jobs(claimed).filter(status=TargetStatus.RUNNING).update(
        deadline_at=Greatest(F("deadline_at"), Value(timezone.now() + timedelta(seconds=seconds)))
    )


def target_claim(*, target_id: int, seconds: int) -> CollectionTarget | None:
    """One queued target -> running, or None if it was not queued."""
    target = CollectionTarget.objects.filter(pk=target_id).only("collection_id").first()
    if target is None:
        return None
    claimed = targets_claim(
        collection_id=target.collection_id, seconds=seconds, target_ids=[target_id]
    )
    return claimed[0] if claimed else None


@transaction.atomic
def targets_report(*, reports: dict[tuple[int, int], dict]) -> None:
    """Progress, step or the moment each target began, {(target id, claim): changes}, from
    that claim only: a few statements, however many targets report. The moment it began
    is the target's; progress and step are its job's."""
    running = (
        CollectionTarget.objects.filter(_claimed(reports), job__status=TargetStatus.RUNNING)
        .select_related("job")
        .select_for_update(of=("job",))
        .only("pk", "began_at", "job__id", "job__attempts", "job__phrases")
    )
    by_fields: dict[tuple[type, tuple[str, ...]], list] = {}
    for target in running:
        said = dict(reports[(target.pk, target.job.attempts)])
        if "began_at" in said:
            target.began_at = said.pop("began_at")
            by_fields.setdefault((CollectionTarget, ("began_at",)), []).append(target)
        if not said:
            continue
        changes = with_phrases(said, limits={"step": 200})
        if "step" in said:  # the step's phrase replaces the one before (or goes with it)
            kept = {k: v for k, v in target.job.phrases.items() if k != "step"}
            changes["phrases"] = kept | changes.get("phrases", {})
        for field, value in changes.items():
            setattr(target.job, field, value)
        by_fields.setdefault((Job, tuple(sorted(changes))), []).append(target.job)
    for (model, fields), rows in by_fields.items():
        model.objects.bulk_update(rows, fields)


def targets_time(*, timings: dict[tuple[int, int], dict]) -> None:
    """Where each ended target's time went, {(target id, claim): {phase: seconds}}
    (runs/timings.py), from that claim only: the runner writes it with the targets' end."""
    if not timings:
        return
    targets = list(
        CollectionTarget.objects.filter(_claimed(timings))
        .select_related("job")
        .only("pk", "job__id", "job__attempts")
    )
    for target in targets:
        target.timings = timings[(target.pk, target.job.attempts)]
    CollectionTarget.objects.bulk_update(targets, ["timings"])


def target_succeed(*, target: CollectionTarget, attempt: int | None = None) -> bool:
    """Running -> succeeded; with `attempt`, only if the target is still under that claim."""
    return jobs.finish(
        target.job_id,
        status=TargetStatus.SUCCEEDED,
        attempt=attempt,
        active=[TargetStatus.RUNNING],
        progress=100,
        # Its phrase replaces the last step's, which would otherwise still be read.
        **with_phrases({"step": DONE}),
    )


def target_fail(*, target_id: int, error: "str | Phrase", attempt: int | None = None) -> None:
    """Queued or running -> failed, with a message a person can act on (a Phrase is read in
    each person's language)."""
    _target_end(target_id=target_id, status=TargetStatus.FAILED, error=error, attempt=attempt)


def target_cancel(*, target_id: int, attempt: int | None = None) -> None:
    """Queued or running -> cancelled (its collection was cancelled; what it had started on
    its host was stopped), saying so."""
    _target_end(
        target_id=target_id, status=TargetStatus.CANCELLED, error=CANCELLED, attempt=attempt
    )


def _target_end(*, target_id: int, status: str, error: "str | Phrase", attempt: int | None):
    row = CollectionTarget.objects.filter(pk=target_id).values_list("job_id", "collection_id")
    if (found := row.first()) is None:  # its collection was deleted meanwhile
        return
    job_id, collection_id = found
    ended = jobs.finish(
        job_id,
        status=status,
        attempt=attempt,
        active=[TargetStatus.QUEUED, TargetStatus.RUNNING],
        error=error,
        step=status,
    )
    if ended:
        collection_complete_if_done(collection_id=collection_id)


@jobs.after_overdue(TARGET_JOB.name)
def targets_overdue(target_ids: list[int]) -> None:
    """The sweep failed these targets (their worker died or hung): their collections may
    have ended with them."""
    collections = CollectionTarget.objects.filter(pk__in=target_ids).values_list(
        "collection_id", flat=True
    )
    for collection_id in sorted(set(collections)):
        collection_complete_if_done(collection_id=collection_id)


def artifact_store(*, target: CollectionTarget, captured) -> Artifact:
    """Keep a captured output (runs.capture.Captured) as the target's artifact."""
    captured.file.seek(0)
    artifact = Artifact(
        collection_id=target.collection_id,
        target=target,
        name=captured.name,
        size=captured.size,
        sha256=captured.sha256,
        truncated=captured.truncated,
    )
    artifact.file.save(captured.name, File(captured.file), save=False)
    artifact.save()
    return artifact


@transaction.atomic
def collection_complete_if_done(*, collection_id: int) -> None:
    """Once every target has ended, say so on the timeline (once)."""
    collection = Collection.objects.select_for_update().get(pk=collection_id)
    if collection.completed_at is not None:
        return
    targets = list(collection.targets.select_related("host", "side", "job"))
    if any(t.status not in ENDED_TARGET_STATUSES for t in targets):
        return
    collection.completed_at = timezone.now()
    collection.save(update_fields=["completed_at"])
    failed = [t for t in targets if t.status == TargetStatus.FAILED]
    cancelled = [t for t in targets if t.status == TargetStatus.CANCELLED]
    summary = Phrase(
        ngettext_noop(
            "%(kind)s collected from %(done)s of %(count)s host",
            "%(kind)s collected from %(done)s of %(count)s hosts",
        )
        if not cancelled
        else ngettext_noop(
            "%(kind)s cancelled: collected from %(done)s of %(count)s host",
            "%(kind)s cancelled: collected from %(done)s of %(count)s hosts",
        ),
        kind=label_phrase(kind_named(collection.kind).label),
        done=len(targets) - len(failed) - len(cancelled),
        count=len(targets),
    )
    if failed:
        summary = Phrase(
            gettext_noop("%(summary)s; failed: %(failures)s"),
            summary=summary,
            failures=joined(
                Phrase("%(host)s: %(error)s", host=t.host.name, error=stored_phrase(t, "error"))
                for t in failed
            ),
        )
    timeline_event_log(
        investigation=collection.investigation,
        kind=EventKind.COLLECTION,
        summary=summary,
        details={"collection": collection.pk, "failed": [t.host_id for t in failed]},
    )
