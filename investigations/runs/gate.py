"""The planned start: the targets of a collection connect first, then begin together.

Connecting takes each host its own time (a jump host, a slow handshake), so a fixed start
moment is either late for all or missed by some. Instead every target arrives at the gate
once connected; when the last one has (or after `max_wait`), the gate names one moment a
few milliseconds ahead and all begin then. A target that cannot connect leaves the gate,
so it never holds the others.
"""

import threading
import time
from datetime import datetime, timedelta

from django.utils import timezone

# Long enough for every waiting thread to be woken and asleep again before the moment.
LEAD = timedelta(milliseconds=5)


class StartGate:
    def __init__(self, *, parties: int, not_before: datetime, max_wait: float):
        self.parties = parties
        self.not_before = not_before
        self.max_wait = max_wait
        self.arrived = 0
        self.moment: datetime | None = None
        self.condition = threading.Condition()

    def _open(self) -> None:
        self.moment = max(self.not_before, timezone.now() + LEAD)
        self.condition.notify_all()

    def arrive(self) -> datetime:
        """Wait for the others (at most max_wait from the first call), then sleep until
        the common moment and return it."""
        with self.condition:
            self.arrived += 1
            if self.moment is None and self.arrived >= self.parties:
                self._open()
            deadline = time.monotonic() + self.max_wait
            while self.moment is None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._open()
                    break
                self.condition.wait(remaining)
            moment = self.moment
        delay = (moment - timezone.now()).total_seconds()
        if delay > 0:
            time.sleep(delay)
        return moment

    def leave(self) -> None:
        """A target that will not arrive (it failed first) stops being waited for."""
        with self.condition:
            self.parties -= 1
            if self.moment is None and self.arrived >= self.parties:
                self._open()


class StepGate:
    """Steps taken together, by name: a target arriving at a step waits for the other
    targets still running (at most `max_wait`), then all begin it at once. What each brings
    (`offer`, say the port its server listens on) is handed to all. A target that ends
    leaves: it is not waited for at any later step."""

    def __init__(self, *, parties: int):
        self.parties = parties
        self.arrived: dict[str, int] = {}
        self.offers: dict[str, dict] = {}
        self.open: set[str] = set()
        self.condition = threading.Condition()

    def arrive(self, step: str, *, max_wait: float, party: object = None, offer=None) -> dict:
        """Wait at `step` for the others, then return {party: offer} of all who offered."""
        with self.condition:
            self.arrived[step] = self.arrived.get(step, 0) + 1
            if offer is not None:
                self.offers.setdefault(step, {})[party] = offer
            if self.arrived[step] >= self.parties:
                self.open.add(step)
                self.condition.notify_all()
            deadline = time.monotonic() + max_wait
            while step not in self.open:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self.open.add(step)
                    self.condition.notify_all()
                    break
                self.condition.wait(remaining)
            return dict(self.offers.get(step, {}))

    def leave(self) -> None:
        with self.condition:
            self.parties -= 1
            for step, count in self.arrived.items():
                if count >= self.parties:
                    self.open.add(step)
            self.condition.notify_all()
