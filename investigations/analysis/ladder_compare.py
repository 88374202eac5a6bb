"""A ladder run again after a fix, against the run before it: did the gap between the sides
close?

Pure: each run's per-side points in, the comparison (with the sentence that explains it) and
plotly figure dicts out.

The rule is the ladder's own (analysis/ladder.py): two values differ when the larger is more
than (1 + margin) times the smaller (`differ`), and the sides differ at a load when their
requests/s or their p99 do (`find_divergence`). So at one load the sides' **gap** is the
larger over the smaller, minus one, of whichever of requests/s and p99 is further apart: the
sides differ there exactly when the gap is beyond the margin. Loads are matched by their
value, as `find_divergence` matches the sides, and the runs are compared at the highest load
where both sides have results in both runs.

The verdict, by the same margin: `closed` when the sides no longer differ after the fix;
otherwise `narrowed` or `wider` when the gap after differs from the gap before (their ratios
1 + gap compared by `differ`), else `unchanged`.
"""

import html
import math
from dataclasses import dataclass

from django.utils.translation import gettext
from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from investigations.analysis.ladder import SIDE_COLOURS, Point, _layout, differ

CLOSED, NARROWED, UNCHANGED, WIDER = "closed", "narrowed", "unchanged", "wider"
VERDICTS = (CLOSED, NARROWED, UNCHANGED, WIDER)

# The verdict in a few words (what the checklist and the badges say).
VERDICT_WORDS = {
    CLOSED: _("the gap is closed"),
    NARROWED: _("the gap narrowed but is not closed"),
    UNCHANGED: _("the gap is unchanged"),
    WIDER: _("the gap is wider"),
}

# The verdict as a sentence of its own (the ladder's page, the postmortem).
VERDICT_HEADLINES = {
    CLOSED: _("The gap is closed."),
    NARROWED: _("The gap narrowed but is not closed."),
    UNCHANGED: _("The gap is unchanged."),
    WIDER: _("The gap is wider."),
}
NOTHING_TO_COMPARE = _("Nothing to compare yet.")


@dataclass(frozen=True)
class CompareStep:
    """One load of both runs: each side's requests/s and p99 before and after, and the gap
    between the sides in each run (None where a side has no result at that load)."""

    load: float
    a_before: float | None
    a_after: float | None
    b_before: float | None
    b_after: float | None
    p99_a_before: float | None
    p99_a_after: float | None
    p99_b_before: float | None
    p99_b_after: float | None
    gap_before: float | None
    gap_after: float | None


@dataclass(frozen=True)
class Comparison:
    steps: list[CompareStep]
    load: float | None  # where the runs are compared: the highest load all four held
    gap_before: float | None
    gap_after: float | None
    verdict: str | None  # None: no load to compare at
    reason: Phrase
    margin: float


def _apart(x: float | None, y: float | None) -> float | None:
    """The larger over the smaller, minus one (0 for two zeros, inf against a zero)."""
    if x is None or y is None:
        return None
    small, large = sorted((abs(x), abs(y)))
    if large == 0:
        return 0.0
    return math.inf if small == 0 else large / small - 1


def side_gap(a: Point | None, b: Point | None) -> float | None:
    """How far apart the sides are at one load: the larger gap of requests/s and p99."""
    if a is None or b is None:
        return None
    gaps = [g for g in (_apart(a.rps, b.rps), _apart(a.p99, b.p99)) if g is not None]
    return max(gaps) if gaps else None


def sides_differ(a: Point, b: Point, margin: float) -> bool:
    """The divergence rule at one load: requests/s or p99 beyond the margin."""
    return differ(a.rps, b.rps, margin) or differ(a.p99, b.p99, margin)


def gap_text(gap: float | None) -> str:
    if gap is None:
        return "—"
    return "∞" if math.isinf(gap) else f"{gap:.0%}"


