"""The load-result parsers of collectors/loadresults.py on real outputs of the real tools.

Every file in tests/collectors/data/loadresults was written by the tool itself (its README
names the version, the command and the server); the three wrk2 files are the sample outputs
of wrk2's own README. The broken inputs are made here from those files: emptied, cut in the
middle, a number replaced by text, a line dropped, a wrong header, another JSON.
"""

import json
import random
from dataclasses import fields
from pathlib import Path

import pytest

from collectors.loadresults import (
    ERROR_KEYS,
    FORMATS,
    LATENCY_KEYS,
    LoadResultError,
    StepResult,
    parse,
    parse_ab,
    parse_hey,
    parse_jmeter_csv,
    parse_k6_json,
    parse_k6_text,
    parse_locust_csv,
    parse_wrk,
    parse_wrk2,
)

DATA = Path(__file__).resolve().parent / "data" / "loadresults"

NO_ERRORS = dict.fromkeys(ERROR_KEYS, 0)


def read(name: str) -> str:
    return (DATA / name).read_text()


def only(steps: list[StepResult]) -> StepResult:
    assert len(steps) == 1
    return steps[0]


def latency(avg=None, p50=None, p75=None, p90=None, p99=None, max=None) -> dict:
    return {"avg": avg, "p50": p50, "p75": p75, "p90": p90, "p99": p99, "max": max}


def errors(**counts) -> dict:
    return {**NO_ERRORS, **counts}


def refused(format: str, text, **options) -> LoadResultError:
    with pytest.raises(LoadResultError) as info:
        parse(format, text, **options)
    return info.value


def edited(name: str, old: str, new: str) -> str:
    text = read(name)
    assert text.count(old) == 1, f"{old!r} is not once in {name}"
    return text.replace(old, new)


def edited_line(name: str, start: str, old: str, new: str) -> str:
    """The capture with `old` replaced in the one line starting with `start`."""
    lines = read(name).split("\n")
    (index,) = [i for i, line in enumerate(lines) if line.strip().startswith(start)]
    assert lines[index].count(old) == 1, f"{old!r} is not once in line {index + 1} of {name}"
    lines[index] = lines[index].replace(old, new)
    return "\n".join(lines)


def without_line(name: str, start: str) -> str:
    lines = read(name).split("\n")
    kept = [line for line in lines if not line.strip().startswith(start)]
    assert len(kept) == len(lines) - 1, f"no single line starting {start!r} in {name}"
    return "\n".join(kept)


# --- wrk ---------------------------------------------------------------------------------


def test_wrk_without_latency_gives_avg_and_max_from_the_thread_stats():
    step = only(parse_wrk(read("wrk-plain.txt")))
    assert step == StepResult(
        load=10.0,
        load_kind="concurrency",
        duration_s=3.1,
        requests=65620,
        rps=21165.82,
        transfer_bytes_per_s=4.08 * 1024**2,
        latency_ms=latency(avg=0.49824, max=11.6),
        errors=NO_ERRORS,
    )


def test_wrk_with_latency_gives_its_four_percentiles():
    step = only(parse_wrk(read("wrk-latency.txt")))
    assert step.latency_ms == latency(avg=2.23, p50=2.2, p75=2.23, p90=2.28, p99=2.73, max=8.29)
    assert (step.requests, step.rps, step.duration_s) == (13465, 4487.43, 3.0)
    assert step.transfer_bytes_per_s == 0.86 * 1024**2


def test_wrk_converts_microseconds_and_counts_non_2xx():
    step = only(parse_wrk(read("wrk-non2xx.txt")))
    assert step.latency_ms == latency(
        avg=0.8124, p50=0.504, p75=0.96, p90=1.68, p99=3.87, max=14.64
    )
    assert step.errors == errors(non_2xx=8602)
    assert (step.requests, step.rps) == (43012, 14319.55)


def test_wrk_timeouts_leave_no_latency_and_plain_bytes():
    step = only(parse_wrk(read("wrk-timeout.txt")))
    # wrk printed 0.00us with "+/- Stdev" nan: it recorded no latency, not a zero one.
    assert step.latency_ms == latency()
    assert step.errors == errors(timeout=4)
    assert (step.load, step.requests, step.rps, step.duration_s) == (4.0, 4, 1.33, 3.01)
    assert step.transfer_bytes_per_s == 268.78


def test_wrk_counts_the_socket_errors_of_a_server_killed_mid_run():
    step = only(parse_wrk(read("wrk-server-killed.txt")))
    assert step.errors == errors(read=15, write=80222)
    assert step.transfer_bytes_per_s == 2.0 * 1024**2
    assert step.latency_ms["p99"] == 2.02


