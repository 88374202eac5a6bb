"""What every Celery worker does beside its tasks: the sweep.

A target or a ladder side whose worker was killed stays "running" in the database. Every
worker, every SWEEP_SECONDS, fails those past their deadline (tasks.sweep): no beat process
to deploy, and the sweep goes on while the pool is busy. Workers sweep alike; the updates
are conditional, so two sweeping at once do nothing twice.
"""

import logging

from celery import bootsteps

logger = logging.getLogger(__name__)


class Sweeper(bootsteps.StartStopStep):
    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker, **options):
        super().__init__(worker, **options)
        self.timer_ref = None

    def start(self, worker) -> None:
        from django.conf import settings

        self.timer_ref = worker.timer.call_repeatedly(settings.SWEEP_SECONDS, _sweep, priority=10)

    def stop(self, worker) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None


def _sweep() -> None:
    from django.db import connections

    from investigations.tasks import sweep

    try:
        sweep()
    except Exception:
        logger.exception("the sweep failed; it runs again on schedule")
    finally:
        # The pool's processes are forked from this one: hold no connection between sweeps.
        connections.close_all()
