"""The ladder as a Plan: each side's load generator runs the steps, both sides in lockstep.

A ladder is not a Collection (its sides are LadderSide rows, its steps LadderStep rows), so
run_ladder below runs its sides the way runs/collection.py runs a collection's targets: a
thread per side running the shared run_target (runs/base.py) with a TargetRun (its
connection the side's load generator), one StepGate for both sides, one writer.
LadderPlan.run is what one side does: every step a `together()` step of both sides on the
ladder's schedule, its warm-up, load tool and samplers started through the run's remote
tools (runs/remote.py, as every kind's: PID files of the run's own, stopped on a cancel or
at the time limit, and removed at the end). It touches no database: each step's result goes
to the runner (run.report), which stores it as the step ends; the side's end comes back as
its result, which `store` writes.
"""

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadresults import LoadResultError, StepResult
from collectors.loadresults import parse as parse_results
from collectors.loadrun import (
    K6_SCRIPT,
    LOAD_OPTION,
    PARSE_FORMAT,
    SAMPLERS,
    load_command,
    pidfile,
    sampler_command,
    tool_failure,
    unreachable_reason,
)
from collectors.parsers.sampling import parse_mpstat, parse_vmstat
from collectors.phrase import Phrase, joined
from collectors.phrase import gettext_noop as _
from collectors.tools import missing_tool_message
from investigations.analysis.steps import breaking_reason
from investigations.choices import LadderStatus, LoadKind
from investigations.connections import connector_for
from investigations.models import LadderSide, LadderStep
from investigations.runs.base import Outcome, Plan, RunCancelled, TargetRun, run_target
from investigations.runs.gate import StartGate, StepGate
from investigations.runs.remote import CANCELLED, run_output, run_text, tools_on
from investigations.selectors import ladder_cancel_requested, ladder_service_hosts
from investigations.services.ladder_results import (
    ladder_side_finish,
    ladder_side_progress,
    ladder_step_store,
)

LATE = Phrase(_("Gave up: the ladder ran past its time limit."))
CANCEL_POLL_SECONDS = 1.0
# After the task's soft time limit, how long the sides have to stop their tools and end.
GIVE_UP_SECONDS = 60


@dataclass
class StepDone:
    """One step's result, handed to the runner to store (samples: (host id, tool, series))."""

    index: int
    result: StepResult
    planned_at: object
    started_at: object
    raw_output: str
    samples: list = field(default_factory=list)


@dataclass
class SideEnd:
    """How a side ended: what `store` writes."""

    status: str
    error: Phrase | None = None
    breaking_step: int | None = None
    breaking: Phrase | str = ""


def side_parameters(side, service_hosts, connectors) -> dict:
    """The plain data a side's run works from (`connectors`: host id -> what opens a
    connection to it, or the CollectorError that says why none can be opened)."""
    ladder = side.ladder
    return {
        "ladder": ladder,  # read only: its limits and schedule (no query)
        "side": side.side.key,
        "url": side.url,
        "service_hosts": [(host.pk, host.name, connectors[host.pk]) for host in service_hosts],
        "seconds": _seconds_left(side),  # until the side's deadline
    }


