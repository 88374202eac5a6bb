"""Reads of findings."""

from django.db.models import Case, IntegerField, QuerySet, Value, When

from investigations.choices import ACTIVE_FINDING_STATUSES, FindingSeverity
from investigations.models import Finding, Investigation

# The key prefix of verdicts recorded from the figures a case's story gives (the demo's past
# cases: a CPU count, a capture's rates), not from evidence Perfcase holds: their findings
# say so, and the evidence card says why no host facts back them.
STORY_PAIR = "story:"


def findings_for(*, investigation: Investigation, status: str = "") -> QuerySet[Finding]:
    """Findings, the most severe first; open and confirmed ones before the rest. Their hosts
    are loaded."""
    severity_rank = Case(
        *[When(severity=s, then=Value(FindingSeverity.rank(s))) for s in FindingSeverity.values],
        output_field=IntegerField(),
    )
    settled = Case(
        When(status__in=ACTIVE_FINDING_STATUSES, then=Value(0)),
        default=Value(1),
        output_field=IntegerField(),
    )
    findings = investigation.findings.select_related("host_a", "host_b", "root_cause").order_by(
        settled, severity_rank, "rule", "subject"
    )
    return findings.filter(status=status) if status else findings


def story_findings_count(*, investigation: Investigation) -> int:
    """How many findings were recorded from the case's story, not from its evidence."""
    return investigation.findings.filter(pair_key__startswith=STORY_PAIR).count()
