"""Reads of evidence collections and their targets."""

from django.db.models import Prefetch, QuerySet, prefetch_related_objects

# The one read rule for overdue work (the ladders' selectors and the package take it here).
from investigations.jobs import read_overdue_as_failed  # noqa: F401
from investigations.models import Collection, CollectionTarget, Investigation


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
