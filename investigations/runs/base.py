"""What every evidence kind is: a Plan (its parameters, what it runs on one target, which
service stores the result) and the TargetRun a plan runs with.

A plan's `run` happens in a thread of its own, one per target, all of a collection's at
once; it must not touch the database. It gets plain data, an open connection and the
shared machinery: `begin()` (the planned start, together with the other targets),
`capture()` (output streamed into a hashed file), `progress()`. Its result goes back to
the collection's runner, which hands it to the plan's `store` in the task's own thread.

A cancel sets `run.stop`. A plan whose tool runs long starts it stoppable (a PID file of the
run's own, `run.pidfile()`) and waits for it with `run.watch()`, which on a cancel ends the
tool through a second command over the same connection (loadrun.kill_command, the
stop_tools of probes/stoppable.sh) and raises RunCancelled: the target ends cancelled and
what the tool had made so far is dropped.
"""

import secrets
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadrun import kill_command, pidfile
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from investigations.runs.capture import Captured, capture
from investigations.runs.gate import StartGate, StepGate
from investigations.runs.remote import run_text

CANCELLED = Phrase(_("Cancelled."))
# How long a cancel waits for a stopped tool's command to end, asking again every 2 s.
STOP_SECONDS = 10.0


class RunCancelled(CollectorError):
    """The collection was cancelled: the target stopped what it had started."""

    def __init__(self):
        super().__init__(CANCELLED)


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
        self.report(self.target_id, self.attempt, began_at=began)
        return began

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

    def stop_tools(self, pidfiles) -> None:
        """End the tools these PID files name, through a second command on the connection."""
        try:
            run_text(self.connection, kill_command(sorted(pidfiles)), timeout=15)
        except CollectorError:
            pass  # the tools' own timeout(1) still ends them

    def check_stop(self) -> None:
        """Raise RunCancelled once the collection is cancelled (between a plan's steps)."""
        if self.stop.is_set():
            raise RunCancelled()

    def watch(
        self,
        running: Future,
        *,
        stop: Callable[[], None],
        late: "Phrase | None" = None,
        tick: Callable[[], None] | None = None,
    ):
        """Wait for a command running in another thread (calling `tick` every second) and
        return its result. On a cancel, or (with `late`) two seconds before the deadline,
        `stop` ends what it started on the host; once the command has ended (or STOP_SECONDS
        have passed) RunCancelled, or a CollectorError with `late`, is raised, and whatever
        the command brings back afterwards is closed."""
        last = time.monotonic()
        while not wait([running], timeout=0.25).done:
            if self.stop.is_set() or (late is not None and self.remaining() < 2):
                given_up = time.monotonic() + STOP_SECONDS
                stop()
                while not wait([running], timeout=2).done and time.monotonic() < given_up:
                    stop()
                running.add_done_callback(_close_result)
                raise RunCancelled() if self.stop.is_set() else CollectorError(late)
            if tick is not None and time.monotonic() - last >= 1:
                last = time.monotonic()
                tick()
        return running.result()

    def capture_reporting(
        self, argv, *, pidfile: str, report: Callable | None = None, **options
    ) -> Captured:
        """capture() of a command whose tool a cancel stops through `pidfile`, with
        `report(seconds since it started) -> (percent, step)` written as the target's
        progress every second while it runs (a recording of a minute or five says how far
        it is)."""
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="capture")
        try:
            running = pool.submit(self.capture, argv, **options)
            started = time.monotonic()
            return self.watch(
                running,
                stop=lambda: self.stop_tools([pidfile]),
                tick=report and (lambda: self.progress(*report(time.monotonic() - started))),
            )
        finally:
            pool.shutdown(wait=False)


def _close_result(future: Future) -> None:
    """What a stopped command brought back is half-made: closed, never kept."""
    if not future.cancelled() and future.exception() is None:
        result = future.result()
        close = getattr(result, "close", None)
        if close is not None:
            close()


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
