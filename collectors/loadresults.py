"""Load-test results from wrk, wrk2, hey, ab, k6, JMeter and Locust: text in, ladder steps out.

Each parser is a pure function `parse_<format>(text) -> list[StepResult]`: one step for the
single-run tools, one per load level (ascending) for JMeter and Locust. A file it cannot read
is refused with LoadResultError naming the line (or the JSON key) and what was expected.
Times are milliseconds and transfer is bytes per second, converted from each tool's own units.
"""

import csv
import inspect
import io
import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

LATENCY_KEYS = ("avg", "p50", "p75", "p90", "p99", "max")
ERROR_KEYS = ("connect", "read", "write", "timeout", "non_2xx", "other")


class LoadResultError(ValueError):
    """A result file that cannot be read; `line` is 1-based, None when no line applies."""

    def __init__(self, line: int | None, message: str):
        super().__init__(f"line {line}: {message}" if line is not None else message)
        self.line = line
        self.message = message


@dataclass(frozen=True)
class StepResult:
    load: float  # concurrency, or a request rate for rate-driven tools (wrk2 -R)
    load_kind: str  # "concurrency" or "rate"
    duration_s: float | None
    requests: int
    rps: float
    transfer_bytes_per_s: float | None
    latency_ms: dict[str, float | None]  # keys exactly LATENCY_KEYS
    errors: dict[str, int]  # keys exactly ERROR_KEYS


def _step(load, kind, duration, requests, rps, transfer, latency, errors=None) -> StepResult:
    return StepResult(
        load=float(load),
        load_kind=kind,
        duration_s=None if duration is None else float(duration),
        requests=int(requests),
        rps=float(rps),
        transfer_bytes_per_s=None if transfer is None else float(transfer),
        latency_ms={key: latency.get(key) for key in LATENCY_KEYS},
        errors={key: int((errors or {}).get(key, 0)) for key in ERROR_KEYS},
    )


# --- reading text ------------------------------------------------------------------------

# Control characters no tool prints (tab, newline, carriage return and ESC are allowed), and
# the replacement character that undecodable bytes become.
_BINARY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
_NUM = r"\d+(?:\.\d+)?"


