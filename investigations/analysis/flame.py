"""Flame graphs as data: the frames of one profile laid out as flamegraph.pl lays them out,
and two profiles (side A and side B) overlapped into one differential graph, as difffolded.pl
and `flamegraph.pl --negate` show them, but as numbers for the browser to draw.

Pure: folded stacks ({stack: weight}) in, JSON-able dicts out. Every start and width is a
percentage of the whole profile (the root, "all", spans 0 to 100), so two profiles of
different lengths compare and the browser only scales.

`nodes` lists parents before their children (depth first, children by name, as
flamegraph.pl orders them) and each node names its parent's index: a frame's descendants are
the nodes after it up to the next one no deeper than itself.

Frames narrower than the threshold are merged into one "[other]" child per parent, as
collectors.stacks.merge_small_frames merges them (the same cut: a test holds them
together). The graph does not call it: it must decide the cut on two sides at once for the
differential view, and it never builds the frames it cuts. The tree grows widest frame
first and stops at the threshold, so a profile of 20,000 stacks costs the frames drawn, not
every prefix of every stack, and no threshold can ask the browser for more than MAX_NODES
bars: past that the threshold is raised (and says so)."""

import heapq
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from collectors.stacks.profile import utf8_bytes
from collectors.stacks.small_frames import OTHER

ROOT = "all"
# The browser redraws every bar on each zoom and resize, and hover and search go through
# them all: a few thousand stay quick (4,000 draw in a few tenths of a second in headless
# Chromium, tests/e2e/test_profiles.py). The frames kept stop at half this, the "[other]"
# frames (at most one a parent) take the rest.
MAX_NODES = 4000
# The frames the chosen shape lacks are listed, widest first, up to this many; the rest
# are only counted.
MAX_MISSING = 100

Shape = Literal["both", "a", "b"]
DiffMeasure = Literal["total", "self"]
SHAPES = ("both", "a", "b")
MEASURES = ("total", "self")

# A stack split into frames, and what it counts on each side (weight and samples of one
# profile, or A's weight and B's).
_Item = tuple[list[str], tuple[int | float, ...]]


class _Frame:
    """A stack prefix: the stacks through it, their totals, and what ends here."""

    __slots__ = ("name", "depth", "items", "total", "own", "children", "kept")

    def __init__(self, name: str, depth: int, items: list[_Item], sides: int) -> None:
        self.name, self.depth, self.items = name, depth, items
        self.total = [sum(values[side] for _, values in items) for side in range(sides)]
        self.own: list[int | float] = [0] * sides
        self.children: list[_Frame] = []
        self.kept = False

    def expand(self, sides: int) -> None:
        """Its children, from the stacks through it (which it then lets go)."""
        groups: dict[str, list[_Item]] = {}
        for item in self.items:
            frames, values = item
            if len(frames) == self.depth:
                for side in range(sides):
                    self.own[side] += values[side]
            else:
                groups.setdefault(frames[self.depth], []).append(item)
        self.children = [
            _Frame(name, self.depth + 1, items, sides) for name, items in groups.items()
        ]
        self.items = []


def _grow(
    counts: Sequence[Mapping[str, int | float]],
    size: Callable[[_Frame], float],
    minimum: float,
) -> tuple[_Frame, float | None]:
    """The root, with every frame at least `minimum` wide (in `size`'s unit, and wider than
    nothing) marked kept and expanded, widest first; and the size the cut was raised to
    when more than MAX_NODES / 2 frames would have been kept (None when it was not)."""
    sides = len(counts)
    merged: dict[str, list[int | float]] = {}
    for side, count in enumerate(counts):
        for stack, value in count.items():
            merged.setdefault(stack, [0] * sides)[side] = value
    items = [(stack.split(";"), tuple(values)) for stack, values in merged.items()]
    root = _Frame(ROOT, 0, items, sides)
    room = MAX_NODES // 2
    kept, raised, narrowest = 0, None, size(root)
    heap: list[tuple[float, int, _Frame]] = [(-narrowest, 0, root)]
    order = 1  # ties in width are taken in the order met: the same graph every time
    while heap:
        width = -heap[0][0]
        if heap[0][2] is not root and width < minimum:
            break
        # Full: frames as wide as the last one kept still go in (the cut falls between two
        # widths), up to the hard limit.
        if kept >= room and (width < narrowest or kept >= MAX_NODES):
            raised = narrowest
            break
        frame = heapq.heappop(heap)[2]
        frame.kept = True
        kept += 1
        narrowest = width
        frame.expand(sides)
        for child in frame.children:
            # A frame of no width is not drawn (in a one-sided shape: the frames only the
            # other side ran), so never kept.
            if size(child) > 0:
                heapq.heappush(heap, (-size(child), order, child))
                order += 1
    return root, raised


