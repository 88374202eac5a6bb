"""Findings: the rules' verdicts on every kind's evidence, named as a root cause's evidence."""

from django.urls import reverse

from investigations.choices import EvidenceKind, FindingStatus
from investigations.kinds import EvidenceSource, Kind, register
from investigations.models import Finding
from investigations.phrases import stored_text


def _url(finding) -> str:
    return reverse("investigation_detail", args=[finding.investigation_id]) + (
        f"#finding-{finding.pk}"
    )


register(
    Kind(
        key=EvidenceKind.FINDING,
        label=EvidenceKind.FINDING.label,
        order=15,
        evidence=EvidenceSource(
            model=Finding,
            rows=lambda investigation: investigation.findings.all(),
            offer=lambda investigation: investigation.findings.exclude(
                status=FindingStatus.DISMISSED
            ).order_by("-last_seen_at"),
            label=lambda finding: stored_text(finding, "title"),
            url=_url,
        ),
    )
)
