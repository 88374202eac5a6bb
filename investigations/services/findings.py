"""Findings: the rules' verdicts, raised once, resolved when the difference goes away."""

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from investigations.analysis.rules import evaluate
from investigations.choices import EventKind, FindingSeverity, FindingStatus
from investigations.models import Finding, Investigation
from investigations.selectors import fact_pairs
from investigations.services.checklist import checklist_refresh
from investigations.services.timeline import in_english, timeline_event_log


@transaction.atomic
def findings_refresh(*, investigation: Investigation) -> None:
    """Re-run the rules on the newest facts of every complete host pair."""
    # One refresh at a time per investigation: targets finishing together would race.
    Investigation.objects.select_for_update().filter(pk=investigation.pk).first()
    now = timezone.now()
    existing = {
        (f.rule, f.subject, f.pair_key): f
        for f in Finding.objects.filter(investigation=investigation)
    }
    evaluated_pairs, seen = set(), set()
    raised, back, gone = [], [], []
    for pair in fact_pairs(investigation=investigation):
        if not pair.complete:
            continue
        evaluated_pairs.add(pair.key)
        for verdict in evaluate(pair.snapshot_a.facts, pair.snapshot_b.facts):
            identity = (verdict.rule, verdict.subject, pair.key)
            seen.add(identity)
            values = {
                "severity": verdict.severity,
                "title": verdict.title,
                "explanation": verdict.explanation,
                "recommendation": verdict.recommendation,
                "side_a": verdict.side_a,
                "side_b": verdict.side_b,
                "last_seen_at": now,
            }
            finding = existing.get(identity)
            if finding is None:
                finding = Finding.objects.create(
                    investigation=investigation,
                    rule=verdict.rule,
                    subject=verdict.subject,
                    host_a=pair.a.host,
                    host_b=pair.b.host,
                    pair_key=pair.key,
                    first_seen_at=now,
                    **values,
                )
                raised.append(finding)
                continue
            reappeared = finding.status == FindingStatus.RESOLVED
            if reappeared:
                values.update(status=FindingStatus.OPEN, resolved_at=None)
            Finding.objects.filter(pk=finding.pk).update(**values)
            if reappeared:
                back.append(finding)
    for identity, finding in existing.items():
        vanished = identity not in seen and finding.pair_key in evaluated_pairs
        if vanished and finding.status != FindingStatus.RESOLVED:
            Finding.objects.filter(pk=finding.pk).update(
                status=FindingStatus.RESOLVED, resolved_at=now
            )
            gone.append(finding)
    # One timeline event per kind of change, not one per finding.
    for findings, what in (
        (raised, "New findings"),
        (back, "Findings back"),
        (gone, "Findings resolved, the difference is gone"),
    ):
        if findings:
            _log_many(investigation, findings, what)


def _log_many(investigation: Investigation, findings: list[Finding], what: str) -> None:
    by_severity = sorted(findings, key=lambda f: FindingSeverity.rank(f.severity))
    titles = "; ".join(f.title for f in by_severity[:5])
    more = f"; and {len(findings) - 5} more" if len(findings) > 5 else ""
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.FINDING,
        summary=f"{what} ({len(findings)}): {titles}{more}",
        details={"findings": [f.pk for f in by_severity]},
    )


def _log(finding: Finding, summary: str, user=None) -> None:
    timeline_event_log(
        investigation=finding.investigation,
        kind=EventKind.FINDING,
        summary=summary,
        author=user,
        details={"finding": finding.pk, "rule": finding.rule, "severity": finding.severity},
    )


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
    label = in_english(FindingStatus(status).label).lower()
    _log(finding, f"Finding {label}: {finding.title}", user=user)
    checklist_refresh(investigation=finding.investigation)
    return finding