def _text(text, tool: str) -> str:
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            line = bytes(text)[: exc.start].count(b"\n") + 1
            raise LoadResultError(
                line, f"expected {tool} output as text, found binary data"
            ) from None
    if not isinstance(text, str):
        raise LoadResultError(None, f"expected {tool} output as text, found {type(text).__name__}")
    if not text.strip():
        raise LoadResultError(1, f"expected {tool} output, found an empty text")
    match = _BINARY.search(text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        raise LoadResultError(line, f"expected {tool} output as text, found binary data")
    return text


def _lines(text, tool: str) -> list[str]:
    lines = _text(text, tool).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def _show(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= 200 else line[:200] + "...")


def _dec(value: str, scale: str | int = 1) -> float:
    return float(Decimal(value) * Decimal(scale))


@dataclass(frozen=True)
class _Item:
    """One line of a tool's report, in the order the tool prints them."""

    key: str
    label: str  # a regex that recognises the line (matched at the start, line stripped)
    pattern: str  # a regex for the whole stripped line
    expected: str  # how the line should look, for messages
    required: bool = True
    block: Callable | None = None  # reads the lines under a heading: (lines, index) -> data


def _scan(lines: list[str], items: list[_Item], stopped: Callable | None = None) -> dict:
    """Find each item in order: {key: (line number, match, block data)}.

    Unknown lines between items are passed over (tools print progress, warnings, script
    output); a line that belongs to a later item means this one is missing."""
    labels = [re.compile(item.label) for item in items]
    found = {}
    position = 0
    for index, item in enumerate(items):
        at = position
        hit = None
        while at < len(lines):
            line = lines[at].strip()
            if labels[index].match(line):
                hit = at
                break
            if any(label.match(line) for label in labels[index + 1 :]):
                break
            at += 1
        if hit is None:
            if not item.required:
                continue
            if stopped is not None:
                stopped(lines)
            what = _show(lines[at]) if at < len(lines) else "the end of the output"
            raise LoadResultError(at + 1, f"expected '{item.expected}', found {what}")
        match = re.fullmatch(item.pattern, lines[hit].strip())
        if match is None:
            raise LoadResultError(hit + 1, f"expected '{item.expected}', found {_show(lines[hit])}")
        data, position = None, hit + 1
        if item.block is not None:
            data, position = item.block(lines, hit + 1)
        found[item.key] = (hit + 1, match, data)
    return found


def _rows(lines: list[str], start: int, label: str, pattern: str, expected: str):
    """The lines under a heading (blank lines before them skipped): each line that `label`
    recognises must match `pattern`; the first one it does not recognise ends them.
    Returns ([(line number, match)], index of the first line after them)."""
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    matches = []
    while at < len(lines) and re.match(label, lines[at].strip()):
        match = re.fullmatch(pattern, lines[at].strip())
        if match is None:
            raise LoadResultError(at + 1, f"expected '{expected}', found {_show(lines[at])}")
        matches.append((at + 1, match))
        at += 1
    return matches, at


def _rows_until(lines: list[str], start: int, pattern: str, expected: str, until: str):
    """Every non-blank line from `start` matches `pattern` up to one matching `until`,
    which must come. Returns the index of that line."""
    at = start
    while at < len(lines):
        line = lines[at].strip()
        if re.fullmatch(until, line):
            return at
        if line and re.fullmatch(pattern, line) is None:
            raise LoadResultError(at + 1, f"expected '{expected}', found {_show(line)}")
        at += 1
    raise LoadResultError(at + 1, f"expected '{expected}', found the end of the output")


def _percentile_rows(lines: list[str], start: int, percents: tuple, value: str, unit: str):
    """A tool's fixed list of percentile lines `<percent>% <value>`, one per percent, in order
    (blank lines before them skipped). Returns ([(line number, match)], index after them)."""
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    matches = []
    for percent in percents:
        expected = f"{percent}% {unit}"
        line = lines[at].strip() if at < len(lines) else None
        match = re.fullmatch(rf"({re.escape(percent)})%\s+{value}", line or "")
        if match is None:
            what = _show(line) if line is not None else "the end of the output"
            raise LoadResultError(at + 1, f"expected '{expected}', found {what}")
        matches.append((at + 1, match))
        at += 1
    return matches, at


def _next_line(lines: list[str], at: int, pattern: str, expected: str):
    """The next non-blank line from `at`, which must match: (match, index after it)."""
    while at < len(lines) and not lines[at].strip():
        at += 1
    line = lines[at].strip() if at < len(lines) else None
    match = re.fullmatch(pattern, line) if line is not None else None
    if match is None:
        what = _show(line) if line is not None else "the end of the output"
        raise LoadResultError(at + 1, f"expected '{expected}', found {what}")
    return match, at + 1


_PERCENTILE_KEYS = {50: "p50", 75: "p75", 90: "p90", 99: "p99"}


def _percentiles(rows, convert) -> dict[str, float]:
    """{p50: ...} from (line, match) rows whose groups are (percent, value...)."""
    latency = {}
    for _, match in rows:
        percent = Decimal(match.group(1))
        if percent == percent.to_integral() and int(percent) in _PERCENTILE_KEYS:
            latency[_PERCENTILE_KEYS[int(percent)]] = convert(*match.groups()[1:])
    return latency


def _command_option(lines: list[str], tool: str, options: str) -> str | None:
    """The value of an option on a command line kept with the output (`$ wrk -R2000 ...`)."""
    command = re.compile(rf"(?:\$\s*)?(?:\S*/)?{tool}\s")
    for line in lines:
        if command.match(line.strip()):
            match = re.search(rf"(?:^|\s)(?:{options})[= ]?\s*(\d+(?:\.\d+)?[kMG]?)(?=\s|$)", line)
            return match.group(1) if match else ""
    return None


# --- wrk and wrk2 ------------------------------------------------------------------------

_WRK_TIME = rf"({_NUM})(us|ms|s|m|h)"
_WRK_SIZE = rf"({_NUM})([KMGTP]?)B"
_WRK_METRIC = rf"{_NUM}[kMGT]?"
_WRK_PERCENT = rf"(?:-?nan|{_NUM})%"
_WRK2_PERCENTS = ("50.000", "75.000", "90.000", "99.000", "99.900", "99.990", "99.999", "100.000")
_WRK_TIME_MS = {"us": "0.001", "ms": "1", "s": "1000", "m": "60000", "h": "3600000"}
_BINARY_SCALE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
_METRIC_SCALE = {"": 1, "k": 1000, "M": 1000**2, "G": 1000**3}


def _wrk_ms(value: str, unit: str) -> float:
    return _dec(value, _WRK_TIME_MS[unit])


def _wrk_bytes(value: str, unit: str) -> float:
    return _dec(value, _BINARY_SCALE[unit])


def _wrk_distribution(lines: list[str], start: int):
    wrk2 = "HdrHistogram" in lines[start - 1]
    percents = _WRK2_PERCENTS if wrk2 else ("50", "75", "90", "99")
    rows, end = _percentile_rows(lines, start, percents, _WRK_TIME, "<time>")
    latency = _percentiles(rows, _wrk_ms)
    if not wrk2:
        return latency, end
    # wrk2: the full HdrHistogram spectrum follows, then its mean and max in milliseconds.
    _, at = _next_line(
        lines, end, r"Detailed Percentile spectrum:", "Detailed Percentile spectrum:"
    )
    _, at = _next_line(
        lines,
        at,
        r"Value\s+Percentile\s+TotalCount\s+1/\(1-Percentile\)",
        "Value   Percentile   TotalCount 1/(1-Percentile)",
    )
    at = _rows_until(
        lines,
        at,
        rf"{_NUM}\s+{_NUM}\s+\d+\s+(?:{_NUM}|inf)",
        "<value> <percentile> <total count> <1/(1-percentile)>' or '#[Mean = <ms>, ...]",
        until=r"#\[Mean.*",
    )
    mean, at = _next_line(
        lines,
        at,
        rf"#\[Mean\s*=\s*({_NUM}),\s*StdDeviation\s*=\s*{_NUM}\]",
        "#[Mean = <ms>, StdDeviation = <ms>]",
    )
    most, at = _next_line(
        lines,
        at,
        rf"#\[Max\s*=\s*({_NUM}),\s*Total count\s*=\s*\d+\]",
        "#[Max = <ms>, Total count = <n>]",
    )
    latency.update(avg=_dec(mean.group(1)), max=_dec(most.group(1)))
    return latency, at


_WRK_ITEMS = [
    _Item("running", r"Running\s", r"Running \S+ test @ \S+", "Running <duration> test @ <url>"),
    _Item(
        "threads",
        r"\S+ threads and ",
        r"(\d+) threads and (\d+) connections",
        "<n> threads and <n> connections",
    ),
    _Item(
        "stats",
        r"Thread Stats\s",
        r"Thread Stats\s+Avg\s+Stdev\s+Max\s+\+/- Stdev",
        "Thread Stats   Avg      Stdev     Max   +/- Stdev",
    ),
    _Item(
        "latency",
        r"Latency(?!\s+Distribution)\s",
        rf"Latency\s+{_WRK_TIME}\s+{_WRK_TIME}\s+{_WRK_TIME}\s+({_WRK_PERCENT})",
        "Latency <avg> <stdev> <max> <percent>%",
    ),
    _Item(
        "req_sec",
        r"Req/Sec\s",
        rf"Req/Sec\s+{_WRK_METRIC}\s+{_WRK_METRIC}\s+{_WRK_METRIC}\s+{_WRK_PERCENT}",
        "Req/Sec <avg> <stdev> <max> <percent>%",
    ),
    _Item(
        "distribution",
        r"Latency Distribution",
        r"Latency Distribution(?: \(HdrHistogram - Recorded Latency\))?",
        "Latency Distribution",
        required=False,
        block=_wrk_distribution,
    ),
    _Item(
        "requests",
        r"\S+ requests in ",
        rf"(\d+) requests in {_WRK_TIME}, {_WRK_SIZE} read",
        "<n> requests in <duration>, <size> read",
    ),
    _Item(
        "socket_errors",
        r"Socket errors:",
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)",
        "Socket errors: connect <n>, read <n>, write <n>, timeout <n>",
        required=False,
    ),
    _Item(
        "non_2xx",
        r"Non-2xx or 3xx responses:",
        r"Non-2xx or 3xx responses: (\d+)",
        "Non-2xx or 3xx responses: <n>",
        required=False,
    ),
    _Item("rps", r"Requests/sec:", rf"Requests/sec:\s+({_NUM})", "Requests/sec: <number>"),
    _Item("transfer", r"Transfer/sec:", rf"Transfer/sec:\s+{_WRK_SIZE}", "Transfer/sec: <size>"),
]

