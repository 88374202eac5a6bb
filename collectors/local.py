"""Run a probe on this machine instead of over SSH: for the demo and single-machine set-ups.

It has the same `run` as ssh.Connection, so every collector works on both.
"""

import os
import signal
import subprocess
import threading
from typing import BinaryIO

from collectors.errors import CommandTimedOut
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.ssh import RunResult


class LocalConnection:
    def __init__(self, name: str = "this machine"):
        self.name = name

    def __enter__(self) -> "LocalConnection":
        return self

    def __exit__(self, *exc) -> None:
        pass

    def run(
        self,
        argv: list[str],
        *,
        sink: BinaryIO,
        stdin: bytes = b"",
        timeout: float = 60.0,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> RunResult:
        # Its own session, so that a timeout kills the probe and everything it started.
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        timed_out = threading.Event()

        def kill():
            timed_out.set()
            _kill_session(process)

        stderr = bytearray()

        def read_stderr():
            # Read to the end, so that the probe never blocks on a full pipe; keep 64 KiB.
            while chunk := process.stderr.read1(65536):
                stderr.extend(chunk[: max(0, 65536 - len(stderr))])

        reader = threading.Thread(target=read_stderr)
        reader.start()
        timer = threading.Timer(timeout, kill)
        timer.start()
        written, truncated = 0, False
        try:
            process.stdin.write(stdin)
            process.stdin.close()
            while chunk := process.stdout.read1(65536):
                keep = chunk[: max(0, max_bytes - written)]
                sink.write(keep)
                written += len(keep)
                if len(keep) < len(chunk):
                    truncated = True
                    _kill_session(process)
                    break
            exit_status = process.wait()
        finally:
            timer.cancel()
            reader.join()
        if timed_out.is_set():
            raise CommandTimedOut(
                Phrase(
                    _("The command on %(host)s did not finish within %(seconds)s s."),
                    host=self.name,
                    seconds=f"{timeout:g}",
                )
            )
        return RunResult(
            exit_status=None if truncated else exit_status,
            stdout_bytes=written,
            stderr=stderr.decode(errors="replace"),
            truncated=truncated,
        )


def _kill_session(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
