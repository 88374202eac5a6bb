"""Reads of packet captures: an investigation's captures and the pairs compared.

Which two captures compare by default: like with like. For each host pair (and for the
imports) the newest captures of both sides taken at the same moment (the same collection,
or the same ladder step), else the newest of each side; never a damaged one (a file that
ends inside a record or is damaged further on was analysed up to the damage only: it holds a
part of the traffic, and its figures are no side's). A person can still compare any two
captures by naming them.
"""

from django.db.models import BooleanField, Case, Q, QuerySet, Value, When
from django.utils.translation import gettext_noop

from collectors.filekind import EXAMPLES_KEPT, ReadReport
from investigations.choices import CaptureStatus, SideKey
from investigations.jobs import JobKind, register
from investigations.models import Capture, Investigation
from investigations.selectors.evidence_pairs import EvidencePair, evidence_get, ladder_rows
from investigations.selectors.inventory import host_pairs

# The analysis counts the places where the file is damaged (collectors.capture: "problems");
# an analysis stored without the count (a test's, an older one) says nothing of damage.
UNDAMAGED = Q(analysis__problem_count=0) | Q(analysis__problem_count__isnull=True)
# What a comparison, a finding or the ranking may read by itself: undamaged, and something
# seen (a capture whose filter or interface missed the traffic is kept, but shows nothing
# of either side: compared, it would count as "no difference").
COMPARABLE = UNDAMAGED & Q(packets__gt=0)

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


def capture_choices(*, investigation: Investigation) -> QuerySet[Capture]:
    """The analysed captures a person may compare, newest first, each with `damaged`."""
    return (
        captures_for(investigation=investigation)
        .filter(job__status=CaptureStatus.READY)
        .annotate(
            damaged=Case(
                When(UNDAMAGED, then=Value(False)), default=True, output_field=BooleanField()
            )
        )
    )


def capture_damaged(capture: Capture) -> bool:
    """The file is damaged (or cut short inside a record): analysed up to the damage only."""
    return bool((capture.analysis or {}).get("problem_count"))


# Packets of a capture whose contents the analysis could not read, by why (its decode counts).
UNREAD_PACKETS = {
    "malformed": "malformed",
    "truncated": "cut by the snap length before their TCP header",
    "unsupported_link": "of a link type not read here",
    "short_tcp": "with a TCP header shorter than 20 bytes",
    "unreadable_tunnel": "inside a tunnel not read here",
    "ip_fragments": "TCP in IP fragments, not reassembled",
}


def capture_read(capture: Capture) -> ReadReport | None:
    """What an analysed capture held: its packets, and those whose contents could not be
    read, by why (None while it is analysed, or when the analysis failed)."""
    analysis = capture.analysis or {}
    if "packets" not in analysis:
        return None
    decode = analysis.get("decode") or {}
    return ReadReport(
        file=capture.name,
        format="pcap",
        unit="packets",
        read=int(analysis["packets"] or 0),
        skipped={why: decode[key] for key, why in UNREAD_PACKETS.items() if decode.get(key)},
        examples=tuple(
            f"byte {problem.get('offset')}: {problem.get('message')}"
            for problem in (analysis.get("problems") or [])[:EXAMPLES_KEPT]
        ),
    )


def _comparable(investigation: Investigation) -> QuerySet[Capture]:
    """The analysed captures a comparison may choose by itself (COMPARABLE), newest first,
    with what says when each was taken (its collection) and without their analyses."""
    return (
        investigation.captures.filter(COMPARABLE, job__status=CaptureStatus.READY)
        .select_related("host", "side", "job", "target__collection")
        .defer("analysis", "marks")
    )


def capture_moment(capture: Capture) -> tuple | None:
    """What captures taken together share: their ladder step, else their collection; None
    for an import (nothing says when it was taken)."""
    if capture.target_id is None:
        return None
    collection = capture.target.collection
    ladder = collection.parameters.get("ladder")
    if ladder:
        return ("step", ladder, collection.parameters.get("step"))
    return ("collection", collection.pk)


def _same_moment_or_newest(a_rows: list, b_rows: list) -> tuple | None:
    """(a, b): the newest pair taken at the same moment, else the newest of each side."""
    if not a_rows or not b_rows:
        return None
    b_by_moment: dict = {}
    for row in b_rows:
        moment = capture_moment(row)
        if moment is not None:
            b_by_moment.setdefault(moment, row)
    for row in a_rows:
        match = b_by_moment.get(capture_moment(row))
        if match is not None:
            return row, match
    return a_rows[0], b_rows[0]


def capture_pairs(*, investigation: Investigation) -> list[EvidencePair]:
    """For each host pair with analysed captures on both sides, and for the imports (which
    name no host): the two captures compared by default (see the module's docstring), with
    their analyses loaded."""
    by_host: dict[tuple, list] = {}
    for row in _comparable(investigation):
        by_host.setdefault((row.host_id, row.side.key), []).append(row)
    if not by_host:
        return []  # nothing to pair: the host pairs are not read
    chosen, seen = [], set()
    for pair in host_pairs(investigation=investigation):
        if pair.a is None or pair.b is None:
            continue
        key = f"capture:{pair.a.host_id}:{pair.b.host_id}"
        found = _same_moment_or_newest(
            by_host.get((pair.a.host_id, SideKey.A), []),
            by_host.get((pair.b.host_id, SideKey.B), []),
        )
        if found and key not in seen:
            seen.add(key)
            chosen.append((key, *found))
    found = _same_moment_or_newest(
        by_host.get((None, SideKey.A), []), by_host.get((None, SideKey.B), [])
    )
    if found:
        chosen.append(("capture:imported", *found))
    # Their analyses, in one query: only the chosen ones are read whole.
    ids = {capture.pk for _, a, b in chosen for capture in (a, b)}
    loaded = investigation.captures.select_related("host", "side").in_bulk(ids)
    return [EvidencePair(key, loaded[a.pk], loaded[b.pk]) for key, a, b in chosen]


def capture_counterpart(*, investigation: Investigation, capture: Capture) -> Capture | None:
    """The capture of the other side to compare `capture` with: one taken at the same moment
    if there is one, else the other side's newest; never a damaged one."""
    others = list(_comparable(investigation).exclude(side_id=capture.side_id))
    moment = capture_moment(capture)
    if moment is not None:
        for other in others:
            if capture_moment(other) == moment:
                return other
    return others[0] if others else None


def ladder_captures(*, ladder) -> list[Capture]:
    """The captures taken during the ladder's steps, by step; each with `step` (from 1)."""
    rows = Capture.objects.select_related("job").defer("analysis", "marks")
    return ladder_rows(rows=rows, ladder=ladder)
