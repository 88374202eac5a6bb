"""Merging the frames too narrow to see into one "[other]" frame, so that a flame graph of a
huge profile (20,000 distinct stacks and more) draws in a browser without losing weight.

A frame (a node of the flame graph: a stack prefix) whose total is below the threshold is
cut off with everything above it; what was cut under the same parent is added up into one
`[other]` child of that parent. Every parent keeps its width, so the graph's widths stay
true. The bracketed name follows perf's own pseudo-frames (`[unknown]`, `[libc.so.6]`)
and cannot be mistaken for a function."""

from collectors.stacks.profile import FoldedProfile, perl_order
from collectors.stacks.shares import Measure, counts_of

OTHER = "[other]"


def merge_small_frames(
    profile: FoldedProfile,
    *,
    percent: float,
    by: Measure = "weight",
    label: str = OTHER,
) -> FoldedProfile:
    """The profile with every frame below `percent` of its total merged into `label`.

    The cut is decided on `by` (weights or samples); both weights and samples are carried
    over, added up the same way. Process names, skips and problems are kept."""
    if percent < 0:
        raise ValueError(f"percent should be 0 or more, got {percent}")
    counts = counts_of(profile, by)
    threshold = sum(counts.values()) * percent / 100.0
    # Prefix totals without building the prefix strings: a node is (parent node, frame).
    nodes: dict[tuple[int, str], int] = {}
    totals: list[int | float] = []
    for stack, count in counts.items():
        parent = -1
        for frame in stack.split(";"):
            node = nodes.get((parent, frame))
            if node is None:
                node = nodes[(parent, frame)] = len(totals)
                totals.append(0)
            totals[node] += count
            parent = node
    weights: dict[str, int | float] = {}
    samples: dict[str, int] = {}
    for stack in counts:
        frames = stack.split(";")
        parent = -1
        merged = stack
        for depth, frame in enumerate(frames):
            node = nodes[(parent, frame)]
            if totals[node] < threshold:
                merged = ";".join([*frames[:depth], label])
                break
            parent = node
        weights[merged] = weights.get(merged, 0) + profile.weights[stack]
        if profile.samples:
            samples[merged] = samples.get(merged, 0) + profile.samples[stack]
    order = perl_order(list(weights))
    return FoldedProfile(
        weights={stack: weights[stack] for stack in order},
        samples={stack: samples[stack] for stack in order} if samples else {},
        source=profile.source,
        event=profile.event,
        processes=dict(profile.processes),
        pids=dict(profile.pids),
        tids=dict(profile.tids),
        skipped=dict(profile.skipped),
        problems=profile.problems,
    )
