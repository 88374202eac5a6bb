"""CPU profiles: `perf record` on a host, its `perf script` kept and folded.

One probe script (probes/profile.sh) runs twice over the host's one connection: "check"
before the collection's start gate (is perf there, which processes, may we profile them),
then "record" at the planned moment, whose standard output is the raw `perf script` text.
`parse_check` reads the first, `fold_profile` folds the second. Every value a person typed
(the process name, the PID) is checked here against a strict grammar and then passed as a
word of its own: nothing reaches a shell unquoted.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import CollectorError
from collectors.loadrun import STOPPABLE
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.stacks import FoldedProfile, fold_perf_script_stream
from collectors.tools import missing_tool_message

SCRIPT = (STOPPABLE + (Path(__file__).parent / "probes" / "profile.sh").read_text()).encode()

DEFAULT_SECONDS, MAX_SECONDS = 10, 120
DEFAULT_FREQUENCY, MAX_FREQUENCY = 99, 999
CALL_GRAPHS = ("fp", "dwarf")
MODES = ("process", "pid", "host")
# `perf script` of 120 s of DWARF stacks on a busy host can be large: kept up to this.
MAX_OUTPUT_BYTES = 512 * 1024 * 1024
CHECK_TIMEOUT = 30.0

# A command name as /proc/PID/comm holds it (the kernel keeps 15 characters), which is what
# `pgrep -x` compares; nothing that a shell or grep would read as syntax.
_PROCESS = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,14}$")


def validate_process(value: str) -> str:
    value = value.strip()
    if not _PROCESS.match(value):
        raise ValueError(
            Phrase(
                _(
                    "A command name as `pgrep -x` matches it: letters, digits and _ . : @ + -, "
                    "at most 15 (the kernel keeps no more of a name)."
                )
            )
        )
    return value


def validate_pid(value) -> int:
    if isinstance(value, bool) or not str(value).strip().isdecimal():
        raise ValueError(Phrase(_("A PID is a whole number from 1.")))
    pid = int(str(value).strip())
    if not 1 <= pid <= 4_194_304:  # the kernel's highest pid_max
        raise ValueError(Phrase(_("A PID is a whole number from 1 to 4194304.")))
    return pid


@dataclass(frozen=True)
class ProfileRequest:
    mode: str = "host"  # process, pid or host
    target: str = ""  # the command name, the PID, or nothing
    seconds: int = DEFAULT_SECONDS
    frequency: int = DEFAULT_FREQUENCY
    call_graph: str = "fp"

    def __post_init__(self):
        if self.mode not in MODES or self.call_graph not in CALL_GRAPHS:
            raise ValueError(f"mode {self.mode!r} or call graph {self.call_graph!r}")
        if self.mode == "process":
            validate_process(self.target)
        elif self.mode == "pid":
            validate_pid(self.target)
        if not (1 <= self.seconds <= MAX_SECONDS and 1 <= self.frequency <= MAX_FREQUENCY):
            raise ValueError(f"seconds {self.seconds} or frequency {self.frequency}")


def profile_argv(step: str, request: ProfileRequest, pidfile: str = "") -> list[str]:
    """The command of one step ("check" or "record"); the script goes on its standard input.
    A recording with a `pidfile` (loadrun.pidfile) is stopped by kill_command([pidfile])."""
    return [
        "sh",
        "-s",
        "--",
        step,
        request.mode,
        str(request.target or "-"),
        str(request.seconds),
        str(request.frequency),
        request.call_graph,
        pidfile,
    ]


@dataclass(frozen=True)
class ProfileCheck:
    pids: tuple[int, ...]
    via_sudo: bool
    kernel_stacks: bool  # the host lets the profile see kernel frames
    paranoid: int | None


class ProfileRefused(CollectorError):
    """perf is missing, the process is not there, or the host does not let us profile it."""


def _values(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def parse_check(
    output: str, stderr: str, exit_status: int | None, request: ProfileRequest, host: str
) -> ProfileCheck:
    """What the check step found, or a ProfileRefused that says what to do."""
    values = _values(output)
    if exit_status == 127:
        raise ProfileRefused(missing_tool_message("perf", host))
    if exit_status == 3:
        if request.mode == "process":
            raise ProfileRefused(
                Phrase(_("no process named %(name)s on %(host)s"), name=request.target, host=host)
            )
        raise ProfileRefused(
            Phrase(_("no process %(pid)s on %(host)s"), pid=request.target, host=host)
        )
    if exit_status == 4:
        paranoid = values.get("paranoid", "?")
        refused = {
            "host": _(
                "profiling every CPU needs perf_event_paranoid 0 or less (it is %(level)s) or "
                "sudo without a password on %(host)s"
            ),
            "owner": _("%(name)s belongs to another user and sudo needs a password on %(host)s"),
        }.get(
            values.get("refused", ""),
            _("perf_event_paranoid is %(level)s and sudo needs a password on %(host)s"),
        )
        raise ProfileRefused(Phrase(refused, level=paranoid, host=host, name=request.target or ""))
    if exit_status != 0:
        raise ProfileRefused(
            Phrase(
                _("the profile check on %(host)s failed: %(error)s"),
                host=host,
                error=stderr.strip()[-300:] or f"exit status {exit_status}",
            )
        )
    pids = tuple(int(pid) for pid in values.get("pids", "").split(",") if pid.isdigit())
    paranoid = values.get("paranoid", "")
    return ProfileCheck(
        pids=pids,
        via_sudo=values.get("via") == "sudo",
        kernel_stacks=values.get("kernel") == "yes",
        paranoid=int(paranoid) if paranoid.lstrip("-").isdigit() else None,
    )


def record_problem(stderr: str, exit_status: int | None, host: str) -> Phrase | None:
    """Why the record step failed, or None when it did not."""
    if exit_status == 0:
        return None
    if exit_status == 127:
        return missing_tool_message("perf", host)
    return Phrase(
        _("perf could not record on %(host)s: %(error)s"),
        host=host,
        error=stderr.strip()[-300:] or f"exit status {exit_status}",
    )


def fold_profile(stream) -> FoldedProfile:
    """The raw `perf script` text (a binary stream, read in chunks) folded as
    `stackcollapse-perf.pl --all` folds it: the process name at the root, kernel frames
    marked `_[k]`, JIT frames `_[j]`; weighted by each sample's period, sample counts kept
    beside the weights."""
    return fold_perf_script_stream(stream, kernel=True, jit=True)
