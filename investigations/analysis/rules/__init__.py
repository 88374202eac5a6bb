"""Finding rules over two hosts' facts: each names a root cause that host facts can reveal.

The rules live by subject (cpu, memory, kernel, virtualisation, cgroup, network, service);
named.py lists the ones that run and their order, generic.py reports what none of them covers.
"""

from investigations.analysis.rules.base import Verdict
from investigations.analysis.rules.generic import generic_differences
from investigations.analysis.rules.named import RULES
from investigations.choices import FindingSeverity as Severity

__all__ = ["RULES", "Verdict", "evaluate", "generic_differences"]


def evaluate(a: dict, b: dict) -> list[Verdict]:
    """All verdicts for one host pair, most severe first."""
    verdicts = [verdict for function in RULES for verdict in function(a, b)]
    verdicts += generic_differences(a, b)
    return sorted(verdicts, key=lambda v: Severity.rank(v.severity))
