"""Reads of investigations and their sides."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from investigations.models import Investigation, Side
from investigations.selectors.teams import of_member

# What the API's answer reads of the confirmed root causes.
ROOT_CAUSES = ("case_root_causes__root_cause", "case_root_causes__confirmed_by")


def investigation_list(
    *, user: AbstractBaseUser, with_sides: bool = False
) -> QuerySet[Investigation]:
    """The investigations of the user's teams, with team, lead and tags loaded (and sides,
    with_sides)."""
    investigations = (
        of_member(Investigation.objects.all(), user)
        .select_related("team", "lead")
        .prefetch_related("tags")
    )
    if not with_sides:
        return investigations
    return investigations.prefetch_related("sides", *ROOT_CAUSES)


def investigation_with_details(*, investigation_id: int) -> Investigation:
    """The investigation with lead, tags and sides loaded (what the API's answer reads).
    Call it once access is checked: it raises DoesNotExist for none."""
    return (
        Investigation.objects.select_related("lead")
        .prefetch_related("tags", "sides", *ROOT_CAUSES)
        .get(pk=investigation_id)
    )


def investigation_tag_names(*, investigation: Investigation) -> list[str]:
    """The names of the investigation's tags, by name (one query)."""
    return list(investigation.tags.values_list("name", flat=True))


def side_get(*, investigation: Investigation, key: str) -> Side | None:
    """The investigation's side with this key (a or b), or None (the row only)."""
    return investigation.sides.filter(key=key).first()
