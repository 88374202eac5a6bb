"""The baseline table's rules, pure: medians and spreads, the verdict in both directions
of a metric, the margin that grows with the spread, the exports and the findings."""

import csv
import io

import pytest

from investigations.analysis.baseline import (
    Measured,
    as_csv,
    as_markdown,
    compare,
    evaluate_baseline,
    ratio_figure,
    summarise,
    table,
    verdict_counts,
)


def test_the_median_is_kept_and_the_spread_is_the_range_over_it():
    assert summarise([100.0, 90.0, 110.0]) == (100.0, 20.0)
    assert summarise([5.0]) == (5.0, 0.0)
    assert summarise([]) == (None, None)


@pytest.mark.parametrize(
    "a, b, higher_is_better, verdict",
    [
        (200, 100, True, "better"),  # A does twice the work
        (50, 100, True, "worse"),
        (105, 100, True, "about_equal"),
        (50, 100, False, "better"),  # A takes half the time
        (200, 100, False, "worse"),
        (95, 100, False, "about_equal"),
    ],
)
def test_the_verdict_follows_the_direction_of_the_metric(a, b, higher_is_better, verdict):
    ratio, found = compare(a, b, higher_is_better=higher_is_better)

    assert found == verdict and ratio == pytest.approx(a / b)


def test_a_noisy_benchmark_needs_a_bigger_difference():
    assert compare(130, 100, higher_is_better=True)[1] == "better"
    assert compare(130, 100, higher_is_better=True, spread_b=40)[1] == "about_equal"
    assert compare(130, 100, higher_is_better=True, margin=50)[1] == "about_equal"
    # The margin is symmetric: 1.3x worse is as far as 1.3x better.
    assert compare(100, 130, higher_is_better=True)[1] == "worse"


def test_a_side_without_a_value_has_no_verdict():
    assert compare(None, 100, higher_is_better=True) == (None, None)
    assert compare(0, 100, higher_is_better=True) == (None, None)


def measured(side, benchmark, metric, median, role="service", status="measured", spread=2.0):
    return Measured(
        side=side,
        role=role,
        benchmark=benchmark,
        metric=metric,
        status=status,
        median=median,
        spread=spread,
        values=[median],
        host=f"{role}-{side}",
    )


def test_the_table_pairs_rows_by_role_in_the_packs_order():
    rows = table(
        [
            measured("a", "ping", "rtt_ms", 0.2, role=""),
            measured("b", "ping", "rtt_ms", 0.4, role=""),
            measured("a", "cpu_1", "events_per_second", 3000),
            measured("b", "cpu_1", "events_per_second", 1000),
            measured("a", "cpu_1", "events_per_second", 3000, role="database"),
            measured("b", "fio", "randread_iops", 0, status="not_installed"),
        ]
    )

    assert [(row.benchmark, row.role) for row in rows] == [
        ("cpu_1", "database"),
        ("cpu_1", "service"),
        ("fio", "service"),
        ("ping", ""),
    ]
    by = {(row.benchmark, row.role): row for row in rows}
    assert by[("cpu_1", "service")].verdict == "better"
    assert by[("cpu_1", "database")].status_b == "not_measured"
    assert by[("cpu_1", "database")].verdict is None
    assert by[("fio", "service")].status_b == "not_installed" and by[("fio", "service")].b is None
    assert by[("ping", "")].verdict == "better" and not by[("ping", "")].higher_is_better


