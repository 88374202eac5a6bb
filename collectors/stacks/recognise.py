"""Which profile format a file holds, recognised from what is in it: each format by marks of
its own, never "whatever parsed". A file that is no profile is named for what it looks like
(a pcap, JSON, perf.data, an SVG flame graph...), so that a person knows what to do.

What marks each format (the head of the file is enough: a profile says what it is early):
- `perf script`: its header comments (`# ========`, `# captured on:`), sample headers
  `comm pid[/tid] [cpu] time: [period] event:`, and frame lines `addr symbol (module)`.
- folded stacks: every line `frame;frame;...;frame COUNT`.
  - py-spy's raw output: frames `name (file.py:line)`, `thread (0x...)`, `process N:"..."`;
  - async-profiler's collapsed output: Java frames `pkg/Class.method`, its --annotate
    suffixes `_[j]` `_[i]` `_[0]` `_[1]`, its thread frames `[name tid=N]`, and counts alone
    on a line (a trace without frames), which no other folder prints;
  - otherwise folded stacks as stackcollapse-*.pl, inferno or flamegraph.pl read them.
"""

import json
from dataclasses import dataclass

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

PERF_SCRIPT = "perf-script"
FOLDED = "folded"
ASYNC_PROFILER = "async-profiler"
PY_SPY = "py-spy"

HEAD_BYTES = 64 * 1024
# Lines looked at: enough to see the marks, few enough to stay quick on any file.
HEAD_LINES = 400

# The marks are checked with string methods, token by token, never with a pattern that
# could backtrack over a long hostile line (tests/app/test_redos.py).
_HEX = frozenset("0123456789abcdef")


def _digits(text: str) -> bool:
    return text.isascii() and text.isdigit()


def _pid(token: str) -> bool:  # 1234 or 1234/1240
    pid, _slash, tid = token.partition("/")
    return _digits(pid) and (not _slash or _digits(tid))


def _cpu(token: str) -> bool:  # [003]
    return token.startswith("[") and token.endswith("]") and _digits(token[1:-1])


def _time(token: str) -> bool:  # 666709.771979:
    seconds, dot, fraction = token[:-1].partition(".")
    return token.endswith(":") and bool(dot) and _digits(seconds) and _digits(fraction)


def _count(token: str) -> bool:  # a folded count: 12 or 1.5
    whole, dot, fraction = token.partition(".")
    return _digits(whole) and (not dot or not fraction or _digits(fraction))


_HEADER_TAIL = (_cpu, _time, _digits)  # between PID and event: [cpu] time: period, in order
_JAVA_SUFFIXES = ("_[j]", "_[i]", "_[0]", "_[1]")
_PY_FILES = (".py", ".pyc", ".pyw")


def _is_hex(token: str) -> bool:
    return 0 < len(token) <= 16 and all(c in _HEX for c in token)


def _ends_with_module(text: str) -> bool:
    """`... (module)` at the end: where perf script names a frame's module."""
    text = text.rstrip(" \t\r")
    return text.endswith(")") and text.rfind(" (") > 0


def _perf_frame(line: str) -> bool:
    """`addr symbol (module)`, indented or not."""
    parts = line.split(None, 1)
    return len(parts) == 2 and _is_hex(parts[0]) and _ends_with_module(parts[1])


def _header_tail(tokens: list[str]) -> bool:
    """Between the PID and the event: [cpu], time:, period, each optional, in this order."""
    kind = 0
    for token in tokens:
        while kind < len(_HEADER_TAIL) and not _HEADER_TAIL[kind](token):
            kind += 1
        if kind == len(_HEADER_TAIL):
            return False
        kind += 1
    return True


def _perf_header(line: str) -> bool:
    """`comm pid[/tid] [cpu] time: period event:`, and perf script without -g, where the
    sample's one frame follows the event on the same line."""
    if not line or line[0] in " \t":
        return False
    tokens = line.split()
    event = next((i for i in range(2, min(len(tokens), 8)) if tokens[i].endswith(":")), None)
    while event is not None:
        after = tokens[event + 1 :]
        if not after or (_is_hex(after[0]) and _ends_with_module(line)):
            # The comm may hold spaces: the PID is one of the few tokens before the event.
            if any(
                _pid(tokens[pid]) and _header_tail(tokens[pid + 1 : event])
                for pid in range(max(1, event - 4), event)
            ):
                return True
        event = next(
            (i for i in range(event + 1, min(len(tokens), 8)) if tokens[i].endswith(":")), None
        )
    return False


def _folded_line(line: str) -> bool:
    """`stack COUNT`, or a count alone (a stack without frames)."""
    text = line.rstrip(" \t\r")
    cut = max(text.rfind(" "), text.rfind("\t"))
    return _count(text[cut + 1 :]) and (cut < 0 or text[:1] not in " \t" or not text[:cut].strip())


def _py_spy_frame(frame: str) -> bool:
    """`name (file.py:line)`, or `process PID:"command"` (--subprocesses)."""
    if frame.startswith("process ") and ':"' in frame:
        return True
    opening = frame.rfind(" (")
    if opening < 0 or not frame.endswith(")"):
        return False
    where, _colon, number = frame[opening + 2 : -1].rpartition(":")
    return number.isdigit() and where.endswith(_PY_FILES)


def _async_profiler_frame(frame: str) -> bool:
    """A Java frame `pkg/Class.method`, a thread frame `[name tid=N]`, or --annotate's
    suffixes for inlined and interpreted/compiled frames."""
    if frame.endswith(("_[i]", "_[0]", "_[1]")):
        return True
    if frame.startswith("[") and frame.endswith("]") and " tid=" in frame:
        return True
    name = frame[:-4] if frame.endswith(_JAVA_SUFFIXES) else frame
    owner, _dot, method = name.rpartition(".")
    package, _slash, cls = owner.rpartition("/")
    return bool(package) and _java_name(cls) and cls[:1].isupper() and _java_name(method)


