"""Evidence collection: one machinery, a plan per kind.

A Collection's kind chooses its Plan (runs/base.py), which the kind's descriptor names
(investigations/kinds/). The runner (runs/collection.py) claims the targets, runs every one
at once in threads (one SSH connection each), starts them together (runs/gate.py), streams
outputs into hashed files (runs/capture.py) and hands each result to the plan's service.
Every kind's tools on the hosts run through one mechanism (runs/remote.py: PID files, stop
on a cancel or the time limit, cleanup). The ladder is a Plan too (runs/ladder.py), run the
same way over its own sides. To add a kind, see "Adding an evidence kind" in the README.
"""

from investigations.kinds import collected_kinds, kind_named


def plans() -> dict:
    """Every collected kind's plan, by kind (the registered kinds': investigations/kinds/)."""
    return {kind.key: kind.plan_instance for kind in collected_kinds()}


def plan_for(kind: str):
    """The plan of a collection kind."""
    try:
        plan = kind_named(kind).plan_instance
    except LookupError:
        plan = None
    if plan is None:
        raise LookupError(f"no plan for the collection kind {kind!r}")
    return plan
