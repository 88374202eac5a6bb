"""Bounded-memory aggregates for the capture analysis: histograms over fixed buckets, a
heavy-hitters counter, the N largest items, and a timeline whose buckets widen instead of
growing without end.

A 1 GB capture can hold millions of connections and gaps; none of these keeps more than a
fixed number of entries, whatever the input.
"""

import heapq
import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field

# Upper edges (ns) of the time buckets the C core fills (EDGES in _core.c, the same values,
# held here too so that this module loads on a machine without the core): 1-2-5 from 1 us
# to 500 s.
TIME_EDGES_NS: tuple[int, ...] = tuple(
    step * 10**power for power in range(3, 12) for step in (1, 2, 5)
)
# Edges for counts (requests per connection and the like).
COUNT_EDGES: tuple[int, ...] = (0, 1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 10000, 100000)


@dataclass
class Histogram:
    """Counts over fixed buckets: bucket i holds values <= edges[i] (and > edges[i-1]); the
    last bucket holds what is above every edge. `unit` names what the edges measure."""

    edges: tuple[float, ...]
    unit: str
    counts: list[int] = field(default_factory=list)
    total: float = 0.0
    maximum: float | None = None

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.edges) + 1)

    @property
    def count(self) -> int:
        return sum(self.counts)

    def add(self, value: float, times: int = 1) -> None:
        lo, hi = 0, len(self.edges)
        while lo < hi:  # the first edge >= value
            mid = (lo + hi) // 2
            if self.edges[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        self.counts[lo] += times
        self.total += value * times
        if self.maximum is None or value > self.maximum:
            self.maximum = value

    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    def quantile(self, q: float) -> float | None:
        """The upper edge of the bucket holding the q-quantile (an upper bound: the exact
        values are not kept); the maximum for the last bucket."""
        n = self.count
        if not n:
            return None
        rank = max(1, math.ceil(q * n))
        seen = 0
        for index, number in enumerate(self.counts):
            seen += number
            if seen >= rank:
                if index < len(self.edges):
                    edge = self.edges[index]
                    return min(edge, self.maximum) if self.maximum is not None else edge
                return self.maximum
        return self.maximum

    def as_dict(self, scale: float = 1.0, unit: str | None = None) -> dict:
        """Buckets as {"le": upper edge (None for the last), "count"}, values divided by
        scale (1e9 and unit "s" turn nanoseconds into seconds); empty buckets left out."""
        buckets = []
        for index, number in enumerate(self.counts):
            if number:
                le = self.edges[index] / scale if index < len(self.edges) else None
                buckets.append({"le": le, "count": number})

        def scaled(value: float | None) -> float | None:
            return None if value is None else value / scale

        return {
            "unit": unit or self.unit,
            "count": self.count,
            "mean": scaled(self.mean()),
            "p50": scaled(self.quantile(0.5)),
            "p90": scaled(self.quantile(0.9)),
            "p99": scaled(self.quantile(0.99)),
            "max": scaled(self.maximum),
            "buckets": buckets,
        }


def histogram_from_core(kept: tuple[list[int], float, int | None]) -> Histogram:
    """A time histogram (ns) from the (counts, sum, maximum) the C core keeps."""
    counts, total, maximum = kept
    return Histogram(TIME_EDGES_NS, "ns", counts=list(counts), total=total, maximum=maximum)


class HeavyHitters:
    """The heaviest keys of a stream with at most `capacity` counters. Exact while there
    are at most `capacity` distinct keys; past that, the lighter half is dropped whenever
    the table fills (amortised O(1) per key), so a key's counted weight may fall short of
    its true weight by at most its `error` (the heaviest weight dropped before it came)."""

    def __init__(self, capacity: int = 1000):
        self.capacity = capacity
        self.weights: dict[Hashable, float] = {}
        self.errors: dict[Hashable, float] = {}
        self.extra: dict[Hashable, list[float]] = {}
        self.floor = 0.0

    @property
    def overflowed(self) -> bool:
        return self.floor > 0

    def add(self, key: Hashable, weight: float = 1.0, *extra: float) -> None:
        known = self.weights.get(key)
        if known is None:
            if len(self.weights) >= self.capacity:
                self._prune()
            self.weights[key] = weight
            self.errors[key] = self.floor
        else:
            self.weights[key] = known + weight
        if extra:
            sums = self.extra.setdefault(key, [0.0] * len(extra))
            for index, value in enumerate(extra):
                sums[index] += value

    def _prune(self) -> None:
        keep = set(heapq.nlargest(self.capacity // 2, self.weights, key=self.weights.get))
        for key in [k for k in self.weights if k not in keep]:
            self.floor = max(self.floor, self.weights.pop(key) + self.errors.pop(key))
            self.extra.pop(key, None)

    def top(self, n: int) -> list[tuple[Hashable, float, list[float], float]]:
        """(key, counted weight, extra sums, possible shortfall), heaviest first."""
        keys = heapq.nlargest(n, self.weights, key=self.weights.get)
        return [(k, self.weights[k], self.extra.get(k, []), self.errors[k]) for k in keys]


class TopN:
    """The n items with the largest key, kept in a min-heap; ties keep the earlier item."""

    def __init__(self, n: int):
        self.n = n
        self.heap: list[tuple[float, int, object]] = []
        self.counter = 0

    def add(self, key: float, item: object) -> bool:
        """Offer an item; True if it is (for now) among the n largest."""
        self.counter += 1
        entry = (key, -self.counter, item)
        if len(self.heap) < self.n:
            heapq.heappush(self.heap, entry)
            return True
        if key > self.heap[0][0]:
            heapq.heapreplace(self.heap, entry)
            return True
        return False

    def items(self) -> list[object]:
        """Largest first."""
        return [item for _, _, item in sorted(self.heap, reverse=True)]

    def __iter__(self) -> Iterable[object]:
        return iter(item for _, _, item in self.heap)


TIMELINE_FIELDS = ("packets", "bytes", "connections", "retransmissions", "tls_handshakes")


class Timeline:
    """Per-second figures. When the capture spans more than `max_buckets` buckets (or its
    clock jumps about), the bucket width doubles and neighbours merge: memory stays bounded
    and `bucket_seconds` says how wide the buckets became."""

    def __init__(self, max_buckets: int = 100_000):
        self.max_buckets = max_buckets
        self.width = 1
        self.buckets: dict[int, list[int]] = {}

    def add(self, second: int, **values: int) -> None:
        start = second - second % self.width
        row = self.buckets.get(start)
        if row is None:
            if len(self.buckets) >= self.max_buckets:
                self._widen()
                start = second - second % self.width
                row = self.buckets.get(start)
            if row is None:
                row = self.buckets[start] = [0] * len(TIMELINE_FIELDS)
        for name, value in values.items():
            row[TIMELINE_FIELDS.index(name)] += value

    def _widen(self) -> None:
        while len(self.buckets) >= self.max_buckets:
            self.width *= 2
            merged: dict[int, list[int]] = {}
            for start, row in self.buckets.items():
                key = start - start % self.width
                into = merged.setdefault(key, [0] * len(TIMELINE_FIELDS))
                for index, value in enumerate(row):
                    into[index] += value
            self.buckets = merged

    def peak(self, name: str) -> float:
        """The largest per-second rate of a figure over the buckets."""
        index = TIMELINE_FIELDS.index(name)
        return max((row[index] for row in self.buckets.values()), default=0) / self.width

    def rows(self) -> list[dict]:
        return [
            {"t": start, **dict(zip(TIMELINE_FIELDS, row, strict=True))}
            for start, row in sorted(self.buckets.items())
        ]
