"""Folding `perf script` output into stacks exactly as Brendan Gregg's stackcollapse-perf.pl
(FlameGraph 41fee1f) does, with its options --pid, --tid, --kernel, --jit, --all and
--event-filter (not --inline, --context, --srcline, --addrs: they need addr2line or are for
debugging the script).

What the script does, and so what we do:
- A sample starts with a header line, `comm pid/tid [cpu] time: period event:`, where the
  comm may hold spaces, the PID, the CPU and the period are optional. Only samples of the
  first event type seen are kept (or of `event`), so that cycles and instructions are never
  added together. Each sample counts its period when perf printed one (1 otherwise): the
  numbers are weights, not sample counts; we keep both.
- Frame lines (`addr symbol+0xoff (module)`, leaf first) are tidied: offsets and arguments
  removed (except in Go's `pkg.(*T).M`), `;` made `:`, quotes dropped, `[unknown]` named
  after its module, Java's `Lpkg/Class;` made `pkg/Class:` for processes named java*,
  `a->b` (perf's inlined frames) split with `_[i]` on the inlined ones, and with --kernel or
  --jit `_[k]` on kernel frames and `_[j]` on frames of /tmp/perf-PID.map.
- A blank line ends the sample: `comm;root;...;leaf` gets its period added. A last sample
  without a blank line after it is lost, and frames between two headers join one stack, as
  in the script.
- The output is `stack weight` lines in the order of Perl's `sort keys`: byte order.

The script's regular expressions are replaced by string methods and possessive patterns that
accept and capture exactly the same (the reasoning is beside each), because Python's
backtracking has no guard against the exponential cases `(\\d+)*` invites on hostile lines.
Speed: each distinct frame line is tidied once and remembered (perf repeats the same
addresses over and over), so most lines cost one dict lookup.
"""

import re
from collections.abc import Iterable
from io import BufferedIOBase, RawIOBase
from itertools import chain

from collectors.stacks.profile import (
    OTHER_EVENT,
    OUTSIDE_SAMPLE,
    UNRECOGNIZED,
    UNTERMINATED,
    UV_LIMIT,
    FoldedProfile,
    perl_order,
)

# Perl's \s on bytes (since 5.18): space, \t, \n, \v, \f, \r. Python's str.isspace and
# str.split() know many more (\x1c-\x1f, \x85, \xa0), so they are never used on input.
WS = " \t\n\r\f\v"
_W = "[ \\t\\n\\r\\f\\v]"

# Header: the script's /^(\S.+?)\s+(\d+)\/*(\d+)*\s+/. The comm ends where a run of white
# space starts (or at its second character, .+? taking one) that is followed by digits,
# slashes, optional digits and white space. Anchoring on the start of a run and possessive
# runs find that same first place in linear time; the captured PID and TID are the same,
# because every other split of the digits fails at the same next character.
_HEADER = re.compile(rf"(?<!{_W}){_W}++(\d++)/*+(\d++)?{_W}", re.ASCII)
# Event: the script's /:\s*(\d+)*\s+(\S+):\s*$/, its two ways of matching written as two
# branches in the order Perl tries them (with the period first, then without).
_EVENT = re.compile(rf":(?:{_W}*+(\d++){_W}++|{_W}++)(\S+):{_W}*+$", re.ASCII)
# Frame: the head of /^\s*(\w+)\s*(.+) \((.*)\)/, the address and the white space
# around it; the rest is found with rfind (see _split_frame).
_FRAME_HEAD = re.compile(rf"^{_W}*+(\w++){_W}*+", re.ASCII)
_OFFSET = re.compile(r"[\da-f]+", re.ASCII)
_ARGUMENTS = re.compile(r"\((?!anonymous namespace\)).*")
_JIT_MAP = re.compile(r"/tmp/perf-\d+\.map", re.ASCII)

_MISS = object()  # not in a frame cache
# Frames remembered, by whole line and by the text after the address, before a cache starts
# again: a few MB at most, however many distinct addresses a profile has.
CACHE_LIMIT = 20_000
PROBLEMS_KEPT = 5
CHUNK_BYTES = 1 << 16


def _split_frame(text: str, head: re.Match[str]) -> tuple[str, str, bool] | None:
    """(rawfunc, module) as /^\\s*(\\w+)\\s*(.+) \\((.*)\\)/ captures them, and whether
    they depend on nothing but the text after the address; or None when it does not match.

    `head` is _FRAME_HEAD's match. The greedy (.+) ends at the last " (" with a ")" after
    it, and (.*) at the last ")". Only when that " (" comes right after the address does Perl
    backtrack: into the white space (the function becomes one white-space character) or
    into the address (its last character becomes the function)."""
    start, end = head.span(1)
    close = text.rfind(")")
    if close < 0:
        return None
    opening = text.rfind(" (", 0, close)
    if opening < 0:
        return None
    after = head.end()
    if opening > after:
        return text[after:opening], text[opening + 2 : close], True
    if opening > end:
        return text[opening - 1 : opening], text[opening + 2 : close], False
    if opening == end and end - start >= 2:
        return text[end - 1 : end], text[opening + 2 : close], False
    return None


