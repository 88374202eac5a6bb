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
import re
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

# A frame line of `perf script`: an address (hex), a symbol, its module in parentheses.
_PERF_FRAME = re.compile(r"^[ \t]*[0-9a-f]{1,16}[ \t]+\S.*\([^()]*\)[ \t]*$", re.ASCII)
# A sample header: the comm, a PID (or pid/tid), maybe [cpu], a timestamp, then the event
# followed by a colon (the period before it is optional).
_PERF_HEADER = re.compile(
    r"^\S.*?[ \t]\d+(?:/\d+)?[ \t]+(?:\[\d+\][ \t]+)?(?:\d+\.\d+:[ \t]+)?(?:\d+[ \t]+)?"
    r"[\w:.\-/]+:[ \t]*$",
    re.ASCII,
)
# A sample header followed on the same line by its one frame (perf record without -g).
_PERF_INLINE = re.compile(
    r"^\S.*?[ \t]\d+(?:/\d+)?[ \t].*?\d+\.\d+:.*[ \t][0-9a-f]{1,16}[ \t]+\S.*\([^()]*\)[ \t]*$",
    re.ASCII,
)
_FOLDED_LINE = re.compile(r"^\S.*?[ \t]\d+(?:\.\d*)?$")
_BARE_COUNT = re.compile(r"^\d+$", re.ASCII)
_PY_SPY_FRAME = re.compile(r"(?:^|;)[^;]* \([^();]+\.py[cw]?:\d+\)(?=;|$)|(?:^|;)process \d+:\"")
_JAVA_FRAME = re.compile(
    r"(?:^|;)(?:[a-z][\w$]*/)+[A-Z][\w$]*\.[\w$<>]+(?:_\[[ji01]\])?(?=;|$)", re.ASCII
)
_ASYNC_MARK = re.compile(r"_\[[i01]\](?=;|$)|(?:^|;)\[[^;\]]* tid=\d+\](?=;|$)", re.ASCII)


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


def _folded(line: str) -> bool:
    return bool(_FOLDED_LINE.match(line) or _BARE_COUNT.match(line.strip()))


def _folded_kind(lines: list[str]) -> str:
    if any(_PY_SPY_FRAME.search(line) for line in lines):
        return PY_SPY
    if any(_BARE_COUNT.match(line) for line in lines) or any(
        _ASYNC_MARK.search(line) or _JAVA_FRAME.search(line) for line in lines
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
    frames = sum(1 for line in filled if _PERF_FRAME.match(line))
    headers = sum(1 for line in filled if _PERF_HEADER.match(line) or _PERF_INLINE.match(line))
    if headers and (frames or headers == len(filled)):
        return Recognised(PERF_SCRIPT)
    stacks = [line for line in filled if not line.startswith("#")]
    folded = [line for line in stacks if _folded(line)]
    # Folded with a few bad lines is still folded: its parser then names the line.
    if stacks and _folded(stacks[0]) and len(folded) * 2 >= len(stacks):
        return Recognised(_folded_kind(folded))
    return Recognised(None, _looks_like_text(text))
