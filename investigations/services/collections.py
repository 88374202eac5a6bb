"""Collections: one request for evidence, fanned out to a target per host and side.

The lifecycle of a target: queued -> running (claimed once, with a deadline) -> succeeded or
failed. A transient network error puts it back to queued for a retry. Whoever sees a running
target past its deadline fails it, so none stays running after its time limit.
"""

import hashlib
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from collectors.facts import FactsSnapshot, validate_path, validate_service
from investigations.choices import (
    ENDED_TARGET_STATUSES,
    CollectionKind,
    EventKind,
    TargetStatus,
)
from investigations.models import (
    Artifact,
    Collection,
    CollectionTarget,
    EnvironmentMember,
    FactSnapshot,
    Investigation,
)
from investigations.services.checklist import checklist_refresh
from investigations.services.findings import findings_refresh
from investigations.services.timeline import timeline_event_log

MAX_PATHS = 8


def _facts_parameters(service: str, paths) -> dict:
    errors = {}
    try:
        service = validate_service(service or "")
    except ValueError as error:
        errors["service"] = str(error)
    clean_paths = []
    for path in paths or ():
        try:
            clean_paths.append(validate_path(path))
        except ValueError as error:
            errors["paths"] = f"{path[:80]!r}: {error}"
    if len(clean_paths) > MAX_PATHS:
        errors["paths"] = f"At most {MAX_PATHS} paths."
    if errors:
        raise ValidationError(errors)
    return {"service": service, "paths": clean_paths}


@transaction.atomic
def collection_request(
    *,
    investigation: Investigation,
    user,
    kind: str = CollectionKind.FACTS,
    host_ids=None,
    service: str = "",
    paths=(),
) -> Collection:
    """Create the collection and its targets, log it, and enqueue one task per target."""
    if kind not in CollectionKind.values:
        raise ValidationError({"kind": f"Choose one of: {', '.join(CollectionKind.values)}."})
    parameters = _facts_parameters(service, paths)
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
                    "hosts": "Only hosts placed on a side of this investigation can be collected "
                    f"from (not: {', '.join(map(str, sorted(missing)))})."
                }
            )
    # One target per host and side, whatever roles the host has there.
    placements = {(m.host_id, m.side_id): m for m in members}
    if not placements:
        raise ValidationError({"hosts": "Place hosts on the sides first."})
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
        summary=f"{collection.get_kind_display()} requested from {len(targets)} hosts: {names}",
        author=user,
        details={"collection": collection.pk, **parameters},
    )
    from investigations.tasks import collect_target

    ids = [target.pk for target in targets]
    transaction.on_commit(lambda: [collect_target.delay(target_id) for target_id in ids])
    return collection


def target_claim(*, target_id: int, seconds: int) -> CollectionTarget | None:
    """queued -> running, once: a redelivered task finds nothing to claim."""
    now = timezone.now()
    claimed = CollectionTarget.objects.filter(pk=target_id, status=TargetStatus.QUEUED).update(
        status=TargetStatus.RUNNING,
        started_at=now,
        deadline_at=now + timedelta(seconds=seconds),
        attempts=F("attempts") + 1,
        progress=5,
        step="starting",
    )
    if not claimed:
        return None
    return CollectionTarget.objects.select_related(
        "collection", "host__credential", "host__jump_host__credential", "side"
    ).get(pk=target_id)


def target_progress(*, target_id: int, progress: int, step: str) -> None:
    CollectionTarget.objects.filter(pk=target_id, status=TargetStatus.RUNNING).update(
        progress=progress, step=step
    )


def target_requeue(*, target_id: int, error: str) -> None:
    """A transient failure: back to the queue, to be claimed by the retry."""
    CollectionTarget.objects.filter(pk=target_id, status=TargetStatus.RUNNING).update(
        status=TargetStatus.QUEUED, step=f"retrying: {error}"[:200], progress=0
    )


def target_fail(*, target_id: int, error: str) -> None:
    updated = CollectionTarget.objects.filter(
        pk=target_id, status__in=[TargetStatus.QUEUED, TargetStatus.RUNNING]
    ).update(
        status=TargetStatus.FAILED,
        error=error[:4000],
        step="failed",
        finished_at=timezone.now(),
    )
    if updated:
        _complete_if_done(CollectionTarget.objects.get(pk=target_id).collection_id)


def targets_expire_overdue(*, collection: Collection | None = None) -> int:
    """Fail running targets past their deadline (their worker died or hung)."""
    overdue = CollectionTarget.objects.filter(
        status=TargetStatus.RUNNING, deadline_at__lt=timezone.now()
    )
    if collection is not None:
        overdue = overdue.filter(collection=collection)
    count = 0
    for target in overdue.only("pk", "collection_id"):
        target_fail(target_id=target.pk, error="Gave up: no result within the time limit.")
        count += 1
    return count


class HashingFile:
    """Write-through sha256 and size, so that the artifact is never read twice."""

    def __init__(self, file):
        self.file, self.sha256, self.size = file, hashlib.sha256(), 0

    def write(self, data: bytes) -> int:
        self.sha256.update(data)
        self.size += len(data)
        return self.file.write(data)


def artifact_store(
    *, target: CollectionTarget, name: str, temp_file, sink: HashingFile, truncated: bool
) -> Artifact:
    temp_file.seek(0)
    artifact = Artifact(
        collection_id=target.collection_id,
        target=target,
        name=name,
        size=sink.size,
        sha256=sink.sha256.hexdigest(),
        truncated=truncated,
    )
    artifact.file.save(name, File(temp_file), save=False)
    artifact.save()
    return artifact


@transaction.atomic
def facts_store(*, target: CollectionTarget, snapshot: FactsSnapshot) -> FactSnapshot:
    """Keep the parsed facts, finish the target, and re-run the finding rules."""
    stored = FactSnapshot.objects.create(
        target=target,
        investigation_id=target.collection.investigation_id,
        host=target.host,
        side=target.side,
        collected_at=timezone.now(),
        facts=snapshot.facts,
        probes={
            name: {"status": p.status, "reason": p.reason, "via_sudo": p.via_sudo}
            for name, p in snapshot.probes.items()
        },
    )
    CollectionTarget.objects.filter(pk=target.pk).update(
        status=TargetStatus.SUCCEEDED, progress=100, step="done", finished_at=timezone.now()
    )
    findings_refresh(investigation=target.collection.investigation)
    checklist_refresh(investigation=target.collection.investigation)
    transaction.on_commit(lambda: _complete_if_done(target.collection_id))
    return stored


@transaction.atomic
def _complete_if_done(collection_id: int) -> None:
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
        f"{collection.get_kind_display()} collected from "
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