_WRK2_ITEMS = [
    *_WRK_ITEMS[:2],
    _Item(
        "calibration",
        r"Thread calibration:",
        rf"Thread calibration: mean lat\.: {_NUM} ?(?:usec|ms), "
        rf"rate sampling interval: \d+ ?(?:msec|ms)",
        "Thread calibration: mean lat.: <time>, rate sampling interval: <time>",
        required=False,
    ),
    *_WRK_ITEMS[2:],
]


def _wrk_stopped(lines: list[str]) -> None:
    for number, line in enumerate(lines, 1):
        if line.startswith("unable to connect to "):
            raise LoadResultError(number, f"wrk stopped before measuring: {line.strip()!r}")


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
    return _step(
        load=load,
        kind=kind,
        duration=_wrk_ms(time_v, time_u) / 1000,
        requests=int(requests),
        rps=_dec(found["rps"][1].group(1)),
        transfer=_wrk_bytes(*found["transfer"][1].groups()),
        latency=latency,
        errors=errors,
    )


def parse_wrk(text: str) -> list[StepResult]:
    """wrk's report, with or without --latency. Load: its connections."""
    lines = _lines(text, "wrk")
    found = _scan(lines, _WRK_ITEMS, _wrk_stopped)
    return [_wrk_step(found, int(found["threads"][1].group(2)), "concurrency")]


def parse_wrk2(text: str, *, rate: float | None = None) -> list[StepResult]:
    """wrk2's report, with or without --latency/--u_latency (the Recorded Latency section).

    wrk2 does not print its -R rate: pass `rate`, or keep the command line in the text
    (`wrk -t2 -c100 -d30s -R2000 ...`); without either, the load is the connections."""
    lines = _lines(text, "wrk2")
    found = _scan(lines, _WRK2_ITEMS, _wrk_stopped)
    if rate is None:
        option = _command_option(lines, "wrk2?", "-R|--rate")
        if option:
            rate = _dec(
                option.rstrip("kMG"), _METRIC_SCALE[option[-1] if option[-1] in "kMG" else ""]
            )
    if rate is not None:
        return [_wrk_step(found, rate, "rate")]
    return [_wrk_step(found, int(found["threads"][1].group(2)), "concurrency")]


# --- hey ---------------------------------------------------------------------------------

_HEY_SECS = rf"(NaN|{_NUM}) secs"


def _hey_block(label: str, pattern: str, expected: str):
    return lambda lines, start: _rows(lines, start, label, pattern, expected)


def _hey_distribution(lines: list[str], start: int):
    # Empty when no request got a response; otherwise hey's fixed percentiles.
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at == len(lines) or not re.match(r"\S+% in", lines[at].strip()):
        return [], start
    return _percentile_rows(
        lines,
        at,
        ("10", "25", "50", "75", "90", "95", "99"),
        rf"in ({_NUM}) secs",
        "in <seconds> secs",
    )


