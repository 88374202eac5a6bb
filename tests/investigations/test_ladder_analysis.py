"""What a ladder says (investigations/analysis/ladder.py): knees, divergence, marks, charts.

The numbers are shaped like real ladders: a service that does CPU work per request
saturates near 200 requests/s while its p99 climbs; one that only waits keeps scaling. One
test goes through the import service and the API, where the divergence step is read back.
"""

import colorsys
import html
import json
import math
from pathlib import Path

import pytest
from django.utils.html import json_script

from investigations.analysis.ladder import (
    SIDE_COLOURS,
    Knee,
    Point,
    figures,
    find_divergence,
    find_knee,
    mark,
)
from investigations.services.ladder_imports import ladder_import
from tests.conftest import HOSTILE_STRINGS, ApiClient


def ladder(*steps) -> list[Point]:
    """(load, rps, p50, p99, error_rate) per step, numbered in order."""
    return [
        Point(index=i, load=load, rps=rps, p50=p50, p99=p99, error_rate=errors)
        for i, (load, rps, p50, p99, errors) in enumerate(steps)
    ]


# A: 10 ms of waiting and 5 ms of one core per request; stops near 200 requests/s.
WEAK = ladder(
    (1, 64.0, 15.2, 16.9, 0.0),
    (4, 196.0, 19.8, 31.0, 0.0),
    (16, 203.5, 77.4, 95.2, 0.0),
    (64, 205.1, 310.0, 402.7, 0.0),
)
# B: 10 ms of waiting only; keeps scaling with the connections.
STRONG = ladder(
    (1, 88.0, 11.1, 12.4, 0.0),
    (4, 350.2, 11.2, 13.0, 0.0),
    (16, 1391.8, 11.3, 14.6, 0.0),
    (64, 5410.0, 11.6, 17.9, 0.0),
)


# --- find_knee ------------------------------------------------------------------------------


def test_the_knee_is_where_throughput_stops_scaling():
    knee = find_knee(WEAK)

    # 4 -> 16 connections (+300 %) gave +4 % requests/s.
    assert (knee.index, knee.load) == (2, 16)
    assert knee.reason == (
        "throughput stops scaling at 16: +300% load gave +4% requests/s (196 → 204)"
    )


def test_a_side_that_keeps_scaling_has_no_knee_within_the_ladder():
    knee = find_knee(STRONG)

    assert knee == Knee(None, None, "not reached within this ladder")


def test_scaling_at_half_the_added_load_is_still_scaling():
    # +100 % load, +55 % requests/s: above the 50 % efficiency line.
    points = ladder((50, 2000.0, 20, 40, 0), (100, 3100.0, 26, 52, 0))

    assert find_knee(points).index is None


def test_scaling_below_half_the_added_load_is_the_knee():
    # +100 % load, +45 % requests/s.
    points = ladder((50, 2000.0, 20, 40, 0), (100, 2900.0, 26, 52, 0))

    assert find_knee(points).load == 100


def test_a_p99_that_doubles_by_more_than_5_ms_is_the_knee():
    # Throughput keeps scaling, but the tail does not.
    points = ladder(
        (10, 980.0, 8.1, 12.0, 0.0),
        (20, 1950.0, 8.4, 14.1, 0.0),
        (40, 3880.0, 9.0, 31.5, 0.0),
    )

    knee = find_knee(points)

    assert (knee.index, knee.load) == (2, 40)
    assert knee.reason == "p99 latency jumps at 40: 14.1 → 31.5 ms"


def test_a_p99_that_doubles_by_less_than_5_ms_is_not_a_knee():
    # 0.9 ms -> 2.3 ms is a factor of 2.6 but means nothing to a user.
    points = ladder((10, 9800.0, 0.4, 0.9, 0.0), (20, 19500.0, 0.6, 2.3, 0.0))

    assert find_knee(points).index is None


def test_a_p99_that_grows_by_more_than_5_ms_without_doubling_is_not_a_knee():
    # 120 -> 200 ms: +80 ms, but a factor of 1.67.
    points = ladder((10, 80.0, 95.0, 120.0, 0.0), (20, 158.0, 101.0, 200.0, 0.0))

    assert find_knee(points).index is None


