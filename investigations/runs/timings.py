"""Where a target's time goes, phase by phase: the seconds from its collection's request to
its claim (queue), from the claim to an open connection (connect), from there to the
collection's common start (wait, the start gate), the plan's remote work (probe), its
parsing where the plan times it apart (parse: otherwise 0 and counted in probe) and the
plan's store through its service (store).

The target's thread marks the moments on its TargetRun's Stopwatch (it writes nothing); the
collection's runner reads them once the thread has ended, times the store itself and writes
the lot with the target's end (services/targets.py targets_time).
"""

import time
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime

PHASES = ("queue", "connect", "wait", "probe", "parse", "store")


@dataclass
class Stopwatch:
    """The moments of one target's run, as its thread saw them (wall clock: the claim and
    the request are database times of the same machine)."""

    connected: datetime | None = None  # the last try's connection open
    began: datetime | None = None  # through the start gate
    ended: datetime | None = None  # the plan's run() returned or raised
    parse: float = 0.0

    @contextmanager
    def parsing(self):
        """Time the parsing of what the probe brought back (counted apart from the probe)."""
        started = time.monotonic()
        try:
            yield
        finally:
            self.parse += time.monotonic() - started


def phase_seconds(
    *, requested: datetime, claimed: datetime | None, clock: Stopwatch, store: float
) -> dict[str, float]:
    """{phase: seconds} of a target whose thread has ended; a phase it never reached is 0,
    and the phases add up to no more than from the request to the store's end."""
    claimed = claimed or requested
    ended = clock.ended or claimed
    connected = min(clock.connected or ended, ended)
    began = min(max(clock.began or connected, connected), ended)

    def seconds(start: datetime, end: datetime) -> float:
        return max(0.0, (end - start).total_seconds())

    parse = min(clock.parse, seconds(began, ended))
    return {
        phase: round(value, 3)
        for phase, value in {
            "queue": seconds(requested, claimed),
            "connect": seconds(claimed, connected),
            "wait": seconds(connected, began),
            "probe": seconds(began, ended) - parse,
            "parse": parse,
            "store": max(0.0, store),
        }.items()
    }
