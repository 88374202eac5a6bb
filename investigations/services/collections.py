"""Collections: one request for evidence, fanned out to a target per host and side.

The lifecycle of a target: queued -> running (claimed, with a deadline and the claim's
number in `attempts`) -> succeeded or failed. Every write after the claim names the claim,
so a run that was superseded (its worker was thought dead) changes nothing. A target left
running by a worker that stopped is resumed by the redelivered task; one past its deadline
is failed by the worker's sweep (tasks.sweep).
"""

import math
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction
from django.db.models import F
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from investigations.choices import (
    ENDED_TARGET_STATUSES,
    OVERDUE_MESSAGE,
    CollectionKind,
    EventKind,
    TargetStatus,
)
from investigations.models import (
    Artifact,
    Collection,
    CollectionTarget,
    EnvironmentMember,
    Investigation,
)
from investigations.runs import plan_for
from investigations.services.timeline import in_english, timeline_event_log

# A target whose worker stopped this many times (killed, restarted) is given up.
MAX_CLAIMS = 3


def collection_time_limit(*, kind: str, targets: int) -> int:
    """Seconds the collection's task may run: its targets run at once, in waves of
    COLLECTION_PARALLELISM, after the start gate's wait."""
    waves = math.ceil(targets / settings.COLLECTION_PARALLELISM)
    return waves * plan_for(kind).target_seconds + settings.SSH_CONNECT_TIMEOUT + 30


@transaction.atomic
def collection_request(
    *,
    investigation: Investigation,
    user,
    kind: str = CollectionKind.FACTS,
    host_ids=None,
    parameters: dict | None = None,
) -> Collection:
    """Create the collection and its targets, log it, and enqueue the one task that runs
    them all at once."""
    if kind not in CollectionKind.values:
        choices = ", ".join(CollectionKind.values)
        raise ValidationError({"kind": _("Choose one of: %(choices)s.") % {"choices": choices}})
    parameters = plan_for(kind).clean(parameters or {})
    members = EnvironmentMember.objects.filter(investigation=investigation).select_related(
        "host", "side"
    )
    if host_ids is not None:
        wanted = set(host_ids)
        members = [m for m in members if m.host_id in wanted]
        missing = wanted - {m.host_id for m in members}
        if missing:
            raise ValidationError(
                {
                    "hosts": _(
                        "Only hosts placed on a side of this investigation can be collected "
                        "from (not: %(hosts)s)."
                    )
                    % {"hosts": ", ".join(map(str, sorted(missing)))}
                }
            )
    # One target per host and side, whatever roles the host has there.
    placements = {(m.host_id, m.side_id): m for m in members}
    if not placements:
        raise ValidationError({"hosts": _("Place hosts on the sides first.")})
    now = timezone.now()
    collection = Collection.objects.create(
        investigation=investigation,
        kind=kind,
        parameters=parameters,
        requested_by=user,
        start_at=now + timedelta(milliseconds=settings.COLLECTION_START_DELAY_MS),
    )
    targets = CollectionTarget.objects.bulk_create(
        CollectionTarget(collection=collection, host=m.host, side=m.side, step="queued")
        for m in placements.values()
    )
    names = ", ".join(sorted(f"{m.host.name} ({m.side.key.upper()})" for m in placements.values()))
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.COLLECTION,
        summary=f"{in_english(CollectionKind(collection.kind).label)} requested from "
        f"{len(targets)} hosts: {names}",
        author=user,
        details={"collection": collection.pk, **parameters},
    )
    from investigations.tasks import collection_run

    limit = collection_time_limit(kind=kind, targets=len(targets))
    transaction.on_commit(
        lambda: collection_run.apply_async(
            args=[collection.pk], soft_time_limit=limit, time_limit=limit + 30
        )
    )
    return collection


def targets_resume(*, collection_id: int, target_ids=None) -> None:
    """Targets left running when their worker stopped (a redelivered task finds them):
    queued again to be run now, or failed once they have been claimed MAX_CLAIMS times."""
    running = CollectionTarget.objects.filter(
        collection_id=collection_id, status=TargetStatus.RUNNING
    )
    if target_ids is not None:
        running = running.filter(pk__in=target_ids)
    given_up = running.filter(attempts__gte=MAX_CLAIMS).update(
        status=TargetStatus.FAILED,
        error=f"The worker collecting from this host stopped {MAX_CLAIMS} times (killed or "
        "restarted); gave up. Collect again once the workers are stable.",
        step="failed",
        finished_at=timezone.now(),
    )
    running.filter(attempts__lt=MAX_CLAIMS).update(
        status=TargetStatus.QUEUED, progress=0, step="resuming: the worker running it stopped"
    )
    if given_up:
        collection_complete_if_done(collection_id=collection_id)