class LadderPlan(Plan):
    """A ladder side's run. Not a collection kind (it is not registered): its parameters are
    the Ladder row's, checked by the ladder's own form."""

    kind = "ladder"

    @property
    def target_seconds(self) -> int:
        return 0  # the ladder's task limits come from its length (services/ladders.py)

    def seconds_for(self, parameters: dict) -> int:
        return int(parameters["seconds"])

    def run(self, run: TargetRun) -> SideEnd:
        ladder = run.parameters["ladder"]
        notes: list[Phrase] = []
        status, error, breaking = LadderStatus.COMPLETED, None, (None, "")
        stack = ExitStack()  # the service hosts' connections
        try:
            found = tools_on(run.connection, [ladder.tool, "vmstat"])
            if ladder.tool not in found:
                raise CollectorError(missing_tool_message(ladder.tool, run.host_name))
            samplers = self._samplers(run, stack, notes)
            # The load generator's own CPU, to tell a saturated generator (it starts its
            # tool late and may send less than asked), unless it is a sampled service host.
            if "vmstat" in found and (run.host_id, "vmstat") not in {
                (host_id, tool) for host_id, _, tool in samplers
            }:
                samplers.append((run.host_id, run.connection, "vmstat"))
            for index, load in enumerate(ladder.steps):
                planned = ladder.start_at + timedelta(seconds=index * ladder.slot_seconds)
                # Both sides begin each step together, on the ladder's schedule.
                run.together(f"step:{index}", max_wait=ladder.slot_seconds + 60)
                run.tools.until(planned, late=LATE)
                run.report(run.target_id, run.attempt, ladder_step=index)
                step = self._step(run, samplers, index, load, planned)
                reason = breaking_reason(ladder, step)
                if reason:
                    breaking = (index, reason)
                    break
        except RunCancelled as stop:
            status, error = LadderStatus.CANCELLED, stop.phrase
        except CollectorError as problem:
            status, error = LadderStatus.FAILED, problem.phrase
        except LoadResultError as problem:
            status = LadderStatus.FAILED
            error = Phrase(
                _("The %(tool)s output did not parse: %(error)s"),
                tool=ladder.tool,
                error=problem.phrase,
            )
        finally:
            # Before the samplers' connections close: every tool of the side is ended there.
            run.tools.stop_all()
            stack.close()
        return SideEnd(
            status=status,
            error=joined(filter(None, [error, *notes])),
            breaking_step=breaking[0],
            breaking=breaking[1],
        )

    def _samplers(self, run: TargetRun, stack: ExitStack, notes: list) -> list:
        """(host id, connection, tool) of every sampler the service hosts can run; a host
        that cannot sample is a note, and the load still runs."""
        samplers = []
        for host_id, name, connector in run.parameters["service_hosts"]:
            try:
                if isinstance(connector, CollectorError):
                    raise connector
                connection = stack.enter_context(connector())
                found = tools_on(connection, SAMPLERS)
            except CollectorError as problem:
                notes.append(
                    Phrase(
                        _("no samples from %(host)s: %(error)s"), host=name, error=problem.phrase
                    )
                )
                continue
            if "vmstat" not in found:
                notes.append(
                    Phrase(
                        _("no samples from %(host)s: %(error)s"),
                        host=name,
                        error=missing_tool_message("vmstat", name),
                    )
                )
            samplers.extend((host_id, connection, tool) for tool in SAMPLERS if tool in found)
        return samplers

    def _step(self, run: TargetRun, samplers, index: int, load: int, planned) -> LadderStep:
        """Warm up, then sample the service hosts while the load runs; the step goes to the
        runner to store, and comes back unsaved (what the stop rule reads)."""
        ladder, generator = run.parameters["ladder"], run.connection
        names = (ladder.pk, run.side, index)
        stdin = K6_SCRIPT.encode() if ladder.tool == "k6" else b""
        rate = ladder.load_kind == LoadKind.RATE
        url = run.parameters["url"]
        if ladder.warmup_seconds:
            warm = load_command(
                ladder.tool,
                url,
                load,
                ladder.warmup_seconds,
                pidfile(*names, "warmup", run.token),
                rate,
            )
            self._load(run, warm, stdin)
        sampling = []
        for host_id, connection, tool in samplers:
            name = pidfile(*names, tool, host_id, run.token)
            argv = sampler_command(tool, ladder.step_seconds, name)
            running = run.tools.start(
                connection,
                run_output,
                connection,
                argv,
                ladder.step_seconds + 20,
                files=[name],
            )
            sampling.append((host_id, tool, running))
        command = load_command(
            ladder.tool, url, load, ladder.step_seconds, pidfile(*names, "load", run.token), rate
        )
        began = timezone.now()
        output, status, errors = self._load(run, command, stdin)
        report = output
        if command.summary_file:
            output, _status = run_text(
                generator, ["sh", "-c", 'cat "$1"; rm -f "$1"', "sh", command.summary_file], 15
            )
        try:
            result = self._parse(run, load, output, report, errors, status)
        except (CollectorError, LoadResultError):
            # A tool that fails at once (nothing listens) leaves the samplers just started:
            # they end with the step, as in any step, rather than be cut off mid-start.
            _samples(sampling, ladder.step_seconds + 25)
            raise
        # The step's load is the one it was given: under a rate, not the connections that held
        # it; under a concurrency, not k6's sampled vus, which can miss VUs still starting in
        # a short step (asked for 4, k6 reported 3).
        kind = LoadKind.RATE if rate else LoadKind.CONCURRENCY
        result = replace(result, load=float(load), load_kind=kind)
        done = StepDone(
            index=index,
            result=result,
            # The measured load was planned to begin once the warm-up was over: lateness is
            # counted from there, not from the warm-up's start.
            planned_at=planned + timedelta(seconds=ladder.warmup_seconds),
            started_at=began,
            raw_output=output,
            samples=_samples(sampling, ladder.step_seconds + 25),
        )
        run.report(run.target_id, run.attempt, stored=done)
        return LadderStep(
            index=index,
            requests=result.requests,
            errors=dict(result.errors),
            latency_ms=dict(result.latency_ms),
        )

    def _load(self, run: TargetRun, command, stdin: bytes):
        """The load tool's output, exit status and stderr; stopped on a cancel or the time
        limit (its k6 summary file removed with it)."""
        running = run.tools.start(
            run.connection,
            run_output,
            run.connection,
            command.argv,
            command.limit_s + 10,
            stdin,
            files=[command.pidfile, command.summary_file],
        )
        return run.watch(running, late=LATE)

    def _parse(self, run: TargetRun, load: int, output: str, report: str, errors: str, status):
        """The step's result; a tool that reached nothing fails the side saying why (a URL
        that refuses connections is no load level, and its error is not a parse error)."""
        ladder, url, generator = run.parameters["ladder"], run.parameters["url"], run.host_name
        # hey does not print its concurrency; the other tools do.
        format = PARSE_FORMAT[ladder.tool]
        options = {LOAD_OPTION[format]: load} if format in LOAD_OPTION else {}
        try:
            [result] = parse_results(format, output, **options)
        except LoadResultError:
            failure = tool_failure(ladder.tool, url, generator, errors, status)
            if failure is None:
                raise
            raise CollectorError(failure) from None
        # hey and k6 report a run where every request failed; if none even connected, say why.
        if result.requests == 0 or sum(result.errors.values()) >= result.requests:
            reason = unreachable_reason(url, generator, report, errors)
            if reason is not None:
                raise CollectorError(reason)
        return result

    def store_step(self, *, side, done: StepDone, hosts: dict) -> LadderStep:
        """Keep one step's results as it ends (a service)."""
        return ladder_step_store(
            ladder_side=side,
            index=done.index,
            result=done.result,
            planned_at=done.planned_at,
            started_at=done.started_at,
            raw_output=done.raw_output,
            samples=[
                (hosts[host_id], tool, series)
                for host_id, tool, series in done.samples
                if host_id in hosts
            ],
            generator_samples=[
                (side.load_generator, tool, series)
                for host_id, tool, series in done.samples
                if host_id == side.load_generator_id
            ],
        )

    def store(self, *, target, result: SideEnd) -> None:
        """The side's end: its status, what went wrong and where it broke (a service)."""
        ladder_side_finish(
            side_id=target.pk,
            status=result.status,
            error=result.error or "",
            breaking_step=result.breaking_step,
            breaking=result.breaking,
        )


