"""FoldedProfile: a CPU profile as folded stacks (`frame;frame;frame count`), whatever tool
recorded it, and the printing that stackcollapse-perf.pl does (`sort keys`, `stack count`)."""

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

# Why a record was skipped: the keys of FoldedProfile.skipped.
OTHER_EVENT = "other event"  # samples of an event type other than the one kept
UNTERMINATED = "unterminated sample"  # the last sample, with no blank line after it
UNRECOGNIZED = "unrecognized line"  # lines that are neither a header nor a frame
OUTSIDE_SAMPLE = "frame outside a sample"  # frame lines after a blank line, before a header
EMPTY_STACK = "empty stack"  # folded lines with a count but no frame (py-spy, async-profiler)
COMMENT_LINE = "comment line"  # folded lines starting with #
BLANK_LINE = "blank line"  # empty lines in a folded file

# The suffix of kernel frames (stackcollapse-perf.pl --kernel or --all, async-profiler's
# --annotate).
KERNEL_FRAME = "_[k]"

# Perl adds whole numbers as unsigned 64-bit integers and falls back to a double beyond.
UV_LIMIT = 1 << 64


def perl_number(value: int | float) -> str:
    """A count as Perl prints it: integers whole, doubles with 15 significant digits."""
    if isinstance(value, int):
        return str(value)
    if math.isinf(value):
        return "Inf" if value > 0 else "-Inf"
    if math.isnan(value):
        return "NaN"
    return f"{value:.15g}"


def perl_order(stacks: list[str]) -> list[str]:
    """Sorted as Perl's `sort keys` sorts: by the bytes of the UTF-8 text, which is code-point
    order except for the undecodable bytes we carry as lone surrogates."""
    if all(stack.isascii() for stack in stacks):
        return sorted(stacks)
    return sorted(stacks, key=utf8_bytes)


def utf8_bytes(text: str) -> bytes:
    """The bytes a text was read from (undecodable bytes come back as they were)."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        # A lone surrogate that no byte produced: only a str made by hand has one.
        return text.encode("utf-8", "surrogatepass")


def kernel_frames_seen(stacks: Iterable[str]) -> bool:
    """Whether a frame of these folded stacks is marked as the kernel's: then the profile
    has kernel stacks, whatever else is known of the host."""
    return any(KERNEL_FRAME + ";" in stack or stack.endswith(KERNEL_FRAME) for stack in stacks)


@dataclass(frozen=True)
class FoldedProfile:
    """Folded stacks, root first: `weights` is what stackcollapse-perf.pl prints (each sample
    weighted by the period perf printed for it), `samples` the plain number of samples.

    Both dicts have the same keys, in the order the Perl script prints them. A profile read
    from a folded file has weights only when a count was fractional (then `samples` is empty:
    see collectors.stacks.folded)."""

    weights: dict[str, int | float]
    samples: dict[str, int]
    source: str = "perf script"
    # The event type kept (perf script keeps the first one it sees), or None.
    event: str | None = None
    # Process name (comm) -> samples kept; PID and thread id (as perf printed them) -> samples.
    # A PID is only known when perf printed "pid/tid"; alone, the number is the thread id.
    processes: dict[str, int] = field(default_factory=dict)
    pids: dict[str, int] = field(default_factory=dict)
    tids: dict[str, int] = field(default_factory=dict)
    # Why records were left out (the constants above) -> how many.
    skipped: dict[str, int] = field(default_factory=dict)
    # The first few lines left out, "line N: ...", for a person to read.
    problems: tuple[str, ...] = ()

    @property
    def total_weight(self) -> int | float:
        return sum(self.weights.values())

    @property
    def total_samples(self) -> int:
        return sum(self.samples.values())

    @property
    def has_samples(self) -> bool:
        """False for a folded file whose counts were weights (fractional), not samples."""
        return bool(self.samples) or not self.weights

    def lines(self) -> Iterator[str]:
        """`stack count` lines (no newline), in stackcollapse-perf.pl's order."""
        for stack, weight in self.weights.items():
            yield f"{stack} {perl_number(weight)}"

    def text(self) -> str:
        """What stackcollapse-perf.pl prints for the same input."""
        return "".join(line + "\n" for line in self.lines())
