"""The baseline table: each benchmark's medians on both sides, their ratio, and a verdict of
side A against side B (better, worse, about equal), decided by the metric's direction and
a margin that grows with the measured spread. Pure: plain values in, rows out.

The verdict: the ratio "how much better A is" (A/B where higher is better, B/A where lower
is) against a margin of max(the default margin, A's spread, B's spread): beyond 1 + margin
A is better, below 1 / (1 + margin) A is worse, between them the two are about equal. A
noisy benchmark thus needs a bigger difference before it says anything, and where the
repetitions spread wider than NOISY_SPREAD it does not call the sides about equal either:
the row is too noisy to judge (more repetitions, or a quieter host, are needed).
"""

import csv
import io
import statistics
from dataclasses import asdict, dataclass, field

from collectors.baseline import BENCHMARKS, GROUPS, metric_of
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from investigations.analysis.rules.base import Verdict
from investigations.choices import BaselineStatus, BaselineVerdict, FindingSeverity

DEFAULT_MARGIN = 10.0  # percent
# Repetitions spread wider than this ((max - min) / median, percent) cannot show two sides
# about equal: such a row is "too noisy to judge" (unless the gap is wider still).
NOISY_SPREAD = 50.0
# A row this far beyond its margin (A/B or B/A) is a warning, not only a note.
WARNING_FACTOR = 1.5
# The knowledge-base entries a clearly worse row is evidence for, where one fits.
ROOT_CAUSES = {
    ("sched_pipe", "usecs_per_op"): "hypervisor-overhead",
    ("cpu_1", "events_per_second"): "cpu-governor-powersave",
    ("cpu_all", "events_per_second"): "cgroup-cpu-throttling",
    ("fio", "randwrite_iops"): "raid-write-through",
    ("fio", "randwrite_latency_us"): "raid-write-through",
    ("fio", "seqwrite_mb_per_second"): "raid-write-through",
    ("qperf_tcp_lat", "latency_us"): "old-kernel",
}
_ORDER = {
    (benchmark.key, metric.key): (GROUPS.index(benchmark.group), i, j)
    for i, benchmark in enumerate(BENCHMARKS)
    for j, metric in enumerate(benchmark.metrics)
}


def summarise(values: list[float]) -> tuple[float | None, float | None]:
    """The median of the repetitions and their spread ((max - min) / median, in percent)."""
    if not values:
        return None, None
    median = statistics.median(values)
    if median == 0:
        return median, None
    return median, round(100 * (max(values) - min(values)) / abs(median), 1)


def variation(values: list[float]) -> float | None:
    """The coefficient of variation of the repetitions (sample standard deviation over the
    mean, in percent), None for fewer than two or a mean of 0."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    if mean == 0:
        return None
    return round(100 * statistics.stdev(values) / abs(mean), 1)


def _bounds(values: list[float]) -> tuple[float | None, float | None]:
    return (min(values), max(values)) if values else (None, None)


def compare(
    a: float | None,
    b: float | None,
    *,
    higher_is_better: bool,
    spread_a: float | None = None,
    spread_b: float | None = None,
    margin: float = DEFAULT_MARGIN,
) -> tuple[float | None, str | None]:
    """(A / B, the verdict of A against B), or (None, None) where a side has no value."""
    if a is None or b is None or a <= 0 or b <= 0:
        return None, None
    ratio = a / b
    better = ratio if higher_is_better else 1 / ratio
    allowed = 1 + max(margin, spread_a or 0.0, spread_b or 0.0) / 100
    if better > allowed:
        return ratio, BaselineVerdict.BETTER.value
    if better < 1 / allowed:
        return ratio, BaselineVerdict.WORSE.value
    return ratio, BaselineVerdict.ABOUT_EQUAL.value


@dataclass
class Measured:
    """One side's newest result of one metric (what the selector hands in)."""

    side: str  # "a" or "b"
    role: str
    benchmark: str
    metric: str
    status: str
    median: float | None = None
    spread: float | None = None
    values: list = field(default_factory=list)
    note: str = ""
    host: str = ""


@dataclass
class Row:
    group: str
    benchmark: str
    metric: str
    unit: str
    higher_is_better: bool
    role: str
    label: str  # the benchmark's label (English; translated where shown)
    metric_label: str
    a: float | None
    b: float | None
    spread_a: float | None
    spread_b: float | None
    ratio: float | None
    verdict: str | None
    status_a: str
    status_b: str
    note_a: str = ""
    note_b: str = ""
    host_a: str = ""
    host_b: str = ""
    values_a: list = field(default_factory=list)
    values_b: list = field(default_factory=list)
    # The lowest and highest repetition, and their coefficient of variation (percent).
    min_a: float | None = None
    max_a: float | None = None
    min_b: float | None = None
    max_b: float | None = None
    cv_a: float | None = None
    cv_b: float | None = None
    # The repetitions spread too wide to call the sides about equal: no verdict.
    too_noisy: bool = False

    def as_item(self) -> dict:
        item = asdict(self)
        item["ratio"] = None if self.ratio is None else round(self.ratio, 4)
        return item


