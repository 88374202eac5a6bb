"""The remote-run machinery every evidence kind shares: commands whose output is read as
text, the tools a host has (with an install hint for one it lacks), the tools a run has
going (so that all can be killed at once), and a watch that says when a run must stop.

Nothing here touches the database: it runs in the threads that wait on the hosts.
"""

import threading
import time
from concurrent.futures import wait
from io import BytesIO

from django.utils import timezone

from collectors.errors import CollectorError
from collectors.loadrun import kill_command
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.tools import found_tools, missing_tool_message, which_argv

TEXT_LIMIT = 4 * 1024**2
LATE = Phrase(_("Gave up: the run went past its time limit."))


class Stopped(Exception):
    """A run stops early: `status` is cancelled, or failed (out of time); `phrase` says so."""

    def __init__(self, status: str, phrase: Phrase):
        super().__init__(phrase)
        self.status = status
        self.phrase = phrase


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
    """The remote tools a run has going, by connection and PID file, so that every one of
    them can be killed at once (each also runs under timeout(1): none outlives its limit)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.running: dict[object, set[str]] = {}

    def run(self, connection, argv, pidfile: str, timeout: float, stdin: bytes = b""):
        """The command's output, exit status and stderr (run_output)."""
        with self.lock:
            self.running.setdefault(connection, set()).add(pidfile)
        try:
            return run_output(connection, argv, timeout, stdin)
        finally:
            with self.lock:
                self.running[connection].discard(pidfile)

    def kill_all(self) -> None:
        with self.lock:
            running = {c: sorted(names) for c, names in self.running.items() if names}
        for connection, names in running.items():
            try:
                run_text(connection, kill_command(names), timeout=15)
            except CollectorError:
                pass  # the tools' own timeout(1) still ends them


class Watch:
    """Why a run must stop now, if it must: a cancel request (`cancelled()` says), or the
    time limit (`out_of_time` is set)."""

    def __init__(
        self,
        *,
        cancelled=None,
        out_of_time: threading.Event | None = None,
        late: Phrase = LATE,
    ):
        self.cancelled = cancelled or (lambda: False)
        self.out_of_time = out_of_time or threading.Event()
        self.late = late

    def check(self) -> None:
        if self.out_of_time.is_set():
            raise Stopped("failed", self.late)
        if self.cancelled():
            raise Stopped("cancelled", Phrase(_("Cancelled.")))

    def until(self, moment) -> None:
        """Sleep until `moment` (an aware datetime), checking twice a second."""
        while True:
            self.check()
            remaining = (moment - timezone.now()).total_seconds()
            if remaining <= 0:
                return
            time.sleep(min(remaining, 0.5))

    def wait(self, future, tools: RemoteTools):
        """Wait for a running command; if the run must stop meanwhile, kill and stop."""
        # Woken at once when the command ends; checks for a stop four times a second.
        while not wait([future], timeout=0.25).done:
            try:
                self.check()
            except Stopped:
                tools.kill_all()
                raise
        return future.result()