def test_wrk_that_could_not_connect_is_refused_with_its_own_words():
    error = refused("wrk", read("wrk-closed-port.txt"))
    assert error.line == 1
    assert str(error) == (
        "line 1: wrk stopped before measuring: "
        "'unable to connect to 127.0.0.1:18099 Connection refused'"
    )


# --- wrk2 (its README's sample outputs) -----------------------------------------------------


def test_wrk2_without_the_rate_in_the_text_is_a_concurrency_step():
    step = only(parse_wrk2(read("wrk2-readme-basic.txt")))
    assert step == StepResult(
        load=100.0,
        load_kind="concurrency",
        duration_s=30.01,
        requests=60017,
        rps=2000.15,
        transfer_bytes_per_s=676.14 * 1024,
        latency_ms=latency(avg=6.46, max=12.34),
        errors=NO_ERRORS,
    )


def test_wrk2_with_latency_takes_the_recorded_histogram_and_its_mean_and_max():
    step = only(parse_wrk2(read("wrk2-readme-latency.txt"), rate=2000))
    assert (step.load, step.load_kind) == (2000.0, "rate")
    assert step.latency_ms == latency(
        avg=6.602, p50=6.67, p75=7.78, p90=9.14, p99=11.18, max=12.496
    )
    assert (step.requests, step.duration_s, step.rps) == (60018, 30.0, 2000.28)
    assert step.transfer_bytes_per_s == 676.18 * 1024


def test_wrk2_reads_the_rate_from_a_kept_command_line_and_seconds():
    step = only(parse("wrk2", read("wrk2-readme-u-latency-example2.txt")))
    assert (step.load, step.load_kind) == (2000.0, "rate")
    # The Recorded Latency section, not the Uncorrected one printed after it.
    assert step.latency_ms == latency(
        avg=63.66, p50=8.61, p75=10.47, p90=11.77, p99=1270.0, max=1416.192
    )
    assert (step.requests, step.rps) == (60055, 2001.42)


def test_wrk2_reads_todays_calibration_line_too():
    # Today's wrk2 prints "mean lat.: 9.747ms, ... 21ms" where the README shows usec/msec.
    text = edited(
        "wrk2-readme-basic.txt",
        "mean lat.: 9747 usec, rate sampling interval: 21 msec",
        "mean lat.: 9.747ms, rate sampling interval: 21ms",
    )
    assert only(parse_wrk2(text)).requests == 60017


def test_wrk_reads_wrk2_output_as_connections():
    step = only(parse_wrk(read("wrk2-readme-latency.txt")))
    assert (step.load, step.load_kind, step.latency_ms["p99"]) == (100.0, "concurrency", 11.18)


# --- hey ---------------------------------------------------------------------------------


def test_hey_clean_run():
    step = only(parse_hey(read("hey.txt"), concurrency=10))
    assert step == StepResult(
        load=10.0,
        load_kind="concurrency",
        duration_s=3.003,
        requests=12410,
        rps=4132.5237,
        transfer_bytes_per_s=794240 / 3.003,
        latency_ms=latency(avg=2.4, p50=2.3, p75=2.4, p90=2.7, p99=4.1, max=11.6),
        errors=NO_ERRORS,
    )


def test_hey_counts_non_2xx_from_its_status_code_distribution():
    step = only(parse("hey", read("hey-non2xx.txt"), concurrency=5))
    assert step.errors == errors(non_2xx=100)
    assert (step.requests, step.rps, step.duration_s) == (500, 7584.4978, 0.0659)
    assert step.latency_ms == latency(avg=0.6, p50=0.5, p75=0.7, p90=1.2, p99=3.0, max=4.9)


def test_hey_timeouts_are_requests_without_latency():
    step = only(parse_hey(read("hey-timeout.txt"), concurrency=4))
    assert step.errors == errors(timeout=8)
    assert step.latency_ms == latency()
    # hey's Requests/sec counts the failed requests too, and prints no "Total data" for 0 B.
    assert (step.requests, step.rps, step.transfer_bytes_per_s) == (8, 3.9954, 0.0)


def test_hey_connection_refused_is_a_connect_error():
    step = only(parse_hey(read("hey-closed-port.txt"), concurrency=2))
    assert step.errors == errors(connect=20)
    assert (step.requests, step.rps, step.duration_s) == (20, 6137.8406, 0.0033)


def test_hey_without_a_sample_for_p99_reports_the_slowest_response_as_its_p99():
    # 40 responses: hey prints its 99% line as "0% in 0.0000 secs". The nearest-rank p99 of
    # fewer than 100 samples is the largest of them.
    step = only(parse_hey(read("hey-few-responses.txt"), concurrency=2))
    assert step.requests == 40 and step.errors == NO_ERRORS
    assert step.latency_ms["p90"] == 2.9
    assert step.latency_ms["p99"] == step.latency_ms["max"] > step.latency_ms["p90"]


