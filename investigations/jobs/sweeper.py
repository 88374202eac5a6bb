"""The one sweep: every kind's work past its deadline fails, whatever the kind.

Each service module is imported once (the rules register themselves on import, as the
plans do in runs/), so a worker whose sweep runs before anything else has every rule.
"""

import importlib
import pkgutil

from investigations.jobs import OVERDUE

SERVICES = "investigations.services"


def overdue_rules() -> dict:
    """Every kind's overdue rule, by kind."""
    package = importlib.import_module(SERVICES)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{SERVICES}.{module.name}")
    return OVERDUE


def sweep() -> dict[str, int]:
    """Fail what is still queued or running past its deadline, of every kind (the updates
    are conditional: two sweeps at once fail nothing twice). {kind: how many failed}."""
    return {kind: expire() for kind, expire in sorted(overdue_rules().items())}
