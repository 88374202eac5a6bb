"""What every evidence kind is: a Plan (its parameters, what it runs on one target, which
service stores the result) and the TargetRun a plan runs with.

A plan's `run` happens in a thread of its own, one per target, all of a collection's at
once; it must not touch the database. It gets plain data, an open connection and the
shared machinery: `begin()` (the planned start, together with the other targets),
`capture()` (output streamed into a hashed file), `progress()`. Its result goes back to
the collection's runner, which hands it to the plan's `store` in the task's own thread.

A cancel sets `run.stop`. A plan whose tool runs long starts it stoppable (a PID file of the
run's own, `run.pidfile()`) through `run.tools` (runs/remote.py, the one remote-tools
mechanism of every kind) and waits for it with `run.watch()`, which on a cancel ends the
tool through a second command over the same connection and raises RunCancelled: the target
ends cancelled and what the tool had made so far is dropped. The runner closes `run.tools`
at the run's end, so nothing the run started outlives it.
"""

import logging
import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadrun import pidfile
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from investigations.runs.capture import Captured, capture
from investigations.runs.gate import StartGate, StepGate
from investigations.runs.remote import RemoteTools, RunCancelled
from investigations.runs.timings import Stopwatch

__all__ = ["Outcome", "Plan", "RunCancelled", "TargetRun", "run_target"]

logger = logging.getLogger(__name__)

# A transient network error is tried again this many times in all, within the deadline.
MAX_TRIES = 3


@dataclass
class TargetRun:
    target_id: int
    attempt: int  # the claim's number: writes of an older claim are ignored
    host_name: str
    address: str
    side: str
    parameters: dict
    deadline: float  # time.monotonic() by which the target must be done
    gate: StartGate = field(repr=False)
    report: Callable = field(repr=False)  # report(target_id, attempt, **changes)
    connection: object = field(default=None, repr=False)
    arrived: bool = False
    host_id: int = 0
    # Set when the collection is cancelled (or out of time): a plan that runs long watches it.
    stop: threading.Event = field(default_factory=threading.Event, repr=False)
    # Steps the targets take together after the start (a plan of many steps uses it).
    steps: StepGate | None = field(default=None, repr=False)
    left: bool = False
    # Makes the run's PID file names its own (another installation may use the same hosts).
    token: str = field(default_factory=lambda: secrets.token_hex(4), repr=False)
    # The moments of the run, for where its time went (runs/timings.py).
    clock: Stopwatch = field(default_factory=Stopwatch, repr=False)
    _tools: RemoteTools | None = field(default=None, repr=False)

    @property
    def tools(self) -> RemoteTools:
        """The tools this run has going on its hosts (runs/remote.py)."""
        if self._tools is None:
            self._tools = RemoteTools(stop=self.stop, remaining=self.remaining)
        return self._tools

    def close_tools(self) -> None:
        """The run's end: every tool it still has going stopped, its files removed."""
        if self._tools is not None:
            self._tools.close()
            self._tools = None  # a retry starts with tools of its own

    def remaining(self) -> float:
        return max(0.0, self.deadline - time.monotonic())

    def progress(self, percent: int, step: str) -> None:
        self.report(self.target_id, self.attempt, progress=percent, step=step)

    def begin(self) -> datetime:
        """Wait for the collection's other targets, then begin with them; returns (and
        records) the moment this target really began."""
        self.arrived = True
        self.gate.arrive()
        began = timezone.now()
        self.clock.began = began
        self.report(self.target_id, self.attempt, began_at=began)
        return began

    def parsing(self):
        """`with run.parsing():` around the parsing of what the probe brought back, so that
        the target's timings tell it apart from the probe."""
        return self.clock.parsing()

    def together(self, step: str, *, max_wait: float, offer=None) -> dict:
        """Begin `step` with the collection's other targets (see StepGate); returns what
        each target offered at it, by target id."""
        if self.steps is None:
            return {self.target_id: offer} if offer is not None else {}
        return self.steps.arrive(step, max_wait=max_wait, party=self.target_id, offer=offer)

    def leave(self) -> None:
        if not self.arrived:
            self.arrived = True
            self.gate.leave()
        if self.steps is not None and not self.left:
            self.left = True
            self.steps.leave()

    def capture(
        self, argv, *, name: str, timeout: float, max_bytes: int, stdin=b"", on_data=None
    ) -> Captured:
        """Run argv, streaming its output into a hashed temporary file (`on_data` sees each
        chunk as it comes); never past the target's deadline."""
        return capture(
            self.connection,
            argv,
            name=name,
            stdin=stdin,
            timeout=max(1.0, min(timeout, self.remaining())),
            max_bytes=max_bytes,
            on_data=on_data,
        )

    def pidfile(self, kind: str, *more: int | str) -> str:
        """A PID file of this run's on its host: numbers and fixed words only."""
        return pidfile(kind, self.target_id, self.attempt, self.token, *more)

    def check_stop(self, late: "Phrase | None" = None) -> None:
        """Raise RunCancelled once the run is cancelled (between a plan's steps); with
        `late`, a CollectorError once it is out of time."""
        self.tools.check(late)

    def watch(
        self,
        running: Future,
        *,
        late: "Phrase | None" = None,
        tick: Callable[[], None] | None = None,
    ):
        """Wait for a command started through `run.tools` (RemoteTools.wait): on a cancel,
        or with `late` at the deadline, every tool of the run is stopped and the wait
        raises."""
        return self.tools.wait(running, late=late, tick=tick)

    def capture_reporting(
        self, argv, *, pidfile: str, report: Callable | None = None, **options
    ) -> Captured:
        """capture() of a command whose tool a cancel stops through `pidfile`, with
        `report(seconds since it started) -> (percent, step)` written as the target's
        progress every second while it runs (a recording of a minute or five says how far
        it is)."""
        running = self.tools.start(self.connection, self.capture, argv, files=[pidfile], **options)
        started = time.monotonic()
        return self.watch(
            running,
            tick=report and (lambda: self.progress(*report(time.monotonic() - started))),
        )