def _java_name(name: str) -> bool:
    """An identifier as the JVM names classes and methods (`<init>` included); perf's
    folded Java frames (`pkg/Class:.method`) keep a colon, async-profiler's do not."""
    name = name.removeprefix("<").removesuffix(">")
    return bool(name) and name.replace("$", "").replace("_", "a").isalnum()


@dataclass(frozen=True)
class Recognised:
    """The profile format a file holds (one of the names above), or None and what the file
    looks like instead."""

    format: str | None
    looks_like: Phrase | None = None


EXPECTED = _(
    "A profile is the text of `perf script`, or folded stacks (`frame;frame;frame COUNT` "
    "lines, as stackcollapse-perf.pl, async-profiler's `-o collapsed` and py-spy's "
    "`--format raw` write them)."
)

_BINARY = (
    (
        (b"PERFILE2", b"2ELIFREP", b"PERFFILE"),
        _(
            "a perf.data file (the binary that perf record writes): run "
            "`perf script -i perf.data > profile.txt` where it was recorded, and import the text"
        ),
    ),
    (
        (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"),
        _("a packet capture (pcap): import it as a capture, not as a profile"),
    ),
    (
        (b"\x0a\x0d\x0d\x0a",),
        _("a packet capture (pcapng): import it as a capture, not as a profile"),
    ),
    ((b"\x1f\x8b",), _("a gzip-compressed file: unpack it (gunzip) and import what is inside")),
    ((b"\x28\xb5\x2f\xfd",), _("a zstd-compressed file: unpack it and import what is inside")),
    ((b"BZh",), _("a bzip2-compressed file: unpack it and import what is inside")),
    ((b"\xfd7zXZ\x00",), _("an xz-compressed file: unpack it and import what is inside")),
    ((b"PK\x03\x04",), _("a zip archive: unpack it and import the profiles inside")),
    ((b"\x7fELF",), _("a program or library (an ELF binary), not a profile")),
)


def _looks_like_text(head: str) -> Phrase:
    start = head.lstrip("\ufeff \t\r\n")
    lowered = start[:400].lower()
    if start[:1] in "{[":
        if "speedscope" in lowered or "speedscope" in head[:4000]:
            return Phrase(
                _("speedscope's JSON: import the profile it was made from, or folded stacks")
            )
        if '"timedeltas"' in head[:200_000].lower() or '"callframe"' in head[:200_000].lower():
            return Phrase(_("a Chrome or Node.js .cpuprofile (JSON): not a format read here"))
        try:
            json.loads(head)
        except ValueError:
            pass
        return Phrase(_("JSON, not a profile in a format read here"))
    if lowered.startswith("<?xml") or lowered.startswith("<svg") or "<svg" in lowered:
        return Phrase(
            _(
                "an SVG image (a flame graph drawn by flamegraph.pl?): import the folded "
                "stacks it was drawn from"
            )
        )
    if lowered.startswith("<!doctype html") or lowered.startswith("<html"):
        return Phrase(_("an HTML page, not a profile"))
    first = next((line for line in start.split("\n") if line.strip()), "")
    shown = first.rstrip("\r")
    shown = shown if len(shown) <= 80 else shown[:80] + "…"
    return Phrase(_("text whose first line is %(line)s"), line=repr(shown))


def _folded_kind(lines: list[str]) -> str:
    frames = [frame for line in lines for frame in line.rsplit(None, 1)[0].split(";")]
    if any(_py_spy_frame(frame) for frame in frames):
        return PY_SPY
    if any(line.strip().isdigit() and line[:1] not in " \t" for line in lines) or any(
        _async_profiler_frame(frame) for frame in frames
    ):
        return ASYNC_PROFILER
    return FOLDED


def recognise(data: bytes | str) -> Recognised:
    """The format of a profile file, from its first 64 KB."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    head = bytes(data[:HEAD_BYTES])
    for magics, what in _BINARY:
        if head.startswith(magics):
            return Recognised(None, Phrase(what))
    if not head.strip():
        return Recognised(None, Phrase(_("an empty file")))
    if b"\0" in head:
        return Recognised(None, Phrase(_("binary data, not text")))
    text = head.decode("utf-8", "replace")
    if text.count("\ufffd") > len(text) // 20:
        return Recognised(None, Phrase(_("binary data, not text")))
    lines = text.split("\n")
    if len(data) > HEAD_BYTES and len(lines) > 1:
        lines.pop()  # cut in the middle
    lines = [line.rstrip("\r") for line in lines[:HEAD_LINES]]
    filled = [line for line in lines if line.strip()]
    if any(line.startswith("# captured on:") or line == "# ========" for line in filled[:5]):
        return Recognised(PERF_SCRIPT)
    frames = sum(1 for line in filled if _perf_frame(line))
    headers = sum(1 for line in filled if _perf_header(line))
    if headers and (frames or headers == len(filled)):
        return Recognised(PERF_SCRIPT)
    stacks = [line for line in filled if not line.startswith("#")]
    folded = [line for line in stacks if _folded_line(line)]
    # Folded with a few bad lines is still folded: its parser then names the line.
    if stacks and _folded_line(stacks[0]) and len(folded) * 2 >= len(stacks):
        return Recognised(_folded_kind(folded))
    return Recognised(None, _looks_like_text(text))