def test_hey_refuses_a_zero_line_in_the_wrong_shape():
    text = read("hey-few-responses.txt").replace("  0% in 0.0000 secs", "  0% in 0.0031 secs")
    error = refused("hey", text, concurrency=2)
    assert error.line == 33
    assert "expected '99% in <seconds> secs'" in str(error)


def test_hey_needs_its_concurrency_which_it_does_not_print():
    error = refused("hey", read("hey.txt"))
    assert error.line is None
    assert "pass concurrency= (hey -c)" in str(error)


def test_hey_takes_the_concurrency_from_a_kept_command_line():
    text = "$ hey -z 3s -c 10 http://127.0.0.1:18080/sleep/2\n" + read("hey.txt")
    assert only(parse_hey(text)).load == 10.0
    # No -c on the command line: hey's default of 50 workers.
    text = "hey -n 500 http://127.0.0.1:18080/mixed\n" + read("hey-non2xx.txt")
    assert only(parse_hey(text)).load == 50.0


# --- ab ----------------------------------------------------------------------------------


def test_ab_clean_run():
    step = only(parse_ab(read("ab.txt")))
    assert step == StepResult(
        load=10.0,
        load_kind="concurrency",
        duration_s=0.723,
        requests=2000,
        rps=2765.53,
        transfer_bytes_per_s=545.54 * 1024,
        latency_ms=latency(avg=4.0, p50=4.0, p75=4.0, p90=4.0, p99=5.0, max=8.0),
        errors=NO_ERRORS,
    )


def test_ab_reports_length_failures_and_non_2xx_as_ab_counts_them():
    step = only(parse_ab(read("ab-non2xx.txt")))
    assert step.errors == errors(non_2xx=200, other=200)
    assert step.latency_ms == latency(avg=2.0, p50=2.0, p75=3.0, p90=4.0, p99=11.0, max=13.0)
    assert (step.load, step.requests, step.rps) == (5.0, 1000, 2065.76)


@pytest.mark.parametrize(
    ("name", "line", "message"),
    [
        ("ab-closed-port.txt", 5, "'apr_socket_recv: Connection refused (111)'"),
        (
            "ab-keepalive-timeout.txt",
            6,
            "'apr_pollset_poll: The timeout specified has expired (70007)'",
        ),
    ],
)
def test_ab_that_stopped_is_refused_with_its_own_words(name, line, message):
    error = refused("ab", read(name))
    assert (error.line, error.message) == (line, f"ab stopped before its results: {message}")


# --- k6 ----------------------------------------------------------------------------------


def test_k6_summary_export_with_p75_and_p99():
    step = only(parse_k6_json(read("k6-summary-export.json")))
    assert step.latency_ms == latency(
        avg=0.5971856947582183,
        p50=0.46991,
        p75=0.753052,
        p90=1.1448460000000005,
        p99=2.661545199999998,
        max=7.736447,
    )
    assert (step.load, step.requests, step.rps) == (5.0, 23637, 7876.519718072364)
    assert step.transfer_bytes_per_s == 1542226.6928307433
    # http_req_failed "passes" are the failed requests; the export has no test duration.
    assert step.errors == errors(other=4727)
    assert step.duration_s == 23637 / 7876.519718072364


def test_k6_summary_export_with_the_default_trend_stats_has_no_p75_or_p99():
    step = only(parse_k6_json(read("k6-summary-export-default-stats.json")))
    assert step.latency_ms == latency(
        avg=2.343382016347687, p50=2.275115, p90=2.4952992000000003, max=5.501737
    )
    assert (step.load, step.requests, step.errors) == (3.0, 2508, NO_ERRORS)


def test_k6_handle_summary_json():
    step = only(parse("k6-json", read("k6-handle-summary.json")))
    assert step == StepResult(
        load=4.0,
        load_kind="concurrency",
        duration_s=3.001277889,
        requests=5176,
        rps=1724.59871808958,
        transfer_bytes_per_s=348368.9410540951,
        latency_ms=latency(
            avg=2.2801862932766523,
            p50=2.245521,
            p75=2.27948575,
            p90=2.345555,
            p99=2.869414,
            max=5.162021,
        ),
        errors=NO_ERRORS,
    )


def test_k6_text_summary_of_k6_1():
    step = only(parse_k6_text(read("k6-text.txt")))
    assert step == StepResult(
        load=5.0,
        load_kind="concurrency",
        duration_s=3.0,
        requests=23637,
        rps=7876.519718,
        transfer_bytes_per_s=1.5e6,
        latency_ms=latency(avg=0.59718, p50=0.46991, p75=0.75305, p90=1.14, p99=2.66, max=7.73),
        errors=errors(other=4727),
    )