_HEY_ITEMS = [
    _Item("summary", r"Summary:", r"Summary:", "Summary:"),
    _Item("total", r"Total:", rf"Total:\s+{_HEY_SECS}", "Total: <seconds> secs"),
    _Item("slowest", r"Slowest:", rf"Slowest:\s+{_HEY_SECS}", "Slowest: <seconds> secs"),
    _Item("fastest", r"Fastest:", rf"Fastest:\s+{_HEY_SECS}", "Fastest: <seconds> secs"),
    _Item("average", r"Average:", rf"Average:\s+{_HEY_SECS}", "Average: <seconds> secs"),
    _Item("rps", r"Requests/sec:", rf"Requests/sec:\s+({_NUM})", "Requests/sec: <number>"),
    _Item(
        "data",
        r"Total data:",
        r"Total data:\s+(\d+) bytes",
        "Total data: <n> bytes",
        required=False,
    ),
    _Item(
        "histogram",
        r"Response time histogram:",
        r"Response time histogram:",
        "Response time histogram:",
        block=_hey_block(r"\S+\s+\[", rf"{_NUM} \[\d+\]\s*\|■*", "<seconds> [<n>] |■■■"),
    ),
    _Item(
        "distribution",
        r"Latency distribution:",
        r"Latency distribution:",
        "Latency distribution:",
        block=_hey_distribution,
    ),
    _Item(
        "details",
        r"Details \(",
        r"Details \(average, fastest, slowest\):",
        "Details (average, fastest, slowest):",
        required=False,
    ),
    _Item(
        "status",
        r"Status code distribution:",
        r"Status code distribution:",
        "Status code distribution:",
        block=_hey_block(r"\[", r"\[(\d+)\]\s+(\d+) responses", "[<code>] <n> responses"),
    ),
    _Item(
        "errors",
        r"Error distribution:",
        r"Error distribution:",
        "Error distribution:",
        required=False,
        block=_hey_block(r"\[", r"\[(\d+)\]\s+(.+)", "[<n>] <error>"),
    ),
]


def _client_error_kind(message: str) -> str:
    """Go's net/http error texts (hey, k6) by what failed."""
    lowered = message.lower()
    if "timeout" in lowered or "deadline exceeded" in lowered:
        return "timeout"
    if "dial tcp" in lowered or "connect:" in lowered or "no such host" in lowered:
        return "connect"
    if "broken pipe" in lowered or "write:" in lowered:
        return "write"
    if "reset by peer" in lowered or "eof" in lowered or "read:" in lowered:
        return "read"
    return "other"


def parse_hey(text: str, *, concurrency: int | None = None) -> list[StepResult]:
    """hey's report. hey does not print its -c: pass `concurrency`, or keep the command line
    in the text (`hey -c 10 ...`; 50, hey's default, when it has no -c).

    Requests are responses plus errors, as hey's Requests/sec counts them."""
    lines = _lines(text, "hey")
    found = _scan(lines, _HEY_ITEMS)
    if concurrency is None:
        option = _command_option(lines, "hey", "-c")
        if option is None:
            raise LoadResultError(
                None,
                "hey does not print its concurrency: pass concurrency= (hey -c) "
                "or keep the hey command line in the text",
            )
        concurrency = int(option) if option else 50
    statuses = {int(m.group(1)): int(m.group(2)) for _, m in found["status"][2]}
    errors = {"non_2xx": sum(n for code, n in statuses.items() if not 200 <= code <= 299)}
    for _, match in found.get("errors", (None, None, []))[2]:
        kind = _client_error_kind(match.group(2))
        errors[kind] = errors.get(kind, 0) + int(match.group(1))
    requests = sum(statuses.values()) + sum(v for k, v in errors.items() if k != "non_2xx")
    total = found["total"][1].group(1)
    duration = None if total == "NaN" else float(total)
    latency = {}
    if sum(statuses.values()) and not found["distribution"][2]:
        # Responses came back, so hey printed its percentiles: a line is broken or missing.
        _next_line(lines, found["distribution"][0], r"(?!)", "10% in <seconds> secs")
    if sum(statuses.values()) and found["average"][1].group(1) != "NaN":
        latency = _percentiles(found["distribution"][2], lambda secs: _dec(secs, 1000))
        latency["avg"] = _dec(found["average"][1].group(1), 1000)
        latency["max"] = _dec(found["slowest"][1].group(1), 1000)
    # hey prints "Total data" only when some bytes came back.
    data = int(found["data"][1].group(1)) if "data" in found else 0
    return [
        _step(
            load=concurrency,
            kind="concurrency",
            duration=duration,
            requests=requests,
            rps=float(found["rps"][1].group(1)),
            transfer=data / duration if duration else None,
            latency=latency,
            errors=errors,
        )
    ]


# --- ab ----------------------------------------------------------------------------------