def _samples(sampling, timeout: float) -> list:
    """(host id, tool, series) of every sampler that gave a series; a step without one
    host's samples is still a step."""
    parsers = {"vmstat": parse_vmstat, "mpstat": parse_mpstat}
    samples = []
    for host_id, tool, running in sampling:
        try:
            text, _status, _errors = running.result(timeout=timeout)
            series = parsers[tool](text)
        except (CollectorError, ValueError, TimeoutError):
            continue
        if series:
            samples.append((host_id, tool, series))
    return samples


def run_ladder(sides: list[LadderSide]) -> None:
    """Both sides at once, each in a thread of its own with a TargetRun (its connection the
    side's load generator); returns when both have ended. This thread alone writes the
    database: each step as it ends, each side's end, the cancel it polls for."""
    plan, stop, reports = LadderPlan(), threading.Event(), queue.SimpleQueue()
    by_id = {side.pk: side for side in sides}
    hosts, runs, connectors = {}, {}, {}

    def report(side_id, _attempt, **changes):
        reports.put((side_id, changes))

    for side in sides:
        try:
            connectors[side.pk] = connector_for(side.load_generator)
        except CollectorError as error:
            plan.store(target=side, result=SideEnd(LadderStatus.FAILED, error.phrase))
            continue
        service_hosts = ladder_service_hosts(ladder_side=side)
        hosts.update((host.pk, host) for host in service_hosts)
        runs[side.pk] = TargetRun(
            target_id=side.pk,
            attempt=0,
            host_name=side.load_generator.name,
            address=side.load_generator.address,
            side=side.side.key,
            parameters=side_parameters(side, service_hosts, _connectors(service_hosts)),
            deadline=0.0,  # set when its thread starts (run_target)
            gate=None,
            report=report,
            host_id=side.load_generator_id,
            stop=stop,
        )
    if not runs:
        return
    # The sides begin no step apart (the schedule says when); neither waits at the start.
    gate = StartGate(parties=len(runs), not_before=timezone.now(), max_wait=0)
    steps = StepGate(parties=len(runs))
    for run in runs.values():
        run.gate, run.steps = gate, steps
    go = threading.Event()
    pool = ThreadPoolExecutor(max_workers=len(runs), thread_name_prefix="ladder")
    # The collections' thread runner, with no retry: a side's steps are not run twice.
    pending = {
        pool.submit(run_target, go, plan, run, connectors[side_id], tries=1): side_id
        for side_id, run in runs.items()
    }
    go.set()
    ladder_id, last_poll, give_up = sides[0].ladder_id, 0.0, None
    try:
        while pending and (give_up is None or time.monotonic() < give_up):
            try:
                # Woken by what a side says (a step is stored the moment it ends), or after
                # a quarter of a second. What the sides said comes first: a side's steps are
                # stored before its end.
                _write_reports(plan, reports, by_id, hosts, wait=0.25)
                done, _running = wait(list(pending), timeout=0)
                if not stop.is_set() and time.monotonic() - last_poll >= CANCEL_POLL_SECONDS:
                    last_poll = time.monotonic()
                    if ladder_cancel_requested(ladder_id=ladder_id):
                        stop.set()  # the sides stop what they started and end cancelled
                _write_reports(plan, reports, by_id, hosts)
                for future in done:
                    plan.store(target=by_id[pending.pop(future)], result=_end(future.result()))
            except SoftTimeLimitExceeded:
                for run in runs.values():
                    run.deadline = 0.0  # out of time: the sides stop their tools and fail
                give_up = time.monotonic() + GIVE_UP_SECONDS
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _end(outcome: Outcome) -> SideEnd:
    """A side's end from its run's outcome (connecting failed, or the plan's own end)."""
    if outcome.cancelled:
        return SideEnd(LadderStatus.CANCELLED, CANCELLED)
    if outcome.error is not None:
        return SideEnd(LadderStatus.FAILED, outcome.error)
    return outcome.result


def _connectors(service_hosts) -> dict:
    connectors = {}
    for host in service_hosts:
        try:
            connectors[host.pk] = connector_for(host)
        except CollectorError as error:  # the load still runs; this host has no samples
            connectors[host.pk] = error
    return connectors


def _seconds_left(side: LadderSide) -> float:
    if side.deadline_at is None:
        return 24 * 3600.0
    return max(0.0, (side.deadline_at - timezone.now()).total_seconds())


def _write_reports(
    plan: LadderPlan, reports: queue.SimpleQueue, by_id: dict, hosts: dict, wait: float = 0
):
    """The sides' progress and finished steps since the last look, in the order said (the
    first waited for at most `wait` seconds)."""
    while True:
        try:
            side_id, changes = reports.get(timeout=wait) if wait else reports.get_nowait()
        except queue.Empty:
            return
        wait = 0
        if "ladder_step" in changes:  # (a collection's progress and step say nothing here)
            ladder_side_progress(side_id=side_id, step=changes["ladder_step"])
        if "stored" in changes:
            plan.store_step(side=by_id[side_id], done=changes["stored"], hosts=hosts)
