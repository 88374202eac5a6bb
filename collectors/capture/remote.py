"""Capturing on a host: tcpdump over SSH, its pcap streamed back as it comes.

One probe script (probes/capture.sh) runs twice over the host's connection: "check" before
the collection's start gate (tcpdump there? the interface? may we capture?), then "capture"
at the planned moment, whose standard output is the pcap itself. Every value a person typed
(the interface, the capture filter) is checked here against a strict grammar, the filter is
also compiled by the worker's own tcpdump, and each is then passed as a word of its own:
nothing reaches a shell unquoted.
"""

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from collectors.errors import CollectorError
from collectors.loadrun import STOPPABLE
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.tools import missing_tool_message

SCRIPT = (STOPPABLE + (Path(__file__).parent.parent / "probes" / "capture.sh").read_text()).encode()

DEFAULT_SECONDS, MAX_SECONDS = 10, 300
# Headers and enough payload for a TLS ClientHello with its SNI and extensions.
DEFAULT_SNAPLEN, MAX_SNAPLEN = 2048, 65535
DEFAULT_MAX_MB, MAX_MAX_MB = 200, 4096
CHECK_TIMEOUT = 30.0
MAX_FILTER = 1000

# An interface name as Linux allows it (IFNAMSIZ - 1), or "any".
_INTERFACE = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")
# The characters a pcap filter needs (names, numbers, addresses, operators, brackets) and
# nothing a shell or tcpdump's option parser would read: no quotes, backslashes, `$`, `;`,
# backticks, and no leading "-".
_FILTER = re.compile(r"^[A-Za-z0-9 ._:/\[\]()!&|<>=*+%^~-]*$")


def validate_interface(value: str) -> str:
    value = value.strip()
    if not _INTERFACE.match(value) or value.startswith("-"):
        raise ValueError(
            Phrase(_("An interface name (letters, digits and _ . : @ -, at most 15), or any."))
        )
    return value


def validate_filter(value: str) -> str:
    """The filter in tcpdump's grammar, or a ValueError that says what is wrong with it: its
    characters here, then the worker's tcpdump compiles it (`tcpdump -d`) when installed."""
    value = " ".join(value.split())
    if len(value) > MAX_FILTER:
        raise ValueError(
            Phrase(_("A capture filter has at most %(count)s characters."), count=MAX_FILTER)
        )
    if not _FILTER.match(value) or value.startswith("-"):
        raise ValueError(
            Phrase(
                _(
                    "A capture filter is pcap filter syntax (host, port, tcp, and, or, not, "
                    "brackets): no quotes, backslashes, $ ; ` or a leading -."
                )
            )
        )
    problem = compile_problem(value) if value else None
    if problem:
        raise ValueError(Phrase(_("tcpdump cannot compile this filter: %(error)s"), error=problem))
    return value