def compare(
    before: dict[str, list[Point]], after: dict[str, list[Point]], margin: float
) -> Comparison:
    """The two runs side by side, load by load, and the verdict at the highest load where
    both sides have results in both runs."""
    at = {
        (side, run): {point.load: point for point in points[side]}
        for run, points in (("before", before), ("after", after))
        for side in ("a", "b")
    }
    loads = sorted({load for found in at.values() for load in found})
    steps = []
    for load in loads:
        p = {key: found.get(load) for key, found in at.items()}
        steps.append(
            CompareStep(
                load=load,
                **{
                    f"{side}_{run}": (p[side, run].rps if p[side, run] else None)
                    for side in ("a", "b")
                    for run in ("before", "after")
                },
                **{
                    f"p99_{side}_{run}": (p[side, run].p99 if p[side, run] else None)
                    for side in ("a", "b")
                    for run in ("before", "after")
                },
                gap_before=side_gap(p["a", "before"], p["b", "before"]),
                gap_after=side_gap(p["a", "after"], p["b", "after"]),
            )
        )
    held = [load for load in loads if all(load in found for found in at.values())]
    if not held:
        return Comparison(
            steps,
            None,
            None,
            None,
            None,
            Phrase(_("no load has results from both sides in both runs: nothing to compare")),
            margin,
        )
    load = held[-1]
    step = next(s for s in steps if s.load == load)
    values = {
        "load": f"{load:g}",
        "margin": f"{margin:.0%}",
        "before": gap_text(step.gap_before),
        "after": gap_text(step.gap_after),
    }
    if not sides_differ(at["a", "after"][load], at["b", "after"][load], margin):
        verdict = CLOSED
        reason = _(
            "at %(load)s the sides are within %(margin)s of each other after the fix (a gap "
            "of %(after)s, against %(before)s before): the gap is closed"
        )
    elif differ(1 + step.gap_before, 1 + step.gap_after, margin):
        if step.gap_after < step.gap_before:
            verdict = NARROWED
            reason = _(
                "at %(load)s the gap between the sides narrowed from %(before)s to %(after)s, "
                "still beyond the %(margin)s margin"
            )
        else:
            verdict = WIDER
            reason = _("at %(load)s the gap between the sides widened from %(before)s to %(after)s")
    else:
        verdict = UNCHANGED
        reason = _(
            "at %(load)s the gap between the sides is about the same: %(before)s before the "
            "fix, %(after)s after (within %(margin)s of each other)"
        )
    return Comparison(
        steps, load, step.gap_before, step.gap_after, verdict, Phrase(reason, **values), margin
    )


def compare_figures(
    before: dict[str, list[Point]],
    after: dict[str, list[Point]],
    labels: dict[str, str],
    names: dict[str, str],
    compared_at: float | None,
    load_title: str,
) -> dict[str, dict]:
    """Throughput and p99 against load, each side's run before the fix dotted and after it
    solid, in the side's colour; the load the verdict is judged at marked. `names` are the
    runs' names ({"before": "#12", "after": "#14"}). In the active language."""
    throughput, latency = [], []
    for side in ("a", "b"):
        label = html.escape(labels.get(side, ""), quote=False)
        for run, points, dash in (("before", before, "dot"), ("after", after, "solid")):
            side_points = points.get(side, [])
            if not side_points:
                continue
            name = f"{side.upper()} · {label} {html.escape(names[run], quote=False)}"
            common = {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": [p.load for p in side_points],
                "line": {"color": SIDE_COLOURS[side], "dash": dash},
            }
            throughput.append({**common, "y": [p.rps for p in side_points]})
            latency.append({**common, "y": [p.p99 for p in side_points]})
    loads = sorted({p.load for points in (before, after) for ps in points.values() for p in ps})
    charts = {}
    for key, title, y_title, data in (
        (
            "throughput",
            gettext("Throughput before and after the fix"),
            gettext("requests/s"),
            throughput,
        ),
        ("latency", gettext("p99 latency before and after the fix"), "p99 (ms)", latency),
    ):
        layout = _layout(title, y_title, {}, load_title, loads)
        if compared_at is not None:
            layout["shapes"] = [
                {
                    "type": "line",
                    "x0": compared_at,
                    "x1": compared_at,
                    "yref": "paper",
                    "y0": 0,
                    "y1": 1,
                    "line": {"dash": "dash", "color": "#555", "width": 1},
                }
            ]
        charts[key] = {"data": data, "layout": layout}
    return charts