def _tidy(rawfunc: str, module: str, java: bool, kernel: bool, jit: bool) -> str | None:
    """The frames one perf frame line adds, `;`-joined in stack order, or None for none."""
    # s/\+0x[\da-f]+$//: only the last "+0x" can be followed by nothing but hex digits.
    offset = rawfunc.rfind("+0x")
    if offset >= 0 and _OFFSET.fullmatch(rawfunc, offset + 3):
        rawfunc = rawfunc[:offset]
    if rawfunc.startswith("("):
        return None  # the script skips these ("process names")
    # Perl's split drops trailing empty fields (and so returns nothing for "").
    parts = rawfunc.split("->")
    while parts and not parts[-1]:
        parts.pop()
    frames: list[str] = []
    for func in parts:
        if func == "[unknown]":
            func = "[unknown]" if module == "[unknown]" else f"[{module.rpartition('/')[2]}]"
        if ";" in func:
            func = func.replace(";", ":")
        if "(" in func:
            # Not a Go method name such as "net/http.(*Client).Do": arguments are noise.
            go_open = func.find(".(")
            if go_open < 0 or func.find(").", go_open + 2) < 0:
                func = _ARGUMENTS.sub("", func, count=1)
        if '"' in func or "'" in func:
            func = func.replace('"', "").replace("'", "")
        if java and func.startswith("L") and "/" in func:
            func = func[1:]
        if frames:
            if "_[i]" not in func:
                func += "_[i]"
        elif (
            kernel
            and (module.startswith("[") or module.endswith("vmlinux"))
            and "unknown" not in module
        ):
            func += "_[k]"
        elif jit and _JIT_MAP.search(module) and "_[j]" not in func:
            func += "_[j]"
        frames.append(func)
    return ";".join(frames) if frames else None


def _parse_header(text: str, shortest_comm: int) -> tuple[str, str, str | None] | None:
    """(comm, first number, second number or None) of a sample header, or None."""
    if text[0] in WS:
        return None
    position = 1
    while True:
        match = _HEADER.search(text, position)
        if match is None:
            return None
        run = match.start()
        if run >= shortest_comm:
            return text[:run], match[1], match[2]
        # The run starts at the comm's second character: .+? must take one character of it,
        # which leaves the comm ending inside the run if the run is longer than one.
        if text[run + 1] in WS:
            return text[: run + 1], match[1], match[2]
        position = run + 1


def _period(digits: str | None) -> int | float:
    """The sample's weight: `$period = 1 if not $period`, else the number Perl makes of it."""
    if not digits or digits == "0":
        return 1
    significant = digits.lstrip("0")
    if len(significant) > 20:
        return float(significant)  # beyond 64 bits Perl has a double (and so do we)
    value = int(digits)
    return value if value < UV_LIMIT else float(value)


