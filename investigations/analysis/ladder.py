"""What a ladder says: each side's knee, where the sides diverge, and the charts.

Pure: per-step numbers in, verdicts (with the sentence that explains them) and plotly
figure dicts out.
"""

import html
import math
from dataclasses import dataclass

# A step "stops scaling" when it gains less than this share of the load it added.
SCALING_EFFICIENCY = 0.5
# p99 "jumps" when it grows by at least this factor from one step to the next...
LATENCY_JUMP = 2.0
# ... and by at least this many milliseconds (tiny latencies double without meaning).
LATENCY_JUMP_MS = 5.0
# Errors "jump" when the error rate grows by at least this much (1 = 100 %).
ERROR_JUMP = 0.01

SIDE_COLOURS = {"a": "#2457c5", "b": "#6b3fb5"}


@dataclass(frozen=True)
class Point:
    """One side's result at one step."""

    index: int
    load: float
    rps: float
    p50: float | None
    p99: float | None
    error_rate: float


@dataclass(frozen=True)
class Knee:
    index: int | None
    load: float | None
    reason: str


def find_knee(points: list[Point]) -> Knee:
    """The first step where throughput stops scaling, or latency or errors jump."""
    for previous, current in zip(points, points[1:], strict=False):
        load_gain = current.load / previous.load - 1 if previous.load else 0
        if previous.rps:
            rps_gain = current.rps / previous.rps - 1
        else:  # rising from nothing is scaling; nothing at both steps is not
            rps_gain = math.inf if current.rps else 0
        if load_gain > 0 and rps_gain < SCALING_EFFICIENCY * load_gain:
            return Knee(
                current.index,
                current.load,
                f"throughput stops scaling at {current.load:g}: {load_gain:+.0%} load gave "
                f"{rps_gain:+.0%} requests/s ({previous.rps:,.0f} → {current.rps:,.0f})",
            )
        if (
            previous.p99
            and current.p99
            and current.p99 >= LATENCY_JUMP * previous.p99
            and current.p99 - previous.p99 >= LATENCY_JUMP_MS
        ):
            return Knee(
                current.index,
                current.load,
                f"p99 latency jumps at {current.load:g}: {previous.p99:,.1f} → "
                f"{current.p99:,.1f} ms",
            )
        if current.error_rate - previous.error_rate >= ERROR_JUMP:
            return Knee(
                current.index,
                current.load,
                f"errors jump at {current.load:g}: {previous.error_rate:.1%} → "
                f"{current.error_rate:.1%} of requests",
            )
    return Knee(None, None, "not reached within this ladder")


def _differ(x: float | None, y: float | None, margin: float) -> bool:
    if x is None or y is None:
        return False
    largest = max(abs(x), abs(y))
    return largest > 0 and abs(x - y) / largest > margin


def find_divergence(a: list[Point], b: list[Point], margin: float) -> tuple[float | None, str]:
    """The first load where the sides differ by more than the margin in rps or p99, and why
    (steps are matched by their load, so imported results compare too)."""
    b_at = {point.load: point for point in b}
    common = [(point, b_at[point.load]) for point in a if point.load in b_at]
    if not common:
        return None, "no step has results from both sides at the same load: nothing to compare"
    for point, other in common:
        if _differ(point.rps, other.rps, margin):
            return point.load, (
                f"at {point.load:g} the sides' throughput differs by more than {margin:.0%}: "
                f"{point.rps:,.0f} requests/s on A, {other.rps:,.0f} on B"
            )
        if _differ(point.p99, other.p99, margin):
            return point.load, (
                f"at {point.load:g} the sides' p99 differs by more than {margin:.0%}: "
                f"{point.p99:,.1f} ms on A, {other.p99:,.1f} ms on B"
            )
    loads = "every step" if len(common) == len(a) == len(b) else f"the {len(common)} common loads"
    return None, f"the sides stay within {margin:.0%} of each other at {loads}"


