"""Reads of a case's root causes: those confirmed, with their evidence as a person reads it
(a label and a link each), those its findings point to, and what may be offered as evidence."""

from collections import Counter
from dataclasses import dataclass, field

from django.urls import reverse

from investigations.choices import EvidenceKind, FindingStatus
from investigations.models import (
    CaseRootCause,
    Finding,
    Investigation,
    RootCause,
    TimelineEvent,
)
from investigations.phrases import stored_text

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
    """Each {kind, id} of this case as an EvidenceItem (those gone since are left out)."""
    wanted: dict[str, set[int]] = {}
    for item in items:
        wanted.setdefault(item["kind"], set()).add(item["id"])
    found: dict[tuple[str, int], EvidenceItem] = {}
    page = reverse("investigation_detail", args=[investigation.pk])
    if ids := wanted.get(EvidenceKind.FINDING):
        for finding in investigation.findings.filter(pk__in=ids):
            found[(EvidenceKind.FINDING, finding.pk)] = EvidenceItem(
                EvidenceKind.FINDING,
                finding.pk,
                stored_text(finding, "title"),
                f"{page}#finding-{finding.pk}",
            )
    if ids := wanted.get(EvidenceKind.PROFILE):
        for profile in investigation.profiles.filter(pk__in=ids).select_related("side"):
            found[(EvidenceKind.PROFILE, profile.pk)] = EvidenceItem(
                EvidenceKind.PROFILE,
                profile.pk,
                f"{profile.name} ({profile.side.key.upper()})",
                reverse("profile_detail", args=[investigation.pk, profile.pk]),
            )
    if ids := wanted.get(EvidenceKind.CAPTURE):
        for capture in investigation.captures.filter(pk__in=ids).select_related("side"):
            found[(EvidenceKind.CAPTURE, capture.pk)] = EvidenceItem(
                EvidenceKind.CAPTURE,
                capture.pk,
                f"{capture.name} ({capture.side.key.upper()})",
                reverse("capture_detail", args=[investigation.pk, capture.pk]),
            )
    if ids := wanted.get(EvidenceKind.LADDER):
        for ladder in investigation.ladders.filter(pk__in=ids):
            found[(EvidenceKind.LADDER, ladder.pk)] = EvidenceItem(
                EvidenceKind.LADDER,
                ladder.pk,
                f"#{ladder.pk} {ladder.created_at:%Y-%m-%d %H:%M}",
                reverse("ladder_detail", args=[ladder.pk]),
            )
    if ids := wanted.get(EvidenceKind.EVENT):
        for event in investigation.events.filter(pk__in=ids, deleted_at__isnull=True):
            found[(EvidenceKind.EVENT, event.pk)] = EvidenceItem(
                EvidenceKind.EVENT,
                event.pk,
                f"{event.occurred_at:%Y-%m-%d %H:%M} {stored_text(event, 'summary')[:120]}",
                reverse("timeline", args=[investigation.pk]) + f"#event-{event.pk}",
            )
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
    """What the confirm form offers as evidence, by kind: findings not dismissed, profiles,
    captures, ladders, and the notes and actions of the timeline."""
    items = [
        {"kind": EvidenceKind.FINDING, "id": pk}
        for pk in investigation.findings.exclude(status=FindingStatus.DISMISSED)
        .order_by("-last_seen_at")
        .values_list("pk", flat=True)[:MAX_OFFERED]
    ]
    for kind, rows in (
        (EvidenceKind.PROFILE, investigation.profiles.all()),
        (EvidenceKind.CAPTURE, investigation.captures.all()),
        (EvidenceKind.LADDER, investigation.ladders.order_by("-created_at")),
        (
            EvidenceKind.EVENT,
            TimelineEvent.objects.filter(
                investigation=investigation, kind__in=["note", "action"], deleted_at__isnull=True
            ).order_by("-occurred_at"),
        ),
    ):
        items += [
            {"kind": kind, "id": pk} for pk in rows.values_list("pk", flat=True)[:MAX_OFFERED]
        ]
    labels = _labels(investigation, items)
    offered: dict[str, list[EvidenceItem]] = {}
    for item in items:
        if (key := (item["kind"], item["id"])) in labels:
            offered.setdefault(item["kind"], []).append(labels[key])
    return offered


def confirmed_root_cause_ids(*, investigation: Investigation) -> set[int]:
    return set(investigation.case_root_causes.values_list("root_cause_id", flat=True))
