"""CSV results: JMeter (JTL) and Locust (stats history)."""

import csv
import io
import math
import re
from dataclasses import replace
from decimal import Decimal

from collectors.loadresults.base import (
    PERCENTILE_KEYS,
    LoadResultError,
    StepResult,
    make_step,
    read_text,
    shown,
)
from collectors.phrase import Phrase, gettext_noop, joined


def _csv(text, tool: str, required: tuple[str, ...], hint: Phrase | None = None):
    """(header, [(line number, {column: value})]) of a CSV file whose header names `required`."""
    source = read_text(text, tool)
    reader = csv.reader(io.StringIO(source, newline=""))
    try:
        header = next(reader)
        missing = [name for name in required if name not in header]
        if missing:
            # Name only what is missing when the header is otherwise the tool's.
            wanted = required if len(missing) == len(required) else missing
            expected = Phrase(
                gettext_noop("expected a %(tool)s CSV header with the column %(columns)s")
                if len(wanted) == 1
                else gettext_noop("expected a %(tool)s CSV header with the columns %(columns)s"),
                tool=tool,
                columns=", ".join(wanted),
            )
            found = Phrase(
                gettext_noop("found %(found)s"), found=shown(source.split(chr(10), 1)[0])
            )
            if hint is not None:
                expected = joined([expected, hint], " ")
            raise LoadResultError(1, joined([expected, found], ", "))
        rows = []
        for row in reader:
            if not row or row == [""]:
                continue
            if len(row) != len(header):
                raise LoadResultError(
                    reader.line_num,
                    Phrase(
                        gettext_noop(
                            "expected %(expected)s fields as the header names, found %(found)s"
                        ),
                        expected=len(header),
                        found=len(row),
                    ),
                )
            rows.append((reader.line_num, dict(zip(header, row, strict=True))))
    except csv.Error as exc:
        raise LoadResultError(
            reader.line_num,
            Phrase(
                gettext_noop("expected %(tool)s CSV, found a malformed line (%(error)s)"),
                tool=tool,
                error=str(exc),
            ),
        ) from None
    if not rows:
        raise LoadResultError(
            2,
            Phrase(
                gettext_noop(
                    "expected %(tool)s CSV rows under the header, found the end of the file"
                ),
                tool=tool,
            ),
        )
    return header, rows


def _cell(line: int, row: dict, column: str, kind: type = int, expected: str = "a number"):
    value = row[column].strip()
    try:
        return kind(value) if kind is not float else float(Decimal(value))
    except (ValueError, ArithmeticError):
        raise LoadResultError(
            line,
            Phrase(
                gettext_noop("expected %(expected)s in column %(column)s, found %(found)s"),
                expected=expected,
                column=repr(column),
                found=repr(value),
            ),
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
    hint = Phrase(gettext_noop("(save it with jmeter.save.saveservice.print_field_names=true)"))
    header, rows = _csv(text, "JMeter", _JMETER_REQUIRED, hint)
    samples = []
    for line, row in rows:
        success = row["success"].strip().lower()
        if success not in ("true", "false"):
            raise LoadResultError(
                line,
                Phrase(
                    gettext_noop("expected true or false in column 'success', found %(found)s"),
                    found=repr(row["success"]),
                ),
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
        latency = {key: _jmeter_percentile(elapsed, p / 100) for p, key in PERCENTILE_KEYS.items()}
        latency.update(avg=sum(elapsed) / len(elapsed), max=float(elapsed[-1]))
        steps.append(
            make_step(
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
    endpoint_rows = 0
    for line, row in rows:
        if row["Name"] != "Aggregated":
            endpoint_rows += 1
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
        raise LoadResultError(
            2, Phrase(gettext_noop("expected rows named 'Aggregated', found none"))
        )
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
            None,
            Phrase(
                gettext_noop(
                    "expected a user count held for two consecutive 'Aggregated' rows, found none"
                )
            ),
        )
    held = sum(len(intervals) for intervals in levels.values())
    skipped = {
        "rows of one endpoint (the 'Aggregated' rows are read)": endpoint_rows,
        "intervals while the user count changed": len(history) - 1 - held,
    }
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
            make_step(
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
    skipped = {why: count for why, count in skipped.items() if count}
    return [replace(steps[0], skipped=skipped), *steps[1:]] if skipped else steps
