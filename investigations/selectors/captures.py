"""Reads of packet captures: an investigation's captures and the pairs compared."""

from django.db.models import QuerySet
from django.utils.translation import gettext_noop

from investigations.choices import CaptureStatus
from investigations.jobs import JobKind, register
from investigations.models import Capture, Investigation
from investigations.selectors.evidence_pairs import (
    EvidencePair,
    evidence_get,
    ladder_rows,
    newest_pairs,
)

# An analysis past its deadline (its worker stopped, or the file is too large) ends so.
OVERDUE = gettext_noop(
    "The analysis did not finish within its time limit (its worker stopped or the file is "
    "too large): import it again to retry."
)
CAPTURE_JOB = register(
    JobKind("capture_analysis", overdue={CaptureStatus.ANALYSING.value: OVERDUE})
)


def captures_for(*, investigation: Investigation) -> QuerySet[Capture]:
    """The investigation's captures, newest first, with host and side loaded (without their
    analyses: those can be large)."""
    return investigation.captures.select_related("host", "side", "job").defer("analysis", "marks")


def capture_get(*, investigation: Investigation, capture_id) -> Capture | None:
    """The investigation's capture with this id (its analysis loaded), or None."""
    rows = investigation.captures.select_related("host", "side", "job")
    return evidence_get(rows=rows, pk=capture_id)


def capture_pairs(*, investigation: Investigation) -> list[EvidencePair]:
    """The newest analysed capture of each side of every host pair, and of the imports."""
    ready = investigation.captures.filter(job__status=CaptureStatus.READY).select_related(
        "host", "side", "job"
    )
    return newest_pairs(investigation=investigation, rows=ready, kind="capture")


def ladder_captures(*, ladder) -> list[Capture]:
    """The captures taken during the ladder's steps, by step; each with `step` (from 1)."""
    rows = Capture.objects.select_related("job").defer("analysis", "marks")
    return ladder_rows(rows=rows, ladder=ladder)
