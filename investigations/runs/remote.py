"""The remote tools of a run: one mechanism for every kind (facts, capture, profile, baseline
and the ladder).

A run starts each long-running tool stoppable: under timeout(1), its PID in a file of the
run's own (collectors/loadrun.py's wrapper, or `stoppable` of probes/stoppable.sh). While the
command runs, RemoteTools records that file (and any scratch file the command removes at its
end) by connection. `wait()` watches the command: on a cancel (the run's `stop`) or, when
given `late`, two seconds before the run's deadline, it ends everything recorded through a
second command over the same connection (kill_command, the stop_tools of stoppable.sh; the
command that started the tool is busy streaming its output) and raises. `close()` at the end
of every run, whatever ended it, does the same for what is left: no tool outlives its run and
no PID or scratch file stays behind.

Nothing here touches the database: it runs in the threads that wait on the hosts.
"""

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor, wait
from io import BytesIO

from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadrun import kill_command
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.tools import found_tools, missing_tool_message, which_argv

TEXT_LIMIT = 4 * 1024**2
CANCELLED = Phrase(_("Cancelled."))
# How long a cancel waits for a stopped tool's command to end, asking again every 2 s.
STOP_SECONDS = 10.0
# The commands a run may have going at once (a ladder side: its load tool and two samplers
# on each service host).
MAX_COMMANDS = 32


class RunCancelled(CollectorError):
    """The run was cancelled: it stopped what it had started."""

    def __init__(self):
        super().__init__(CANCELLED)


def run_text(connection, argv, timeout: float, stdin: bytes = b"") -> tuple[str, int | None]:
    """A command's output as text (at most 4 MiB) and its exit status."""
    output, status, _errors = run_output(connection, argv, timeout, stdin)
    return output, status


def run_output(connection, argv, timeout: float, stdin: bytes = b"") -> tuple[str, int | None, str]:
    """A command's output as text (at most 4 MiB), its exit status and what it wrote on
    stderr (at most 64 KiB)."""
    sink = BytesIO()
    result = connection.run(argv, sink=sink, stdin=stdin, timeout=timeout, max_bytes=TEXT_LIMIT)
    return sink.getvalue().decode("utf-8", errors="replace"), result.exit_status, result.stderr


def tools_on(connection, tools) -> set[str]:
    """Which of `tools` the host has, in one command."""
    output, _status = run_text(connection, which_argv(tools), timeout=15)
    return found_tools(output)


def require_tool(connection, tool: str, host_name: str) -> None:
    """A missing tool fails the run with a message that says how to install it."""
    if tool not in tools_on(connection, [tool]):
        raise CollectorError(missing_tool_message(tool, host_name))


class RemoteTools:
    """The tools one run has going on its hosts, by connection: their PID files, and the
    scratch files they remove at their end."""

    def __init__(self, *, stop: threading.Event, remaining: Callable[[], float]):
        self.stop = stop  # set on a cancel
        self.remaining = remaining  # seconds left before the run's deadline
        self.lock = threading.Lock()
        self.files: dict[object, set[str]] = {}
        self.pool: ThreadPoolExecutor | None = None

    def hold(self, connection, *files: str) -> None:
        """Record files to end or remove at a stop (a server left running names its PID
        file here: it outlives the command that started it)."""
        with self.lock:
            self.files.setdefault(connection, set()).update(files)

    def release(self, connection, *files: str) -> None:
        with self.lock:
            self.files.get(connection, set()).difference_update(files)

    def start(self, connection, call: Callable, *args, files=(), **kwargs) -> Future:
        """`call(*args, **kwargs)` (a command on `connection`) in a thread of the run's;
        `files` (its PID file, a scratch file it removes) are the run's until it ends."""
        files = [name for name in files if name]
        self.hold(connection, *files)
        with self.lock:
            if self.pool is None:
                self.pool = ThreadPoolExecutor(
                    max_workers=MAX_COMMANDS, thread_name_prefix="remote-tool"
                )
            running = self.pool.submit(call, *args, **kwargs)
        running.add_done_callback(lambda _done: self.release(connection, *files))
        return running

    def run(
        self, connection, argv, *, pidfile: str, timeout: float, stdin: bytes = b"", late=None
    ) -> tuple[str, int | None, str]:
        """A stoppable command's output, exit status and stderr (run_output), watched."""
        running = self.start(
            connection, run_output, connection, argv, timeout, stdin, files=[pidfile]
        )
        return self.wait(running, late=late)

    def check(self, late: Phrase | None = None) -> None:
        """Raise RunCancelled once the run is cancelled, or (with `late`) a CollectorError
        saying so once it is out of time."""
        if self.stop.is_set():
            raise RunCancelled()
        if late is not None and self.remaining() < 2:
            raise CollectorError(late)

    def until(self, moment, *, late: Phrase | None = None) -> None:
        """Sleep until `moment` (an aware datetime), checking for a stop twice a second."""
        while True:
            self.check(late)
            remaining = (moment - timezone.now()).total_seconds()
            if remaining <= 0:
                return
            time.sleep(min(remaining, 0.5))

    def wait(
        self,
        running: Future,
        *,
        late: Phrase | None = None,
        tick: Callable[[], None] | None = None,
    ):
        """Wait for a command started with `start` (calling `tick` every second) and return
        its result. On a cancel, or (with `late`) two seconds before the deadline, every tool
        of the run is stopped; once the command has ended (or STOP_SECONDS have passed)
        RunCancelled, or a CollectorError with `late`, is raised, and whatever the command
        brings back afterwards is closed."""
        last = time.monotonic()
        while not wait([running], timeout=0.25).done:
            try:
                self.check(late)
            except CollectorError:
                given_up = time.monotonic() + STOP_SECONDS
                self.stop_all()
                while not wait([running], timeout=2).done and time.monotonic() < given_up:
                    self.stop_all()
                running.add_done_callback(_close_result)
                raise
            if tick is not None and time.monotonic() - last >= 1:
                last = time.monotonic()
                tick()
        return running.result()

    def stop_all(self) -> None:
        """End every tool the run has going and remove its files, a command per connection."""
        with self.lock:
            going = {c: sorted(names) for c, names in self.files.items() if names}
        for connection, names in going.items():
            try:
                run_text(connection, kill_command(names), timeout=15)
            except CollectorError:
                continue  # the tools' own timeout(1) still ends them
            self.release(connection, *names)

    def close(self) -> None:
        """The run's end: whatever it still has going is stopped."""
        self.stop_all()
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)


def _close_result(future: Future) -> None:
    """What a stopped command brought back is half-made: closed, never kept."""
    if not future.cancelled() and future.exception() is None:
        result = future.result()
        close = getattr(result, "close", None)
        if close is not None:
            close()