def test_p99_exactly_at_both_limits_is_a_knee():
    points = ladder((10, 1000.0, 3.0, 5.0, 0.0), (20, 2000.0, 4.0, 10.0, 0.0))

    assert find_knee(points).load == 20


def test_a_missing_p99_is_not_a_jump():
    # wrk without --latency, or an import without percentiles.
    points = ladder((10, 1000.0, None, None, 0.0), (20, 2000.0, None, 250.0, 0.0))

    assert find_knee(points).index is None


def test_an_error_jump_is_the_knee():
    points = ladder(
        (100, 9100.0, 9.0, 21.0, 0.0004),
        (200, 17900.0, 9.5, 23.0, 0.0009),
        (400, 35200.0, 10.1, 24.8, 0.0311),
    )

    knee = find_knee(points)

    assert (knee.index, knee.load) == (2, 400)
    assert knee.reason == "errors jump at 400: 0.1% → 3.1% of requests"


def test_errors_that_rise_by_less_than_a_percentage_point_are_not_a_knee():
    points = ladder((100, 9100.0, 9.0, 21.0, 0.001), (200, 17900.0, 9.5, 23.0, 0.008))

    assert find_knee(points).index is None


def test_errors_that_fall_are_not_a_knee():
    # A cold cache erring at first, then warm.
    points = ladder((100, 9100.0, 9.0, 21.0, 0.2), (200, 17900.0, 9.5, 23.0, 0.0))

    assert find_knee(points).index is None


def test_the_first_reason_found_at_a_step_is_the_one_stated():
    # At 16 the throughput flattens, p99 jumps and errors appear: all at the same step.
    points = ladder((8, 190.0, 40.0, 48.0, 0.0), (16, 201.0, 80.0, 190.0, 0.08))

    assert find_knee(points).reason.startswith("throughput stops scaling at 16")


def test_a_throughput_that_falls_is_the_knee():
    # The server collapses under 64 connections.
    points = ladder((32, 4100.0, 7.0, 15.0, 0.0), (64, 1200.0, 48.0, 900.0, 0.0))

    knee = find_knee(points)

    assert knee.load == 64
    assert "+100% load gave -71% requests/s (4,100 → 1,200)" in knee.reason


def test_a_side_that_answers_nothing_at_all_has_a_knee_at_its_second_step():
    # Every request refused at both steps: nothing scales.
    points = ladder((1, 0.0, None, None, 1.0), (2, 0.0, None, None, 1.0))

    knee = find_knee(points)

    assert knee.load == 2
    assert "(0 → 0)" in knee.reason


def test_throughput_rising_from_zero_is_scaling_not_a_knee():
    # The first step's requests all timed out (a cold start); from then on it scales until
    # 80. Going from 0 to 500 requests/s is not "stopping scaling".
    points = ladder(
        (10, 0.0, None, None, 1.0),
        (20, 500.0, 38.0, 41.0, 0.0),
        (40, 1000.0, 39.0, 44.0, 0.0),
        (80, 1020.0, 77.0, 96.0, 0.0),
    )

    knee = find_knee(points)

    assert knee.load == 80, knee.reason
    assert "0 → 500" not in knee.reason


def test_a_single_step_has_no_knee():
    assert find_knee(WEAK[:1]).index is None
    assert find_knee([]) == Knee(None, None, "not reached within this ladder")


def test_a_repeated_load_is_not_compared_as_a_step_up():
    # Two runs at the same load: no load was added, so no scaling is expected.
    points = ladder((50, 4000.0, 10.0, 20.0, 0.0), (50, 3600.0, 10.5, 22.0, 0.0))

    assert find_knee(points).index is None


# --- find_divergence ------------------------------------------------------------------------


def test_the_sides_diverge_at_the_first_load_where_throughput_differs_beyond_the_margin():
    load, reason = find_divergence(WEAK, STRONG, 0.2)

    # At 1 connection: 64 against 88 requests/s is 27 % apart.
    assert load == 1
    assert reason == (
        "at 1 the sides' throughput differs by more than 20%: 64 requests/s on A, 88 on B"
    )