def test_the_markdown_marks_each_row_and_the_csv_keeps_formulas_out():
    rows = table(
        [
            measured("a", "cpu_1", "events_per_second", 3000, role="=HYPERLINK(1)"),
            measured("b", "cpu_1", "events_per_second", 1000, role="=HYPERLINK(1)"),
            measured("a", "memory_read", "mib_per_second", 1000),
            measured("b", "memory_read", "mib_per_second", 2000),
            measured("a", "sched_pipe", "usecs_per_op", 2.0),
            measured("b", "sched_pipe", "usecs_per_op", 2.05),
        ]
    )

    markdown = as_markdown(rows, title="Baseline: checkout")
    assert "## Compute" in markdown and "## Memory" in markdown
    assert "↑ better" in markdown and "↓ worse" in markdown and "≈ about equal" in markdown
    parsed = list(csv.DictReader(io.StringIO(as_csv(rows))))
    assert [row["verdict"] for row in parsed] == ["better", "about_equal", "worse"]
    assert parsed[0]["role"] == "'=HYPERLINK(1)"


def test_a_finding_names_the_worse_side_and_the_entry_that_fits():
    rows = table(
        [
            measured("a", "fio", "randwrite_iops", 200),
            measured("b", "fio", "randwrite_iops", 20000),
            measured("a", "cpu_1", "events_per_second", 1000),
            measured("b", "cpu_1", "events_per_second", 1050),
        ]
    )

    verdicts = evaluate_baseline(rows)

    assert [v.rule for v in verdicts] == ["baseline.fio.randwrite_iops"]
    verdict = verdicts[0]
    assert str(verdict.title) == (
        "Side A is worse at fio on a scratch file (random write, 4 KiB): 100.00×"
    )
    assert verdict.severity == "medium" and verdict.root_cause == "raid-write-through"
    assert verdict.side_a == "200 IOPS" and verdict.side_b == "20,000 IOPS"


def test_the_chart_draws_how_many_times_better_a_is_from_one():
    rows = table(
        [
            measured("a", "cpu_1", "events_per_second", 2000),
            measured("b", "cpu_1", "events_per_second", 1000),
            measured("a", "sched_pipe", "usecs_per_op", 4.0),
            measured("b", "sched_pipe", "usecs_per_op", 2.0),
        ]
    )
    labels = {(row.benchmark, row.metric, row.role): row.benchmark for row in rows}

    bars = ratio_figure(rows, labels=labels, title="t", axis="x")["data"][0]

    assert bars["y"] == ["cpu_1", "sched_pipe"]
    assert bars["customdata"] == [2.0, 0.5] and bars["base"] == 1
    assert bars["x"] == [1.0, -0.5]


def repeated(side, values, benchmark="cpu_1", metric="events_per_second"):
    median, spread = summarise(values)
    return Measured(
        side=side,
        role="service",
        benchmark=benchmark,
        metric=metric,
        status="measured",
        median=median,
        spread=spread,
        values=values,
    )


def test_repetitions_spread_wider_than_the_margin_allows_are_too_noisy_to_judge():
    """Issue 24 bug 8: "4,910 ±147.6 %" from two repetitions read as impossible, and the
    row still called the sides about equal."""
    [row] = table([repeated("a", [1000.0, 8820.0]), repeated("b", [4000.0, 4400.0])])

    assert row.too_noisy and row.verdict is None
    assert (row.min_a, row.max_a, row.min_b, row.max_b) == (1000.0, 8820.0, 4000.0, 4400.0)
    assert row.cv_a == pytest.approx(112.6, abs=0.1)
    assert verdict_counts([row])["too_noisy"] == 1
    markdown = as_markdown([row])
    assert "4,910 (1,000–8,820)" in markdown and "too noisy to judge" in markdown
    assert "±" not in markdown
    [exported] = list(csv.DictReader(io.StringIO(as_csv([row]))))
    assert exported["too_noisy"] == "True" and exported["min_a"] == "1000.0"
    labels = {("cpu_1", "events_per_second", "service"): "sysbench cpu"}
    figure = ratio_figure([row], labels=labels, title="t", axis="x")
    assert figure["data"][0]["marker"]["color"] == ["#bdbdbd"]


def test_a_gap_wider_than_the_noise_is_still_judged():
    [row] = table([repeated("a", [100.0, 250.0]), repeated("b", [10000.0, 10100.0])])

    assert row.verdict == "worse" and not row.too_noisy
