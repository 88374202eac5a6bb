"""Which profile format a file holds, recognised from what is in it: each format by marks of
its own, never "whatever parsed". A file that is no profile is named for what it looks like
(a pcap, JSON, perf.data, an SVG flame graph...), so that a person knows what to do. Every
other kind's marks (captures, load tools, benchmarks, compressed files) are in
collectors/signatures.py, read first: a file another tool's marks name is that tool's,
whatever its lines look like; collectors/filekind.py gives the importers both.

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

from dataclasses import dataclass

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.signatures import (
    HEAD_BYTES,
    Kind,
    binary_kind,
    described,
    head_lines,
    said,
    text_kind,
)

PERF_SCRIPT = "perf-script"
FOLDED = "folded"
ASYNC_PROFILER = "async-profiler"
PY_SPY = "py-spy"

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
    looks like instead (`kind`: what it is, collectors.signatures)."""

    format: str | None
    looks_like: Phrase | None = None
    kind: Kind | None = None


def _not_a_profile(kind: Kind) -> Recognised:
    return Recognised(None, said(kind), kind)


EXPECTED = _(
    "A profile is the text of `perf script`, or folded stacks (`frame;frame;frame COUNT` "
    "lines, as stackcollapse-perf.pl, async-profiler's `-o collapsed` and py-spy's "
    "`--format raw` write them)."
)


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
    """The format of a profile file, from its first 64 KB; a file that another tool's marks
    name (a capture, ab's output, fio's JSON...) is that, whatever its lines look like."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    head = bytes(data[:HEAD_BYTES])
    kind = binary_kind(head)
    if kind is not None:
        return _not_a_profile(kind)
    text, lines = head_lines(data)
    filled = [line for line in lines if line.strip()]
    if any(line.startswith("# captured on:") or line == "# ========" for line in filled[:5]):
        return Recognised(PERF_SCRIPT)
    kind = text_kind(text, lines)
    if kind is not None:
        return _not_a_profile(kind)
    frames = sum(1 for line in filled if _perf_frame(line))
    headers = sum(1 for line in filled if _perf_header(line))
    if headers and (frames or headers == len(filled)):
        return Recognised(PERF_SCRIPT)
    stacks = [line for line in filled if not line.startswith("#")]
    folded = [line for line in stacks if _folded_line(line)]
    # Folded with a few bad lines is still folded: its parser then names the line.
    # (Numbers alone are no stacks: a file of counts only is not a profile.)
    framed = any(not line.strip().isdigit() for line in folded)
    if stacks and _folded_line(stacks[0]) and len(folded) * 2 >= len(stacks) and framed:
        return Recognised(_folded_kind(folded))
    return _not_a_profile(described(text))