class Plan(ABC):
    """How one evidence kind is collected. Subclass it in a module of investigations/runs/
    and name it in the kind's descriptor (investigations/kinds/): that is all the machinery
    needs to know of it."""

    kind: str  # a CollectionKind value
    parameters_form: type[forms.Form]  # the schema, shared by the page's form and the API
    # The roles whose hosts a request without hosts collects from (None: every placed host).
    default_roles: tuple[str, ...] | None = None

    @property
    @abstractmethod
    def target_seconds(self) -> int:
        """How long one target may take, connecting included."""

    def seconds_for(self, parameters: dict) -> int:
        """How long one target of a collection with these parameters may take (after the
        collection's planned start)."""
        return self.target_seconds

    def expected_seconds(self, parameters: dict) -> int:
        """How long one target with these parameters measures when all goes well (its own
        length: the seconds it was asked for), connecting excluded. The target's deadline is
        this, connecting and TARGET_GRACE_SECONDS; while its run lives, the runner moves the
        deadline on, so a check or an analysis that takes longer is not cut short. A short
        probe needs no more than the grace."""
        return 0

    def schedule(self, *, investigation, user, parameters: dict) -> tuple[dict, datetime | None]:
        """The parameters as stored and the moment the targets begin (None: as soon as they
        are connected); a ValidationError names the field. Called in the request's
        transaction, after `clean`."""
        return parameters, None

    def clean(self, data: dict) -> dict:
        """The request's parameters, validated by the kind's form; a ValidationError names
        the field."""
        form = self.parameters_form(data=data)
        if not form.is_valid():
            raise ValidationError(
                {name: " ".join(messages) for name, messages in form.errors.items()}
            )
        return form.cleaned_data

    @abstractmethod
    def run(self, run: TargetRun):
        """Collect from one target over run.connection; returns what `store` takes."""

    @abstractmethod
    def store(self, *, target, result) -> None:
        """Keep one target's result and mark the target succeeded (a service)."""

    def discard(self, result) -> None:
        """A result that came back after a cancel: its files closed, nothing kept."""
        captured = getattr(result, "captured", None)
        if captured is not None:
            captured.close()

    def refresh(self, *, investigation) -> None:
        """After a batch of stored results: re-run what reads them (rules, checklist)."""
        return None  # a kind nothing else reads needs no refresh


@dataclass
class Outcome:
    """How one target's run ended, for its runner to write."""

    target_id: int
    attempt: int
    result: object = None
    error: Phrase | None = None
    cancelled: bool = False


def run_target(
    go: threading.Event, plan: Plan, run: TargetRun, connector, *, tries: int = MAX_TRIES
) -> Outcome:
    """In a thread of its own (every runner's: a collection's targets, a ladder's sides):
    connect, run the plan, stop whatever it left running; transient network errors are
    tried again (at most `tries` times in all) while the deadline allows."""
    go.wait()
    # Its own time, counted from the collection's planned start (a profile tied to a ladder's
    # step may wait minutes for it).
    wait = max(0.0, (run.gate.not_before - timezone.now()).total_seconds())
    run.deadline = time.monotonic() + wait + plan.seconds_for(run.parameters)
    tried = 0
    try:
        while True:
            tried += 1
            try:
                run.progress(15, Phrase(_("connecting to %(address)s"), address=run.address))
                run.clock.ended = None
                with connector() as connection:
                    run.connection = connection
                    run.clock.connected = timezone.now()
                    try:
                        return Outcome(run.target_id, run.attempt, result=plan.run(run))
                    finally:
                        run.close_tools()  # whatever ended the run, nothing it started stays
                        run.clock.ended = timezone.now()
            except RunCancelled:
                return Outcome(run.target_id, run.attempt, cancelled=True)
            except CollectorError as error:
                if run.stop.is_set():  # stopped by a cancel or the time limit: no retry
                    return Outcome(run.target_id, run.attempt, error=error.phrase)
                pause = 2 * tried
                if (
                    not error.transient
                    or tried >= tries
                    or run.remaining() < pause + settings.SSH_CONNECT_TIMEOUT
                ):
                    return Outcome(run.target_id, run.attempt, error=error.phrase)
                run.progress(5, Phrase(_("retrying: %(error)s"), error=error.phrase))
                time.sleep(pause)
    except Exception as error:  # a bug, not the host: fail the target visibly
        logger.exception("%s run %s failed", plan.kind, run.target_id)
        return Outcome(
            run.target_id,
            run.attempt,
            error=Phrase(_("Internal error: %(error)s"), error=f"{type(error).__name__}: {error}"),
        )
    finally:
        run.clock.ended = run.clock.ended or timezone.now()
        run.leave()
