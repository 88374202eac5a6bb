"""wrk and wrk2 reports."""

from collectors.loadresults.base import (
    BINARY_SCALE,
    METRIC_SCALE,
    NUM,
    TIME_MS,
    Item,
    LoadResultError,
    StepResult,
    command_option,
    dec,
    make_step,
    next_line,
    percentile_map,
    percentile_rows,
    read_lines,
    rows_until,
    scan,
)
from collectors.phrase import Phrase, gettext_noop

_WRK_TIME = rf"({NUM})(us|ms|s|m|h)"
_WRK_SIZE = rf"({NUM})([KMGTP]?)B"
_WRK_METRIC = rf"{NUM}[kMGT]?"
_WRK_PERCENT = rf"(?:-?nan|{NUM})%"
_WRK2_PERCENTS = ("50.000", "75.000", "90.000", "99.000", "99.900", "99.990", "99.999", "100.000")


def _wrk_ms(value: str, unit: str) -> float:
    return dec(value, TIME_MS[unit])


def _wrk_bytes(value: str, unit: str) -> float:
    return dec(value, BINARY_SCALE[unit])


def _wrk_distribution(lines: list[str], start: int):
    wrk2 = "HdrHistogram" in lines[start - 1]
    percents = _WRK2_PERCENTS if wrk2 else ("50", "75", "90", "99")
    rows, end = percentile_rows(lines, start, percents, _WRK_TIME, "<time>")
    latency = percentile_map(rows, _wrk_ms)
    if not wrk2:
        return latency, end
    # wrk2: the full HdrHistogram spectrum follows, then its mean and max in milliseconds.
    _, at = next_line(lines, end, r"Detailed Percentile spectrum:", "Detailed Percentile spectrum:")
    _, at = next_line(
        lines,
        at,
        r"Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)",
        "Value   Percentile   TotalCount 1/(1-Percentile)",
    )
    at = rows_until(
        lines,
        at,
        rf"{NUM}\s+{NUM}\s+\d+\s+(?:{NUM}|inf)",
        "<value> <percentile> <total count> <1/(1-percentile)>' or '#[Mean = <ms>, ...]",
        until=r"#\[Mean.*",
    )
    mean, at = next_line(
        lines,
        at,
        rf"#\[Mean\s*=\s*({NUM}),\s*StdDeviation\s*=\s*{NUM}\]",
        "#[Mean = <ms>, StdDeviation = <ms>]",
    )
    most, at = next_line(
        lines,
        at,
        rf"#\[Max\s*=\s*({NUM}),\s*Total count\s*=\s*\d+\]",
        "#[Max = <ms>, Total count = <n>]",
    )
    latency.update(avg=dec(mean.group(1)), max=dec(most.group(1)))
    return latency, at


_WRK_ITEMS = [
    Item("running", r"Running\s", r"Running \S+ test @ \S+", "Running <duration> test @ <url>"),
    Item(
        "threads",
        r"\S+ threads and ",
        r"(\d+) threads and (\d+) connections",
        "<n> threads and <n> connections",
    ),
    Item(
        "stats",
        r"Thread Stats\s",
        r"Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev",
        "Thread Stats   Avg      Stdev     Max   +/- Stdev",
    ),
    Item(
        "latency",
        r"Latency(?!\s+Distribution)\s",
        rf"Latency\s+{_WRK_TIME}\s+{_WRK_TIME}\s+{_WRK_TIME}\s+({_WRK_PERCENT})",
        "Latency <avg> <stdev> <max> <percent>%",
    ),
    Item(
        "req_sec",
        r"Req/Sec\s",
        rf"Req/Sec\s+{_WRK_METRIC}\s+{_WRK_METRIC}\s+{_WRK_METRIC}\s+{_WRK_PERCENT}",
        "Req/Sec <avg> <stdev> <max> <percent>%",
    ),
    Item(
        "distribution",
        r"Latency Distribution",
        r"Latency Distribution(?: \(HdrHistogram - Recorded Latency\))?",
        "Latency Distribution",
        required=False,
        block=_wrk_distribution,
    ),
    Item(
        "requests",
        r"\S+ requests in ",
        rf"(\d+) requests in {_WRK_TIME}, {_WRK_SIZE} read",
        "<n> requests in <duration>, <size> read",
    ),
    Item(
        "socket_errors",
        r"Socket errors:",
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
        "Socket errors: connect <n>, read <n>, write <n>, timeout <n>",
        required=False,
    ),
    Item(
        "non_2xx",
        r"Non-2xx or 3xx responses:",
        r"Non-2xx or 3xx responses: (\d+)",
        "Non-2xx or 3xx responses: <n>",
        required=False,
    ),
    Item("rps", r"Requests/sec:", rf"Requests/sec:\s+({NUM})", "Requests/sec: <number>"),
    Item("transfer", r"Transfer/sec:", rf"Transfer/sec:\s+{_WRK_SIZE}", "Transfer/sec: <size>"),
]

