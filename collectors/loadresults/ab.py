"""ab's (ApacheBench) report."""

import re

from collectors.loadresults.base import (
    NUM,
    Item,
    LoadResultError,
    StepResult,
    dec,
    make_step,
    percentile_map,
    percentile_rows,
    read_lines,
    scan,
)
from collectors.phrase import Phrase, gettext_noop

_AB_ITEMS = [
    Item(
        "concurrency",
        r"Concurrency Level:",
        r"Concurrency Level:\s+(\d+)",
        "Concurrency Level: <n>",
    ),
    Item(
        "time",
        r"Time taken for tests:",
        rf"Time taken for tests:\s+({NUM}) seconds",
        "Time taken for tests: <seconds> seconds",
    ),
    Item(
        "complete", r"Complete requests:", r"Complete requests:\s+(\d+)", "Complete requests: <n>"
    ),
    Item("failed", r"Failed requests:", r"Failed requests:\s+(\d+)", "Failed requests: <n>"),
    Item(
        "failed_kinds",
        r"\(Connect:",
        r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)",
        "(Connect: <n>, Receive: <n>, Length: <n>, Exceptions: <n>)",
        required=False,
    ),
    Item("write", r"Write errors:", r"Write errors:\s+(\d+)", "Write errors: <n>", required=False),
    Item(
        "non_2xx",
        r"Non-2xx responses:",
        r"Non-2xx responses:\s+(\d+)",
        "Non-2xx responses: <n>",
        required=False,
    ),
    Item(
        "rps",
        r"Requests per second:",
        rf"Requests per second:\s+({NUM}) \[#/sec\] \(mean\)",
        "Requests per second: <number> [#/sec] (mean)",
    ),
    Item(
        "transfer",
        r"Transfer rate:",
        rf"Transfer rate:\s+({NUM}) \[Kbytes/sec\] received",
        "Transfer rate: <number> [Kbytes/sec] received",
    ),
    Item(
        "total",
        r"Total:",
        r"Total:\s+(\d+)\s+(\d+)(?:\s+" + NUM + r"\s+\d+)?\s+(\d+)",
        "Total: <min> <mean> [<sd> <median>] <max>",
        required=False,
    ),
    Item(
        "percentages",
        r"Percentage of the requests served",
        r"Percentage of the requests served within a certain time \(ms\)",
        "Percentage of the requests served within a certain time (ms)",
        required=False,
        block=lambda lines, start: percentile_rows(
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
        # \b: a search from every "apr_" inside one long word would be quadratic.
        match = re.search(r"\b(apr_\w+: .+)$", line)
        if match:
            raise LoadResultError(
                number,
                Phrase(
                    gettext_noop("ab stopped before its results: %(error)s"),
                    error=repr(match.group(1)),
                ),
            )


def parse_ab(text: str) -> list[StepResult]:
    """ApacheBench's report. Latencies are ab's whole milliseconds: the Connection Times
    "Total" mean and the percentage table (100% is the longest request)."""
    lines = read_lines(text, "ab")
    found = scan(lines, _AB_ITEMS, _ab_stopped)
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
        latency.update(percentile_map(rows, float))
        for _, match in rows:
            if match.group(1) == "100":
                latency["max"] = float(match.group(2))
    return [
        make_step(
            load=int(found["concurrency"][1].group(1)),
            kind="concurrency",
            duration=dec(found["time"][1].group(1)),
            requests=int(found["complete"][1].group(1)),
            rps=dec(found["rps"][1].group(1)),
            transfer=dec(found["transfer"][1].group(1), 1024),
            latency=latency,
            errors=errors,
        )
    ]