class _Bar:
    """One bar of the graph: a kept frame, or the "[other]" frame that adds up the children
    of its parent too narrow to draw (a leaf: what it holds is its own)."""

    __slots__ = ("name", "depth", "start", "width", "parent", "total", "own")

    def __init__(
        self,
        name: str,
        depth: int,
        width: float,
        parent: int,
        total: list[int | float],
        own: list[int | float],
    ) -> None:
        self.name, self.depth, self.width, self.parent = name, depth, width, parent
        self.start = 0.0
        self.total, self.own = total, own


def _by_name(frames: list[_Frame]) -> list[_Frame]:
    """flamegraph.pl's order: by the bytes of the names."""
    if all(frame.name.isascii() for frame in frames):
        return sorted(frames, key=lambda frame: frame.name)
    return sorted(frames, key=lambda frame: utf8_bytes(frame.name))


def _lay_out(
    root: _Frame, width: Callable[[_Frame], float], drawn: Callable[[_Frame], bool]
) -> tuple[list[_Bar], int]:
    """The bars depth first, each frame's children left to right from its start, those
    not kept added up into one "[other]" child, those not drawn left out; and how many
    frames "[other]" frames took in."""
    sides = len(root.total)
    bars: list[_Bar] = []
    merged = 0
    pending: list[tuple[_Bar, _Frame | None]] = [
        (_Bar(ROOT, 0, width(root), -1, list(root.total), list(root.own)), root)
    ]
    while pending:
        bar, frame = pending.pop()
        index = len(bars)
        bars.append(bar)
        if frame is None:
            continue
        children: list[tuple[_Bar, _Frame | None]] = []
        other: _Bar | None = None
        for child in _by_name([child for child in frame.children if drawn(child)]):
            if child.kept:
                kept = _Bar(child.name, bar.depth + 1, width(child), index, child.total, child.own)
                children.append((kept, child))
                continue
            if other is None:
                other = _Bar(OTHER, bar.depth + 1, 0.0, index, [0] * sides, [])
                children.append((other, None))
            other.width += width(child)
            merged += 1
            for side in range(sides):
                other.total[side] += child.total[side]
        if other is not None:
            other.own = list(other.total)
            # Among its siblings by name, where merging the stacks first would put it.
            children.sort(key=lambda pair: utf8_bytes(pair[0].name))
        start = bar.start
        for child_bar, _ in children:
            child_bar.start = start
            start += child_bar.width
        pending.extend(reversed(children))
    return bars, merged


def _percent(value: float) -> float:
    # A millionth of a percent is finer than any screen; shorter numbers make smaller JSON.
    return round(value, 6)


def flame_tree(
    weights: Mapping[str, int | float],
    samples: Mapping[str, int],
    *,
    threshold: float = 0.1,
) -> dict:
    """The flame graph of one profile: {"nodes", "total_weight", "total_samples", "merged",
    "threshold"}.

    Each node is {"name", "depth", "start", "width", "self", "samples", "weight", "parent"}:
    start, width and self in percent of the profile's weight; samples and weight those of
    its whole subtree (samples None when the profile has weights only, from a folded file
    with fractional counts). "merged" is how many frames (each with the frames it called)
    were merged into "[other]" frames; "threshold" the threshold applied."""
    if threshold < 0:
        raise ValueError(f"threshold should be 0 or more, got {threshold}")
    total_weight = sum(weights.values())
    has_samples = bool(samples) or not weights
    scale = 100.0 / total_weight if total_weight else 0.0
    counts = [weights, samples] if has_samples else [weights]

    def size(frame: _Frame) -> float:
        return frame.total[0]

    # The cut in weights, computed as merge_small_frames computes it: the same frames go.
    root, raised = _grow(counts, size, total_weight * threshold / 100.0)
    bars, merged = _lay_out(
        root, width=lambda frame: frame.total[0] * scale, drawn=lambda frame: frame.total[0] > 0
    )
    nodes = [
        {
            "name": bar.name,
            "depth": bar.depth,
            "start": _percent(bar.start),
            "width": _percent(bar.width),
            "self": _percent(bar.own[0] * scale),
            "samples": bar.total[1] if has_samples else None,
            "weight": bar.total[0],
            "parent": bar.parent,
        }
        for bar in bars
    ]
    return {
        "nodes": nodes,
        "total_weight": total_weight,
        "total_samples": sum(samples.values()) if has_samples else None,
        "merged": merged,
        "threshold": threshold if raised is None else raised * scale,
    }


