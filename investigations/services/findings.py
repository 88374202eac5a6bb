"""Findings: the rules' verdicts, raised once, resolved when the difference goes away."""

from collections.abc import Callable
from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase, as_phrase, joined
from investigations.analysis.rules import evaluate
from investigations.choices import EventKind, FindingSeverity, FindingStatus
from investigations.models import Finding, Investigation, RootCause
from investigations.phrases import stored_phrase, with_phrases
from investigations.selectors import fact_pairs
from investigations.services.checklist import checklist_refresh
from investigations.services.timeline import timeline_event_log

# What a rule says of a finding, compared with what it said last time (the texts in English
# and the phrases they were made from).
VERDICT_FIELDS = (
    "severity",
    "title",
    "explanation",
    "recommendation",
    "side_a",
    "side_b",
    "phrases",
)


@dataclass(frozen=True)
class PairVerdicts:
    """What the rules of one kind of evidence say of one pair of hosts. Each kind keys its
    pairs its own way ("a:b" for facts, "profile:a:b" for profiles), so that a kind resolves
    only the findings it raised."""

    key: str
    host_a: object  # Host or None
    host_b: object
    verdicts: list


@transaction.atomic
def findings_refresh(*, investigation: Investigation) -> None:
    """Re-run the fact rules on the newest facts of every complete host pair."""
    findings_recheck(
        investigation=investigation,
        read_pairs=lambda: [
            PairVerdicts(
                pair.key,
                pair.a.host,
                pair.b.host,
                evaluate(pair.snapshot_a.facts, pair.snapshot_b.facts),
            )
            for pair in fact_pairs(investigation=investigation)
            if pair.complete
        ],
    )


@transaction.atomic
def findings_recheck(
    *, investigation: Investigation, read_pairs: Callable[[], list[PairVerdicts]]
) -> None:
    """The rules' verdicts on the pairs `read_pairs` reads, now: findings raised once,
    updated, back when they return, resolved when their pair no longer shows them.

    One refresh at a time per investigation, and the pairs are read only once the case is
    locked: two threads that store the two sides of a pair at once (a diagnosis's captures
    at the knee, a collection each) and each read the pairs before waiting for the lock
    would each see its own side alone, and neither would compare them; read after the lock,
    the second sees what the first committed."""
    Investigation.objects.select_for_update().filter(pk=investigation.pk).first()
    pairs = read_pairs()
    now = timezone.now()
    # Rows, not models: a case holds hundreds of findings, and most come back as they were.
    existing = {
        (row["rule"], row["subject"], row["pair_key"]): row
        for row in Finding.objects.filter(investigation=investigation).values(
            "pk", "rule", "subject", "pair_key", "status", "root_cause_id", *VERDICT_FIELDS
        )
    }
    # The knowledge-base entries the verdicts point to, by slug: the installation's only (a
    # team's entry is not read by every team whose findings the rules raise).
    entries = dict(
        RootCause.objects.filter(
            team__isnull=True,
            slug__in={v.root_cause for pair in pairs for v in pair.verdicts if v.root_cause},
        ).values_list("slug", "pk")
    )
    evaluated_pairs, seen = set(), set()
    raised, back = [], []
    for pair in pairs:
        evaluated_pairs.add(pair.key)
        for verdict in pair.verdicts:
            identity = (verdict.rule, verdict.subject, pair.key)
            seen.add(identity)
            values = with_phrases({field: getattr(verdict, field) for field in VERDICT_FIELDS[:-1]})
            values["root_cause_id"] = entries.get(verdict.root_cause)
            row = existing.get(identity)
            if row is None:
                raised.append(
                    Finding(
                        investigation=investigation,
                        rule=verdict.rule,
                        subject=verdict.subject,
                        host_a=pair.host_a,
                        host_b=pair.host_b,
                        pair_key=pair.key,
                        first_seen_at=now,
                        last_seen_at=now,
                        **values,
                    )
                )
                continue
            changes = {field: value for field, value in values.items() if row[field] != value}
            if row["status"] == FindingStatus.RESOLVED:
                changes.update(status=FindingStatus.OPEN, resolved_at=None)
                back.append({"pk": row["pk"], **values})
            if changes:
                Finding.objects.filter(pk=row["pk"]).update(**changes)
    # A first collection raises hundreds at once (every difference of every pair).
    raised = [
        {"pk": finding.pk, "severity": finding.severity, "phrases": finding.phrases}
        for finding in Finding.objects.bulk_create(raised)
    ]
    vanished = [
        row
        for identity, row in existing.items()
        if identity not in seen and row["pair_key"] in evaluated_pairs
    ]
    gone = [row for row in vanished if row["status"] != FindingStatus.RESOLVED]
    Finding.objects.filter(pk__in=[row["pk"] for row in gone]).update(
        status=FindingStatus.RESOLVED, resolved_at=now
    )
    # Whatever the rules still see was seen now: one statement for all of them.
    Finding.objects.filter(investigation=investigation, pair_key__in=evaluated_pairs).exclude(
        pk__in=[row["pk"] for row in vanished]
    ).update(last_seen_at=now)
    # One timeline event per kind of change, not one per finding.
    for rows, what in (
        (raised, gettext_noop("New findings (%(count)s): %(titles)s")),
        (back, gettext_noop("Findings back (%(count)s): %(titles)s")),
        (gone, gettext_noop("Findings resolved, the difference is gone (%(count)s): %(titles)s")),
    ):
        if rows:
            _log_many(investigation, rows, what)