def test_a_wider_margin_moves_the_divergence_up_the_ladder():
    load, reason = find_divergence(WEAK, STRONG, 0.4)

    # 88 is 1.375 times 64 (within 40 %); 350 is 1.79 times 196 at 4 connections.
    assert load == 4
    assert reason.startswith("at 4 the sides' throughput differs by more than 40%")


def test_the_margin_is_the_same_both_ways_round():
    a = ladder((10, 800.0, 5.0, 9.0, 0.0))
    within, beyond = ladder((10, 960.0, 5.0, 9.0, 0.0)), ladder((10, 961.0, 5.0, 9.0, 0.0))

    # 960 is 1.2 times 800: within a 20 % margin, whichever side is the larger.
    assert find_divergence(a, within, 0.2)[0] is None
    assert find_divergence(within, a, 0.2)[0] is None
    assert find_divergence(a, beyond, 0.2)[0] == 10
    assert find_divergence(beyond, a, 0.2)[0] == 10


def test_sides_within_the_margin_do_not_diverge():
    a = ladder((10, 980.0, 8.0, 12.0, 0.0), (20, 1950.0, 8.2, 13.0, 0.0))
    b = ladder((10, 1010.0, 7.9, 11.5, 0.0), (20, 2010.0, 8.1, 12.1, 0.0))

    assert find_divergence(a, b, 0.2) == (
        None,
        "the sides stay within 20% of each other at every step",
    )


def test_a_p99_divergence_is_found_when_throughput_is_equal():
    # Both sides keep up with the load; A's tail is 3x B's at 200 connections.
    a = ladder((100, 9000.0, 9.0, 22.0, 0.0), (200, 17800.0, 10.0, 66.0, 0.0))
    b = ladder((100, 9050.0, 9.0, 21.0, 0.0), (200, 17900.0, 9.8, 22.5, 0.0))

    load, reason = find_divergence(a, b, 0.2)

    assert load == 200
    assert reason == "at 200 the sides' p99 differs by more than 20%: 66.0 ms on A, 22.5 ms on B"


def test_a_missing_p99_on_one_side_is_not_a_divergence():
    a = ladder((100, 9000.0, 9.0, None, 0.0))
    b = ladder((100, 9050.0, 9.0, 21.0, 0.0))

    assert find_divergence(a, b, 0.2)[0] is None


def test_steps_are_matched_by_load_when_imported_ladders_differ():
    # A imported at 10, 20, 50, 100; B at 20, 50, 100 only (no 10, and an extra 200).
    a = ladder(
        (10, 990.0, 9.0, 11.0, 0.0),
        (20, 1960.0, 9.2, 12.0, 0.0),
        (50, 4800.0, 9.9, 14.0, 0.0),
        (100, 5200.0, 17.0, 40.0, 0.0),
    )
    b = ladder(
        (20, 1990.0, 9.0, 11.5, 0.0),
        (50, 4900.0, 9.5, 12.6, 0.0),
        (100, 9600.0, 10.1, 15.2, 0.0),
        (200, 18800.0, 10.4, 17.0, 0.0),
    )

    load, reason = find_divergence(a, b, 0.2)

    # Compared at the same load (100), not at the same position (B's 200).
    assert load == 100
    assert reason.startswith("at 100 the sides' throughput differs")
    assert "5,200 requests/s on A, 9,600 on B" in reason


def test_imported_ladders_without_a_common_load_do_not_claim_the_sides_agree():
    # A was run at 10, 20, 50 and B at 15, 30, 60: no step can be compared, so nothing may
    # be said about the sides staying within the margin.
    a = ladder((10, 990.0, 9, 11, 0), (20, 1960.0, 9, 12, 0), (50, 4800.0, 10, 14, 0))
    b = ladder((15, 400.0, 30, 80, 0), (30, 410.0, 70, 190, 0), (60, 415.0, 140, 380, 0))

    load, reason = find_divergence(a, b, 0.2)

    assert load is None
    assert "stay within" not in reason, reason


