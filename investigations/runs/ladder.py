"""Running a ladder: both sides' load generators and samplers, step by step, together.

One task runs the whole ladder: a thread per side, so the two sides never wait for a free
worker each and start every step on one schedule. In each side's thread the remote
commands run in a pool, one connection per host, one channel per command, while the thread
keeps to the schedule and watches for a cancel or the time limit. Whatever happens (done,
broken, cancelled, failed, out of time) every tool still running is killed before the
connections close; each also runs under timeout(1), so none outlives its step.
"""

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import timedelta

from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection as db_connection
from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadresults import LoadResultError
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
from investigations.connections import open_connection
from investigations.models import LadderSide, LadderStep
from investigations.runs.remote import RemoteTools, Stopped, Watch, run_text, tools_on
from investigations.selectors import ladder_cancel_requested, ladder_service_hosts
from investigations.services.ladder_results import (
    ladder_side_finish,
    ladder_side_progress,
    ladder_step_store,
)

logger = logging.getLogger(__name__)


def run_ladder(sides: list[LadderSide]) -> None:
    """Both sides at once, each in its own thread; returns when both have finished."""
    out_of_time = threading.Event()
    threads = [
        threading.Thread(target=_side_thread, args=(side, out_of_time), name=f"ladder-{side.pk}")
        for side in sides
    ]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(0.5)  # a timed join lets the soft time limit's signal in
    except SoftTimeLimitExceeded:
        out_of_time.set()
        for thread in threads:
            thread.join(60)


def _side_thread(side: LadderSide, out_of_time: threading.Event) -> None:
    watch = Watch(
        cancelled=lambda: ladder_cancel_requested(ladder_id=side.ladder_id),
        out_of_time=out_of_time,
        late=Phrase(_("Gave up: the ladder ran past its time limit.")),
    )
    try:
        run_side(side, watch)
    except Exception as error:  # a bug: fail the side visibly rather than leave it running
        logger.exception("ladder side %s failed", side.pk)
        ladder_side_finish(
            side_id=side.pk,
            status=LadderStatus.FAILED,
            error=Phrase(_("Internal error: %(error)s"), error=f"{type(error).__name__}: {error}"),
        )
    finally:
        db_connection.close()  # this thread's own database connection


def run_side(side: LadderSide, watch: Watch) -> None:
    ladder = side.ladder
    service_hosts = ladder_service_hosts(ladder_side=side)
    tools, notes = RemoteTools(), []
    status, error, breaking = LadderStatus.COMPLETED, None, (None, "")
    with ExitStack() as stack:
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=2 * len(service_hosts) + 2))
        try:
            generator = stack.enter_context(open_connection(side.load_generator))
            if ladder.tool not in tools_on(generator, [ladder.tool]):
                raise CollectorError(missing_tool_message(ladder.tool, side.load_generator.name))
            samplers = []
            for host in service_hosts:
                try:
                    connection = stack.enter_context(open_connection(host))
                    found = tools_on(connection, SAMPLERS)
                except CollectorError as problem:
                    # The load still runs; this host just has no samples.
                    notes.append(
                        Phrase(
                            _("no samples from %(host)s: %(error)s"),
                            host=host.name,
                            error=problem.phrase,
                        )
                    )
                    continue
                if "vmstat" not in found:
                    notes.append(
                        Phrase(
                            _("no samples from %(host)s: %(error)s"),
                            host=host.name,
                            error=missing_tool_message("vmstat", host.name),
                        )
                    )
                samplers.extend((host, connection, tool) for tool in SAMPLERS if tool in found)
            for index, load in enumerate(ladder.steps):
                planned = ladder.start_at + timedelta(seconds=index * ladder.slot_seconds)
                watch.until(planned)
                ladder_side_progress(side_id=side.pk, step=index)
                run = StepRun(side, generator, samplers, pool, tools, watch)
                step = run.step(index, load, planned)
                reason = breaking_reason(ladder, step)
                if reason:
                    breaking = (index, reason)
                    break
        except Stopped as stop:
            status, error = stop.status, stop.phrase
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
            tools.kill_all()
    ladder_side_finish(
        side_id=side.pk,
        status=status,
        error=joined(filter(None, [error, *notes])),
        breaking_step=breaking[0],
        breaking=breaking[1],
    )