def table(measured: list[Measured], *, margin: float = DEFAULT_MARGIN) -> list[Row]:
    """The rows of the table: one per (role, benchmark, metric) with a result on either
    side, in the pack's order."""
    by_key: dict[tuple[str, str, str], dict[str, Measured]] = {}
    for result in measured:
        by_key.setdefault((result.role, result.benchmark, result.metric), {})[result.side] = result
    rows = []
    for (role, benchmark_key, metric_key), sides in by_key.items():
        metric = metric_of(benchmark_key, metric_key)
        if metric is None:
            continue
        benchmark = next(b for b in BENCHMARKS if b.key == benchmark_key)
        a, b = sides.get("a"), sides.get("b")
        value_a = a.median if a and a.status == BaselineStatus.MEASURED else None
        value_b = b.median if b and b.status == BaselineStatus.MEASURED else None
        ratio, verdict = compare(
            value_a,
            value_b,
            higher_is_better=metric.higher_is_better,
            spread_a=a.spread if a else None,
            spread_b=b.spread if b else None,
            margin=margin,
        )
        spread = max((m.spread for m in (a, b) if m and m.spread is not None), default=0.0)
        too_noisy = verdict == BaselineVerdict.ABOUT_EQUAL and spread > NOISY_SPREAD
        if too_noisy:
            verdict = None
        values_a = list(a.values) if a else []
        values_b = list(b.values) if b else []
        rows.append(
            Row(
                group=benchmark.group,
                benchmark=benchmark_key,
                metric=metric_key,
                unit=metric.unit,
                higher_is_better=metric.higher_is_better,
                role=role,
                label=benchmark.label,
                metric_label=metric.label,
                a=value_a,
                b=value_b,
                spread_a=a.spread if a else None,
                spread_b=b.spread if b else None,
                ratio=ratio,
                verdict=verdict,
                status_a=a.status if a else BaselineStatus.NOT_MEASURED.value,
                status_b=b.status if b else BaselineStatus.NOT_MEASURED.value,
                note_a=a.note if a else "",
                note_b=b.note if b else "",
                host_a=a.host if a else "",
                host_b=b.host if b else "",
                values_a=values_a,
                values_b=values_b,
                min_a=_bounds(values_a)[0],
                max_a=_bounds(values_a)[1],
                min_b=_bounds(values_b)[0],
                max_b=_bounds(values_b)[1],
                cv_a=variation(values_a),
                cv_b=variation(values_b),
                too_noisy=too_noisy,
            )
        )
    rows.sort(key=lambda row: (_ORDER[(row.benchmark, row.metric)], row.role))
    return rows


def verdict_counts(rows: list[Row]) -> dict[str, int]:
    """How many rows say side A is better, worse, about equal, and how many are too noisy
    to say."""
    counts = {
        verdict: sum(1 for row in rows if row.verdict == verdict)
        for verdict in ("better", "worse", "about_equal")
    }
    return {**counts, "too_noisy": sum(1 for row in rows if row.too_noisy)}


def value_text(value: float | None) -> str:
    if value is None:
        return "—"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}"


SYMBOLS = {"better": "↑", "worse": "↓", "about_equal": "≈", None: ""}


def _side_text(value, status: str, low, high) -> str:
    """The median, and the range of the repetitions where they differ."""
    if status != BaselineStatus.MEASURED:
        return status.replace("_", " ")
    text = value_text(value)
    if low is None or low == high:
        return text
    return f"{text} ({value_text(low)}–{value_text(high)})"


def as_markdown(rows: list[Row], *, title: str = "Baseline") -> str:
    """The table as seed 000's team wrote it: grouped, each row marked ↑ ↓ ≈."""
    lines = [f"# {title}", ""]
    for group in GROUPS:
        group_rows = [row for row in rows if row.group == group]
        if not group_rows:
            continue
        lines += [
            f"## {group.capitalize()}",
            "",
            "| Benchmark | Metric | Role | Unit | A | B | A/B | A vs B |",
            "|---|---|---|---|--:|--:|--:|:-:|",
        ]
        for row in group_rows:
            ratio = f"{row.ratio:.2f}" if row.ratio is not None else "—"
            verdict = f"{SYMBOLS[row.verdict]} {(row.verdict or '').replace('_', ' ')}".strip()
            if row.too_noisy:
                verdict = "too noisy to judge"
            cells = [
                row.label,
                row.metric_label,
                row.role or "—",
                row.unit,
                _side_text(row.a, row.status_a, row.min_a, row.max_a),
                _side_text(row.b, row.status_b, row.min_b, row.max_b),
                ratio,
                verdict or "—",
            ]
            lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        lines.append("")
    lines.append(
        "↑ A is better, ↓ A is worse, ≈ about equal, within a margin of the larger of "
        f"{DEFAULT_MARGIN:g}% and the spread of the repetitions. A and B are medians, the "
        "lowest and highest repetition in brackets; repetitions spread wider than "
        f"{NOISY_SPREAD:g}% of their median are too noisy to judge: run more of them."
    )
    return "\n".join(lines) + "\n"