def test_the_divergence_step_of_imported_sides_names_the_ladders_step(personas):
    # Through the service and the API: B imported from Locust at 1, 2 and 3 users, A from
    # hey at 2 connections only. The sides diverge at load 2, which is the ladder's step 1
    # (its steps are every load of both sides); A's own step there is its first.
    results = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"
    imported = ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="b",
        format="locust-csv",
        files=[("locust.csv", (results / "locust_stats_history.csv").read_bytes())],
    )
    ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        format="hey",
        files=[("hey.txt", (results / "hey.txt").read_bytes())],
        ladder=imported,
        load=2,
    )

    body = ApiClient(personas.member).get(f"/api/ladders/{imported.pk}").body

    assert body["steps"] == [1, 2, 3]
    assert body["divergence"].startswith("at 2 the sides' throughput differs")
    assert body["steps"][body["divergence_step"]] == 2, body["divergence_step"]


def test_a_side_without_steps_is_not_said_to_agree_with_the_other():
    # Side B failed before its first step (its load tool missing): A's steps compare with
    # nothing, and the ladder's verdict must not say that the sides agree.
    for a, b in ((WEAK, []), ([], STRONG)):
        load, reason = find_divergence(a, b, 0.2)

        assert load is None
        assert "stay within" not in reason, reason


# --- mark -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, higher_is_better, expected",
    [
        (205.1, 5410.0, True, "worse"),  # fewer requests/s on A
        (5410.0, 205.1, True, "better"),
        (402.7, 17.9, False, "worse"),  # a higher p99 on A
        (17.9, 402.7, False, "better"),
        (1000.0, 1150.0, True, "about equal"),  # 13 % apart, inside 20 %
        (12.0, 12.0, False, "about equal"),
        (0.0, 0.0, True, "about equal"),
        (None, 12.0, False, ""),
        (12.0, None, True, ""),
    ],
)
def test_mark_says_how_a_compares_to_b(a, b, higher_is_better, expected):
    assert mark(a, b, higher_is_better=higher_is_better, margin=0.2) == expected


def test_mark_follows_the_margin():
    assert mark(1000.0, 1150.0, higher_is_better=True, margin=0.1) == "worse"


# --- figures --------------------------------------------------------------------------------

LABELS = {"a": "new cloud", "b": "old cloud"}


def cpu_per_step(*triples):
    return [{"us": us, "sy": sy, "st": st, "r": 2.0} for us, sy, st in triples]


CPU = {
    "a": cpu_per_step((31.0, 6.5, 4.0), (88.0, 9.0, 2.5), (97.5, 2.0, 0.5), (98.0, 1.5, 0.5)),
    "b": cpu_per_step((4.0, 2.0, 0.0), (12.5, 5.0, 0.0), (41.0, 14.0, 0.0), (77.0, 19.5, 0.0)),
}


def knees_of(points):
    return {side: find_knee(side_points) for side, side_points in points.items()}


def charts(cpu=CPU, labels=LABELS, points=None):
    points = points or {"a": WEAK, "b": STRONG}
    return figures(points, cpu, knees_of(points), labels)


def names(figure) -> list[str]:
    return [trace["name"] for trace in figure["data"]]


def test_there_are_three_charts_each_with_both_sides():
    made = charts()

    assert set(made) == {"throughput", "latency", "cpu"}
    assert names(made["throughput"]) == ["A · new cloud", "B · old cloud"]
    assert names(made["latency"]) == [
        "A · new cloud p50",
        "A · new cloud p99",
        "B · old cloud p50",
        "B · old cloud p99",
    ]
    assert names(made["cpu"]) == [
        "A · new cloud user",
        "A · new cloud system",
        "A · new cloud steal",
        "B · old cloud user",
        "B · old cloud system",
        "B · old cloud steal",
    ]


def test_each_trace_is_plotted_against_the_load_in_its_sides_colour():
    made = charts()

    a_rps, b_rps = made["throughput"]["data"]
    assert a_rps["x"] == [1, 4, 16, 64] and a_rps["y"] == [64.0, 196.0, 203.5, 205.1]
    assert b_rps["y"] == [88.0, 350.2, 1391.8, 5410.0]
    assert a_rps["line"]["color"] == SIDE_COLOURS["a"]
    assert b_rps["line"]["color"] == SIDE_COLOURS["b"]
    a_p99 = made["latency"]["data"][1]
    assert a_p99["y"] == [16.9, 31.0, 95.2, 402.7] and a_p99["line"]["dash"] == "solid"
    assert made["latency"]["data"][0]["line"]["dash"] == "dot"  # p50
    a_user, a_system, a_steal = made["cpu"]["data"][:3]
    assert a_user["x"] == [1, 4, 16, 64] and a_user["y"] == [31.0, 88.0, 97.5, 98.0]
    assert a_system["y"] == [6.5, 9.0, 2.0, 1.5] and a_steal["y"] == [4.0, 2.5, 0.5, 0.5]


