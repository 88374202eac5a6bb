"""What every evidence kind is: a Plan (its parameters, what it runs on one target, which
service stores the result) and the TargetRun a plan runs with.

A plan's `run` happens in a thread of its own, one per target, all of a collection's at
once; it must not touch the database. It gets plain data, an open connection and the
shared machinery: `begin()` (the planned start, together with the other targets),
`capture()` (output streamed into a hashed file), `progress()`. Its result goes back to
the collection's runner, which hands it to the plan's `store` in the task's own thread.
"""

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from investigations.runs.capture import Captured, capture
from investigations.runs.gate import StartGate, StepGate


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

    def capture_reporting(self, argv, *, report: Callable, **options) -> Captured:
        """capture(), with `report(seconds since it started) -> (percent, step)` written as
        the target's progress every second while it runs (a recording of a minute or five
        says how far it is)."""
        with ThreadPoolExecutor(max_workers=1) as pool:
            running = pool.submit(self.capture, argv, **options)
            started = time.monotonic()
            while not wait([running], timeout=1).done:
                self.progress(*report(time.monotonic() - started))
            return running.result()


class Plan(ABC):
    """One evidence kind. Subclass it in a module of investigations/runs/ and decorate the
    class with @register: that is all the machinery needs to know of it."""

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

    def refresh(self, *, investigation) -> None:
        """After a batch of stored results: re-run what reads them (rules, checklist)."""
        return None  # a kind nothing else reads needs no refresh
