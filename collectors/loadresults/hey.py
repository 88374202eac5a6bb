"""hey's report."""

import re

from collectors.loadresults.base import (
    NUM,
    Item,
    LoadResultError,
    StepResult,
    client_error_kind,
    command_option,
    dec,
    labelled_rows,
    make_step,
    next_line,
    percentile_map,
    percentile_rows,
    read_lines,
    scan,
)
from collectors.phrase import Phrase, gettext_noop

_HEY_SECS = rf"(NaN|{NUM}) secs"


def _hey_block(label: str, pattern: str, expected: str):
    return lambda lines, start: labelled_rows(lines, start, label, pattern, expected)


# hey prints a percentile it found no sample for as "0% in 0.0000 secs": with fewer than
# 100 responses p99 (and with fewer than 10, p90 and p95 too) comes out so.
_HEY_NO_SAMPLE = re.compile(r"0%\s+in\s+0(?:\.0+)?\s+secs")


def _hey_distribution(lines: list[str], start: int):
    # Empty when no request got a response; otherwise hey's fixed percentiles, in order.
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    if at == len(lines) or not re.match(r"^\S+% in", lines[at].strip()):
        return [], start
    return percentile_rows(
        lines,
        at,
        ("10", "25", "50", "75", "90", "95", "99"),
        rf"in ({NUM}) secs",
        "in <seconds> secs",
        no_sample=_HEY_NO_SAMPLE,
    )


_HEY_ITEMS = [
    Item("summary", r"Summary:", r"Summary:", "Summary:"),
    Item("total", r"Total:", rf"Total:\s+{_HEY_SECS}", "Total: <seconds> secs"),
    Item("slowest", r"Slowest:", rf"Slowest:\s+{_HEY_SECS}", "Slowest: <seconds> secs"),
    Item("fastest", r"Fastest:", rf"Fastest:\s+{_HEY_SECS}", "Fastest: <seconds> secs"),
    Item("average", r"Average:", rf"Average:\s+{_HEY_SECS}", "Average: <seconds> secs"),
    Item("rps", r"Requests/sec:", rf"Requests/sec:\s+({NUM})", "Requests/sec: <number>"),
    Item(
        "data",
        r"Total data:",
        r"Total data:\s+(\d+) bytes",
        "Total data: <n> bytes",
        required=False,
    ),
    Item(
        "histogram",
        r"Response time histogram:",
        r"Response time histogram:",
        "Response time histogram:",
        block=_hey_block(r"\S+\s+\[", rf"{NUM} \[\d+\]\s*\|■*", "<seconds> [<n>] |■■■"),
    ),
    Item(
        "distribution",
        r"Latency distribution:",
        r"Latency distribution:",
        "Latency distribution:",
        block=_hey_distribution,
    ),
    Item(
        "details",
        r"Details \(",
        r"Details \(average, fastest, slowest\):",
        "Details (average, fastest, slowest):",
        required=False,
    ),
    Item(
        "status",
        r"Status code distribution:",
        r"Status code distribution:",
        "Status code distribution:",
        block=_hey_block(r"\[", r"\[(\d+)\]\s+(\d+) responses", "[<code>] <n> responses"),
    ),
    Item(
        "errors",
        r"Error distribution:",
        r"Error distribution:",
        "Error distribution:",
        required=False,
        block=_hey_block(r"\[", r"\[(\d+)\]\s+(.+)", "[<n>] <error>"),
    ),
]


def parse_hey(text: str, *, concurrency: int | None = None) -> list[StepResult]:
    """hey's report. hey does not print its -c: pass `concurrency`, or keep the command line
    in the text (`hey -c 10 ...`; 50, hey's default, when it has no -c).

    Requests are responses plus errors, as hey's Requests/sec counts them."""
    lines = read_lines(text, "hey")
    found = scan(lines, _HEY_ITEMS)
    if concurrency is None:
        option = command_option(lines, "hey", "-c")
        if option is None:
            raise LoadResultError(
                None,
                Phrase(
                    gettext_noop(
                        "hey does not print its concurrency: pass concurrency= (hey -c) "
                        "or keep the hey command line in the text"
                    )
                ),
            )
        concurrency = int(option) if option else 50
    statuses = {int(m.group(1)): int(m.group(2)) for _, m in found["status"][2]}
    errors = {"non_2xx": sum(n for code, n in statuses.items() if not 200 <= code <= 299)}
    for _, match in found.get("errors", (None, None, []))[2]:
        kind = client_error_kind(match.group(2))
        errors[kind] = errors.get(kind, 0) + int(match.group(1))
    requests = sum(statuses.values()) + sum(v for k, v in errors.items() if k != "non_2xx")
    total = found["total"][1].group(1)
    duration = None if total == "NaN" else float(total)
    latency = {}
    if sum(statuses.values()) and not found["distribution"][2]:
        # Responses came back, so hey printed its percentiles: a line is broken or missing.
        next_line(lines, found["distribution"][0], r"(?!)", "10% in <seconds> secs")
    if sum(statuses.values()) and found["average"][1].group(1) != "NaN":
        latency = percentile_map(found["distribution"][2], lambda secs: dec(secs, 1000))
        latency["avg"] = dec(found["average"][1].group(1), 1000)
        latency["max"] = dec(found["slowest"][1].group(1), 1000)
        for key in ("p50", "p75", "p90", "p99"):
            # No sample for it: too few responses, and then the nearest-rank percentile is
            # the slowest response.
            latency.setdefault(key, latency["max"])
    # hey prints "Total data" only when some bytes came back.
    data = int(found["data"][1].group(1)) if "data" in found else 0
    return [
        make_step(
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
