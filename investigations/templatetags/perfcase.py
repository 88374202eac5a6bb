from django import template
from django.utils.html import format_html

from investigations.choices import (
    DeliveryStatus,
    EventKind,
    FindingSeverity,
    FindingStatus,
    ItemStatus,
    LadderStatus,
    NodeState,
    Role,
    Severity,
    Status,
    TargetStatus,
)
from investigations.phrases import stored_text

register = template.Library()

BADGE_CHOICES = {
    "status": Status,
    "severity": Severity,
    "role": Role,
    "event": EventKind,
    "delivery": DeliveryStatus,
    "target": TargetStatus,
    "finding": FindingStatus,
    "severity_finding": FindingSeverity,
    "node": NodeState,
    "item": ItemStatus,
    "ladder": LadderStatus,
}


@register.simple_tag
def badge(value: str, kind: str):
    """The one place a status, severity, role or event kind becomes a coloured badge."""
    choices = BADGE_CHOICES[kind]
    label = choices(value).label if value in choices.values else value
    return format_html('<span class="badge badge-{}">{}</span>', choices.colour(value), label)


@register.filter
def times(ratio: float | None) -> str:
    if ratio is None:
        return ""
    return f"{ratio:.2f}×"


@register.filter
def took(target) -> str:
    """How long a collection target ran, in seconds."""
    if not target.started_at or not target.finished_at:
        return ""
    return f"{(target.finished_at - target.started_at).total_seconds():.1f} s"


@register.filter
def fact(value) -> str:
    """A fact value as people read it."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


@register.filter
def phrase(row, name: str) -> str:
    """A stored text in the reader's language: `{{ finding|phrase:"title" }}`."""
    return stored_text(row, name)


@register.filter
def evidence_kind(value: str) -> str:
    """The name of a kind of evidence ("finding", "profile", ...) in the reader's language."""
    from investigations.choices import EvidenceKind

    return EvidenceKind(value).label if value in EvidenceKind.values else value
