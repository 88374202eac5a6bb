"""What every rule is made of: the verdict it returns, the keys it covers, a value shown.

A rule is a function (a, b) -> list[Verdict], where a and b are the fact dicts of side A and
side B of one host pair. Every named rule also declares the keys it covers, so that the
generic rule reports only the differences no named rule explains.

A verdict's texts are stored with the finding and read in each person's language: they are
Phrases (collectors/phrase.py), their templates marked with gettext_noop (imported as `_` in
the rule modules) so that the translators find them. The sides' values are data, not words.
"""

from dataclasses import dataclass

from collectors.phrase import Phrase
from investigations.analysis.diff import values_equal


@dataclass(frozen=True)
class Verdict:
    rule: str
    severity: str
    title: Phrase
    explanation: Phrase
    recommendation: Phrase
    side_a: str
    side_b: str
    subject: str = ""
    # The slug of the knowledge-base entry this verdict is evidence for ("" for none).
    root_cause: str = ""


def show(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def differs(key: str, a: dict, b: dict) -> bool:
    return key in a and key in b and not values_equal(key, a[key], b[key])


def rule(*covers: str):
    """Declare the fact keys a rule explains (fnmatch patterns).

    Declaring does not enable the rule: the package lists the rules it runs, in order, in
    rules/named.py.
    """

    def declare(function):
        function.covers = covers
        return function

    return declare


def simple_rule(
    key: str,
    rule_name: str,
    severity: str,
    title: str,
    explanation: str,
    recommendation: str,
    *,
    also_covers: tuple[str, ...] = (),
    root_cause: str = "",
):
    """A rule that fires when one fact differs between the sides (its texts are templates
    without values, marked for translation where the rule is declared)."""

    @rule(key, *also_covers)
    def check(a: dict, b: dict) -> list[Verdict]:
        if not differs(key, a, b):
            return []
        return [
            Verdict(
                rule=rule_name,
                severity=severity,
                title=Phrase(title),
                explanation=Phrase(explanation),
                recommendation=Phrase(recommendation),
                side_a=show(a[key]),
                side_b=show(b[key]),
                root_cause=root_cause,
            )
        ]

    check.__name__ = rule_name
    return check