CSV_FIELDS = [
    "group",
    "benchmark",
    "metric",
    "role",
    "unit",
    "higher_is_better",
    "a",
    "b",
    "ratio",
    "verdict",
    "spread_a",
    "spread_b",
    "status_a",
    "status_b",
    "host_a",
    "host_b",
    "min_a",
    "max_a",
    "min_b",
    "max_b",
    "cv_a",
    "cv_b",
    "too_noisy",
]


def as_csv(rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_FIELDS, extrasaction="ignore")
    writer.writeheader()
    for row in rows:
        item = row.as_item()
        # A spreadsheet must not run a formula from a host name.
        for key in ("host_a", "host_b", "role"):
            if item[key][:1] in ("=", "+", "-", "@", "\t", "\r"):
                item[key] = "'" + item[key]
        writer.writerow(item)
    return out.getvalue()


def evaluate_baseline(rows: list[Row]) -> list[Verdict]:
    """A finding for each row where one side is clearly worse."""
    verdicts = []
    for row in rows:
        if row.verdict not in (BaselineVerdict.BETTER, BaselineVerdict.WORSE):
            continue
        worse, better = ("A", "B") if row.verdict == BaselineVerdict.WORSE else ("B", "A")
        factor = row.ratio if row.ratio >= 1 else 1 / row.ratio
        values = {
            "worse": worse,
            "better": better,
            "benchmark": Phrase(row.label),
            "metric": Phrase(row.metric_label),
            "a": value_text(row.a),
            "b": value_text(row.b),
            "unit": row.unit,
            "factor": f"{factor:.2f}",
        }
        verdicts.append(
            Verdict(
                rule=f"baseline.{row.benchmark}.{row.metric}",
                severity=(
                    FindingSeverity.MEDIUM if factor >= WARNING_FACTOR else FindingSeverity.LOW
                ),
                title=Phrase(
                    _("Side %(worse)s is worse at %(benchmark)s (%(metric)s): %(factor)s×"),
                    **values,
                ),
                explanation=Phrase(
                    _(
                        "The baseline pack measured %(a)s %(unit)s on side A and %(b)s "
                        "%(unit)s on side B, the same benchmark run the same way on both "
                        "sides at the same moments: side %(better)s is %(factor)s times "
                        "better, beyond the margin and the spread of the repetitions."
                    ),
                    **values,
                ),
                recommendation=Phrase(
                    _(
                        "Look for what makes side %(worse)s slower here: the host facts "
                        "(CPU model, governor, quotas, virtualisation, disk cache, kernel) "
                        "and the knowledge base."
                    ),
                    worse=worse,
                ),
                side_a=f"{value_text(row.a)} {row.unit}",
                side_b=f"{value_text(row.b)} {row.unit}",
                subject=row.role,
                root_cause=ROOT_CAUSES.get((row.benchmark, row.metric), ""),
            )
        )
    return verdicts


VERDICT_COLOURS = {"better": "#2e7d32", "worse": "#c62828", "about_equal": "#757575"}
# A row too noisy to judge: paler than "about equal", which it is not known to be.
NOISY_COLOUR = "#bdbdbd"


def ratio_figure(rows: list[Row], *, labels: dict, title: str, axis: str) -> dict:
    """A plotly figure: a bar a compared row, how many times better A is than B (below 1: A
    is worse), on a log axis so that 2× better and 2× worse are as long. `labels` maps each
    row's (benchmark, metric, role) to its label in the reader's language."""
    shown = [row for row in rows if row.ratio is not None]
    better = [row.ratio if row.higher_is_better else 1 / row.ratio for row in shown]
    return {
        "data": [
            {
                "type": "bar",
                "orientation": "h",
                # From 1 to the ratio: the bar's base is 1, its length the difference.
                "x": [round(value - 1, 4) for value in better],
                "customdata": [round(value, 4) for value in better],
                "y": [labels[(row.benchmark, row.metric, row.role)] for row in shown],
                "marker": {
                    "color": [VERDICT_COLOURS.get(row.verdict, NOISY_COLOUR) for row in shown]
                },
                "base": 1,
                "hovertemplate": "%{y}: %{customdata:.2f}×<extra></extra>",
            }
        ],
        "layout": {
            "title": {"text": title},
            "xaxis": {"type": "log", "title": {"text": axis}},
            "yaxis": {"automargin": True, "autorange": "reversed"},
            "height": 120 + 26 * len(shown),
            "margin": {"l": 10, "r": 10, "t": 40, "b": 40},
            "shapes": [{"type": "line", "x0": 1, "x1": 1, "yref": "paper", "y0": 0, "y1": 1}],
        },
    }