def test_k6_legacy_text_summary():
    step = only(parse("k6-text", read("k6-text-legacy.txt")))
    assert step == StepResult(
        load=3.0,
        load_kind="concurrency",
        duration_s=2.0,
        requests=2508,
        rps=1252.834373,
        transfer_bytes_per_s=253e3,
        latency_ms=latency(avg=2.34, p50=2.27, p90=2.49, max=5.5),
        errors=NO_ERRORS,
    )


def test_k6_text_and_json_of_one_run_agree():
    text = only(parse_k6_text(read("k6-text.txt")))
    exported = only(parse_k6_json(read("k6-summary-export.json")))
    assert (text.requests, text.load, text.errors) == (
        exported.requests,
        exported.load,
        exported.errors,
    )
    for key in LATENCY_KEYS:
        assert text.latency_ms[key] == pytest.approx(exported.latency_ms[key], rel=0.005)


# --- JMeter ------------------------------------------------------------------------------


def test_jmeter_steps_by_active_threads():
    steps = parse_jmeter_csv(read("jmeter-ladder.jtl"))
    assert [(s.load, s.requests, s.duration_s) for s in steps] == [
        (1.0, 95, 2.829),
        (2.0, 208, 2.99),
        # Two samples of the 4-thread group's threads stopping.
        (3.0, 2, 0.001),
        (4.0, 421, 2.992),
    ]
    one, two, _, four = steps
    assert one.rps == 95 / 2.829
    assert one.transfer_bytes_per_s == 23242 / 2.829
    assert one.errors == errors(connect=1, timeout=1, non_2xx=11)
    assert two.errors == errors(connect=2, timeout=2, non_2xx=20)
    assert four.errors == errors(connect=4, timeout=4, non_2xx=41)
    assert one.latency_ms == latency(avg=907 / 95, p50=6.0, p75=6.0, p90=8.0, p99=21.0, max=509.0)
    assert four.latency_ms == latency(
        avg=3413 / 421, p50=5.0, p75=6.0, p90=6.0, p99=10.0, max=502.0
    )


def test_jmeter_percentiles_are_those_of_its_aggregate_report():
    # StatCalculator: the value at rank round(n * p), halves up; at least rank 1.
    header = read("jmeter-ladder.jtl").split("\n", 1)[0]
    template = "1795250300{:03d},{},page,200,OK,Step 1 1-1,text,true,,202,1,1,http://x/,1,0,0"
    rows = [template.format(i * 10, elapsed) for i, elapsed in enumerate([40, 10, 30, 20])]
    step = only(parse_jmeter_csv("\n".join([header, *rows]) + "\n"))
    # n=4: p50 rank 2 -> 20, p75 rank 3 -> 30, p90 rank round(3.6)=4 -> 40, p99 rank 4 -> 40.
    assert step.latency_ms == latency(avg=25.0, p50=20.0, p75=30.0, p90=40.0, p99=40.0, max=40.0)


# --- Locust ------------------------------------------------------------------------------


def test_locust_steps_by_user_count():
    steps = parse_locust_csv(read("locust_stats_history.csv"))
    assert [(s.load, s.requests, s.duration_s, s.errors["other"]) for s in steps] == [
        (1.0, 241 - 20, 11.0, 10 - 1),
        (2.0, 722 - 281, 11.0, 29 - 12),
        (3.0, 1443 - 782, 11.0, 56 - 32),
    ]
    one, two, three = steps
    assert one.rps == 221 / 11
    assert one.latency_ms["avg"] == pytest.approx(
        (4.774402215798734 * 241 - 4.5438027000273 * 20) / 221, rel=1e-12
    )
    # The step's last row's window percentiles; the max rose to 7.468347999747493 in step 1.
    assert {k: v for k, v in one.latency_ms.items() if k != "avg"} == {
        "p50": 6.0,
        "p75": 6.0,
        "p90": 6.0,
        "p99": 7.0,
        "max": 7.468347999747493,
    }
    assert {k: v for k, v in three.latency_ms.items() if k != "avg"} == {
        "p50": 6.0,
        "p75": 6.0,
        "p90": 6.0,
        "p99": 6.0,
        "max": 8.0,
    }
    assert two.transfer_bytes_per_s == pytest.approx(
        (62.07202216066482 * 722 - 61.95017793594306 * 281) / 11, rel=1e-9
    )
    assert all(s.load_kind == "concurrency" for s in steps)


# --- the dispatcher and the shape of a step -------------------------------------------------


def test_formats_name_every_parser():
    assert FORMATS == {
        "wrk": parse_wrk,
        "wrk2": parse_wrk2,
        "hey": parse_hey,
        "ab": parse_ab,
        "k6-json": parse_k6_json,
        "k6-text": parse_k6_text,
        "jmeter-csv": parse_jmeter_csv,
        "locust-csv": parse_locust_csv,
    }


