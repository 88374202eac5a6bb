"""Reads of CPU profiles: an investigation's profiles, the newest per host, and the pairs
the rules and the differential view compare."""

from django.db.models import QuerySet

from investigations.models import Investigation, Profile
from investigations.selectors.evidence_pairs import (
    EvidencePair,
    evidence_get,
    ladder_rows,
    newest_pairs,
)


def profiles_for(*, investigation: Investigation) -> QuerySet[Profile]:
    """The investigation's profiles, newest first, with host and side loaded."""
    return investigation.profiles.select_related("host", "side")


def profile_get(*, investigation: Investigation, profile_id) -> Profile | None:
    """The investigation's profile with this id, or None."""
    return evidence_get(rows=profiles_for(investigation=investigation), pk=profile_id)


def profile_pairs(*, investigation: Investigation) -> list[EvidencePair]:
    """The newest profile of each side of every host pair that has one on both sides, and
    the newest imported profiles of each side when both sides have one."""
    return newest_pairs(
        investigation=investigation,
        rows=profiles_for(investigation=investigation),
        kind="profile",
    )


def ladder_profiles(*, ladder) -> list[Profile]:
    """The profiles taken during the ladder's steps, by step; each with `step` (from 1)."""
    return ladder_rows(rows=Profile.objects.all(), ladder=ladder)