def test_the_axes_say_what_they_measure():
    made = charts()

    for figure in made.values():
        assert figure["layout"]["xaxis"]["title"]["text"] == "load (concurrent connections)"
        assert figure["layout"]["xaxis"]["type"] == "log"
    assert made["throughput"]["layout"]["yaxis"]["title"]["text"] == "requests/s"
    # p99 on the left, p50 on an axis of its own on the right (readable beside p99).
    assert made["latency"]["layout"]["yaxis"]["title"]["text"] == "p99 (ms)"
    assert made["latency"]["layout"]["yaxis2"]["title"]["text"] == "p50 (ms)"
    assert {t["name"].rsplit(" ", 1)[1]: t["yaxis"] for t in made["latency"]["data"]} == {
        "p50": "y2",
        "p99": "y",
    }
    assert made["cpu"]["layout"]["yaxis"]["title"]["text"] == "CPU use (percent)"


def test_the_load_axis_is_labelled_with_the_ladders_own_loads():
    made = charts()

    loads = sorted({p.load for p in WEAK} | {p.load for p in STRONG})
    for figure in made.values():
        assert figure["layout"]["xaxis"]["tickvals"] == loads
        assert figure["layout"]["xaxis"]["ticktext"] == [f"{load:g}" for load in loads]


def test_two_knees_at_one_load_never_overprint():
    both = {"a": WEAK, "b": WEAK}
    made = figures(both, CPU, knees_of(both), LABELS)

    notes = made["throughput"]["layout"]["annotations"]
    assert len({n["x"] for n in notes}) == 1
    assert len({n["yshift"] for n in notes}) == 2


def test_the_side_colours_differ_for_colour_blind_readers_too():
    # Blue against vermilion (Okabe-Ito): opposite hues, which red-green colour blindness
    # still tells apart (the blue-yellow axis), unlike the blue and purple before.
    def hue(colour: str) -> float:
        r, g, b = (int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5))
        return colorsys.rgb_to_hsv(r, g, b)[0] * 360

    a, b = hue(SIDE_COLOURS["a"]), hue(SIDE_COLOURS["b"])
    assert min(abs(a - b), 360 - abs(a - b)) > 120


def test_a_rate_ladder_titles_its_load_axis():
    points = {"a": WEAK, "b": STRONG}

    made = figures(points, CPU, knees_of(points), LABELS, load_title="load (requests/s)")

    assert made["latency"]["layout"]["xaxis"]["title"]["text"] == "load (requests/s)"


def test_a_knee_is_a_dotted_line_with_a_note_on_every_chart():
    made = charts()

    for figure in made.values():
        [shape] = figure["layout"]["shapes"]  # B has no knee
        assert shape["x0"] == shape["x1"] == 16
        assert shape["yref"] == "paper" and (shape["y0"], shape["y1"]) == (0, 1)
        assert shape["line"]["dash"] == "dot"
        assert shape["line"]["color"] == SIDE_COLOURS["a"]
        [note] = figure["layout"]["annotations"]
        # The axis is logarithmic: an annotation's x is log10 of the load.
        assert note["x"] == math.log10(16) and note["text"] == "knee A"
        assert note["font"]["color"] == SIDE_COLOURS["a"]


def test_both_knees_are_marked_in_their_colours():
    b_saturating = ladder(
        (1, 88.0, 11.1, 12.4, 0.0),
        (4, 350.2, 11.2, 13.0, 0.0),
        (16, 1391.8, 11.3, 14.6, 0.0),
        (64, 1480.0, 38.0, 61.0, 0.0),
    )
    made = charts(points={"a": WEAK, "b": b_saturating})

    shapes = made["throughput"]["layout"]["shapes"]
    assert [(s["x0"], s["line"]["color"]) for s in shapes] == [
        (16, SIDE_COLOURS["a"]),
        (64, SIDE_COLOURS["b"]),
    ]
    notes = made["cpu"]["layout"]["annotations"]
    assert [(n["x"], n["text"]) for n in notes] == [
        (math.log10(16), "knee A"),
        (math.log10(64), "knee B"),
    ]