def test_a_step_has_exactly_the_agreed_fields_and_keys():
    assert [f.name for f in fields(StepResult)] == [
        "load",
        "load_kind",
        "duration_s",
        "requests",
        "rps",
        "transfer_bytes_per_s",
        "latency_ms",
        "errors",
        "skipped",  # what the file left out (issue 25): on a file's first step only
    ]
    step = only(parse("ab", read("ab.txt")))
    assert list(step.latency_ms) == ["avg", "p50", "p75", "p90", "p99", "max"]
    assert list(step.errors) == ["connect", "read", "write", "timeout", "non_2xx", "other"]


def test_an_unknown_format_or_option_is_refused():
    error = refused("gatling", "whatever")
    assert str(error) == (
        "unknown format 'gatling': expected one of wrk, wrk2, hey, ab, k6-json, k6-text, "
        "jmeter-csv, locust-csv"
    )
    assert str(refused("ab", read("ab.txt"), rate=10)) == "ab takes no options, not rate"
    assert str(refused("wrk2", read("wrk2-readme-basic.txt"), concurrency=10)) == (
        "wrk2 takes only rate, not concurrency"
    )


def test_bytes_in_utf8_are_read_like_text():
    assert parse("wrk", (DATA / "wrk-plain.txt").read_bytes()) == parse_wrk(read("wrk-plain.txt"))


# --- broken files: each refused with the line (or JSON key) and what was expected ----------

# One good capture per format, and the options its parser needs.
GOOD = {
    "wrk": ("wrk-latency.txt", {}),
    "wrk2": ("wrk2-readme-latency.txt", {}),
    "hey": ("hey.txt", {"concurrency": 10}),
    "ab": ("ab.txt", {}),
    "k6-json": ("k6-handle-summary.json", {}),
    "k6-text": ("k6-text.txt", {}),
    "jmeter-csv": ("jmeter-ladder.jtl", {}),
    "locust-csv": ("locust_stats_history.csv", {}),
}
TOOL_NAMES = {
    "wrk": "wrk",
    "wrk2": "wrk2",
    "hey": "hey",
    "ab": "ab",
    "k6-json": "k6 JSON summary",
    "k6-text": "k6",
    "jmeter-csv": "JMeter",
    "locust-csv": "Locust stats history",
}


def test_every_format_has_a_good_capture_here():
    assert set(GOOD) == set(FORMATS)
    for format, (name, options) in GOOD.items():
        assert parse(format, read(name), **options)


@pytest.mark.parametrize("format", FORMATS)
@pytest.mark.parametrize("text", ["", " \n\n\t\n"])
def test_an_empty_file_is_refused(format, text):
    error = refused(format, text, **GOOD[format][1])
    assert str(error) == f"line 1: expected {TOOL_NAMES[format]} output, found an empty text"


@pytest.mark.parametrize("format", FORMATS)
def test_binary_data_is_refused_as_bytes_and_as_text(format):
    blob = random.Random(7).randbytes(600)
    for data in (blob, blob.decode("latin-1")):
        error = refused(format, data, **GOOD[format][1])
        assert (
            str(error) == f"line 1: expected {TOOL_NAMES[format]} output as text, found binary data"
        )
    # A capture whose middle turned to binary names the line.
    name, options = GOOD[format]
    if format == "k6-json":
        name = "k6-summary-export.json"  # handleSummary's JSON is one line
    lines = read(name).split("\n")
    lines[1] = lines[1][:5] + "\x00\x00\x7f" + lines[1][5:]
    assert refused(format, "\n".join(lines), **options).line == 2


TRUNCATED = {
    "wrk": (
        "line 5: expected 'Req/Sec <avg> <stdev> <max> <percent>%', "
        "found 'Req/Sec     2.25k    43.'"
    ),
    "wrk2": (
        "line 56: expected '<value> <percentile> <total count> <1/(1-percentile)>' or "
        "'#[Mean = <ms>, ...]', found '11.263     0.992188        39193'"
    ),
    "hey": "line 28: expected '25% in <seconds> secs', found '25% in'",
    "ab": (
        "line 32: expected 'Requests per second: <number> [#/sec] (mean)', "
        "found the end of the output"
    ),
    "k6-json": (
        "line 1: expected a k6 JSON summary, found invalid JSON at column 1396: "
        "Unterminated string starting at"
    ),
    "k6-text": "line 31: expected 'http_reqs....: <count> <rate>/s', found the end of the output",
    "jmeter-csv": "line 357: expected 16 fields as the header names, found 10",
    "locust-csv": "line 56: expected 24 fields as the header names, found 18",
}