class PerfScriptFolder:
    """Folds `perf script` output fed in pieces (feed), then gives the profile (result).

    Lines are whole lines, with or without their "\n". Fed as text they fold as the UTF-8
    bytes they stand for; for byte-exact results whatever the bytes (as Perl reads them),
    feed them decoded as Latin-1 with `binary=True`: the result's names are then decoded as
    UTF-8, undecodable bytes kept as surrogates (utf8_bytes gives the bytes back)."""

    def __init__(
        self,
        *,
        pid: bool = False,
        tid: bool = False,
        kernel: bool = False,
        jit: bool = False,
        event: str | None = None,
        legacy_java: bool = False,
        binary: bool = False,
    ) -> None:
        self._include_pid = pid
        self._include_tid = tid
        self._kernel = kernel
        self._jit = jit
        # Before FlameGraph e54f142 (2017) Java names were tidied only for a process named
        # exactly "java"; the published --pid results of the FlameGraph tests still are.
        self._legacy_java = legacy_java
        self._binary = binary
        # Perl's default: the first event type seen (an empty filter is no filter).
        self._event = event or None
        # Frames by whole line and by the text after the address, for other processes and
        # for java ones (whose frames are tidied differently).
        self._lines_seen: tuple[dict[str, str | None], ...] = ({}, {})
        self._symbols_seen: tuple[dict[str, str | None], ...] = ({}, {})
        self._java = False
        self._stack: list[str] = []
        self._pname: str | None = None
        self._period: int | float = 1
        self._comm = self._pid = self._tid = ""
        self._in_other_event = False
        self._line_number = 0
        self._weights: dict[str, int | float] = {}
        self._samples: dict[str, int] = {}
        self._processes: dict[str, int] = {}
        self._pids: dict[str, int] = {}
        self._tids: dict[str, int] = {}
        self._skipped: dict[str, int] = {}
        self._problems: list[str] = []

    def _skip(self, reason: str, number: int, text: str | None = None) -> None:
        self._skipped[reason] = self._skipped.get(reason, 0) + 1
        if text is not None and len(self._problems) < PROBLEMS_KEPT:
            shown = text if len(text) <= 120 else text[:120] + "..."
            self._problems.append(f"line {number}: {reason}: {shown!r}")

    def feed(self, lines: Iterable[str]) -> None:
        """Fold more lines (each with or without its "\\n")."""
        # The hot loop: state in locals, one dict lookup for a frame line seen before.
        java = self._java
        cache = self._lines_seen[java]
        remembered = cache.get
        stack = self._stack
        push = stack.append
        pname = self._pname
        period = self._period
        comm, pid, tid = self._comm, self._pid, self._tid
        weights, samples = self._weights, self._samples
        miss = _MISS
        first = self._line_number + 1
        number = first - 1  # what the loop leaves it at: the last line's number
        for number, line in enumerate(lines, first):
            frames = remembered(line, miss)
            if frames is not miss:
                if pname is not None:
                    if frames is not None:
                        push(frames)
                elif not self._in_other_event:
                    self._skip(OUTSIDE_SAMPLE, number)
                continue
            text = line[:-1] if line[-1:] == "\n" else line  # chomp
            if not text:
                # End of a sample: remember it, root first.
                if pname is None:
                    self._in_other_event = False
                    continue
                push(pname)
                stack.reverse()
                key = ";".join(stack)
                stack.clear()
                weight = weights.get(key, 0) + period
                if weight >= UV_LIMIT and isinstance(weight, int):
                    weight = float(weight)
                weights[key] = weight
                samples[key] = samples.get(key, 0) + 1
                self._processes[comm] = self._processes.get(comm, 0) + 1
                if pid != "?":
                    self._pids[pid] = self._pids.get(pid, 0) + 1
                self._tids[tid] = self._tids.get(tid, 0) + 1
                pname = None
                continue
            if text[0] == "#":
                continue
            # Perl's comm is two bytes at least: one character will do if it is several bytes
            # long in UTF-8 (not an undecodable byte carried as a surrogate).
            first_character = text[0]
            shortest = (
                2
                if self._binary
                or first_character < "\x80"
                or "\udc80" <= first_character <= "\udcff"
                else 1
            )
            header = _parse_header(text, shortest)
            if header is not None:
                new_comm, first, second = header
                if not second or second == "0":  # Perl: `if (not $tid)`
                    new_pid, new_tid = "?", first
                else:
                    new_pid, new_tid = first, second
                digits = None
                event = _EVENT.search(text)
                if event is not None:
                    digits = event[1]
                    if self._event is None:
                        self._event = event[2]
                    elif event[2] != self._event:
                        self._skip(OTHER_EVENT, number)
                        self._in_other_event = True
                        continue
                self._in_other_event = False
                period = _period(digits)
                comm, pid, tid = new_comm, new_pid, new_tid
                if self._include_tid:
                    pname = f"{comm}-{pid}/{tid}"
                elif self._include_pid:
                    pname = f"{comm}-{pid}"
                else:
                    pname = comm
                pname = pname.replace(" ", "_")
                java = pname == "java" if self._legacy_java else pname.startswith("java")
                cache = self._lines_seen[java]
                remembered = cache.get
                continue
            frames = self._frames(text, java)
            if frames is miss:
                self._skip(UNRECOGNIZED, number, text)
                continue
            if len(cache) >= CACHE_LIMIT:
                cache.clear()
            cache[line] = frames
            if pname is not None:
                if frames is not None:
                    push(frames)
            elif not self._in_other_event:
                self._skip(OUTSIDE_SAMPLE, number)
        self._line_number = number
        self._java = java
        self._pname = pname
        self._period = period
        self._comm, self._pid, self._tid = comm, pid, tid

    def _frames(self, text: str, java: bool) -> str | None | object:
        """The frames of a frame line not seen before, or _MISS if it is not one."""
        head = _FRAME_HEAD.match(text)
        if head is None:
            return _MISS
        symbol = text[head.end() :]
        seen = self._symbols_seen[java]
        frames = seen.get(symbol, _MISS)
        if frames is not _MISS:
            return frames
        parts = _split_frame(text, head)
        if parts is None:
            return _MISS
        rawfunc, module, by_symbol = parts
        frames = _tidy(rawfunc, module, java, self._kernel, self._jit)
        if by_symbol:
            if len(seen) >= CACHE_LIMIT:
                seen.clear()
            seen[symbol] = frames
        return frames

    def result(self) -> FoldedProfile:
        """The profile so far. Raises ValueError when nothing in the input was a sample."""
        skipped = dict(self._skipped)
        if self._pname is not None:
            skipped[UNTERMINATED] = skipped.get(UNTERMINATED, 0) + 1
        if not self._weights and skipped.get(UNRECOGNIZED):
            raise ValueError(
                "no sample in this perf script output; expected sample headers such as "
                "'java 4711/4712 [001] 123.456: 1000 cycles:' each followed by frame lines "
                "such as '\tffffffff8103ce3b native_safe_halt ([kernel.kallsyms])' and a "
                f"blank line; {self._problems[0]}"
            )
        name = _display if self._binary else str
        order = perl_order(list(self._weights))
        return FoldedProfile(
            weights={name(stack): self._weights[stack] for stack in order},
            samples={name(stack): self._samples[stack] for stack in order},
            source="perf script",
            event=None if self._event is None else name(self._event),
            processes={name(comm): count for comm, count in self._processes.items()},
            pids=dict(self._pids),
            tids=dict(self._tids),
            skipped=skipped,
            problems=tuple(self._problems),
        )


