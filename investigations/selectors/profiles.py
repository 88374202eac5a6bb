"""Reads of CPU profiles: an investigation's profiles, the newest per host, and the pairs
the rules and the differential view compare."""

from django.db.models import QuerySet

from collectors.stacks.profile import kernel_frames_seen
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


# What a profile's counts are (profile_counts): plain samples (a perf script, or a folded
# file of samples), events weighted by each sample's period (a folded file as
# stackcollapse-perf.pl writes it, whole counts too large to be samples), or fractional
# weights (a scaled or normalised folded file).
SAMPLES, PERIOD, WEIGHTS = "samples", "period", "weights"


def profile_counts(profile: Profile) -> str:
    """SAMPLES, PERIOD or WEIGHTS: what the profile's numbers count (the services store
    no sample count when a file's counts were weights, see counts_are_periods)."""
    if profile.samples or not profile.weight:
        return SAMPLES
    return PERIOD if float(profile.weight).is_integer() else WEIGHTS


def profile_kernel_stacks(profile: Profile, weights) -> bool | None:
    """Whether the profile has kernel stacks: what the host's check said, or frames marked
    `_[k]` among its stacks (an import, or a profile stored before they were looked for)."""
    if profile.kernel_stacks or kernel_frames_seen(weights):
        return True
    return profile.kernel_stacks