@pytest.mark.parametrize("format", FORMATS)
def test_a_file_cut_in_the_middle_is_refused(format):
    name, options = GOOD[format]
    text = read(name)
    assert str(refused(format, text[: len(text) // 2], **options)) == TRUNCATED[format]


def k6_json(name: str, change) -> str:
    data = json.loads(read(name))
    change(data)
    return json.dumps(data, indent=4)


NUMBER_REPLACED = [
    (
        "wrk",
        edited("wrk-latency.txt", "4487.43", "banana"),
        "line 12: expected 'Requests/sec: <number>', found 'Requests/sec:   banana'",
    ),
    (
        "wrk",
        edited("wrk-latency.txt", "13465 requests", "many requests"),
        "line 11: expected '<n> requests in <duration>, <size> read', "
        "found 'many requests in 3.00s, 2.59MB read'",
    ),
    (
        "wrk",
        edited("wrk-latency.txt", "75%    2.23ms", "75%    fast"),
        "line 8: expected '75% <time>', found '75%    fast'",
    ),
    (
        "wrk2",
        edited("wrk2-readme-latency.txt", "10.343     0.971875", "10.343     banana"),
        "line 47: expected '<value> <percentile> <total count> <1/(1-percentile)>' or "
        "'#[Mean = <ms>, ...]', found '10.343     banana        38390        35.56'",
    ),
    (
        "wrk2",
        edited("wrk2-readme-latency.txt", "#[Max     =       12.496", "#[Max     =       big"),
        "line 101: expected '#[Max = <ms>, Total count = <n>]', "
        "found '#[Max     =       big, Total count    =        39500]'",
    ),
    (
        "hey",
        edited("hey.txt", "4132.5237", "lots"),
        "line 7: expected 'Requests/sec: <number>', found 'Requests/sec:\\tlots'",
    ),
    (
        "hey",
        edited("hey.txt", "90% in 0.0027 secs", "90% in soon secs"),
        "line 31: expected '90% in <seconds> secs', found '90% in soon secs'",
    ),
    (
        "hey",
        edited("hey.txt", "[200]\t12410 responses", "[200]\tall responses"),
        "line 43: expected '[<code>] <n> responses', found '[200]\\tall responses'",
    ),
    (
        "ab",
        edited("ab.txt", "2765.53 [#/sec]", "fast [#/sec]"),
        "line 32: expected 'Requests per second: <number> [#/sec] (mean)', "
        "found 'Requests per second:    fast [#/sec] (mean)'",
    ),
    (
        "ab",
        edited("ab.txt", " 99%      5", " 99%      five"),
        "line 54: expected '99% <ms>', found '99%      five'",
    ),
    (
        "k6-text",
        edited_line("k6-text.txt", "http_reqs", "23637", "many"),
        f"line 32: expected 'http_reqs....: <count> <rate>/s', "
        f"found 'http_reqs{'.' * 63}: many  7876.519718/s'",
    ),
    (
        "k6-text",
        edited_line("k6-text-legacy.txt", "http_req_duration", "max=5.5ms ", "max=slow  "),
        "line 26: expected 'http_req_duration....: avg=<duration> min=<duration> med=<duration> "
        "max=<duration> ...', found 'http_req_duration..............: avg=2.34ms  min=2.13ms "
        "med=2.27ms max=slow     p(90)=2.49ms  p(95)=2.6ms'",
    ),
    (
        "k6-json",
        k6_json(
            "k6-handle-summary.json",
            lambda d: d["metrics"]["http_reqs"]["values"].update(count="many"),
        ),
        "metrics.http_reqs.count: expected a number, found 'many'",
    ),
    (
        "k6-json",
        k6_json(
            "k6-summary-export.json",
            lambda d: d["metrics"]["http_req_duration"].update({"p(99)": "2.6ms"}),
        ),
        "metrics.http_req_duration.p(99): expected a number, found '2.6ms'",
    ),
]


def jtl_with(row_index: int, column: str, value: str) -> str:
    lines = read("jmeter-ladder.jtl").split("\n")
    header = lines[0].split(",")
    row = lines[row_index].split(",")
    row[header.index(column)] = value
    lines[row_index] = ",".join(row)
    return "\n".join(lines)


NUMBER_REPLACED += [
    (
        "jmeter-csv",
        jtl_with(9, "elapsed", "five"),
        "line 10: expected a number in column 'elapsed', found 'five'",
    ),
    (
        "jmeter-csv",
        jtl_with(9, "timeStamp", "yesterday"),
        "line 10: expected a time stamp in milliseconds in column 'timeStamp', found 'yesterday'",
    ),
    (
        "jmeter-csv",
        jtl_with(3, "success", "maybe"),
        "line 4: expected true or false in column 'success', found 'maybe'",
    ),
    (
        "locust-csv",
        edited(
            "locust_stats_history.csv", "1795250031,2,,Aggregated", "1795250031,two,,Aggregated"
        ),
        "line 41: expected a number in column 'User Count', found 'two'",
    ),
]


@pytest.mark.parametrize(("format", "text", "message"), NUMBER_REPLACED)
def test_a_number_replaced_by_text_is_refused(format, text, message):
    error = refused(format, text, **GOOD[format][1])
    assert str(error) == message


MISSING_LINE = [
    (
        "wrk",
        without_line("wrk-latency.txt", "13465 requests"),
        "line 11: expected '<n> requests in <duration>, <size> read', "
        "found 'Requests/sec:   4487.43'",
    ),
    (
        "wrk",
        without_line("wrk-latency.txt", "Transfer/sec"),
        "line 13: expected 'Transfer/sec: <size>', found the end of the output",
    ),
    (
        "wrk",
        without_line("wrk-latency.txt", "90%"),
        "line 9: expected '90% <time>', found '99%    2.73ms'",
    ),
    (
        "wrk2",
        without_line("wrk2-readme-latency.txt", "Thread Stats"),
        "line 5: expected 'Thread Stats   Avg      Stdev     Max   +/- Stdev', "
        "found 'Latency     6.60ms    1.92ms  12.50ms   68.46%'",
    ),
    (
        "wrk2",
        without_line("wrk2-readme-latency.txt", "#[Mean"),
        "line 100: expected '<value> <percentile> <total count> <1/(1-percentile)>' or "
        "'#[Mean = <ms>, ...]', found '#[Max     =       12.496, Total count    =        39500]'",
    ),
    (
        "hey",
        without_line("hey.txt", "Requests/sec"),
        "line 8: expected 'Requests/sec: <number>', found 'Total data:\\t794240 bytes'",
    ),
    (
        "hey",
        without_line("hey.txt", "Status code distribution"),
        "line 46: expected 'Status code distribution:', found the end of the output",
    ),
    (
        "ab",
        without_line("ab.txt", "Complete requests"),
        "line 28: expected 'Complete requests: <n>', found 'Failed requests:        0'",
    ),
    (
        "ab",
        without_line("ab.txt", "80%"),
        "line 50: expected '80% <ms>', found '90%      4'",
    ),
    (
        "k6-text",
        without_line("k6-text.txt", "http_reqs"),
        "line 48: expected 'http_reqs....: <count> <rate>/s', found the end of the output",
    ),
    (
        "k6-text",
        without_line("k6-text-legacy.txt", "http_req_duration"),
        "line 41: expected 'http_req_duration....: avg=<duration> min=<duration> med=<duration> "
        "max=<duration> ...', found the end of the output",
    ),
    (
        "k6-json",
        k6_json("k6-summary-export.json", lambda d: d["metrics"].pop("http_reqs")),
        "metrics.http_reqs: expected the k6 metric http_reqs, found no such key",
    ),
    (
        "k6-json",
        k6_json(
            "k6-handle-summary.json",
            lambda d: d["metrics"]["http_req_duration"]["values"].pop("med"),
        ),
        "metrics.http_req_duration.med: expected a number, found no such key",
    ),
    (
        "k6-json",
        k6_json(
            "k6-handle-summary.json", lambda d: [d["metrics"].pop(k) for k in ("vus", "vus_max")]
        ),
        "metrics.vus: expected the k6 metric vus or vus_max, found neither (k6 samples them "
        "once a second: a shorter run has none; give its VUs as the load)",
    ),
]


@pytest.mark.parametrize(("format", "text", "message"), MISSING_LINE)
def test_a_missing_required_line_is_refused(format, text, message):
    assert str(refused(format, text, **GOOD[format][1])) == message


def test_a_csv_with_another_header_is_refused():
    assert str(refused("jmeter-csv", read("locust_stats_history.csv"))).startswith(
        "line 1: expected a JMeter CSV header with the columns timeStamp, elapsed, "
        "responseCode, success, allThreads (save it with "
        "jmeter.save.saveservice.print_field_names=true), found 'Timestamp,User Count,"
    )
    assert str(refused("locust-csv", read("jmeter-ladder.jtl"))) == (
        "line 1: expected a Locust stats history CSV header with the columns Timestamp, "
        "User Count, Name, Total Request Count, Total Failure Count, Total Average Response "
        "Time, 50%, 75%, 90%, 99%, 100%, found 'timeStamp,elapsed,label,responseCode,"
        "responseMessage,threadName,dataType,success,failureMessage,bytes,grpThreads,"
        "allThreads,URL,Latency,IdleTime,Connect'"
    )
    # One column renamed: only it is named.
    text = read("locust_stats_history.csv").replace("User Count", "Users", 1)
    assert refused("locust-csv", text).message.startswith(
        "expected a Locust stats history CSV header with the column User Count, found"
    )


def test_a_jtl_without_its_header_line_says_how_to_get_one():
    # JMeter 2.13's default: no header line.
    text = read("jmeter-ladder.jtl").split("\n", 1)[1]
    error = refused("jmeter-csv", text)
    assert error.line == 1
    assert "print_field_names=true), found '1795250298368,21,closed port," in error.message


def test_a_csv_header_without_rows_is_refused():
    header = read("jmeter-ladder.jtl").split("\n", 1)[0]
    assert str(refused("jmeter-csv", header + "\n")) == (
        "line 2: expected JMeter CSV rows under the header, found the end of the file"
    )


def test_a_locust_history_whose_user_count_never_holds_is_refused():
    lines = read("locust_stats_history.csv").split("\n")
    # The header, and the first two Aggregated rows: 0 users, then 1.
    text = "\n".join([lines[0], lines[1], lines[2]])
    assert str(refused("locust-csv", text)) == (
        "expected a user count held for two consecutive 'Aggregated' rows, found none"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"foo": 1}',
            "metrics: expected a k6 summary with a 'metrics' object, found no 'metrics' object",
        ),
        ("[1, 2]", "metrics: expected a k6 summary with a 'metrics' object, found a JSON list"),
        (
            '{"metrics": {"http_reqs": [1]}}',
            "metrics.http_reqs: expected the k6 metric http_reqs, found [1]",
        ),
        ("[" * 100_000, "expected a k6 JSON summary, found JSON nested deeper than 64 levels"),
    ],
)
def test_a_json_that_is_not_a_k6_summary_is_refused(text, message):
    assert str(refused("k6-json", text)) == message


