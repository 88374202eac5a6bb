"""Reads of evidence collections and their targets."""

from django.db.models import Prefetch, QuerySet, prefetch_related_objects
from django.utils import timezone

from investigations.choices import NEVER_RAN, OVERDUE_MESSAGE, TargetStatus
from investigations.jobs import JobKind, read_job, register
from investigations.models import Collection, CollectionTarget, Investigation

# A collection target's work: one host's part of a collection (services/targets.py).
TARGET_JOB = register(
    JobKind(
        "collection_target",
        overdue={TargetStatus.QUEUED.value: NEVER_RAN, TargetStatus.RUNNING.value: OVERDUE_MESSAGE},
    )
)


def read_targets(targets) -> list[CollectionTarget]:
    """The targets, overdue ones read as failed (with the message the sweep will write);
    a read never writes."""
    now = timezone.now()
    targets = list(targets)
    for target in targets:
        read_job(target.job, TARGET_JOB, now=now)
    return targets


def collection_targets(*, collection: Collection) -> list[CollectionTarget]:
    """The collection's targets with host, side and artifacts loaded; overdue ones read as
    failed."""
    return read_targets(
        collection.targets.select_related("host", "side", "job").prefetch_related("artifacts")
    )


def collection_with_targets(*, collection: Collection) -> Collection:
    """The collection with its targets, hosts and sides loaded into `targets.all()` (one
    query); overdue targets read as failed."""
    targets = CollectionTarget.objects.select_related("host", "side", "job")
    prefetch_related_objects([collection], Prefetch("targets", queryset=targets))
    read_targets(collection.targets.all())
    return collection


def collections_for(*, investigation: Investigation, limit: int = 5) -> list[Collection]:
    """The newest collections with their targets, hosts and sides loaded; overdue targets
    read as failed."""
    collections = list(
        investigation.collections.prefetch_related(
            "targets__host", "targets__side", "targets__job", "targets__artifacts"
        )[:limit]
    )
    for collection in collections:
        read_targets(collection.targets.all())
    return collections


def collection_choices(*, investigation: Investigation) -> QuerySet[Collection]:
    """Every collection of the investigation, newest first (the rows only): what a form
    offers as evidence."""
    return investigation.collections.all()


def collection_get(*, investigation: Investigation, collection_id: int) -> Collection | None:
    """The investigation's collection with this id, or None (the row only)."""
    return investigation.collections.filter(pk=collection_id).first()


def collection_cancel_requested(*, collection_id: int) -> bool:
    return Collection.objects.filter(pk=collection_id, cancel_requested_at__isnull=False).exists()
