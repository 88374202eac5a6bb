from functools import lru_cache

from django import template
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import get_language, gettext
from django.utils.translation import gettext_lazy as _

from investigations.analysis.ladder_compare import gap_text
from investigations.choices import (
    ROLE_IN_TEXT,
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
from investigations.kinds import kind_named
from investigations.models.diagnoses import DiagnosisStage, DiagnosisStatus, StageStatus
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
    "diagnosis": DiagnosisStatus,
    "stage": StageStatus,
}


@register.simple_tag
def badge(value: str, kind: str):
    """The one place a status, severity, role or event kind becomes a coloured badge."""
    choices = BADGE_CHOICES[kind]
    label = choices(value).label if value in choices.values else value
    return format_html('<span class="badge badge-{}">{}</span>', choices.colour(value), label)


@register.simple_tag
def stage_label(name: str) -> str:
    """A diagnosis stage's name in the reader's language."""
    return DiagnosisStage(name).label if name in DiagnosisStage.values else name


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
def role_in_text(role: str) -> str:
    """A host's role inside a sentence ("as load generator"), in the reader's language."""
    return gettext(ROLE_IN_TEXT.get(role, role))


@register.filter
def phrase(row, name: str) -> str:
    """A stored text in the reader's language: `{{ finding|phrase:"title" }}`."""
    return stored_text(row, name)


@register.filter
def gap(value) -> str:
    """How far apart the sides are (a rerun's comparison): "35%", "∞", or "—" for none."""
    return gap_text(value)


@register.filter
def evidence_kind(value: str) -> str:
    """The name of a kind of evidence ("finding", "profile", ...) in the reader's language."""
    try:
        return kind_named(value).label
    except LookupError:
        return value


# The top bar's sections: the page's URL name marks one current when it starts with one of
# the prefixes.
SECTIONS = [
    ("investigation_list", _("Investigations"), ("investigation",)),
    ("root_cause_list", _("Knowledge base"), ("root_cause", "search")),
    ("host_list", _("Hosts"), ("host",)),
    ("credential_list", _("Credentials"), ("credential",)),
    ("my_items", _("My items"), ("my_items",)),
    ("team_list", _("Teams"), ("team",)),
]


@register.simple_tag(takes_context=True)
def section_links(context) -> str:
    """The top bar's links, the current section marked; the same for every page of a
    section in a language, so drawn once and kept."""
    match = getattr(context.get("request"), "resolver_match", None)
    name = (match.url_name or "") if match else ""
    current = next((url for url, _t, prefixes in SECTIONS if name.startswith(prefixes)), None)
    return _section_links(current, get_language())


CURRENT = mark_safe(' aria-current="page"')


@lru_cache(maxsize=64)
def _section_links(current: str | None, language: str) -> str:
    return format_html_join(
        "\n",
        '<a href="{}"{}>{}</a>',
        (
            (reverse(url), CURRENT if url == current else "", title)
            for url, title, _prefixes in SECTIONS
        ),
    )
