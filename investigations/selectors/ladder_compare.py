"""Reads of a ladder run again to verify a fix: the two runs compared, and the case's latest
rerun (what the checklist, the ladder's page and the postmortem read)."""

from dataclasses import dataclass

from investigations.analysis.ladder_compare import Comparison, compare
from investigations.choices import LadderStatus
from investigations.models import Investigation, Ladder
from investigations.selectors.ladders import ladder_points, ladder_sides


def ladders_in_order(first: Ladder, second: Ladder) -> tuple[Ladder, Ladder]:
    """(before, after): the one created first is the run before the fix."""
    return tuple(sorted((first, second), key=lambda ladder: (ladder.created_at, ladder.pk)))


def ladder_comparison(*, before: Ladder, after: Ladder, sides=None) -> tuple[Comparison, dict]:
    """The two runs compared by the margin of the run before (its settings are the rerun's),
    and each run's points by side ({"before": ..., "after": ...}, for the charts). `sides`:
    the after run's sides, when the caller loaded them already. Four queries at most."""
    points = {
        "before": ladder_points(ladder_sides(ladder=before)),
        "after": ladder_points(sides if sides is not None else ladder_sides(ladder=after)),
    }
    return compare(points["before"], points["after"], before.margin), points


def latest_rerun(*, investigation: Investigation) -> Ladder | None:
    """The case's newest rerun that completed, with the ladder it ran again loaded (one
    query); None without one."""
    return (
        investigation.ladders.filter(rerun_of__isnull=False, status=LadderStatus.COMPLETED)
        .select_related("rerun_of")
        .first()
    )


@dataclass
class RerunCheck:
    """The case's newest completed rerun against the ladder it ran again (the postmortem's
    before and after)."""

    before: Ladder
    after: Ladder
    comparison: Comparison
    points: dict  # {"before": {side: [Point]}, "after": ...}: the charts'
    labels: dict  # {side key: label}


def rerun_check(*, investigation: Investigation) -> RerunCheck | None:
    """The newest completed rerun compared with what it ran again, or None (a few queries)."""
    rerun = latest_rerun(investigation=investigation)
    if rerun is None:
        return None
    sides = ladder_sides(ladder=rerun)
    comparison, points = ladder_comparison(before=rerun.rerun_of, after=rerun, sides=sides)
    labels = {side.side.key: side.side.label for side in sides}
    return RerunCheck(rerun.rerun_of, rerun, comparison, points, labels)


def latest_rerun_comparison(*, investigation: Investigation) -> tuple[Ladder, Comparison] | None:
    """The case's newest completed rerun and its comparison with the ladder it ran again."""
    rerun = latest_rerun(investigation=investigation)
    if rerun is None:
        return None
    comparison, _points = ladder_comparison(before=rerun.rerun_of, after=rerun)
    return rerun, comparison
