"""Reads of the guided checklist."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Max, Q, QuerySet

from investigations.choices import SETTLED_ITEM_STATUSES
from investigations.models import ChecklistItem, Investigation
from investigations.selectors.teams import of_member


def checklist_items(*, investigation: Investigation) -> QuerySet[ChecklistItem]:
    """The investigation's checklist in order, with assignees loaded."""
    return investigation.checklist.select_related("assignee")


def checklist_item_get(*, item_id: int) -> ChecklistItem | None:
    """The checklist item with this id, with its investigation loaded, or None. It checks no
    access: check the investigation's next."""
    return ChecklistItem.objects.select_related("investigation").filter(pk=item_id).first()


def checklist_item_by_key(*, investigation: Investigation, key: str) -> ChecklistItem | None:
    """The investigation's checklist item with this key, or None (the row only)."""
    return investigation.checklist.filter(key=key).first()


def checklist_progress(items) -> tuple[int, int]:
    """(settled, total): done or not applicable, out of all (from items already loaded)."""
    items = list(items)
    return sum(1 for i in items if i.status in SETTLED_ITEM_STATUSES), len(items)


def checklist_counts(*, investigation: Investigation) -> tuple[int, int]:
    """(settled, total) as checklist_progress counts them, in one query, loading no item."""
    counts = investigation.checklist.aggregate(
        settled=Count("id", filter=Q(status__in=SETTLED_ITEM_STATUSES)), total=Count("id")
    )
    return counts["settled"], counts["total"]


def checklist_version(*, investigation: Investigation) -> str:
    """Changes whenever an item is added or changed, or new baseline results arrive (the
    "same sides" step shows their counts): two aggregate queries."""
    stats = investigation.checklist.aggregate(count=Count("id"), last=Max("updated_at"))
    last = stats["last"].timestamp() if stats["last"] else 0
    baseline = investigation.baseline_results.aggregate(last=Max("id"))["last"] or 0
    return f"{stats['count']}-{last}-{baseline}"


def my_checklist_items(*, user: AbstractBaseUser) -> QuerySet[ChecklistItem]:
    """The user's unfinished items in their teams' investigations, newest case first, with
    investigation and team loaded."""
    return (
        of_member(ChecklistItem.objects.filter(assignee=user), user, path="investigation__team")
        .exclude(status__in=SETTLED_ITEM_STATUSES)
        .select_related("investigation__team")
        .order_by("-investigation__created_at", "position")
    )
