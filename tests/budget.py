"""A time budget for work that must not run for long (issue 21): the work is interrupted when
the budget is spent (the regex engine checks for signals too), so a test fails rather than
hangs on an exponential pattern."""

import signal
import time
from contextlib import contextmanager

import pytest

BUDGET = 1.0


class TookTooLong(BaseException):
    """A BaseException, so that no `except Exception` of the code under test swallows it."""


@contextmanager
def within_a_second(what: str, budget: float = BUDGET):
    def expire(*_):
        raise TookTooLong

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, budget)
    started = time.monotonic()
    try:
        yield
    except TookTooLong:
        pytest.fail(f"{what} took more than {budget} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert time.monotonic() - started < budget, f"{what} took more than {budget} s"