_WRK2_ITEMS = [
    *_WRK_ITEMS[:2],
    Item(
        "calibration",
        r"Thread calibration:",
        rf"Thread calibration: mean lat\.: {NUM} ?(?:usec|ms), "
        rf"rate sampling interval: \d+ ?(?:msec|ms)",
        "Thread calibration: mean lat.: <time>, rate sampling interval: <time>",
        required=False,
    ),
    *_WRK_ITEMS[2:],
]


def _wrk_stopped(lines: list[str]) -> None:
    for number, line in enumerate(lines, 1):
        if line.startswith("unable to connect to "):
            raise LoadResultError(
                number,
                Phrase(
                    gettext_noop("wrk stopped before measuring: %(error)s"),
                    error=repr(line.strip()),
                ),
            )


def _wrk_step(found: dict, load: float, kind: str) -> StepResult:
    _, latency_line, _ = found["latency"]
    avg_v, avg_u, _, _, max_v, max_u, within = latency_line.groups()
    latency = {}
    # "+/- Stdev" is 0/0 = nan when wrk recorded no latency at all (every request timed out).
    if "nan" not in within:
        latency = {"avg": _wrk_ms(avg_v, avg_u), "max": _wrk_ms(max_v, max_u)}
        if "distribution" in found:
            latency.update(found["distribution"][2])
    requests, time_v, time_u = found["requests"][1].groups()[:3]
    errors = {}
    if "socket_errors" in found:
        errors = dict(
            zip(
                ("connect", "read", "write", "timeout"),
                map(int, found["socket_errors"][1].groups()),
                strict=True,
            )
        )
    if "non_2xx" in found:
        errors["non_2xx"] = int(found["non_2xx"][1].group(1))
    return make_step(
        load=load,
        kind=kind,
        duration=_wrk_ms(time_v, time_u) / 1000,
        requests=int(requests),
        rps=dec(found["rps"][1].group(1)),
        transfer=_wrk_bytes(*found["transfer"][1].groups()),
        latency=latency,
        errors=errors,
    )


def parse_wrk(text: str) -> list[StepResult]:
    """wrk's report, with or without --latency. Load: its connections."""
    lines = read_lines(text, "wrk")
    found = scan(lines, _WRK_ITEMS, _wrk_stopped)
    return [_wrk_step(found, int(found["threads"][1].group(2)), "concurrency")]


def parse_wrk2(text: str, *, rate: float | None = None) -> list[StepResult]:
    """wrk2's report, with or without --latency/--u_latency (the Recorded Latency section).

    wrk2 does not print its -R rate: pass `rate`, or keep the command line in the text
    (`wrk -t2 -c100 -d30s -R2000 ...`); without either, the load is the connections."""
    lines = read_lines(text, "wrk2")
    found = scan(lines, _WRK2_ITEMS, _wrk_stopped)
    if rate is None:
        option = command_option(lines, "wrk2?", "-R|--rate")
        if option:
            rate = dec(
                option.rstrip("kMG"), METRIC_SCALE[option[-1] if option[-1] in "kMG" else ""]
            )
    if rate is not None:
        return [_wrk_step(found, rate, "rate")]
    return [_wrk_step(found, int(found["threads"][1].group(2)), "concurrency")]