def _display(latin1: str) -> str:
    """A name read as Latin-1 (one character per byte), as the UTF-8 text it was."""
    if latin1.isascii():
        return latin1
    return latin1.encode("latin-1").decode("utf-8", "surrogateescape")


def fold_perf_script(
    lines: Iterable[str] | Iterable[bytes] | str | bytes,
    *,
    pid: bool = False,
    tid: bool = False,
    kernel: bool = False,
    jit: bool = False,
    event: str | None = None,
    legacy_java: bool = False,
) -> FoldedProfile:
    """`stackcollapse-perf.pl [--pid] [--tid] [--kernel] [--jit]` of `perf script` output.

    `lines` is any iterable of lines, all str or all bytes (a file streams through with
    memory bound by the distinct stacks), or the whole output as one str or bytes. Bytes fold
    exactly as Perl reads them; a file read as text should be opened with newline="" so that
    a "\r" stays in its line, as in Perl. --all is kernel=True, jit=True. Raises ValueError
    when the input holds lines but no sample."""
    if isinstance(lines, bytes | str):
        binary = isinstance(lines, bytes)
        text = lines.decode("latin-1") if binary else lines
        # A final newline ends the last line; it does not start an empty one.
        lines = text.removesuffix("\n").split("\n") if text else []
    else:
        iterator = iter(lines)
        first = next(iterator, None)
        binary = isinstance(first, bytes | bytearray)
        rest = iterator if first is None else chain((first,), iterator)
        lines = (line.decode("latin-1") for line in rest) if binary else rest
    folder = PerfScriptFolder(
        pid=pid,
        tid=tid,
        kernel=kernel,
        jit=jit,
        event=event,
        legacy_java=legacy_java,
        binary=binary,
    )
    folder.feed(lines)
    return folder.result()


def fold_perf_script_stream(
    stream: BufferedIOBase | RawIOBase,
    *,
    pid: bool = False,
    tid: bool = False,
    kernel: bool = False,
    jit: bool = False,
    event: str | None = None,
    legacy_java: bool = False,
) -> FoldedProfile:
    """fold_perf_script of a binary stream (an open file, a pipe), read in 64 KB pieces: the
    fastest way in, and byte-exact. To fold several streams into one profile, as the script
    folds all its file arguments, feed_stream each to one PerfScriptFolder(binary=True)."""
    folder = PerfScriptFolder(
        pid=pid,
        tid=tid,
        kernel=kernel,
        jit=jit,
        event=event,
        legacy_java=legacy_java,
        binary=True,
    )
    feed_stream(folder, stream)
    return folder.result()


def feed_stream(folder: PerfScriptFolder, stream: BufferedIOBase | RawIOBase) -> None:
    """Feed a binary stream's lines to a folder made with binary=True."""
    rest = ""
    while chunk := stream.read(CHUNK_BYTES):
        lines = (rest + chunk.decode("latin-1")).split("\n")
        rest = lines.pop()
        folder.feed(lines)
    if rest:
        folder.feed([rest])  # a last line without its newline is still a line to Perl
