"""Background work: queueing by task name, and each kind's rule for overdue work.

A service queues its work here, by the task's name (tasks.py registers the names), once its
transaction commits: no service imports the task module, which imports the services.

A kind says how its work past its deadline ends (its worker was killed or hung) with
`@overdue("kind")` on a function of its own service, `() -> int` (how many it failed). The
one sweep (jobs/sweeper.py) runs every kind's rule: adding a kind does not touch it.
"""

from collections.abc import Callable

from celery import current_app
from django.db import transaction

OVERDUE: dict[str, Callable[[], int]] = {}


def enqueue(task_name: str, *args, **options) -> None:
    """Queue the task named `task_name` with `args` once the current transaction commits
    (at once outside one), so that the worker reads committed rows. `options` are
    apply_async's (soft_time_limit, time_limit, countdown); without them the task's own
    limits hold."""
    transaction.on_commit(lambda: current_app.send_task(task_name, args=list(args), **options))


def overdue(kind: str):
    """Decorator: the function fails the kind's work past its deadline, for the sweep."""

    def register(function: Callable[[], int]) -> Callable[[], int]:
        OVERDUE[kind] = function
        return function

    return register
