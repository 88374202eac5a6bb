"""The generic rule: a finding for each difference that no named rule explains."""

from django.utils.translation import gettext_noop as _

from collectors.catalog import CATEGORY_ORDER, category_of, glob_matcher, is_volatile
from collectors.phrase import Phrase
from investigations.analysis.diff import values_equal
from investigations.analysis.rules.base import Verdict, show
from investigations.analysis.rules.named import RULES
from investigations.choices import FindingSeverity as Severity

_covered = glob_matcher([cover for function in RULES for cover in function.covers])


def generic_differences(a: dict, b: dict) -> list[Verdict]:
    """Every other non-volatile difference, one finding each, below the named ones (in the
    order the diff shows them)."""
    keys = [
        key
        for key in a.keys() & b.keys()
        if not _covered(key) and not is_volatile(key) and not values_equal(key, a[key], b[key])
    ]
    keys.sort(key=lambda key: (CATEGORY_ORDER.index(category_of(key)), key))
    return [
        Verdict(
            rule="fact_differs",
            subject=key,
            severity=Severity.INFO,
            title=Phrase(_("%(fact)s differs"), fact=key),
            explanation=Phrase(
                _("No named rule covers this fact, but the two sides disagree on it.")
            ),
            recommendation=Phrase(_("Check whether the difference is intended.")),
            side_a=show(a[key]),
            side_b=show(b[key]),
        )
        for key in keys
    ]
