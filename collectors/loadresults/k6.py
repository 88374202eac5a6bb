"""k6's JSON summary (--summary-export, handleSummary) and its text summary."""

import math
import re
from decimal import Decimal

from collectors.jsontext import JsonRefused, read_json
from collectors.loadresults.base import (
    END_OF_OUTPUT,
    NUM,
    TIME_MS,
    LoadResultError,
    StepResult,
    dec,
    expected_found,
    make_step,
    read_lines,
    read_text,
    shown,
)
from collectors.phrase import Phrase, gettext_noop

NO_SUCH_KEY = Phrase(gettext_noop("no such key"))


def _k6_number(metric: dict, name: str, stat: str, required: bool = True):
    value = metric.get(stat)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        found = NO_SUCH_KEY if value is None else repr(value)
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop("%(key)s: expected a number, found %(found)s"),
                key=f"metrics.{name}.{stat}",
                found=found,
            ),
        )
    return value


def parse_k6_json(text: str | bytes, *, concurrency: int | None = None) -> list[StepResult]:
    """k6's JSON summary: `k6 run --summary-export=FILE` or handleSummary's
    `JSON.stringify(data)`. p50 is k6's med; p75 and p99 only when the run asked for them
    (--summary-trend-stats). Failed requests (http_req_failed) are errors of kind "other":
    k6 does not say why they failed. The load is the vus metric's max; a run shorter than
    k6's first sample of it (about a second) has none: then `concurrency` (the script's
    VUs) is the load, as hey's -c is for hey."""
    source = read_text(text, "k6 JSON summary")
    try:
        data = read_json(source)
    except JsonRefused as error:
        found = error.phrase
        if error.syntax and error.column:
            found = Phrase(
                gettext_noop("invalid JSON at column %(column)s: %(error)s"),
                column=error.column,
                error=error.reason,
            )
        raise LoadResultError(
            error.line,
            Phrase(gettext_noop("expected a k6 JSON summary, found %(found)s"), found=found),
        ) from None
    if not isinstance(data, dict) or not isinstance(data.get("metrics"), dict):
        found = (
            Phrase(gettext_noop("no 'metrics' object"))
            if isinstance(data, dict)
            else Phrase(gettext_noop("a JSON %(type)s"), type=type(data).__name__)
        )
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop(
                    "metrics: expected a k6 summary with a 'metrics' object, found %(found)s"
                ),
                found=found,
            ),
        )

    def metric(name: str, required: bool = True) -> dict | None:
        value = data["metrics"].get(name)
        if value is None and not required:
            return None
        if not isinstance(value, dict):
            raise LoadResultError(
                None,
                Phrase(
                    gettext_noop("%(key)s: expected the k6 metric %(name)s, found %(found)s"),
                    key=f"metrics.{name}",
                    name=name,
                    found=NO_SUCH_KEY if value is None else repr(value),
                ),
            )
        # handleSummary nests the statistics under "values"; --summary-export does not.
        if "values" in value:
            if not isinstance(value["values"], dict):
                raise LoadResultError(
                    None,
                    Phrase(
                        gettext_noop("%(key)s: expected an object, found %(found)s"),
                        key=f"metrics.{name}.values",
                        found=repr(value["values"]),
                    ),
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
    if load is not None and concurrency is not None:
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop(
                    "metrics.vus: the summary states its own load (%(vus)s VUs): give no load"
                ),
                vus=f"{load:g}",
            ),
        )
    if load is None:
        load = concurrency
    if load is None:
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop(
                    "metrics.vus: expected the k6 metric vus or vus_max, found neither (k6 "
                    "samples them once a second: a shorter run has none; give its VUs as the "
                    "load)"
                )
            ),
        )
    state = data.get("state")
    seconds = None
    if isinstance(state, dict) and "testRunDurationMs" in state:
        seconds = _k6_number(state, "state", "testRunDurationMs") / 1000
    elif rate:
        # --summary-export has no state: k6's rate is count / test duration.
        seconds = count / rate
    return [
        make_step(
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


# Anchored, and a number starts where no digit is before it: a search from every position of
# a long run would be quadratic.
_K6_METRIC = re.compile(r"^(?:[✓✗]\s+)?([a-z_][a-z0-9_]*)\s*\.{2,}:\s*(.*)")
_K6_DURATION_PART = re.compile(rf"(?<![\d.])({NUM})(h|ms|m|s|µs|us|ns)")
_K6_DURATION = rf"(?:{NUM}(?:h|ms|m|s|µs|us|ns))+"
_K6_BYTES = {"B": 1, "kB": 1000, "MB": 1000**2, "GB": 1000**3, "TB": 1000**4, "PB": 1000**5}
_K6_LINES = {
    "http_reqs": (rf"(\d+)\s+({NUM})/s", "http_reqs....: <count> <rate>/s"),
    "http_req_duration": (
        rf"(?:[a-z0-9().]+=(?:{_K6_DURATION})\s*)+",
        "http_req_duration....: avg=<duration> min=<duration> med=<duration> max=<duration> ...",
    ),
    "http_req_failed": (
        rf"{NUM}%\s+(?:(\d+) out of (\d+)|✓ (\d+)\s+✗ (\d+))",
        "http_req_failed....: <percent>% <n> out of <n>",
    ),
    "data_received": (
        rf"{NUM} (?:B|kB|MB|GB|TB|PB)\s+({NUM}) (B|kB|MB|GB|TB|PB)/s",
        "data_received....: <size> <size>/s",
    ),
    "vus": (r"\d+\s+min=\d+\s+max=(\d+)", "vus....: <n> min=<n> max=<n>"),
    "vus_max": (r"\d+\s+min=\d+\s+max=(\d+)", "vus_max....: <n> min=<n> max=<n>"),
}


def _k6_ms(value: str) -> float:
    total = Decimal(0)
    for number, unit in _K6_DURATION_PART.findall(value):
        total += Decimal(number) * Decimal(TIME_MS[unit])
    return float(total)


def parse_k6_text(text: str) -> list[StepResult]:
    """k6's end-of-test summary on stdout: the default one of k6 1.x and the legacy one
    (--summary-mode=legacy, and every k6 before 1.0). The duration is the last progress
    line's `running (...)`, when stdout kept it."""
    lines = read_lines(text, "k6")
    metrics = {}
    for number, line in enumerate(lines, 1):
        match = _K6_METRIC.fullmatch(line.strip())
        if match and match.group(1) in _K6_LINES:
            pattern, expected = _K6_LINES[match.group(1)]
            value = re.fullmatch(pattern, match.group(2).strip())
            if value is None:
                raise expected_found(number, expected, shown(line))
            metrics.setdefault(match.group(1), value)
    for name in ("http_reqs", "http_req_duration"):
        if name not in metrics:
            raise expected_found(len(lines) + 1, _K6_LINES[name][1], END_OF_OUTPUT)
    if "vus" not in metrics and "vus_max" not in metrics:
        raise expected_found(len(lines) + 1, _K6_LINES["vus"][1], END_OF_OUTPUT)
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
        transfer = dec(
            metrics["data_received"].group(1), _K6_BYTES[metrics["data_received"].group(2)]
        )
    duration = None
    for line in lines:
        match = re.match(rf"\s*running \(({_K6_DURATION})\)", line)
        if match:
            duration = _k6_ms(match.group(1)) / 1000
    return [
        make_step(
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
