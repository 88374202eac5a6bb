"""What every Celery worker does beside its tasks: the sweep, and a warm start.

A target or a ladder side whose worker was killed stays "running" in the database. Every
worker, every SWEEP_SECONDS, fails those past their deadline (tasks.sweep): no beat process
to deploy, and the sweep goes on while the pool is busy. Workers sweep alike; the updates
are conditional, so two sweeping at once do nothing twice.
"""

import gc
import logging

from celery import bootsteps
from celery.signals import worker_init, worker_process_init

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


@worker_init.connect
def _warm(**_) -> None:
    """Import what a collection runs (paramiko, the plans, the parsers) before the pool's
    processes are forked, so that no collection pays for the imports on its first run."""
    from investigations.runs import plans
    from investigations.runs.collection import run_collection  # noqa: F401

    plans()
    _freeze()


@worker_process_init.connect
def _freeze(**_) -> None:
    """Everything imported so far lives as long as the process: keep it out of the cyclic
    garbage collector's full passes, which otherwise walk all of Django and paramiko again
    and again (a 70-130 ms pause in the middle of a collection, every few collections).
    Done before the pool forks, it also keeps those pages shared with the children."""
    gc.collect()
    gc.freeze()
