"""A time budget for work that must not run for long (issue 21): the work is interrupted when
the budget is spent (the regex engine checks for signals too), so a test fails rather than
hangs on an exponential pattern.

The budget is this process's CPU time, not the clock's: a busy machine (other tests beside
this one) slows a linear parse's wall time several times over, never its CPU time much, while
a quadratic or exponential one spends seconds of CPU on the inputs the tests give."""

import signal
import time
from contextlib import contextmanager

import pytest

BUDGET = 2.0


class TookTooLong(BaseException):
    """A BaseException, so that no `except Exception` of the code under test swallows it."""


@contextmanager
def within_a_second(what: str, budget: float = BUDGET):
    def expire(*_):
        raise TookTooLong

    previous = signal.signal(signal.SIGPROF, expire)
    signal.setitimer(signal.ITIMER_PROF, budget)
    started = time.process_time()
    try:
        yield
    except TookTooLong:
        pytest.fail(f"{what} took more than {budget} s of CPU")
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    assert time.process_time() - started < budget, f"{what} took more than {budget} s of CPU"
