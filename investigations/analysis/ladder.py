"""What a ladder says: each side's knee, where the sides diverge, and the charts.

Pure: per-step numbers in, verdicts (with the sentence that explains them) and plotly
figure dicts out.
"""

import html
import math
from dataclasses import dataclass

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase

# A step "stops scaling" when it gains less than this share of the load it added.
SCALING_EFFICIENCY = 0.5
# p99 "jumps" when it grows by at least this factor from one step to the next...
LATENCY_JUMP = 2.0
# ... and by at least this many milliseconds (tiny latencies double without meaning).
LATENCY_JUMP_MS = 5.0
# Errors "jump" when the error rate grows by at least this much (1 = 100 %).
ERROR_JUMP = 0.01

# The two sides' colours on every chart and page (--side-a, --side-b in perfcase.css): blue
# and orange of the Okabe-Ito palette, told apart also by readers with colour blindness.
SIDE_COLOURS = {"a": "#0072b2", "b": "#d55e00"}


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
    reason: Phrase


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
                Phrase(
                    _(
                        "throughput stops scaling at %(load)s: %(load_gain)s load gave "
                        "%(rps_gain)s requests/s (%(before)s → %(after)s)"
                    ),
                    load=f"{current.load:g}",
                    load_gain=f"{load_gain:+.0%}",
                    rps_gain=f"{rps_gain:+.0%}",
                    before=f"{previous.rps:,.0f}",
                    after=f"{current.rps:,.0f}",
                ),
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
                Phrase(
                    _("p99 latency jumps at %(load)s: %(before)s → %(after)s ms"),
                    load=f"{current.load:g}",
                    before=f"{previous.p99:,.1f}",
                    after=f"{current.p99:,.1f}",
                ),
            )
        if current.error_rate - previous.error_rate >= ERROR_JUMP:
            return Knee(
                current.index,
                current.load,
                Phrase(
                    _("errors jump at %(load)s: %(before)s → %(after)s of requests"),
                    load=f"{current.load:g}",
                    before=f"{previous.error_rate:.1%}",
                    after=f"{current.error_rate:.1%}",
                ),
            )
    return Knee(None, None, Phrase(_("not reached within this ladder")))


def differ(x: float | None, y: float | None, margin: float) -> bool:
    """Whether two values differ by more than the margin, the same both ways round: the
    larger is more than (1 + margin) times the smaller, so A/B 1.25 and 0.80 are the same
    verdict. A zero against anything else differs; values of opposite signs differ."""
    if x is None or y is None:
        return False
    small, large = sorted((abs(x), abs(y)))
    if (x < 0) != (y < 0) and large > 0:
        return True
    if small == 0:
        return large > 0
    return large / small > 1 + margin


def find_divergence(a: list[Point], b: list[Point], margin: float) -> tuple[float | None, Phrase]:
    """The first load where the sides differ by more than the margin in rps or p99, and why
    (steps are matched by their load, so imported results compare too)."""
    b_at = {point.load: point for point in b}
    common = [(point, b_at[point.load]) for point in a if point.load in b_at]
    if not common:
        return None, Phrase(
            _("no step has results from both sides at the same load: nothing to compare")
        )
    for point, other in common:
        if differ(point.rps, other.rps, margin):
            return point.load, Phrase(
                _(
                    "at %(load)s the sides' throughput differs by more than %(margin)s: "
                    "%(a)s requests/s on A, %(b)s on B"
                ),
                load=f"{point.load:g}",
                margin=f"{margin:.0%}",
                a=f"{point.rps:,.0f}",
                b=f"{other.rps:,.0f}",
            )
        if differ(point.p99, other.p99, margin):
            return point.load, Phrase(
                _(
                    "at %(load)s the sides' p99 differs by more than %(margin)s: %(a)s ms on "
                    "A, %(b)s ms on B"
                ),
                load=f"{point.load:g}",
                margin=f"{margin:.0%}",
                a=f"{point.p99:,.1f}",
                b=f"{other.p99:,.1f}",
            )
    if len(common) == len(a) == len(b):
        return None, Phrase(
            _("the sides stay within %(margin)s of each other at every step"),
            margin=f"{margin:.0%}",
        )
    return None, Phrase(
        _("the sides stay within %(margin)s of each other at the %(count)s common loads"),
        margin=f"{margin:.0%}",
        count=len(common),
    )


