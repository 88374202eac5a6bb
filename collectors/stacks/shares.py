"""How much of a profile each function takes, and how two profiles (side A and side B)
differ: the numbers behind the function table and the differential view.

A function's self share is the weight of the stacks it is the leaf of; its total share the
weight of the stacks it appears in, counted once per stack even when it recurses (so no
total passes 100 %). Shares are percentages of the profile's total, which is what makes two
profiles of different lengths or sampling rates comparable (difffolded.pl -n does the same
with counts)."""

import re
from dataclasses import dataclass
from typing import Literal

from collectors.stacks.profile import FoldedProfile

Measure = Literal["weight", "samples"]
_HEX = re.compile(r"0x[0-9a-fA-F]+")


@dataclass(frozen=True)
class FunctionShare:
    name: str
    self_count: int | float
    total_count: int | float
    self_percent: float
    total_percent: float


@dataclass(frozen=True)
class FunctionDelta:
    """One function on both sides, in percent of each side's total; deltas are B minus A."""

    name: str
    self_a: float
    self_b: float
    total_a: float
    total_b: float

    @property
    def self_delta(self) -> float:
        return self.self_b - self.self_a

    @property
    def total_delta(self) -> float:
        return self.total_b - self.total_a


def counts_of(profile: FoldedProfile, by: Measure = "weight") -> dict[str, int | float]:
    """The stacks' weights (what the Perl script prints) or their plain sample counts."""
    if by == "weight":
        return profile.weights
    if by == "samples":
        if not profile.has_samples:
            raise ValueError(
                f"this {profile.source} profile has weights only (fractional counts), "
                "no sample counts; use by='weight'"
            )
        return profile.samples
    raise ValueError(f"by should be 'weight' or 'samples', got {by!r}")


def stack_percentages(profile: FoldedProfile, *, by: Measure = "weight") -> dict[str, float]:
    """Each stack's percentage of the profile, in the profile's order."""
    counts = counts_of(profile, by)
    total = sum(counts.values())
    if not total:
        return dict.fromkeys(counts, 0.0)
    return {stack: 100.0 * count / total for stack, count in counts.items()}


def _self_and_total(
    counts: dict[str, int | float], strip_hex: bool = False
) -> tuple[dict[str, int | float], dict[str, int | float]]:
    own: dict[str, int | float] = {}
    total: dict[str, int | float] = {}
    for stack, count in counts.items():
        if strip_hex:
            stack = _HEX.sub("0x...", stack)
        frames = stack.split(";")
        leaf = frames[-1]
        own[leaf] = own.get(leaf, 0) + count
        for frame in set(frames):
            total[frame] = total.get(frame, 0) + count
    return own, total


def function_shares(profile: FoldedProfile, *, by: Measure = "weight") -> list[FunctionShare]:
    """Every function's self and total share, largest total first (then self, then name).

    The first frame of a perf profile is the process name: it appears here like any frame,
    with the process's share as its total."""
    counts = counts_of(profile, by)
    grand = sum(counts.values())
    scale = 100.0 / grand if grand else 0.0
    own, total = _self_and_total(counts)
    shares = [
        FunctionShare(
            name=name,
            self_count=own.get(name, 0),
            total_count=count,
            self_percent=own.get(name, 0) * scale,
            total_percent=count * scale,
        )
        for name, count in total.items()
    ]
    shares.sort(key=lambda share: (-share.total_count, -share.self_count, share.name))
    return shares


def compare_profiles(
    a: FoldedProfile,
    b: FoldedProfile,
    *,
    by: Measure = "weight",
    strip_hex: bool = False,
) -> list[FunctionDelta]:
    """difffolded.pl as data: every function of either side with its self and total share
    on A and on B, largest self difference first (then largest total difference, then name).

    strip_hex writes every 0x... number in a frame as "0x..." (difffolded.pl -s), so that
    JIT frames named after their addresses match across the two sides."""
    sides = []
    for profile in (a, b):
        counts = counts_of(profile, by)
        grand = sum(counts.values())
        scale = 100.0 / grand if grand else 0.0
        own, total = _self_and_total(counts, strip_hex)
        sides.append((own, total, scale))
    (own_a, total_a, scale_a), (own_b, total_b, scale_b) = sides
    deltas = [
        FunctionDelta(
            name=name,
            self_a=own_a.get(name, 0) * scale_a,
            self_b=own_b.get(name, 0) * scale_b,
            total_a=total_a.get(name, 0) * scale_a,
            total_b=total_b.get(name, 0) * scale_b,
        )
        for name in total_a.keys() | total_b.keys()
    ]
    deltas.sort(key=lambda d: (-abs(d.self_delta), -abs(d.total_delta), d.name))
    return deltas
