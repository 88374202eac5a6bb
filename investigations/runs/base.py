"""What every evidence kind is: a Plan (its parameters, what it runs on one target, which
service stores the result) and the TargetRun a plan runs with.

A plan's `run` happens in a thread of its own, one per target, all of a collection's at
once; it must not touch the database. It gets plain data, an open connection and the
shared machinery: `begin()` (the planned start, together with the other targets),
`capture()` (output streamed into a hashed file), `progress()`. Its result goes back to
the collection's runner, which hands it to the plan's `store` in the task's own thread.
"""

import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django import forms
from django.core.exceptions import ValidationError
from django.utils import timezone

from investigations.runs.capture import Captured, capture
from investigations.runs.gate import StartGate


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

    def leave(self) -> None:
        if not self.arrived:
            self.arrived = True
            self.gate.leave()

    def capture(self, argv, *, name: str, timeout: float, max_bytes: int, stdin=b"") -> Captured:
        """Run argv, streaming its output into a hashed temporary file; never past the
        target's deadline."""
        return capture(
            self.connection,
            argv,
            name=name,
            stdin=stdin,
            timeout=max(1.0, min(timeout, self.remaining())),
            max_bytes=max_bytes,
        )


class Plan(ABC):
    """One evidence kind. Subclass it in a module of investigations/runs/ and decorate the
    class with @register: that is all the machinery needs to know of it."""

    kind: str  # a CollectionKind value
    parameters_form: type[forms.Form]  # the schema, shared by the page's form and the API

    @property
    @abstractmethod
    def target_seconds(self) -> int:
        """How long one target may take, connecting included."""

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