def slower_side(a: list[Point], b: list[Point], load: float | None, margin: float) -> str | None:
    """ "a" or "b": the side that is slower where the sides part (at `load`, as
    find_divergence found it): the lower throughput, else the higher p99; None without a
    divergence."""
    pa = next((p for p in a if p.load == load), None)
    pb = next((p for p in b if p.load == load), None)
    if load is None or pa is None or pb is None:
        return None
    if differ(pa.rps, pb.rps, margin):
        return "a" if pa.rps < pb.rps else "b"
    if differ(pa.p99, pb.p99, margin):
        return "a" if pa.p99 > pb.p99 else "b"
    return None


def mark(a: float | None, b: float | None, *, higher_is_better: bool, margin: float) -> str:
    """better / worse / about equal, for A against B."""
    if a is None or b is None:
        return ""
    if not differ(a, b, margin):
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
            "text": gettext("knee %(side)s") % {"side": side.upper()},
            "showarrow": False,
            "yanchor": "bottom",
            "font": {"color": SIDE_COLOURS[side], "size": 11},
            # Each side's label on its own row: two knees at one load never overprint.
            "yshift": -16 * row,
        }
        for row, (side, knee) in enumerate(
            (side, knee) for side, knee in sorted(knees.items()) if knee.load is not None
        )
    ]


def _layout(
    title: str, y_title: str, knees: dict[str, Knee], x_title: str, loads: list[float]
) -> dict:
    return {
        "title": {"text": title, "font": {"size": 14}},
        # A tick at each load of the ladder, labelled as given (5, 10, 20, 50, 100), not
        # plotly's log-axis digits (10, 2, 3, ...).
        "xaxis": {
            "title": {"text": x_title},
            "type": "log",
            "gridcolor": "#dde2e8",
            "tickvals": loads,
            "ticktext": [f"{load:g}" for load in loads],
        },
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
    load_title: str | None = None,
) -> dict[str, dict]:
    """Throughput, latency percentiles and CPU against load, both sides on each chart, in
    the active language (built for each request)."""
    load_title = load_title or gettext("load (concurrent connections)")
    cpu_kinds = {"us": gettext("user"), "sy": gettext("system"), "st": gettext("steal")}
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
        for percentile, dash, axis in (("p50", "dot", "y2"), ("p99", "solid", "y")):
            x, y = _series(side_points, lambda p, k=percentile: getattr(p, k))
            latency.append(
                {
                    "type": "scatter",
                    "mode": "lines+markers",
                    "name": f"{name} {percentile}",
                    "x": x,
                    "y": y,
                    # p50 on its own axis (right): beside a p99 ten times higher it would be
                    # a flat line at the bottom.
                    "yaxis": axis,
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
                        "name": f"{name} {cpu_kinds[key]}",
                        "x": loads,
                        "y": values,
                        "line": {"color": colour, "dash": dash},
                    }
                )
    loads = sorted({p.load for side_points in points.values() for p in side_points})
    latency_layout = _layout(gettext("Latency"), "ms", knees, load_title, loads)
    latency_layout["yaxis"]["title"] = {"text": "p99 (ms)"}
    latency_layout["yaxis2"] = {
        "title": {"text": "p50 (ms)"},
        "overlaying": "y",
        "side": "right",
        "rangemode": "tozero",
        "showgrid": False,
    }
    latency_layout["margin"]["r"] = 60
    return {
        "throughput": {
            "data": throughput,
            "layout": _layout(
                gettext("Throughput"), gettext("requests/s"), knees, load_title, loads
            ),
        },
        "latency": {"data": latency, "layout": latency_layout},
        "cpu": {
            "data": cpu_chart,
            "layout": _layout(
                gettext("CPU of the service hosts"),
                gettext("CPU use (percent)"),
                knees,
                load_title,
                loads,
            ),
        },
    }