def test_a_csv_is_not_a_k6_summary():
    error = refused("k6-json", read("locust_stats_history.csv"))
    assert (
        str(error)
        == "line 1: expected a k6 JSON summary, found invalid JSON at column 1: Expecting value"
    )


def test_output_of_another_tool_is_refused_by_each_text_parser():
    assert str(refused("wrk", read("ab.txt"))) == (
        "line 56: expected 'Running <duration> test @ <url>', found the end of the output"
    )
    assert refused("ab", read("wrk-latency.txt")).message == (
        "expected 'Concurrency Level: <n>', found the end of the output"
    )
    assert refused("hey", read("k6-text.txt"), concurrency=1).message == (
        "expected 'Summary:', found the end of the output"
    )
    assert refused("k6-text", read("hey.txt")).message == (
        "expected 'http_reqs....: <count> <rate>/s', found the end of the output"
    )


# --- never anything but LoadResultError ------------------------------------------------------


def cuts_and_mutations(text: str, seed: int):
    """Every line-boundary cut (sampled for long files), cuts inside lines, and texts with
    one character replaced, dropped or doubled."""
    rng = random.Random(seed)
    boundaries = [i for i, c in enumerate(text) if c == "\n"]
    for at in rng.sample(boundaries, min(len(boundaries), 60)):
        yield text[:at]
        yield text[: at + rng.randint(1, 12)]
    alphabet = '0123456789.,:%[]()=- \t\nabcxyzNaN/µs"{}'
    for _ in range(150):
        at = rng.randrange(len(text))
        choice = rng.random()
        if choice < 0.5:
            yield text[:at] + rng.choice(alphabet) + text[at + 1 :]
        elif choice < 0.75:
            yield text[:at] + text[at + 1 :]
        else:
            yield text[:at] + text[at] + text[at:]


