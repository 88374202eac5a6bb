"""How a CPU profile's counts read: grouped digits, and what they count."""

from django import template
from django.utils.formats import get_format
from django.utils.translation import gettext as _
from django.utils.translation import ngettext

from investigations.choices import ProfileFormat
from investigations.selectors.profiles import PERIOD, SAMPLES, profile_counts

register = template.Library()


@register.filter
def grouped(value) -> str:
    """A count with its thousands grouped: 3,723,617,625 (the language's separator, or a
    comma where its format has none, as Chinese writes long numbers in tables too)."""
    if value is None or value == "":
        return ""
    number = float(value)
    separator = get_format("THOUSAND_SEPARATOR") or ","
    if number.is_integer():
        return f"{int(number):,}".replace(",", separator)
    whole, _dot, fraction = f"{number:,.2f}".rstrip("0").rstrip(".").partition(".")
    text = whole.replace(",", separator)
    return f"{text}{get_format('DECIMAL_SEPARATOR')}{fraction}" if fraction else text


@register.simple_tag
def profile_count(profile) -> str:
    """The profile's size in its own unit: "716 samples", "3,723,617,625 events (weighted
    by period)" or "12.5 (weights)"."""
    counts = profile_counts(profile)
    if counts == SAMPLES:
        return ngettext("%(count)s sample", "%(count)s samples", profile.samples) % {
            "count": grouped(profile.samples)
        }
    if counts == PERIOD:
        return _("%(count)s events (weighted by period)") % {"count": grouped(profile.weight)}
    return _("%(count)s (weights, not samples)") % {"count": grouped(profile.weight)}


@register.simple_tag
def weight_unit(profile) -> str:
    """What the profile's weight, the total its shares are of, counts, as the profile's page
    says it: samples, events weighted by period (perf script's and stackcollapse-perf.pl's
    counts), or weights."""
    counts = profile_counts(profile)
    if counts == PERIOD or (counts == SAMPLES and profile.format == ProfileFormat.PERF_SCRIPT):
        return _("events weighted by period")
    if counts == SAMPLES:
        return _("samples")
    return _("weights")