@dataclass
class StepRun:
    """What a side's steps run with: its connections, the pool and the watch."""

    side: LadderSide
    generator: object  # the load generator's connection
    samplers: list  # (host, connection, tool)
    pool: ThreadPoolExecutor
    tools: RemoteTools
    watch: Watch

    def step(self, index: int, load: int, planned) -> LadderStep:
        """Warm up, then sample the service hosts while the load runs; store the step."""
        ladder, side = self.side.ladder, self.side
        base = (ladder.pk, side.side.key, index)
        stdin = K6_SCRIPT.encode() if ladder.tool == "k6" else b""
        rate = ladder.load_kind == LoadKind.RATE
        if ladder.warmup_seconds:
            warm = load_command(
                ladder.tool, side.url, load, ladder.warmup_seconds, pidfile(*base, "warmup"), rate
            )
            self._wait(warm.argv, warm.pidfile, warm.limit_s + 10, stdin)
        sampling = []
        for host, connection, tool in self.samplers:
            name = pidfile(*base, tool, host.pk)
            argv = sampler_command(tool, ladder.step_seconds, name)
            running = self.pool.submit(
                self.tools.run, connection, argv, name, ladder.step_seconds + 20
            )
            sampling.append((host, tool, running))
        command = load_command(
            ladder.tool, side.url, load, ladder.step_seconds, pidfile(*base, "load"), rate
        )
        began = timezone.now()
        output, status, errors = self._wait(
            command.argv, command.pidfile, command.limit_s + 10, stdin
        )
        report = output
        if command.summary_file:
            output, _status = run_text(
                self.generator,
                ["sh", "-c", 'cat "$1"; rm -f "$1"', "sh", command.summary_file],
                15,
            )
        try:
            result = self._parse(load, output, report, errors, status)
        except (CollectorError, LoadResultError):
            # A tool that fails at once (nothing listens) leaves the samplers just started:
            # they end with the step, as in any step, rather than be cut off mid-start.
            _samples(sampling, ladder.step_seconds + 25)
            raise
        if rate:  # the step's load is the rate it was given, not the connections that held it
            result = replace(result, load=float(load), load_kind=LoadKind.RATE)
        return ladder_step_store(
            ladder_side=side,
            index=index,
            result=result,
            # The measured load was planned to begin once the warm-up was over: lateness is
            # counted from there, not from the warm-up's start.
            planned_at=planned + timedelta(seconds=ladder.warmup_seconds),
            started_at=began,
            raw_output=output,
            samples=_samples(sampling, ladder.step_seconds + 25),
        )

    def _parse(self, load: int, output: str, report: str, errors: str, status):
        """The step's result; a tool that reached nothing fails the side saying why (a URL
        that refuses connections is no load level, and its error is not a parse error)."""
        ladder, side = self.side.ladder, self.side
        generator = side.load_generator.name
        # hey does not print its concurrency; the other tools do.
        format = PARSE_FORMAT[ladder.tool]
        options = {LOAD_OPTION[format]: load} if format in LOAD_OPTION else {}
        try:
            [result] = parse_results(format, output, **options)
        except LoadResultError:
            failure = tool_failure(ladder.tool, side.url, generator, errors, status)
            if failure is None:
                raise
            raise CollectorError(failure) from None
        # hey and k6 report a run where every request failed; if none even connected, say why.
        if result.requests == 0 or sum(result.errors.values()) >= result.requests:
            reason = unreachable_reason(side.url, generator, report, errors)
            if reason is not None:
                raise CollectorError(reason)
        return result

    def _wait(self, argv, name, timeout, stdin):
        running = self.pool.submit(self.tools.run, self.generator, argv, name, timeout, stdin)
        return self.watch.wait(running, self.tools)


def _samples(sampling, timeout: float) -> list:
    """(host, tool, series) of every sampler that gave a series; a step without one host's
    samples is still a step."""
    parsers = {"vmstat": parse_vmstat, "mpstat": parse_mpstat}
    samples = []
    for host, tool, running in sampling:
        try:
            text, _status, _errors = running.result(timeout=timeout)
            series = parsers[tool](text)
        except (CollectorError, ValueError, TimeoutError):
            continue
        if series:
            samples.append((host, tool, series))
    return samples