def diff_tree(
    a_weights: Mapping[str, int | float],
    b_weights: Mapping[str, int | float],
    *,
    threshold: float = 0.1,
    shape: Shape = "both",
    measure: DiffMeasure = "total",
) -> dict:
    """Side A against side B in one graph, each side in percent of its own total.

    {"nodes", "missing", "missing_rest", "shape", "measure", "threshold", "merged",
    "total_a", "total_b"}. Each node is {"name", "depth", "start", "width", "parent", "a",
    "b", "delta", "only"}: "a" and "b" the node's share of its side (its whole subtree, or
    its own stacks alone when measure is "self"), "delta" b - a in percentage points,
    "only" "a" or "b" for a frame one side never ran (else None).

    The bars take the shape of both sides (width: the mean of the two shares) or of one. A
    one-sided shape cannot draw what only the other side ran: the topmost of those frames
    under a drawn frame are listed in "missing" ({"name", "stack", "depth", "share"}, share
    of the other side, widest first, down to the threshold, at most MAX_MISSING) and the
    rest counted in "missing_rest" ({"frames", "share"})."""
    if threshold < 0:
        raise ValueError(f"threshold should be 0 or more, got {threshold}")
    if shape not in SHAPES:
        raise ValueError(f"shape should be one of {', '.join(SHAPES)}, got {shape!r}")
    if measure not in MEASURES:
        raise ValueError(f"measure should be one of {', '.join(MEASURES)}, got {measure!r}")
    total_a, total_b = sum(a_weights.values()), sum(b_weights.values())
    scale_a = 100.0 / total_a if total_a else 0.0
    scale_b = 100.0 / total_b if total_b else 0.0

    def width(frame: _Frame) -> float:
        share_a, share_b = frame.total[0] * scale_a, frame.total[1] * scale_b
        if shape == "a":
            return share_a
        if shape == "b":
            return share_b
        return (share_a + share_b) / 2

    root, raised = _grow([a_weights, b_weights], width, threshold)
    bars, merged = _lay_out(root, width=width, drawn=lambda frame: width(frame) > 0)
    nodes = []
    for bar in bars:
        share_a, share_b = bar.total[0] * scale_a, bar.total[1] * scale_b
        if measure == "self":
            value_a, value_b = bar.own[0] * scale_a, bar.own[1] * scale_b
        else:
            value_a, value_b = share_a, share_b
        only = None
        if bar.depth and (share_a > 0) != (share_b > 0):
            only = "a" if share_a > 0 else "b"
        nodes.append(
            {
                "name": bar.name,
                "depth": bar.depth,
                "start": _percent(bar.start),
                "width": _percent(bar.width),
                "parent": bar.parent,
                "a": _percent(value_a),
                "b": _percent(value_b),
                "delta": _percent(value_b - value_a),
                "only": only,
            }
        )
    applied = threshold if raised is None else raised
    missing, rest = _missing(root, shape, scale_a, scale_b, applied)
    return {
        "nodes": nodes,
        "missing": missing,
        "missing_rest": rest,
        "shape": shape,
        "measure": measure,
        "threshold": applied,
        "merged": merged,
        "total_a": total_a,
        "total_b": total_b,
    }


def _missing(
    root: _Frame, shape: str, scale_a: float, scale_b: float, threshold: float
) -> tuple[list[dict], dict]:
    """The frames only the side not drawn ran, topmost under a drawn frame, widest first."""
    if shape == "both":
        return [], {"frames": 0, "share": 0.0}
    lacks, other, scale = (0, 1, scale_b) if shape == "a" else (1, 0, scale_a)
    found: list[tuple[float, str, int]] = []
    pending = [(root, ROOT)]
    while pending:
        frame, stack = pending.pop()
        for child in frame.children:
            path = child.name if frame is root else f"{stack};{child.name}"
            if child.kept:
                pending.append((child, path))
            elif child.total[lacks] == 0 and child.total[other] > 0:
                found.append((child.total[other] * scale, path, child.depth))
    found.sort(key=lambda entry: (-entry[0], utf8_bytes(entry[1])))
    listed = [entry for entry in found[:MAX_MISSING] if entry[0] >= threshold and entry[0] > 0]
    missing = [
        {"name": path.rsplit(";", 1)[-1], "stack": path, "depth": depth, "share": _percent(share)}
        for share, path, depth in listed
    ]
    rest = found[len(listed) :]
    return missing, {
        "frames": len(rest),
        "share": _percent(sum((share for share, _, _ in rest), 0.0)),
    }
