"""Evidence collection: one machinery, a plan per kind.

A Collection's kind chooses its Plan (runs/base.py). The runner (runs/collection.py) claims
the targets, runs every one at once in threads (one SSH connection each), starts them
together (runs/gate.py), streams outputs into hashed files (runs/capture.py) and hands each
result to the plan's service. Every kind's tools on the hosts run through one mechanism
(runs/remote.py: PID files, stop on a cancel or the time limit, cleanup). The ladder is a
Plan too (runs/ladder.py), run the same way over its own sides. To add a kind, see "Adding
an evidence kind" in the README.
"""

import importlib
import pkgutil

from investigations.runs.registry import PLANS, register

__all__ = ["PLANS", "plan_for", "plans", "register"]
_MACHINERY = {
    "base",
    "capture",
    "collection",
    "gate",
    "remote",
    "ladder",
    "ladder_step",
    "registry",
}


def plans() -> dict:
    """Every kind's plan, by kind (each module of this package is imported once, so that
    each kind registers itself)."""
    if not PLANS:
        for module in pkgutil.iter_modules(__path__):
            if module.name not in _MACHINERY:
                importlib.import_module(f"{__name__}.{module.name}")
    return PLANS


def plan_for(kind: str):
    """The plan of a collection kind."""
    try:
        return plans()[kind]
    except KeyError:
        raise LookupError(f"no plan for the collection kind {kind!r}") from None
