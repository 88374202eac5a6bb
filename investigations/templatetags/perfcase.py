from django import template
from django.utils.html import format_html

from investigations.choices import DeliveryStatus, EventKind, Role, Severity, Status

register = template.Library()

BADGE_CHOICES = {
    "status": Status,
    "severity": Severity,
    "role": Role,
    "event": EventKind,
    "delivery": DeliveryStatus,
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