_AB_ITEMS = [
    _Item(
        "concurrency",
        r"Concurrency Level:",
        r"Concurrency Level:\s+(\d+)",
        "Concurrency Level: <n>",
    ),
    _Item(
        "time",
        r"Time taken for tests:",
        rf"Time taken for tests:\s+({_NUM}) seconds",
        "Time taken for tests: <seconds> seconds",
    ),
    _Item(
        "complete", r"Complete requests:", r"Complete requests:\s+(\d+)", "Complete requests: <n>"
    ),
    _Item("failed", r"Failed requests:", r"Failed requests:\s+(\d+)", "Failed requests: <n>"),
    _Item(
        "failed_kinds",
        r"\(Connect:",
        r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)",
        "(Connect: <n>, Receive: <n>, Length: <n>, Exceptions: <n>)",
        required=False,
    ),
    _Item("write", r"Write errors:", r"Write errors:\s+(\d+)", "Write errors: <n>", required=False),
    _Item(
        "non_2xx",
        r"Non-2xx responses:",
        r"Non-2xx responses:\s+(\d+)",
        "Non-2xx responses: <n>",
        required=False,
    ),
    _Item(
        "rps",
        r"Requests per second:",
        rf"Requests per second:\s+({_NUM}) \[#/sec\] \(mean\)",
        "Requests per second: <number> [#/sec] (mean)",
    ),
    _Item(
        "transfer",
        r"Transfer rate:",
        rf"Transfer rate:\s+({_NUM}) \[Kbytes/sec\] received",
        "Transfer rate: <number> [Kbytes/sec] received",
    ),
    _Item(
        "total",
        r"Total:",
        r"Total:\s+(\d+)\s+(\d+)(?:\s+" + _NUM + r"\s+\d+)?\s+(\d+)",
        "Total: <min> <mean> [<sd> <median>] <max>",
        required=False,
    ),
    _Item(
        "percentages",
        r"Percentage of the requests served",
        r"Percentage of the requests served within a certain time \(ms\)",
        "Percentage of the requests served within a certain time (ms)",
        required=False,
        block=lambda lines, start: _percentile_rows(
            lines,
            start,
            ("50", "66", "75", "80", "90", "95", "98", "99", "100"),
            r"(\d+)(?: \(longest request\))?",
            "<ms>",
        ),
    ),
]


def _ab_stopped(lines: list[str]) -> None:
    for number, line in enumerate(lines, 1):
        match = re.search(r"(apr_\w+: .+)$", line)
        if match:
            raise LoadResultError(number, f"ab stopped before its results: {match.group(1)!r}")


def parse_ab(text: str) -> list[StepResult]:
    """ApacheBench's report. Latencies are ab's whole milliseconds: the Connection Times
    "Total" mean and the percentage table (100% is the longest request)."""
    lines = _lines(text, "ab")
    found = _scan(lines, _AB_ITEMS, _ab_stopped)
    errors = {}
    if "failed_kinds" in found:
        connect, receive, length, exceptions = map(int, found["failed_kinds"][1].groups())
        errors = {"connect": connect, "read": receive, "other": length + exceptions}
    if "write" in found:
        errors["write"] = int(found["write"][1].group(1))
    if "non_2xx" in found:
        errors["non_2xx"] = int(found["non_2xx"][1].group(1))
    latency = {}
    if "total" in found:
        _, mean, longest = found["total"][1].groups()
        latency = {"avg": float(mean), "max": float(longest)}
    if "percentages" in found:
        rows = found["percentages"][2]
        latency.update(_percentiles(rows, float))
        for _, match in rows:
            if match.group(1) == "100":
                latency["max"] = float(match.group(2))
    return [
        _step(
            load=int(found["concurrency"][1].group(1)),
            kind="concurrency",
            duration=_dec(found["time"][1].group(1)),
            requests=int(found["complete"][1].group(1)),
            rps=_dec(found["rps"][1].group(1)),
            transfer=_dec(found["transfer"][1].group(1), 1024),
            latency=latency,
            errors=errors,
        )
    ]


# --- k6 ----------------------------------------------------------------------------------


def _k6_number(metric: dict, name: str, stat: str, required: bool = True):
    value = metric.get(stat)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        found = "no such key" if value is None else repr(value)
        raise LoadResultError(None, f"metrics.{name}.{stat}: expected a number, found {found}")
    return value