def targets_claim(*, collection_id: int, seconds: int, target_ids=None) -> list:
    """The collection's queued targets -> running, once: a task delivered twice finds
    nothing left to claim. Returns them with host, credential, jump host and side loaded."""
    now = timezone.now()
    with transaction.atomic():
        queued = CollectionTarget.objects.select_for_update().filter(
            collection_id=collection_id, status=TargetStatus.QUEUED
        )
        if target_ids is not None:
            queued = queued.filter(pk__in=target_ids)
        ids = list(queued.values_list("pk", flat=True))
        CollectionTarget.objects.filter(pk__in=ids).update(
            status=TargetStatus.RUNNING,
            started_at=now,
            began_at=None,
            deadline_at=now + timedelta(seconds=seconds),
            attempts=F("attempts") + 1,
            progress=5,
            step="starting",
        )
    return list(
        CollectionTarget.objects.filter(pk__in=ids).select_related(
            "collection__investigation", "host__credential", "host__jump_host__credential", "side"
        )
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


def _claimed(target_id: int, attempt: int):
    return CollectionTarget.objects.filter(
        pk=target_id, status=TargetStatus.RUNNING, attempts=attempt
    )


def target_update(*, target_id: int, attempt: int, **changes) -> None:
    """Progress, step or the moment the target began, from the claim `attempt` only."""
    _claimed(target_id, attempt).update(**changes)


def target_succeed(*, target: CollectionTarget, attempt: int | None = None) -> bool:
    """Running -> succeeded; with `attempt`, only if the target is still under that claim."""
    running = CollectionTarget.objects.filter(pk=target.pk, status=TargetStatus.RUNNING)
    if attempt is not None:
        running = running.filter(attempts=attempt)
    return bool(
        running.update(
            status=TargetStatus.SUCCEEDED, progress=100, step="done", finished_at=timezone.now()
        )
    )


def target_fail(*, target_id: int, error: str, attempt: int | None = None) -> None:
    """Queued or running -> failed, with a message a person can act on."""
    targets = CollectionTarget.objects.filter(
        pk=target_id, status__in=[TargetStatus.QUEUED, TargetStatus.RUNNING]
    )
    if attempt is not None:
        targets = targets.filter(attempts=attempt)
    updated = targets.update(
        status=TargetStatus.FAILED, error=error[:4000], step="failed", finished_at=timezone.now()
    )
    if updated:
        collection_complete_if_done(
            collection_id=CollectionTarget.objects.get(pk=target_id).collection_id
        )


def targets_expire_overdue(*, collection: Collection | None = None) -> int:
    """Fail running targets past their deadline (their worker died or hung): the sweep."""
    overdue = CollectionTarget.objects.filter(
        status=TargetStatus.RUNNING, deadline_at__lt=timezone.now()
    )
    if collection is not None:
        overdue = overdue.filter(collection=collection)
    count = 0
    for target in overdue.only("pk", "attempts"):
        target_fail(target_id=target.pk, error=OVERDUE_MESSAGE, attempt=target.attempts)
        count += 1
    return count


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
    targets = list(collection.targets.select_related("host", "side"))
    if any(t.status not in ENDED_TARGET_STATUSES for t in targets):
        return
    collection.completed_at = timezone.now()
    collection.save(update_fields=["completed_at"])
    failed = [t for t in targets if t.status == TargetStatus.FAILED]
    summary = (
        f"{in_english(CollectionKind(collection.kind).label)} collected from "
        f"{len(targets) - len(failed)} of {len(targets)} hosts"
    )
    if failed:
        summary += "; failed: " + "; ".join(f"{t.host.name}: {t.error}" for t in failed)
    timeline_event_log(
        investigation=collection.investigation,
        kind=EventKind.COLLECTION,
        summary=summary,
        details={"collection": collection.pk, "failed": [t.host_id for t in failed]},
    )
