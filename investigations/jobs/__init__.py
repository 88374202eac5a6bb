"""Background work: queueing by task name, and each kind's rule for overdue work.

A service queues its work here, by the task's name (tasks.py registers the names), once its
transaction commits: no service imports the task module, which imports the services.

Reads show overdue work as failed without writing (`is_overdue`, `read_overdue_as_failed`):
the sweep records it within SWEEP_SECONDS, and a page must not wait for it.

A kind says how its work past its deadline ends (its worker was killed or hung) with
`@overdue("kind")` on a function of its own service, `() -> int` (how many it failed). The
one sweep (jobs/sweeper.py) runs every kind's rule: adding a kind does not touch it.
"""

from collections.abc import Callable, Collection
from datetime import datetime

from celery import current_app
from django.db import transaction
from django.utils import timezone

from investigations.choices import NEVER_RAN, OVERDUE_MESSAGE

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


def is_overdue(
    *, status: str, deadline_at: datetime | None, active: Collection[str], now=None
) -> bool:
    """Work still in one of its `active` statuses past its deadline: its worker is gone
    (killed or hung). The rule every read shares with the sweep's rules."""
    return status in active and deadline_at is not None and deadline_at < (now or timezone.now())


def read_overdue_as_failed(rows: list) -> list:
    """Rows (collection targets, ladder sides) still queued or running past their deadline
    read as failed, with the message the sweep will write. Only the loaded objects change:
    a read never writes."""
    now = timezone.now()
    for row in rows:
        if is_overdue(
            status=row.status, deadline_at=row.deadline_at, active=("queued", "running"), now=now
        ):
            message = NEVER_RAN if row.status == "queued" else OVERDUE_MESSAGE
            row.status, row.error = "failed", message
            row.phrases = {**(row.phrases or {}), "error": [message, {}]}
    return rows
