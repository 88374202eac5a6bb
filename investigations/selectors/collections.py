"""Reads of evidence collections and their targets."""

from django.db.models import Prefetch, QuerySet, prefetch_related_objects
from django.utils import timezone

from investigations.choices import NEVER_RAN, OVERDUE_MESSAGE
from investigations.models import Collection, CollectionTarget, Investigation


def read_overdue_as_failed(rows: list) -> list:
    """Rows (collection targets, ladder sides) still running past their deadline read as
    failed: their worker is gone, and the worker's sweep records it within SWEEP_SECONDS.
    Only the loaded objects change: a read never writes."""
    now = timezone.now()
    for row in rows:
        if row.status in ("queued", "running") and row.deadline_at and row.deadline_at < now:
            message = NEVER_RAN if row.status == "queued" else OVERDUE_MESSAGE
            row.status, row.error = "failed", message
            row.phrases = {**(row.phrases or {}), "error": [message, {}]}
    return rows


def collection_targets(*, collection: Collection) -> list[CollectionTarget]:
    """The collection's targets with host, side and artifacts loaded; overdue ones read as
    failed."""
    return read_overdue_as_failed(
        list(collection.targets.select_related("host", "side").prefetch_related("artifacts"))
    )


def collection_with_targets(*, collection: Collection) -> Collection:
    """The collection with its targets, hosts and sides loaded into `targets.all()` (one
    query); overdue targets read as failed."""
    targets = CollectionTarget.objects.select_related("host", "side")
    prefetch_related_objects([collection], Prefetch("targets", queryset=targets))
    read_overdue_as_failed(list(collection.targets.all()))
    return collection


def collections_for(*, investigation: Investigation, limit: int = 5) -> list[Collection]:
    """The newest collections with their targets, hosts and sides loaded; overdue targets
    read as failed."""
    collections = list(
        investigation.collections.prefetch_related(
            "targets__host", "targets__side", "targets__artifacts"
        )[:limit]
    )
    for collection in collections:
        read_overdue_as_failed(list(collection.targets.all()))
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