def findings_record(*, investigation: Investigation, pairs: list[PairVerdicts]) -> None:
    """findings_recheck on pairs read already (the demo's and the tests' own verdicts)."""
    findings_recheck(investigation=investigation, read_pairs=lambda: pairs)


def _log_many(investigation: Investigation, rows: list[dict], what: str) -> None:
    """rows: findings as {"pk", "severity", "title", "phrases", ...}; what: the template."""
    by_severity = sorted(rows, key=lambda row: FindingSeverity.rank(row["severity"]))
    titles = [_title_of(row) for row in by_severity[:5]]
    if len(rows) > 5:
        titles.append(Phrase(gettext_noop("and %(count)s more"), count=len(rows) - 5))
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.FINDING,
        summary=Phrase(what, count=len(rows), titles=joined(titles)),
        details={"findings": [row["pk"] for row in by_severity]},
    )


def _title_of(row: dict) -> Phrase:
    data = (row.get("phrases") or {}).get("title")
    return Phrase.from_json(data) if data else as_phrase(row.get("title", ""))


def _log(finding: Finding, summary: Phrase, user=None) -> None:
    timeline_event_log(
        investigation=finding.investigation,
        kind=EventKind.FINDING,
        summary=summary,
        author=user,
        details={"finding": finding.pk, "rule": finding.rule, "severity": finding.severity},
    )


# What the timeline says when a person confirms, dismisses or reopens a finding.
STATUS_CHANGED = {
    FindingStatus.OPEN: gettext_noop("Finding open: %(title)s"),
    FindingStatus.CONFIRMED: gettext_noop("Finding confirmed: %(title)s"),
    FindingStatus.DISMISSED: gettext_noop("Finding dismissed: %(title)s"),
}


@transaction.atomic
def finding_set_status(*, finding: Finding, user, status: str) -> Finding:
    """People confirm or dismiss a finding, or open it again."""
    allowed = [FindingStatus.OPEN, FindingStatus.CONFIRMED, FindingStatus.DISMISSED]
    if status not in allowed:
        raise ValidationError(
            {"status": _("Choose one of: %(choices)s.") % {"choices": ", ".join(allowed)}}
        )
    old = finding.status
    if old == status:
        return finding
    finding.status = status
    finding.save(update_fields=["status"])
    _log(
        finding,
        Phrase(STATUS_CHANGED[status], title=stored_phrase(finding, "title")),
        user=user,
    )
    checklist_refresh(investigation=finding.investigation)
    return finding