def parse_k6_json(text: str) -> list[StepResult]:
    """k6's JSON summary: `k6 run --summary-export=FILE` or handleSummary's
    `JSON.stringify(data)`. p50 is k6's med; p75 and p99 only when the run asked for them
    (--summary-trend-stats). Failed requests (http_req_failed) are errors of kind "other":
    k6 does not say why they failed."""
    source = _text(text, "k6 JSON summary")
    try:
        data = json.loads(source)
    except json.JSONDecodeError as exc:
        raise LoadResultError(
            exc.lineno,
            f"expected a k6 JSON summary, found invalid JSON at column {exc.colno}: {exc.msg}",
        ) from None
    except RecursionError:
        raise LoadResultError(
            1, "expected a k6 JSON summary, found JSON nested too deep to read"
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        found = "no 'metrics' object" if isinstance(data, dict) else f"a JSON {type(data).__name__}"
        raise LoadResultError(
            None, f"metrics: expected a k6 summary with a 'metrics' object, found {found}"
        )

    def metric(name: str, required: bool = True) -> dict | None:
        value = data["metrics"].get(name)
        if value is None and not required:
            return None
        if not isinstance(value, dict):
            raise LoadResultError(
                None,
                f"metrics.{name}: expected the k6 metric {name}, "
                f"found {'no such key' if value is None else repr(value)}",
            )
        # handleSummary nests the statistics under "values"; --summary-export does not.
        if "values" in value:
            if not isinstance(value["values"], dict):
                raise LoadResultError(
                    None, f"metrics.{name}.values: expected an object, found {value['values']!r}"
                )
            return value["values"]
        return value

    reqs, duration = metric("http_reqs"), metric("http_req_duration")
    count, rate = _k6_number(reqs, "http_reqs", "count"), _k6_number(reqs, "http_reqs", "rate")
    latency = {
        "avg": _k6_number(duration, "http_req_duration", "avg"),
        "p50": _k6_number(duration, "http_req_duration", "med"),
        "max": _k6_number(duration, "http_req_duration", "max"),
    }
    for key, stat in (("p75", "p(75)"), ("p90", "p(90)"), ("p99", "p(99)")):
        latency[key] = _k6_number(duration, "http_req_duration", stat, required=False)
    failed = metric("http_req_failed", required=False)
    errors = {"other": _k6_number(failed, "http_req_failed", "passes")} if failed else {}
    received = metric("data_received", required=False)
    load = None
    for name in ("vus", "vus_max"):
        values = metric(name, required=False)
        if values is not None:
            load = _k6_number(values, name, "max", required=False) or _k6_number(
                values, name, "value"
            )
            break
    if load is None:
        raise LoadResultError(
            None, "metrics.vus: expected the k6 metric vus or vus_max, found neither"
        )
    state = data.get("state")
    seconds = None
    if isinstance(state, dict) and "testRunDurationMs" in state:
        seconds = _k6_number(state, "state", "testRunDurationMs") / 1000
    elif rate:
        # --summary-export has no state: k6's rate is count / test duration.
        seconds = count / rate
    return [
        _step(
            load=load,
            kind="concurrency",
            duration=seconds,
            requests=count,
            rps=rate,
            transfer=_k6_number(received, "data_received", "rate") if received else None,
            latency=latency,
            errors=errors,
        )
    ]


_K6_METRIC = re.compile(r"(?:[✓✗]\s+)?([a-z_][a-z0-9_]*)\s*\.{2,}:\s*(.*)")
_K6_DURATION_PART = re.compile(rf"({_NUM})(h|ms|m|s|µs|us|ns)")
_K6_DURATION_MS = {
    "h": 3600000,
    "m": 60000,
    "s": 1000,
    "ms": 1,
    "µs": "0.001",
    "us": "0.001",
    "ns": "0.000001",
}
_K6_DURATION = rf"(?:{_NUM}(?:h|ms|m|s|µs|us|ns))+"
_K6_BYTES = {"B": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5}
_K6_LINES = {
    "http_reqs": (rf"(\d+)\s+({_NUM})/s", "http_reqs....: <count> <rate>/s"),
    "http_req_duration": (
        rf"(?:[a-z0-9().]+=(?:{_K6_DURATION})\s*)+",
        "http_req_duration....: avg=<duration> min=<duration> med=<duration> max=<duration> ...",
    ),
    "http_req_failed": (
        rf"{_NUM}%\s+(?:(\d+) out of (\d+)|✓ (\d+)\s+✗ (\d+))",
        "http_req_failed....: <percent>% <n> out of <n>",
    ),
    "data_received": (
        rf"{_NUM} (?:B|kB|MB|GB|TB|PB)\s+({_NUM}) (B|kB|MB|GB|TB|PB)/s",
        "data_received....: <size> <size>/s",
    ),
    "vus": (r"\d+\s+min=\d+\s+max=(\d+)", "vus....: <n> min=<n> max=<n>"),
    "vus_max": (r"\d+\s+min=\d+\s+max=(\d+)", "vus_max....: <n> min=<n> max=<n>"),
}


def _k6_ms(value: str) -> float:
    total = Decimal(0)
    for number, unit in _K6_DURATION_PART.findall(value):
        total += Decimal(number) * Decimal(_K6_DURATION_MS[unit])
    return float(total)


def parse_k6_text(text: str) -> list[StepResult]:
    """k6's end-of-test summary on stdout: the default one of k6 1.x and the legacy one
    (--summary-mode=legacy, and every k6 before 1.0). The duration is the last progress
    line's `running (...)`, when stdout kept it."""
    lines = _lines(text, "k6")
    metrics = {}
    for number, line in enumerate(lines, 1):
        match = _K6_METRIC.fullmatch(line.strip())
        if match and match.group(1) in _K6_LINES:
            pattern, expected = _K6_LINES[match.group(1)]
            value = re.fullmatch(pattern, match.group(2).strip())
            if value is None:
                raise LoadResultError(number, f"expected '{expected}', found {_show(line)}")
            metrics.setdefault(match.group(1), value)
    for name in ("http_reqs", "http_req_duration"):
        if name not in metrics:
            raise LoadResultError(
                len(lines) + 1, f"expected '{_K6_LINES[name][1]}', found the end of the output"
            )
    if "vus" not in metrics and "vus_max" not in metrics:
        raise LoadResultError(
            len(lines) + 1, f"expected '{_K6_LINES['vus'][1]}', found the end of the output"
        )
    stats = dict(
        re.findall(rf"([a-z0-9().]+)=({_K6_DURATION})", metrics["http_req_duration"].group(0))
    )
    latency = {
        key: _k6_ms(stats[stat]) if stat in stats else None
        for key, stat in (
            ("avg", "avg"),
            ("p50", "med"),
            ("p75", "p(75)"),
            ("p90", "p(90)"),
            ("p99", "p(99)"),
            ("max", "max"),
        )
    }
    errors = {}
    if "http_req_failed" in metrics:
        failed = metrics["http_req_failed"]
        errors["other"] = int(failed.group(1) if failed.group(1) is not None else failed.group(3))
    transfer = None
    if "data_received" in metrics:
        transfer = _dec(
            metrics["data_received"].group(1), _K6_BYTES[metrics["data_received"].group(2)]
        )
    duration = None
    for line in lines:
        match = re.match(r"\s*running \((?:(\d+)h)?(?:(\d+)m)?(" + _NUM + r")s\)", line)
        if match:
            hours, minutes, seconds = match.groups()
            duration = float(int(hours or 0) * 3600 + int(minutes or 0) * 60 + Decimal(seconds))
    return [
        _step(
            load=int((metrics.get("vus") or metrics["vus_max"]).group(1)),
            kind="concurrency",
            duration=duration,
            requests=int(metrics["http_reqs"].group(1)),
            rps=float(metrics["http_reqs"].group(2)),
            transfer=transfer,
            latency=latency,
            errors=errors,
        )
    ]


# --- CSV: JMeter and Locust --------------------------------------------------------------


def _csv(text, tool: str, required: tuple[str, ...], hint: str = ""):
    """(header, [(line number, {column: value})]) of a CSV file whose header names `required`."""
    source = _text(text, tool)
    reader = csv.reader(io.StringIO(source, newline=""))
    try:
        header = next(reader)
        missing = [name for name in required if name not in header]
        if missing:
            # Name only what is missing when the header is otherwise the tool's.
            wanted = required if len(missing) == len(required) else missing
            columns = "column" if len(wanted) == 1 else "columns"
            raise LoadResultError(
                1,
                f"expected a {tool} CSV header with the {columns} {', '.join(wanted)}{hint}, "
                f"found {_show(source.split(chr(10), 1)[0])}",
            )
        rows = []
        for row in reader:
            if not row or row == [""]:
                continue
            if len(row) != len(header):
                raise LoadResultError(
                    reader.line_num,
                    f"expected {len(header)} fields as the header names, found {len(row)}",
                )
            rows.append((reader.line_num, dict(zip(header, row, strict=True))))
    except csv.Error as exc:
        raise LoadResultError(
            reader.line_num, f"expected {tool} CSV, found a malformed line ({exc})"
        ) from None
    if not rows:
        raise LoadResultError(
            2, f"expected {tool} CSV rows under the header, found the end of the file"
        )
    return header, rows


def _cell(line: int, row: dict, column: str, kind: type = int, expected: str = "a number"):
    value = row[column].strip()
    try:
        return kind(value) if kind is not float else float(Decimal(value))
    except (ValueError, ArithmeticError):
        raise LoadResultError(
            line, f"expected {expected} in column {column!r}, found {value!r}"
        ) from None


def _jmeter_percentile(ordered: list[int], fraction: float) -> float:
    # JMeter's Aggregate Report (org.apache.jorphan.math.StatCalculator.getPercentPoint): the
    # value at rank round(n * p), Java's Math.round rounding halves up.
    rank = math.floor(len(ordered) * fraction + 0.5)
    return float(ordered[max(rank, 1) - 1])


def _jmeter_error(code: str, message: str, success: bool) -> str | None:
    if code.isdigit():
        return "non_2xx" if not 200 <= int(code) <= 299 else (None if success else "other")
    if success:
        return None
    text = f"{code} {message}"
    if re.search(
        r"Connect(?:Timeout)?Exception|HttpHostConnect|NoRouteToHost|UnknownHost|connect timed out",
        text,
    ):
        return "connect"
    if "Broken pipe" in text:
        return "write"
    if "SocketTimeoutException" in text or "timed out" in text:
        return "timeout"
    if re.search(
        r"NoHttpResponse|Connection reset|ConnectionClosed|TruncatedChunk|EOFException", text
    ):
        return "read"
    return "other"


_JMETER_REQUIRED = ("timeStamp", "elapsed", "responseCode", "success", "allThreads")


def parse_jmeter_csv(text: str) -> list[StepResult]:
    """A JMeter CSV results file (JTL) with its header line, one step per active-thread count
    (allThreads), in ascending order.

    A step's time is the sum of the spans of its runs of consecutive samples (in start-time
    order), so threads starting or stopping do not stretch another step; they show as small
    steps of their own. Requests are samples; latencies are over all samples, percentiles as
    JMeter's Aggregate Report computes them; transfer is the bytes column over that time."""
    hint = " (save it with jmeter.save.saveservice.print_field_names=true)"
    header, rows = _csv(text, "JMeter", _JMETER_REQUIRED, hint)
    samples = []
    for line, row in rows:
        success = row["success"].strip().lower()
        if success not in ("true", "false"):
            raise LoadResultError(
                line, f"expected true or false in column 'success', found {row['success']!r}"
            )
        samples.append(
            (
                _cell(line, row, "timeStamp", expected="a time stamp in milliseconds"),
                _cell(line, row, "elapsed"),
                _cell(line, row, "allThreads"),
                _jmeter_error(
                    row["responseCode"].strip(), row.get("responseMessage", ""), success == "true"
                ),
                _cell(line, row, "bytes") if "bytes" in header else 0,
            )
        )
    samples.sort(key=lambda sample: sample[0])
    levels: dict[int, dict] = {}
    run: list = []
    for index, sample in enumerate(samples):
        run.append(sample)
        if index + 1 == len(samples) or samples[index + 1][2] != sample[2]:
            level = levels.setdefault(sample[2], {"span_ms": 0, "samples": []})
            # JMeter's clock ticks in milliseconds: a run that took "0 ms" took under one.
            level["span_ms"] += max(max(s[0] + s[1] for s in run) - min(s[0] for s in run), 1)
            level["samples"].extend(run)
            run = []
    steps = []
    for threads in sorted(levels):
        level = levels[threads]
        elapsed = sorted(sample[1] for sample in level["samples"])
        errors: dict[str, int] = {}
        for sample in level["samples"]:
            if sample[3]:
                errors[sample[3]] = errors.get(sample[3], 0) + 1
        seconds = level["span_ms"] / 1000
        latency = {key: _jmeter_percentile(elapsed, p / 100) for p, key in _PERCENTILE_KEYS.items()}
        latency.update(avg=sum(elapsed) / len(elapsed), max=float(elapsed[-1]))
        steps.append(
            _step(
                load=threads,
                kind="concurrency",
                duration=seconds,
                requests=len(elapsed),
                rps=len(elapsed) / seconds,
                transfer=sum(s[4] for s in level["samples"]) / seconds
                if "bytes" in header
                else None,
                latency=latency,
                errors=errors,
            )
        )
    return steps


_LOCUST_PERCENTILES = {"50%": "p50", "75%": "p75", "90%": "p90", "99%": "p99"}
_LOCUST_REQUIRED = (
    "Timestamp",
    "User Count",
    "Name",
    "Total Request Count",
    "Total Failure Count",
    "Total Average Response Time",
    *_LOCUST_PERCENTILES,
    "100%",
)


def parse_locust_csv(text: str) -> list[StepResult]:
    """Locust's `<prefix>_stats_history.csv` (its "Aggregated" rows), one step per user count
    in ascending order: a ladder run with a LoadTestShape.

    A step is every one-second interval between two rows with the same user count; the
    intervals where the count changed are left out, and so is a count never held for one.
    Requests, failures (errors of kind "other": the file does not say why), the average
    latency and the transfer (Locust's content size) come from the cumulative "Total" columns.
    Percentiles are those of the step's last row, which Locust takes over its last 10 s (its
    CURRENT_RESPONSE_TIME_PERCENTILE_WINDOW): steps should be longer than that. The max is that
    row's "100%", or the run's "Total Max Response Time" when the step set it."""
    header, rows = _csv(text, "Locust stats history", _LOCUST_REQUIRED)
    history = []
    for line, row in rows:
        if row["Name"] != "Aggregated":
            continue
        record = {
            "line": line,
            "time": _cell(line, row, "Timestamp", expected="a Unix time in seconds"),
            "users": _cell(line, row, "User Count"),
            "total": _cell(line, row, "Total Request Count"),
            "failures": _cell(line, row, "Total Failure Count"),
            "avg": _cell(line, row, "Total Average Response Time", float),
            "max": _cell(line, row, "Total Max Response Time", float)
            if "Total Max Response Time" in header
            else None,
            "size": _cell(line, row, "Total Average Content Size", float)
            if "Total Average Content Size" in header
            else None,
        }
        for column in (*_LOCUST_PERCENTILES, "100%"):
            na = row[column].strip() == "N/A"
            record[column] = None if na else _cell(line, row, column, float, "a number or N/A")
        history.append(record)
    if not history:
        raise LoadResultError(2, "expected rows named 'Aggregated', found none")
    levels: dict[int, list] = {}
    for before, after in zip(history, history[1:], strict=False):
        if (
            before["users"] == after["users"]
            and after["users"] > 0
            and after["time"] > before["time"]
        ):
            levels.setdefault(after["users"], []).append((before, after))
    if not levels:
        raise LoadResultError(
            None, "expected a user count held for two consecutive 'Aggregated' rows, found none"
        )
    steps = []
    for users in sorted(levels):
        intervals = levels[users]
        seconds = sum(after["time"] - before["time"] for before, after in intervals)
        requests = sum(after["total"] - before["total"] for before, after in intervals)
        failures = sum(after["failures"] - before["failures"] for before, after in intervals)
        last = intervals[-1][1]
        latency = {key: last[column] for column, key in _LOCUST_PERCENTILES.items()}
        latency["max"] = last["100%"]
        records = [
            after["max"]
            for before, after in intervals
            if after["max"] is not None and after["max"] > before["max"]
        ]
        if records and (latency["max"] is None or max(records) > latency["max"]):
            latency["max"] = max(records)
        latency["avg"] = (
            sum(a["avg"] * a["total"] - b["avg"] * b["total"] for b, a in intervals) / requests
            if requests
            else None
        )
        transfer = None
        if last["size"] is not None:
            received = sum(a["size"] * a["total"] - b["size"] * b["total"] for b, a in intervals)
            transfer = received / seconds
        steps.append(
            _step(
                load=users,
                kind="concurrency",
                duration=seconds,
                requests=requests,
                rps=requests / seconds,
                transfer=transfer,
                latency=latency,
                errors={"other": failures},
            )
        )
    return steps


FORMATS: dict[str, Callable[..., list[StepResult]]] = {
    "wrk": parse_wrk,
    "wrk2": parse_wrk2,
    "hey": parse_hey,
    "ab": parse_ab,
    "k6-json": parse_k6_json,
    "k6-text": parse_k6_text,
    "jmeter-csv": parse_jmeter_csv,
    "locust-csv": parse_locust_csv,
}


def parse(format: str, text: str, **options) -> list[StepResult]:
    """The steps of a result file in `format` (a key of FORMATS). Options go to the parser:
    `rate` for wrk2, `concurrency` for hey."""
    parser = FORMATS.get(format)
    if parser is None:
        raise LoadResultError(
            None, f"unknown format {format!r}: expected one of {', '.join(FORMATS)}"
        )
    accepted = [
        p.name for p in inspect.signature(parser).parameters.values() if p.kind == p.KEYWORD_ONLY
    ]
    unknown = [name for name in options if name not in accepted]
    if unknown:
        takes = f"only {', '.join(accepted)}" if accepted else "no options"
        raise LoadResultError(None, f"{format} takes {takes}, not {', '.join(unknown)}")
    return parser(text, **options)
