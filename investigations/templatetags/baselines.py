"""How the baseline table shows its numbers, verdicts and statuses."""

from django import template
from django.utils.html import format_html

from investigations.analysis.baseline import SYMBOLS, value_text
from investigations.choices import BaselineStatus, BaselineVerdict, HostRole

register = template.Library()
_CLASSES = {"better": "verdict-better", "worse": "verdict-worse", "about_equal": "verdict-equal"}


@register.filter
def measured(value) -> str:
    return value_text(value)


@register.filter
def status_label(status: str) -> str:
    return BaselineStatus(status).label if status in BaselineStatus.values else status


@register.simple_tag
def verdict(value):
    """↑ better, ↓ worse, ≈ about equal (side A against side B), or nothing."""
    if value not in BaselineVerdict.values:
        return ""
    return format_html(
        '<span class="verdict {}">{} {}</span>',
        _CLASSES[value],
        SYMBOLS[value],
        BaselineVerdict(value).label,
    )


@register.filter
def role_label(role: str) -> str:
    return HostRole(role).label if role in HostRole.values else role