def mark(a: float | None, b: float | None, *, higher_is_better: bool, margin: float) -> str:
    """better / worse / about equal, for A against B."""
    if a is None or b is None:
        return ""
    if not _differ(a, b, margin):
        return "about equal"
    a_ahead = a > b if higher_is_better else a < b
    return "better" if a_ahead else "worse"


def _series(points: list[Point], value) -> tuple[list[float], list[float | None]]:
    return [p.load for p in points], [value(p) for p in points]


def _knee_shapes(knees: dict[str, Knee]) -> list[dict]:
    shapes = []
    for side, knee in knees.items():
        if knee.load is not None:
            shapes.append(
                {
                    "type": "line",
                    "x0": knee.load,
                    "x1": knee.load,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dot", "color": SIDE_COLOURS[side], "width": 2},
                }
            )
    return shapes


def _knee_annotations(knees: dict[str, Knee]) -> list[dict]:
    # On a log axis an annotation's x is the log10 of the value (a shape's is the value).
    return [
        {
            "x": math.log10(knee.load) if knee.load > 0 else 0,
            "y": 1,
            "yref": "paper",
            "text": f"knee {side.upper()}",
            "showarrow": False,
            "yanchor": "bottom",
            "font": {"color": SIDE_COLOURS[side], "size": 11},
        }
        for side, knee in knees.items()
        if knee.load is not None
    ]


def _layout(title: str, y_title: str, knees: dict[str, Knee], x_title: str) -> dict:
    return {
        "title": {"text": title, "font": {"size": 14}},
        "xaxis": {"title": {"text": x_title}, "type": "log", "gridcolor": "#dde2e8"},
        "yaxis": {"title": {"text": y_title}, "rangemode": "tozero", "gridcolor": "#dde2e8"},
        "shapes": _knee_shapes(knees),
        "annotations": _knee_annotations(knees),
        "legend": {"orientation": "h", "y": -0.3, "yanchor": "top"},
        "margin": {"l": 60, "r": 20, "t": 40, "b": 20},
        "height": 360,
        "paper_bgcolor": "rgba(0,0,0,0)",
        "plot_bgcolor": "rgba(0,0,0,0)",
    }


def figures(
    points: dict[str, list[Point]],
    cpu: dict[str, list[dict]],
    knees: dict[str, Knee],
    labels: dict[str, str],
    load_title: str = "load (concurrent connections)",
) -> dict[str, dict]:
    """Throughput, latency percentiles and CPU against load, both sides on each chart."""
    throughput, latency, cpu_chart = [], [], []
    for side, side_points in points.items():
        # plotly reads trace names as a little HTML: a label shows as typed.
        label = html.escape(labels.get(side, ""), quote=False)
        name, colour = f"{side.upper()} · {label}", SIDE_COLOURS[side]
        x, y = _series(side_points, lambda p: p.rps)
        throughput.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": x,
                "y": y,
                "line": {"color": colour},
            }
        )
        for percentile, dash in (("p50", "dot"), ("p99", "solid")):
            x, y = _series(side_points, lambda p, k=percentile: getattr(p, k))
            latency.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{name} {percentile}",
                    "x": x,
                    "y": y,
                    "line": {"color": colour, "dash": dash},
                }
            )
        loads = [p.load for p in side_points]
        for key, dash in (("us", "solid"), ("sy", "dash"), ("st", "dot")):
            values = [step.get(key) for step in cpu.get(side, [])]
            if any(v is not None for v in values):
                cpu_chart.append(
                    {
                        "type": "scatter",
                        "mode": "lines+markers",
                        "name": f"{name} {({'us': 'user', 'sy': 'system', 'st': 'steal'})[key]}",
                        "x": loads,
                        "y": values,
                        "line": {"color": colour, "dash": dash},
                    }
                )
    return {
        "throughput": {
            "data": throughput,
            "layout": _layout("Throughput", "requests/s", knees, load_title),
        },
        "latency": {"data": latency, "layout": _layout("Latency", "ms", knees, load_title)},
        "cpu": {
            "data": cpu_chart,
            "layout": _layout("CPU of the service hosts", "% of CPU", knees, load_title),
        },
    }