def test_no_knee_no_marks():
    made = charts(points={"a": STRONG, "b": STRONG})

    for figure in made.values():
        assert figure["layout"]["shapes"] == []
        assert figure["layout"]["annotations"] == []


def test_no_cpu_traces_without_samples():
    # No service hosts placed, or no vmstat on them: the steps' cpu is empty.
    made = charts(cpu={"a": [{}] * 4, "b": [{}] * 4})

    assert made["cpu"]["data"] == []
    assert len(made["throughput"]["data"]) == 2  # the rest is still drawn


def test_no_cpu_traces_for_a_side_without_samples():
    made = charts(cpu={"a": CPU["a"]})

    assert names(made["cpu"]) == [
        "A · new cloud user",
        "A · new cloud system",
        "A · new cloud steal",
    ]


def test_only_the_cpu_columns_that_were_measured_are_drawn():
    # vmstat of an old procps has no st column.
    cpu = {side: [{"us": 40.0, "sy": 8.0} for _ in range(4)] for side in ("a", "b")}

    made = charts(cpu=cpu)

    assert [n.rsplit(" ", 1)[1] for n in names(made["cpu"])] == [
        "user",
        "system",
        "user",
        "system",
    ]


def test_a_step_without_samples_leaves_a_gap_in_the_cpu_trace():
    cpu = {"a": [CPU["a"][0], {}, CPU["a"][2], CPU["a"][3]], "b": CPU["b"]}

    made = charts(cpu=cpu)

    assert made["cpu"]["data"][0]["y"] == [31.0, None, 97.5, 98.0]


def test_missing_percentiles_are_gaps_not_zeros():
    a = ladder((1, 64.0, None, None, 0.0), (4, 196.0, 19.8, 31.0, 0.0))

    made = charts(points={"a": a, "b": STRONG[:2]}, cpu={})

    assert made["latency"]["data"][1]["y"] == [None, 31.0]


def test_a_side_with_no_steps_yet_is_still_a_named_trace():
    made = charts(points={"a": WEAK[:1], "b": []}, cpu={})

    assert names(made["throughput"]) == ["A · new cloud", "B · old cloud"]
    assert made["throughput"]["data"][1]["x"] == []


def test_a_missing_label_leaves_the_side_letter():
    made = charts(labels={})

    assert names(made["throughput"]) == ["A · ", "B · "]


@pytest.mark.parametrize("label", HOSTILE_STRINGS, ids=range(len(HOSTILE_STRINGS)))
def test_a_hostile_label_stays_plain_data(label):
    made = charts(labels={"a": label, "b": "old cloud"})

    # The label's text reaches the trace names whole (escaped or not: plotly reads names as
    # its own small HTML, so escaping is how a label shows as typed; tests/e2e checks that).
    assert html.unescape(names(made["throughput"])[0]) == f"A · {label}"
    assert html.unescape(made["latency"]["data"][0]["name"]) == f"A · {label} p50"
    # The page embeds each figure with json_script: the label is JSON text there, and
    # nothing in it can end the script element or open another.
    embedded = str(json_script(made["throughput"], "throughput"))
    body = embedded.removeprefix('<script id="throughput" type="application/json">')
    body = body.removesuffix("</script>")
    assert "<" not in body and ">" not in body
    assert json.loads(body)["data"][0]["name"] == names(made["throughput"])[0]
    # The layout is built from fixed words only.
    assert label not in json.dumps(made["throughput"]["layout"], ensure_ascii=False)


def test_figures_are_json():
    made = charts()

    assert json.loads(json.dumps(made)) == made


def test_the_charts_speak_the_readers_language():
    from django.utils import translation

    with translation.override("zh-hans"):
        made = charts()

    assert made["throughput"]["layout"]["title"]["text"] != "Throughput"
    assert made["cpu"]["layout"]["xaxis"]["title"]["text"] != "load (concurrent connections)"