def compile_problem(expression: str) -> str | None:
    """What tcpdump says is wrong with the filter (compiled for Ethernet, as `tcpdump -d`
    does without a device), or None when it compiles or no tcpdump is installed here."""
    tcpdump = shutil.which("tcpdump") or next(
        (p for p in ("/usr/sbin/tcpdump", "/usr/bin/tcpdump") if Path(p).exists()), None
    )
    if tcpdump is None:
        return None
    done = subprocess.run(
        [tcpdump, "-d", "-y", "EN10MB", "--", expression],
        capture_output=True,
        text=True,
        timeout=10,
        env={"LC_ALL": "C", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
    )
    if done.returncode == 0:
        return None
    return done.stderr.strip().removeprefix("tcpdump: ")[:300] or f"exit status {done.returncode}"


@dataclass(frozen=True)
class CaptureRequest:
    interface: str = "any"
    seconds: int = DEFAULT_SECONDS
    snaplen: int = DEFAULT_SNAPLEN
    filter: str = ""


def capture_argv(step: str, request: CaptureRequest, pidfile: str = "") -> list[str]:
    """The command of one step ("check" or "capture"); the script goes on its stdin. A
    capture with a `pidfile` (loadrun.pidfile) is stopped by kill_command([pidfile])."""
    return [
        "sh",
        "-s",
        "--",
        step,
        request.interface,
        str(request.seconds),
        str(request.snaplen),
        request.filter,
        pidfile,
    ]


class CaptureRefused(CollectorError):
    """tcpdump is missing, the interface is not there, or the host does not let us capture."""


def check_problem(stderr: str, exit_status: int | None, request: CaptureRequest, host: str):
    """Why the check step refuses to capture (a CaptureRefused to raise), or None."""
    if exit_status == 0:
        return None
    if exit_status == 127:
        return CaptureRefused(missing_tool_message("tcpdump", host))
    if exit_status == 3:
        return CaptureRefused(
            Phrase(
                _("interface %(interface)s does not exist on %(host)s"),
                interface=request.interface,
                host=host,
            )
        )
    if exit_status == 4:
        return CaptureRefused(
            Phrase(
                _("no permission to capture on %(host)s: run as root or grant cap_net_raw"),
                host=host,
            )
        )
    return CaptureRefused(
        Phrase(
            _("the capture check on %(host)s failed: %(error)s"),
            host=host,
            error=stderr.strip()[-300:] or f"exit status {exit_status}",
        )
    )


def capture_problem(stderr: str, exit_status: int | None, host: str) -> Phrase | None:
    """Why the capture failed, or None: tcpdump stopped by our time limit (timeout's 124)
    or at the size cap (no status: we stopped reading) is a capture that ran."""
    if exit_status in (0, 124, None):
        return None
    return Phrase(
        _("tcpdump could not capture on %(host)s: %(error)s"),
        host=host,
        error=stderr.strip()[-300:] or f"exit status {exit_status}",
    )


_STATS = re.compile(r"^(\d+) packets? (captured|received by filter|dropped by kernel)", re.M)


def tcpdump_counts(stderr: str) -> dict[str, int]:
    """What tcpdump said at its end: {"captured", "received", "dropped"} (those it said)."""
    names = {
        "captured": "captured",
        "received by filter": "received",
        "dropped by kernel": "dropped",
    }
    return {names[what]: int(count) for count, what in _STATS.findall(stderr)}


class PcapCounter:
    """Counts the packets of a pcap stream as it arrives (from its record headers), for the
    progress a person watches, and where the last whole record ends (a capture stopped at
    its size cap is cut there, so that it opens cleanly). Fed every chunk; keeps only the
    header it is in the middle of."""

    def __init__(self):
        self.packets = 0
        self.whole = 0  # bytes up to the end of the last whole record
        self._seen = 0  # bytes fed before the current chunk
        self._header = bytearray()
        self._need = 24  # the size of the header being read: the file's, then a record's
        self._skip = 0  # bytes of the current record's data still to come
        self._order = None

    def feed(self, data: bytes) -> None:
        position, size = 0, len(data)
        while position < size:
            if self._skip:
                taken = min(self._skip, size - position)
                self._skip -= taken
                position += taken
                if not self._skip:
                    self._record_ends(position)
                continue
            taken = min(self._need - len(self._header), size - position)
            self._header += data[position : position + taken]
            position += taken
            if len(self._header) < self._need:
                continue
            if self._order is None:  # the file header: its magic number gives the order
                self._order = "little" if self._header[:4] in _LITTLE_ENDIAN else "big"
                self.whole = self._seen + position
                self._need = 16
            else:
                self._skip = int.from_bytes(self._header[8:12], self._order)
                if not self._skip:
                    self._record_ends(position)
            self._header.clear()
        self._seen += size

    @property
    def listening(self) -> bool:
        """Whether the file's header has come: tcpdump writes it once it has opened the
        interface and set its filter, so from then on it captures."""
        return self._order is not None

    def _record_ends(self, position: int) -> None:
        self.packets += 1
        self.whole = self._seen + position


# pcap's magic numbers as a little-endian writer writes them (microseconds, nanoseconds).
_LITTLE_ENDIAN = (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")
