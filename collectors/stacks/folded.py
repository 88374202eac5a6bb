"""Reading profiles that arrive already folded: `frame;frame;frame count` lines, root first.

Three sources, one format with different details:
- folded stacks from stackcollapse-*.pl, inferno or our own output (parse_folded). The
  count may be fractional ("1.5"), as flamegraph.pl and difffolded.pl accept
  (`\\d+(\\.\\d*)?`): scaled or normalised profiles have such weights.
- async-profiler's collapsed output (`-o collapsed`, parse_async_profiler): a whole count
  printed with %llu, frame names that may hold spaces (thread frames such as
  `[main tid=4711]`) but never `;` (it writes them as `|`), suffixes `_[j]`, `_[i]`, `_[k]`,
  `_[0]`, `_[1]` with --annotate, stacks in no order. A trace without frames is a line with
  the count alone.
- py-spy's `record --format raw` (parse_py_spy): whole counts, frames `name (file:line)`
  (spaces and parentheses inside), `thread (0x...)` and `process PID:"cmd"` frames with
  --threads and --subprocesses, stacks in no order; an empty stack prints as " N".

A folded line carries one number and cannot say what it counts. We keep it as the stack's
weight and, when it is a whole number, also as its samples (what these tools count by
default; async-profiler's --total counts nanoseconds or bytes instead, which we cannot
tell). A fractional count can only be a weight: the profile then has no samples at all
(FoldedProfile.has_samples is False), so that no share mixes the two.

Stacks with no frame, blank lines and `#` comment lines (which flamegraph.pl also leaves
out, as lines of no stack) are left out and counted in `skipped`, the first few named in
`problems`. Anything else that is not a folded line raises ValueError naming the line and
what was expected.
"""

import re
from collections.abc import Iterable

from collectors.stacks.profile import (
    BLANK_LINE,
    COMMENT_LINE,
    EMPTY_STACK,
    FoldedProfile,
    perl_order,
)

_FRACTIONAL = re.compile(r"\d+(?:\.\d*)?", re.ASCII)
# A count longer than this is no profile's (u64 has 20 digits): refuse it before int().
_LONGEST_COUNT = 40
_EXPECTED = "expected 'frame;frame;...;frame COUNT' (root first, a space, then the count)"


def _shown(text: str) -> str:
    return repr(text if len(text) <= 80 else text[:80] + "...")


def _lines(data: str | bytes | Iterable[str]) -> Iterable[str]:
    if isinstance(data, bytes | bytearray):
        data = bytes(data).decode("utf-8", "surrogateescape")
    if isinstance(data, str):
        lines = data.split("\n")
        if lines[-1] == "":
            lines.pop()  # the end of the last line, no line of its own
        return lines
    return data


def _parse(
    data: str | bytes | Iterable[str], *, source: str, fractional: bool, bare_count: bool
) -> FoldedProfile:
    weights: dict[str, int | float] = {}
    whole = True
    skipped: dict[str, int] = {}
    problems: list[str] = []
    number = 0
    kind = "a whole number" if not fractional else "a number such as 12 or 1.5"
    for number, line in enumerate(_lines(data), 1):
        if not isinstance(line, str):
            raise ValueError(f"line {number}: expected text, got {type(line).__name__}")
        text = line.rstrip(" \t\r\n")
        if not text or text.startswith("#"):
            reason = COMMENT_LINE if text else BLANK_LINE
            skipped[reason] = skipped.get(reason, 0) + 1
            if len(problems) < 5:
                problems.append(f"line {number}: {reason}: {_shown(text)}")
            continue
        if "\0" in text:
            raise ValueError(f"line {number}: a NUL byte; {_EXPECTED}")
        cut = max(text.rfind(" "), text.rfind("\t"))
        count = text[cut + 1 :]
        # As flamegraph.pl's /^(.*)\s+?(\d+(?:\.\d*)?)$/: one blank before the count, the
        # rest is the stack (perf's nameless symbols fold to a frame " ").
        stack = text[:cut] if cut >= 0 else ""
        if cut < 0 and not (bare_count and count.isascii() and count.isdigit()):
            raise ValueError(f"line {number}: no count; {_EXPECTED}, got {_shown(text)}")
        if not count.isascii() or len(count) > _LONGEST_COUNT:
            raise ValueError(f"line {number}: the count should be {kind}, got {_shown(count)}")
        if count.isdigit():
            value: int | float = int(count)
        elif fractional and _FRACTIONAL.fullmatch(count):
            value = float(count)
            whole = False
        else:
            raise ValueError(f"line {number}: the count should be {kind}, got {_shown(count)}")
        if not stack:
            skipped[EMPTY_STACK] = skipped.get(EMPTY_STACK, 0) + 1
            if len(problems) < 5:
                problems.append(f"line {number}: {EMPTY_STACK}: {_shown(text)}")
            continue
        weights[stack] = weights.get(stack, 0) + value
    order = perl_order(list(weights))
    ordered = {stack: weights[stack] for stack in order}
    samples = {stack: int(weight) for stack, weight in ordered.items()} if whole else {}
    return FoldedProfile(
        weights=ordered,
        samples=samples,
        source=source,
        skipped=skipped,
        problems=tuple(problems),
    )


def parse_folded(data: str | bytes | Iterable[str]) -> FoldedProfile:
    """Folded stacks as flamegraph.pl reads them; fractional counts make a weights-only
    profile. Bytes are read as UTF-8 (undecodable bytes kept as surrogates)."""
    return _parse(data, source="folded", fractional=True, bare_count=False)


def parse_async_profiler(data: str | bytes | Iterable[str]) -> FoldedProfile:
    """async-profiler's collapsed output (`asprof -o collapsed`); whole counts only."""
    return _parse(data, source="async-profiler", fractional=False, bare_count=True)


def parse_py_spy(data: str | bytes | Iterable[str]) -> FoldedProfile:
    """py-spy's `record --format raw` output; whole counts only."""
    return _parse(data, source="py-spy", fractional=False, bare_count=False)