@pytest.mark.parametrize(
    ("format", "name", "options"),
    [
        ("wrk", "wrk-latency.txt", {}),
        ("wrk", "wrk-timeout.txt", {}),
        ("wrk2", "wrk2-readme-u-latency-example2.txt", {}),
        ("hey", "hey-timeout.txt", {"concurrency": 4}),
        ("hey", "hey.txt", {"concurrency": 10}),
        ("ab", "ab-non2xx.txt", {}),
        ("k6-json", "k6-summary-export.json", {}),
        ("k6-json", "k6-handle-summary.json", {}),
        ("k6-text", "k6-text.txt", {}),
        ("k6-text", "k6-text-legacy.txt", {}),
        ("jmeter-csv", "jmeter-ladder.jtl", {}),
        ("locust-csv", "locust_stats_history.csv", {}),
    ],
)
def test_damaged_captures_give_steps_or_load_result_error_never_a_crash(format, name, options):
    refusals = 0
    for index, text in enumerate(cuts_and_mutations(read(name), seed=len(name))):
        try:
            steps = parse(format, text, **options)
        except LoadResultError as error:
            refusals += 1
            assert error.message and (error.line is None or error.line >= 1), index
            continue
        assert steps and all(isinstance(step, StepResult) for step in steps)
        for step in steps:
            assert list(step.latency_ms) == list(LATENCY_KEYS)
            assert list(step.errors) == list(ERROR_KEYS)
    # Cutting files short must have been refused many times over.
    assert refusals > 30
