"""Reads of a case's root causes: those confirmed, with their evidence as a person reads it
(a label and a link each), those its findings point to, and what may be offered as evidence."""

from collections import Counter
from dataclasses import dataclass, field

from investigations.choices import FindingStatus
from investigations.kinds import evidence_kinds
from investigations.models import CaseRootCause, Finding, Investigation, RootCause

MAX_OFFERED = 50  # of each kind of evidence, newest first


@dataclass(frozen=True)
class EvidenceItem:
    kind: str
    id: int
    label: str
    url: str

    @property
    def key(self) -> str:
        """The form's value for it: "kind:id"."""
        return f"{self.kind}:{self.id}"


@dataclass
class ConfirmedCause:
    found: CaseRootCause
    evidence: list[EvidenceItem] = field(default_factory=list)

    @property
    def root_cause(self) -> RootCause:
        return self.found.root_cause


@dataclass(frozen=True)
class PointedCause:
    """An entry the case's findings point to, not confirmed on it yet."""

    root_cause: RootCause
    findings: list[Finding]


def _labels(investigation: Investigation, items: list[dict]) -> dict[tuple[str, int], EvidenceItem]:
    """Each {kind, id} of this case as an EvidenceItem (those gone since are left out): a
    query for each registered kind named."""
    wanted: dict[str, set[int]] = {}
    for item in items:
        wanted.setdefault(item["kind"], set()).add(item["id"])
    found: dict[tuple[str, int], EvidenceItem] = {}
    for kind in evidence_kinds():
        if ids := wanted.get(kind.key):
            for row, label, url in kind.evidence.labelled(investigation, ids):
                found[(kind.key, row.pk)] = EvidenceItem(kind.key, row.pk, label, url)
    return found


def case_root_causes(*, investigation: Investigation) -> list[ConfirmedCause]:
    """The root causes confirmed on the case, in the order confirmed, with their evidence."""
    confirmed = list(
        CaseRootCause.objects.filter(investigation=investigation).select_related(
            "root_cause", "confirmed_by"
        )
    )
    labels = _labels(investigation, [item for found in confirmed for item in found.evidence])
    return [
        ConfirmedCause(
            found,
            [
                labels[key]
                for item in found.evidence
                if (key := (item["kind"], item["id"])) in labels
            ],
        )
        for found in confirmed
    ]


def pointed_root_causes(*, investigation: Investigation) -> list[PointedCause]:
    """The entries the case's open or confirmed findings point to and that are not confirmed
    on it yet, those with confirmed findings and most findings first."""
    confirmed = set(investigation.case_root_causes.values_list("root_cause_id", flat=True))
    findings = list(
        investigation.findings.filter(
            root_cause__isnull=False, status__in=[FindingStatus.OPEN, FindingStatus.CONFIRMED]
        )
        .exclude(root_cause__in=confirmed)
        .select_related("root_cause")
    )
    by_cause: dict[int, list[Finding]] = {}
    for finding in findings:
        by_cause.setdefault(finding.root_cause_id, []).append(finding)
    rank = Counter({pk: len(found) for pk, found in by_cause.items()})
    return sorted(
        (PointedCause(found[0].root_cause, found) for found in by_cause.values()),
        key=lambda p: (
            not any(f.status == FindingStatus.CONFIRMED for f in p.findings),
            -rank[p.root_cause.pk],
            p.root_cause.title,
        ),
    )


def offered_evidence(*, investigation: Investigation) -> dict[str, list[EvidenceItem]]:
    """What the confirm form offers as evidence, by kind (each registered kind's newest:
    findings not dismissed, profiles, captures, ladders, the notes and actions of the
    timeline)."""
    items = [
        {"kind": kind.key, "id": pk}
        for kind in evidence_kinds()
        for pk in kind.evidence.offered(investigation).values_list("pk", flat=True)[:MAX_OFFERED]
    ]
    labels = _labels(investigation, items)
    offered: dict[str, list[EvidenceItem]] = {}
    for item in items:
        if (key := (item["kind"], item["id"])) in labels:
            offered.setdefault(item["kind"], []).append(labels[key])
    return offered


def confirmed_root_cause_ids(*, investigation: Investigation) -> set[int]:
    return set(investigation.case_root_causes.values_list("root_cause_id", flat=True))
