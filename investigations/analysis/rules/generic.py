"""The generic rule: a finding for each difference that no named rule explains."""

import fnmatch

from investigations.analysis.diff import DIFFERS, diff_facts
from investigations.analysis.rules.base import Verdict, show
from investigations.analysis.rules.named import RULES
from investigations.choices import FindingSeverity as Severity


def _covered(key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, cover) for function in RULES for cover in function.covers)


def generic_differences(a: dict, b: dict) -> list[Verdict]:
    """Every other non-volatile difference, one finding each, below the named ones."""
    return [
        Verdict(
            rule="fact_differs",
            subject=row.key,
            severity=Severity.INFO,
            title=f"{row.key} differs",
            explanation="No named rule covers this fact, but the two sides disagree on it.",
            recommendation="Check whether the difference is intended.",
            side_a=show(row.a),
            side_b=show(row.b),
        )
        for row in diff_facts(a, b)
        if row.kind == DIFFERS and not _covered(row.key)
    ]
