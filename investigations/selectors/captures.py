"""Reads of packet captures: an investigation's captures and the pairs compared."""

from django.db.models import QuerySet

from investigations.choices import CaptureStatus
from investigations.models import Capture, Investigation
from investigations.selectors.evidence_pairs import (
    EvidencePair,
    evidence_get,
    ladder_rows,
    newest_pairs,
)


def captures_for(*, investigation: Investigation) -> QuerySet[Capture]:
    """The investigation's captures, newest first, with host and side loaded (without their
    analyses: those can be large)."""
    return investigation.captures.select_related("host", "side").defer("analysis", "marks")


def capture_get(*, investigation: Investigation, capture_id) -> Capture | None:
    """The investigation's capture with this id (its analysis loaded), or None."""
    return evidence_get(rows=investigation.captures.select_related("host", "side"), pk=capture_id)


def capture_pairs(*, investigation: Investigation) -> list[EvidencePair]:
    """The newest analysed capture of each side of every host pair, and of the imports."""
    ready = investigation.captures.filter(status=CaptureStatus.READY).select_related("host", "side")
    return newest_pairs(investigation=investigation, rows=ready, kind="capture")


def ladder_captures(*, ladder) -> list[Capture]:
    """The captures taken during the ladder's steps, by step; each with `step` (from 1)."""
    return ladder_rows(rows=Capture.objects.defer("analysis", "marks"), ladder=ladder)
